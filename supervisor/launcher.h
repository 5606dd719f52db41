/* supervisor/launcher.h: how the supervisor starts, kills and reaps one
 * capsule.
 *
 * Owns: the small seam between the supervisor's event loop and the thing
 * that confines a process tree. The product launcher is capsule-backed
 * (launch_capsule.c: namespaces, tmpfs root, seccomp, the pinned
 * interpreter in a sealed memfd). The unconfined launcher
 * (launch_unconfined.c) is a TEST DOUBLE only: a plain fork into a fresh
 * pid namespace with a scratch directory, used to test the protocol and the
 * event loop independently of the sandbox and as the "no sandbox" column of
 * the benchmark. */
#ifndef WORLD_SUPERVISOR_LAUNCHER_H
#define WORLD_SUPERVISOR_LAUNCHER_H
#include <stddef.h>
#include <sys/types.h>
#include "store/error.h"

enum sup_profile { SUP_PROFILE_TRANSITION = 0, SUP_PROFILE_SOURCE_CHECK = 1 };
const char *sup_profile_name(enum sup_profile p);

/* Given to the code that runs inside the capsule, to exec the pinned
 * interpreter. exec_interp never returns on success; args are the
 * interpreter's arguments after its name (e.g. "run", "--quiet", ...). The
 * environment and binary are the launcher's (DESIGN §2). */
struct launch_exec {
	int (*exec_interp)(const struct launch_exec *ex, const char *const *args);
	void *impl;
};

struct launch_spec {
	enum sup_profile profile;
	const char *source;  /* staged as host/capsule/main.ail in the root */
	size_t source_len;
	int stdin_fd, stdout_fd, stderr_fd; /* become the capsule's fds 0, 1, 2 */
	int keep_fds[2];                    /* protocol fds kept open (close-on-exec stays set) */
	/* Runs in the confined child; its return value is the exit status. */
	int (*inside)(void *arg, const struct launch_exec *ex);
	void *arg;
};

struct launched {
	pid_t pid;
	int pidfd;   /* readable when the capsule has exited */
	void *impl;  /* launcher-private */
};

struct launch_report {
	int status;             /* wait status of the capsule's first process */
	int setup_failed;       /* a setup step failed before exec */
	int denied_syscall;     /* the seccomp filter stopped a call */
	char detail[512];       /* the setup error or the denied syscall, one line */
};

struct launcher {
	const char *name;       /* "capsule" or "unconfined (test double)" */
	void *ctx;
	int (*start)(struct launcher *l, const struct launch_spec *spec, struct launched *out,
	             struct world_err *err);
	/* Kill the whole capsule (every process in it). Idempotent. */
	void (*kill)(struct launcher *l, struct launched *c);
	/* Reap the capsule (blocking; call after kill or after its exit), fill
	 * the report, free everything it held (fds, scratch). Always cleans up;
	 * returns -1 only when reaping itself failed. */
	int (*finish)(struct launcher *l, struct launched *c, struct launch_report *rep,
	              struct world_err *err);
	/* Print the profile the capsule runs under (one screen, text). */
	int (*describe)(struct launcher *l, enum sup_profile p, int fd, struct world_err *err);
	void (*destroy)(struct launcher *l);
};

/* The test double: no confinement but a pid namespace (when permitted) so
 * that killing the first process kills the whole tree. */
struct launcher *launcher_unconfined_new(const char *interp_path, struct world_err *err);
#endif
