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
 * Across processes (daemons sharing one store and one workspace root, or
 * `worldd call`s beside them): broker_turn_lock takes an flock on
 * <workspace-root>/.world-turns/<episode>.lock (directory 0700, file 0600,
 * beside the worktrees and outside every one of them: an episode id cannot
 * begin with '.'), held with the in-process turn. The lock dies with its
 * process, so a killed daemon never leaves an episode's turn held. */
#ifndef WORLD_BROKER_TURN_H
#define WORLD_BROKER_TURN_H

/* Episode ids are ^[a-z0-9][a-z0-9-]{0,63}$ (broker/session.h); a longer
 * string is a caller's bug and shares one turn with every such string. */
#define BROKER_TURN_KEY_MAX 64
#define BROKER_TURN_DIR ".world-turns"
#include "common/error.h"

/* Blocks until no other effect of episode runs in this process, then holds
 * the turn. Never fails and never allocates (a fixed table; when every
 * slot is held, a taker of a new episode waits for a free slot). */
void broker_turn_take(const char *episode);
/* Gives the turn back (the caller holds it). */
void broker_turn_give(const char *episode);
/* The cross-process turn (take the in-process turn first): blocks until no
 * other process holds episode's turn under workspace_root, then holds it in
 * *fd (-1 and nothing held when workspace_root is NULL: no worktree to
 * share). WX_IO when the lock file cannot be made. */
int broker_turn_lock(const char *workspace_root, const char *episode, int *fd, struct world_err *err);
void broker_turn_unlock(int fd);
#endif
