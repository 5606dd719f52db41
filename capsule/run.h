/* capsule/run.h: one synchronous interpreter run in a capsule.
 *
 * Owns: the I/O loop around capsule.h for a single run (stdin empty,
 * stdout/stderr captured under their caps, the deadline, denial
 * notifications) and the classification of how a run ended into the
 * project's exit codes. Only the
 * capsule tests use it, to exercise capsule.h without the supervisor: every
 * product run (transition, source check, tool run) goes through
 * supervisor/supervisor.h. */
#ifndef WORLD_CAPSULE_RUN_H
#define WORLD_CAPSULE_RUN_H
#include "capsule/capsule.h"

struct capsule_run_req {
	const struct capsule_profile *profile;
	int interp_fd;                 /* pinned memfd */
	const char *source;            /* staged as host/capsule/main.ail */
	size_t source_len;
	const char *input_json;        /* staged as args.json (a JSON string literal) */
	const char *const *argv;       /* NULL = profile argv */
	unsigned long long wall_ms;    /* 0 = profile default */
};

struct capsule_run_result {
	char *out;          /* captured stdout (NUL-terminated), malloc'd */
	size_t out_len;
	char *errout;       /* captured stderr (NUL-terminated), malloc'd */
	size_t err_len;
	bool deadline;      /* killed at the deadline */
	bool stdout_over;   /* killed: stdout over its cap */
	bool stderr_over;   /* killed: stderr over its cap */
	unsigned long long elapsed_us;
	struct capsule_report report;
	char summary[512];  /* capsule_describe() of the run */
};

/* Run once. Returns 0 when the capsule ran (whatever its outcome; see
 * capsule_run_classify), -1 with err when it could not start. */
int capsule_run(const struct capsule_run_req *req, struct capsule_run_result *res, struct world_err *err);
void capsule_run_result_free(struct capsule_run_result *res);

/* How the run ended, as one line and a code: WX_SETUP, WX_DENIED_SYSCALL,
 * WX_DEADLINE, WX_OUTPUT_CAP (stdout or stderr cap), WX_INTERP (non-zero exit or a
 * signal), or 0 when the interpreter exited 0. `what` names the run
 * ("transition", "source check"). */
int capsule_run_classify(const struct capsule_run_result *res, const struct capsule_run_req *req,
                         const char *what, struct world_err *err);

#endif
