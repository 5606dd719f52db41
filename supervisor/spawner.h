/* supervisor/spawner.h: the capsule spawner, a small process that makes
 * every capsule of a long-lived supervisor (the daemon).
 *
 * Owns: starting the spawner (once per process: a fork made before the
 * caller has threads and a large heap), the typed messages between the
 * supervisor and the spawner (docs/protocol.md, "The capsule spawner"), and
 * the spawner's side: a fixed pool of threads that run capsule_start and
 * capsule_finish for the supervisor and hand back the capsule's pidfd and
 * seccomp listener over SCM_RIGHTS.
 *
 * Why: a capsule is a clone of the process that makes it. Made by the
 * supervisor itself, each clone copies the page tables, the VMAs and the fd
 * table of a process with a thread per call in flight (stacks, malloc
 * arenas, a dozen fds per call), and every clone write-protects that memory
 * again: the cost grows with the number of calls in flight
 * (bench/supervisor_bench: 16 in flight trailed 2 in flight). The spawner's
 * size does not grow with the calls in flight: a fixed number of threads
 * and a few fds per capsule.
 *
 * Trust: the spawner is as trusted as the supervisor (the same binary and
 * user; a fork, not an exec, so the agent function pointer sent with a start
 * means the same in both). It is not a privilege boundary; it is a
 * memory-size boundary. Either side treats a malformed message as fatal:
 * the spawner kills its capsules, removes its groups and exits; the
 * supervisor fails the call (WX_SETUP) and the spawner is not used again.
 *
 * Lifetime: the spawner ends when the supervisor process does (end of
 * stream on its control socket; it does not depend on the thread that
 * started it), killing its capsules and removing its cgroups first; on
 * SIGTERM it does the same. It ignores SIGINT and SIGHUP: a terminal's ^C
 * reaches the supervisor, which ends calls in order. */
#ifndef WORLD_SUPERVISOR_SPAWNER_H
#define WORLD_SUPERVISOR_SPAWNER_H
#include "capsule/capsule.h"
#include "supervisor/launcher.h"
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sup_spawner_opts {
	bool keepwarm; /* run capsule_cgroup_keepwarm in the spawner (the process that attaches) */
};

/* What the spawner found when it started (for the daemon's start log). */
struct sup_spawner_info {
	pid_t pid;             /* the spawner's pid */
	unsigned swept;        /* stale capsule cgroups removed (capsule_cgroups_sweep) */
	int keepwarm;          /* capsule_cgroup_keepwarm's answer: 1 the keeper runs, 0 not needed or not possible */
	bool shared_netns;     /* as root: its capsules share one empty network namespace */
	bool mount_template;   /* as root: its capsules' mount namespaces are copies of the template's */
	char template_error[256]; /* as root, why there is no template (capsule_mount_template), or "" */
	char sweep_error[256]; /* the sweep's error, or "" */
};

/* Start this process's spawner: glibc fork (malloc and stdio stay usable in
 * the copy) of the calling process, which should be small and have no other
 * thread yet, and before it made capsules itself. Once per process: a second
 * call returns 0 and the first call's info. Returns -1 with WX_SETUP when
 * the fork or the spawner's first message fails. */
int sup_spawner_start(const struct sup_spawner_opts *o, struct sup_spawner_info *info, struct world_err *err);

/* The spawner is running (started and not gone). */
bool sup_spawner_running(void);

/* End the spawner and reap it (tests; a process that exits need not). */
void sup_spawner_stop(void);

/* As root: whether the spawner's capsules share one empty network namespace
 * (the default) or each make their own (capsule_netns_share, in the
 * spawner). For the benchmark's side-by-side rows. */
int sup_spawner_netns_share(bool on, struct world_err *err);

/* ---- the capsule launcher's side (launch_capsule.c) --------------------- */

/* The agent of a start: the launch-level inside callback and a copy of its
 * argument (what the capsule's trampoline gets). */
struct sup_spawner_agent {
	int (*inside)(void *arg, const struct launch_exec *ex);
	const void *arg;
	size_t arg_len; /* <= 64 */
};

/* capsule_start in the spawner. spec's inside/inside_arg are ignored: with
 * agent set, the capsule runs it through the launcher's trampoline
 * (capl_spawner_inside). On success *h holds the capsule's pidfd and
 * seccomp listener (this process's copies; capsule_kill and
 * capsule_on_notify work on it), the layers as applied, and *chan the
 * call's channel to the spawner, for sup_spawner_finish. */
int sup_spawner_capsule_start(const struct capsule_spec *spec, const struct sup_spawner_agent *agent,
                              struct capsule_handle *h, int *chan, struct world_err *err);

/* capsule_finish in the spawner (after capsule_kill or the capsule's exit):
 * passes on h->killed, h->denied and h->denial, fills r, closes chan and h's fds.
 * Returns -1 when the spawner could not reap or is gone. */
int sup_spawner_finish(int chan, struct capsule_handle *h, struct capsule_report *r, struct world_err *err);

/* Provided by launch_capsule.c: the capsule_inside_fn the spawner's
 * capsules run, with arg a struct sup_spawner_agent whose arg is the
 * spawner's copy. */
int capl_spawner_inside(const struct capsule_ctx *ctx, void *arg);
#endif
