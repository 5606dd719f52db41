/* supervisor/supervisor.h: the trusted side that runs capsules.
 *
 * Owns: admission (at most `capacity` capsules alive at once; beyond that a
 * call is refused at once with WX_CAPACITY, never queued), and for each call
 * one event loop (epoll over the capsule's pidfd, a timerfd and its pipes)
 * that speaks the frame protocol (docs/protocol.md) to the capsule, captures
 * its stdout/stderr under caps, enforces the per-phase and whole-invocation
 * deadlines, kills the whole capsule on a deadline, a cap or a protocol
 * violation, and reaps it before returning: no zombie, no stray process, no
 * fd and no scratch directory outlive a call.
 *
 * Threads: a struct supervisor is shared; each sup_* call runs its own
 * event loop on the calling thread, so up to `capacity` callers run at once.
 * What the broker decides about a plan is the broker's: the supervisor
 * checks frame structure, order, sizes and that payloads are JSON objects,
 * and hands the plan bytes to the broker callback unchanged. */
#ifndef WORLD_SUPERVISOR_SUPERVISOR_H
#define WORLD_SUPERVISOR_SUPERVISOR_H
#include <stdbool.h>
#include <stddef.h>
#include "common/error.h"
#include "supervisor/launcher.h"

struct sup_limits {
	unsigned plan_ms, finish_ms, pure_ms, check_ms; /* per phase: 4000 2000 4000 10000 */
	unsigned invocation_ms;                         /* whole call: 20000 */
	size_t stdout_max, stderr_max;                  /* 8 MiB each */
	size_t output_max;                              /* output object: 1 MiB */
	size_t payload_max;                             /* args, plan: 1 MiB */
	unsigned capacity;                              /* capsules alive at once: 8 */
	unsigned tool_ms;                               /* a tool run's default wall time: 20000 */
};
void sup_limits_default(struct sup_limits *lim);
/* For the CLI verbs that make capsules in their own process (worldd run,
 * call, check): on SIGINT, SIGTERM or SIGHUP (those not ignored by the
 * caller) the capsules are killed, their cgroups removed, one line
 * "WHO: interrupted by SIG...: ..." printed and the process exits 128+N
 * (capsule/capsule.h, capsule_exit_on_interrupt). Capsules have a session
 * of their own, so a terminal's ^C reaches only this process. */
void sup_exit_on_interrupt(const char *who);
/* Whether this process's capsules get memory and pids cgroups (one pair is
 * made into the pool, as the first capsule would). 0: both; else a mask of
 * what is missing (1 memory, 2 pids) and in line one sentence naming it,
 * why, and the rlimits that remain (for a start-up line, or the refusal of
 * --require-cgroups). */
int sup_cgroups_check(char *line, size_t len);
/* The capsule cgroup set-up of a long-lived supervisor (the daemon's
 * start-up), so that it reaches capsule/ through this layer:
 * sup_cgroup_delegate_self moves this process into a leaf of a delegated
 * group before any capsule, spawner or thread exists
 * (capsule_cgroup_delegate_self: same returns; note says what happened);
 * when it makes its capsules itself (no spawner), sup_cgroups_sweep removes
 * the groups of dead makers (capsule_cgroups_sweep: *removed, may be NULL,
 * counts them; -1 with WX_IO naming the first that would not go) and
 * sup_cgroup_keepwarm keeps the v1 attach from waiting
 * (capsule_cgroup_keepwarm: 1 the keeper runs, 0 not needed or not
 * possible; reference-counted). */
int sup_cgroup_delegate_self(char *note, size_t len);
int sup_cgroups_sweep(unsigned *removed, struct world_err *err);
int sup_cgroup_keepwarm(bool on);
/* The one source-size cap (bytes) of every verb that runs or checks a
 * transition; ailang-lite's own cap (AIL_MAX_SOURCE) is the same figure. */
#define SUP_SOURCE_MAX ((size_t)1 << 20)

struct supervisor;

/* Takes ownership of launcher: it is destroyed by sup_free, or at once when
 * sup_new fails, so callers never free it themselves. */
