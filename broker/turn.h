/* broker/turn.h: an episode's turn -- the effects of one episode run one at
 * a time (docs/broker.md, "Effects of one episode are serialised").
 *
 * Owns: the in-process table of episodes whose turn is held, and the wait
 * for a turn. broker_effect_run takes the episode's turn before the budget
 * decision and gives it back after the handler returned, so a handler that
 * reads a file and replaces it (Workspace.Write op edit) never interleaves
 * with another effect of the same episode, and decisions are made in the
 * order the effects run. Effects of different episodes never wait for each
 * other.
 *
 * Scope: one process. Daemons sharing one store and one workspace root
 * would each need the same turn: docs/broker.md lists it as a residual. */
#ifndef WORLD_BROKER_TURN_H
#define WORLD_BROKER_TURN_H

/* Episode ids are ^[a-z0-9][a-z0-9-]{0,63}$ (broker/session.h); a longer
 * string is a caller's bug and shares one turn with every such string. */
#define BROKER_TURN_KEY_MAX 64

/* Blocks until no other effect of episode runs in this process, then holds
 * the turn. Never fails and never allocates (a fixed table; when every
 * slot is held, a taker of a new episode waits for a free slot). */
void broker_turn_take(const char *episode);
/* Gives the turn back (the caller holds it). */
void broker_turn_give(const char *episode);
#endif
