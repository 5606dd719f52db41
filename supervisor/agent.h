/* supervisor/agent.h: the capsule side of the protocol (docs/protocol.md).
 *
 * Owns: what runs inside a confined capsule, after confinement: read the
 * `start` frame, run the pinned interpreter for the phase (its input is the
 * staged args.json), capture its stdout (capped), send the `plan` /
 * `output` / `checked` / `error` frame, and for an effectful call wait for
 * `results` (or end of stream), rewrite /args.json in place (the profile
 * keeps that one file writable) and run the finish phase exactly like the
 * plan phase. It is untrusted by design: the supervisor validates
 * everything it sends.
 *
 * It never calls malloc or glibc's fork: the capsule may be a raw clone of
 * a threaded supervisor, where another thread could have held an allocator
 * or fork lock at clone time. Memory comes from an arena the supervisor
 * reserved before the clone (jansson included, via json_set_alloc_funcs),
 * children from launch_spawn_raw. System calls used:
 * read, write, openat, mkdirat, chdir, pipe2, clone, wait4, kill, mmap,
 * exit_group — all in the transition profile's allowlist. */
#ifndef WORLD_SUPERVISOR_AGENT_H
#define WORLD_SUPERVISOR_AGENT_H
#include <stddef.h>
#include "supervisor/launcher.h"

struct sup_agent_args {
	size_t frame_max;
};

/* The agent; suitable as launch_spec.inside with arg a struct
 * sup_agent_args. Returns the capsule's exit status. */
int sup_agent_main(void *arg, const struct launch_exec *ex);

/* In the supervisor, before any capsule starts: reserve the agent's arena
 * (64 MiB of address space, untouched here). sup_new calls it. */
int sup_agent_reserve(void);
/* In the capsule: point jansson at the arena (for test agents too). */
void sup_agent_alloc_init(void);

/* The interpreter's argv (after its name) for a run and for a check. */
extern const char *const sup_interp_run_args[];
extern const char *const sup_interp_check_args[];
#endif