struct supervisor *sup_new(const struct sup_limits *lim, struct launcher *launcher, struct world_err *err);
void sup_free(struct supervisor *s);
const struct sup_limits *sup_get_limits(const struct supervisor *s);
struct launcher *sup_launcher(struct supervisor *s);
/* Capsules alive right now. */
unsigned sup_alive(struct supervisor *s);

/* TEST HOOK: replace the capsule-side agent (e.g. with one that sends
 * garbage). The product never calls this. */
void sup_set_agent(struct supervisor *s, int (*agent)(void *arg, const struct launch_exec *ex));
/* TEST HOOK, compiled only with WORLD_TEST_HOOKS (configure
 * --enable-test-hooks): when WORLD_TEST_AGENT=hostile is in the
 * environment at sup_new, the supervisor's agent is a compromised one that
 * hands the capsule's frame fds to the pinned interpreter, run as
 * `INTERP hostile-hook host/capsule/main.ail` (tests/supervisor/hostile_peer.c
 * then sends the scenario its source names). This reaches the supervisors
 * the coordinator builds internally (tests/coordinator/test_hostile.c,
 * tests/daemon/hostile.sh); other builds ignore the variable. */

struct sup_result {
	char *plan;   size_t plan_len;     /* effectful: the plan bytes */
	char *output; size_t output_len;   /* pure / effectful with finish: output bytes */
	int finished;                      /* effectful: the finish phase ran */
	int check_exit;                    /* check: interpreter exit status */
	char *check_stdout;                /* check: its stdout (diagnostics, ≤ 64 KiB) */
	char *stderr_text; size_t stderr_len; /* capsule stderr (≤ stderr_max) */
	long elapsed_ms;
	enum sup_profile profile;
	char layers[512];                  /* confinement applied, as the launcher reports it */
	/* A run the seccomp filter stopped (the call failed with
	 * WX_DENIED_SYSCALL): the call it stopped; denial.syscall "" otherwise. */
	struct sup_denial denial;
};
void sup_result_free(struct sup_result *r);

/* What the broker answers to a plan. */
struct sup_broker_reply {
	int finish;        /* run the finish phase */
	char *results;     /* malloc'd JSON array text (the finish-phase results); supervisor frees */
	size_t results_len;
	int own_deadline;  /* the effect ran under a deadline of its own (an exec run's timeout):
	                    * the time spent in this callback does not count against the
	                    * whole-invocation deadline */
};
/* Called on the caller's thread with the plan bytes (≤ payload_max, a JSON
 * object, otherwise unvalidated). Return 0 with *reply filled, or -1 with
 * err set: the call then fails with that error. Time spent here counts
 * against the whole-invocation deadline, not a phase deadline, unless the
 * reply says own_deadline (set even when returning -1). */
typedef int (*sup_broker_fn)(void *ctx, const char *plan, size_t plan_len,
                             struct sup_broker_reply *reply, struct world_err *err);

/* Cancelling a call that runs (MCP notifications/cancelled, A2A
 * CancelTask): an eventfd another thread fires. A run given one watches it
 * in its event loop beside the pidfd and the timer: once fired, the
 * capsule is killed (its process group and cgroup, as at a deadline),
 * reaped, and the run fails with WX_CANCELLED; a run whose handle fired
 * before it started starts nothing. While the broker callback runs the
 * loop does not look; the run fails as soon as the callback returns. A
 * handle is fired at most once and stays fired (sup_cancel_fired). */
struct sup_cancel {
	int fd; /* eventfd (EFD_CLOEXEC | EFD_NONBLOCK); -1 when closed */
};
int sup_cancel_init(struct sup_cancel *c, struct world_err *err);
/* Async-signal-safe and thread-safe (one write(2)); a closed handle is ignored. */
void sup_cancel_fire(struct sup_cancel *c);
/* 1 once fired (a poll of the fd, nothing consumed); 0 otherwise or for NULL. */
int sup_cancel_fired(const struct sup_cancel *c);
void sup_cancel_close(struct sup_cancel *c);

