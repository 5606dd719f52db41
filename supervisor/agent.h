/* supervisor/agent.h: the capsule side of the protocol (docs/protocol.md).
 *
 * Owns: what runs inside a confined capsule, after confinement and before
 * the interpreter: read the `start` frame, write args.json, fork+exec the
 * pinned interpreter for the phase, capture its stdout (capped), send the
 * `plan` / `output` / `checked` / `error` frame, and for an effectful call
 * wait for `results` (or end of stream) and run the finish phase. It is
 * untrusted by design: the supervisor validates everything it sends. It
 * makes only the system calls a transition capsule already allows (read,
 * write, openat of args.json, pipe2, fork, wait4, kill, exit). */
#ifndef WORLD_SUPERVISOR_AGENT_H
#define WORLD_SUPERVISOR_AGENT_H
#include <stddef.h>
#include "supervisor/launcher.h"

struct sup_agent_args {
	int proto_in;    /* frames from the broker side */
	int proto_out;   /* frames to the broker side */
	size_t frame_max;
};

/* The agent; suitable as launch_spec.inside with arg a struct
 * sup_agent_args. Returns the capsule's exit status. */
int sup_agent_main(void *arg, const struct launch_exec *ex);

/* The interpreter's argv (after its name) for a run and for a check. */
extern const char *const sup_interp_run_args[];
extern const char *const sup_interp_check_args[];
#endif