/* A pure transition: input = args (a JSON object text, ≤ payload_max).
 * On success res->output is a JSON object text ≤ output_max. */
int sup_run_pure(struct supervisor *s, const char *source, size_t source_len,
                 const char *args, size_t args_len, struct sup_result *res, struct world_err *err);
/* An effectful transition: plan phase, broker, then (if asked) the finish
 * phase with {"phase":"finish","args":ARGS,"results":RESULTS}. */
int sup_run_effectful(struct supervisor *s, const char *source, size_t source_len,
                      const char *args, size_t args_len, sup_broker_fn broker, void *ctx,
                      struct sup_result *res, struct world_err *err);
/* The same, cancellable through cancel (NULL = not cancellable). */
int sup_run_pure_cancellable(struct supervisor *s, const char *source, size_t source_len, const char *args,
                             size_t args_len, const struct sup_cancel *cancel, struct sup_result *res,
                             struct world_err *err);
int sup_run_effectful_cancellable(struct supervisor *s, const char *source, size_t source_len, const char *args,
                                  size_t args_len, sup_broker_fn broker, void *ctx, const struct sup_cancel *cancel,
                                  struct sup_result *res, struct world_err *err);
/* A bounded source check in the source-check profile. Returns 0 when the
 * interpreter accepted the source, -1 with WX_CHECK_REFUSED (first line of
 * the diagnostics in the message) when it refused, or another error. */
int sup_check_source(struct supervisor *s, const char *source, size_t source_len,
                     struct sup_result *res, struct world_err *err);

/* ---- tool runs (profile tool-run) ----------------------------------------
 * The tool interpreter itself is the capsule's first process (no agent, no
 * frames): exit code and signal are its wait status as the kernel reports
 * it, and `limit` is what the supervisor saw (its timer, its capture caps,
 * the seccomp listener, the cgroup events), so nothing the program prints
 * can forge either. Admission (capacity) applies as for every capsule. */
struct sup_tool_req {
	const char *const *args;          /* the interpreter's argv after argv[0], NULL-terminated, 1..30 */
	const struct launch_file *files;  /* staged in the root (e.g. args.json), at most 8; may be NULL */
	size_t nfiles;
	const char *worktree;             /* host directory mounted read-only at /work, or NULL */
	const void *stdin_data;           /* the interpreter's stdin, then end of stream; may be NULL */
	size_t stdin_len;                 /* <= payload_max */
	unsigned wall_ms;                 /* deadline; 0 = limits.tool_ms */
	size_t stdout_max, stderr_max;    /* capture caps; 0 (or more than the limits') = limits' */
};

struct sup_tool_result {
	int exit_code;         /* exit status, or -1 when a signal ended it */
	int signal;            /* the terminating signal, or 0 */
	char *stdout_text;     /* NUL-terminated, at most stdout_max bytes (kept up to a cap kill) */
	size_t stdout_len;
	char *stderr_text;
	size_t stderr_len;
	/* "" when no limit was hit, else one of "deadline", "stdout cap",
	 * "stderr cap", "memory", "pids", "cpu", "syscall denied: NAME". */
	char limit[128];
	char detail[300];      /* one line saying how, when limit is set */
	long elapsed_ms;
	char layers[512];      /* confinement applied, as the launcher reports it */
	struct sup_denial denial; /* limit "syscall denied: NAME": the call stopped; else syscall "" */
};
void sup_tool_result_free(struct sup_tool_result *r);

/* One tool run. Returns 0 when the capsule ran and ended (normally, by a
 * signal, or killed at a limit: see res->limit), -1 with err when it did
 * not run: WX_CAPACITY (not admitted), WX_BAD_INPUT / WX_USAGE (request),
 * WX_NOT_FOUND / WX_BAD_INPUT (worktree), WX_SETUP, or WX_FAIL; then res
 * holds no allocation (its layers and elapsed_ms may be set). */
int sup_run_tool(struct supervisor *s, const struct sup_tool_req *req, struct sup_tool_result *res,
                 struct world_err *err);
#endif
