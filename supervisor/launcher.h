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
#include "common/error.h"

enum sup_profile { SUP_PROFILE_TRANSITION = 0, SUP_PROFILE_SOURCE_CHECK = 1, SUP_PROFILE_TOOL_RUN = 2 };
const char *sup_profile_name(enum sup_profile p);

/* Given to the code that runs inside the capsule. */
struct launch_exec {
	/* Start the pinned interpreter with args (its argv after argv[0], e.g.
	 * "run", "--quiet", ...), the launcher's environment (docs/design.md §2), the
	 * caller's working directory, and in/out/err as fds 0/1/2; every other
	 * fd is closed across the exec. Returns its pid or -1 with errno. Must
	 * not allocate: the capsule may have been cloned from a threaded
	 * process (see agent.h). */
	pid_t (*spawn_interp)(const struct launch_exec *ex, const char *const *args, int in_fd, int out_fd,
	                      int err_fd);
	int proto_in, proto_out; /* the kept protocol fds, as numbered inside the capsule */
	void *impl;
};

/* A file staged in the capsule root before it starts. */
struct launch_file {
	const char *name;    /* relative: "host/capsule/main.ail", "args.json" */
	const void *data;
	size_t len;
};

struct launch_spec {
	enum sup_profile profile;
	const struct launch_file *files;
	size_t nfiles;
	int stdin_fd, stdout_fd, stderr_fd; /* become the capsule's fds 0, 1, 2 */
	int keep_fds[2];                    /* protocol fds (to the capsule, from the capsule) */
	/* Runs in the confined child; its return value is the exit status. */
	int (*inside)(void *arg, const struct launch_exec *ex);
	void *arg;
	/* The size of *arg: the capsule gets a copy of these bytes (at most 64),
	 * which is what lets the spawner (spawner.h) make the capsule. 0 with a
	 * non-NULL arg: in-process only (the spawner refuses it). */
	size_t arg_len;
	/* When inside is NULL: the pinned interpreter itself is the capsule's
	 * first process, exec'd with these args (its argv after argv[0],
	 * NULL-terminated, at most 30), and no protocol fds are kept; its wait
	 * status is the report's status (the kernel's word, not the capsule's). */
	const char *const *argv;
	/* A host directory mounted read-only inside the root at the profile's
	 * worktree mount (capsule.h, capsule_spec.worktree), or NULL. */
	const char *worktree;
};

struct launched {
	pid_t pid;
	int pidfd;     /* readable when the capsule has exited */
	int watch_fd;  /* -1, or an fd the event loop must watch and hand to on_watch */
	void *impl;    /* launcher-private */
};

/* The call the seccomp filter stopped (capsule/capsule.h, capsule_denial),
 * as the supervisor hands it up: the name the error says, its number and
 * ABI, and for ioctl the refused request. syscall "" = no denial. */
struct sup_denial {
	char syscall[48];  /* "keyctl", "ioctl" */
	int nr;            /* its number in arch's table */
	char arch[16];     /* "x86_64", ... */
	int has_cmd;       /* an ioctl: cmd is the refused request */
	unsigned cmd;      /* low 32 bits */
	char cmd_name[32]; /* "TIOCSTI", or "" */
};

struct launch_report {
	int status;             /* wait status of the capsule's first process */
	int setup_failed;       /* a setup step failed before exec */
	int denied_syscall;     /* the seccomp filter stopped a call */
	char detail[512];       /* the setup error or the denied syscall, one line */
	char denied[96];        /* the denied syscall's name ("keyctl", "ioctl(TIOCSTI)"), or "" */
	struct sup_denial denial; /* the same call: number, ABI, ioctl request */
	int memory_limit_hit;   /* the cgroup memory limit was reached */
	int pids_limit_hit;     /* the cgroup pids limit refused a fork */
	char layers[512];       /* what confinement was applied (uid map, cgroups, landlock) */
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
	/* watch_fd is readable: handle it. Returns 1 when the capsule was
	 * stopped for a reason finish() will report (a denied syscall), else 0. */
	int (*on_watch)(struct launcher *l, struct launched *c);
	/* Print the profile the capsule runs under (one screen, text). */
	int (*describe)(struct launcher *l, enum sup_profile p, int fd, struct world_err *err);
	void (*destroy)(struct launcher *l);
};

/* Fork-free spawn for spawn_interp implementations: clone with
 * CLONE_VM|CLONE_VFORK (no glibc fork handlers, no allocation, no copy of
 * the address space), fds in/out/err to 0/1/2, every other fd
 * close-on-exec, then exec_fn(arg); _exit(127) if it returns. Capsule side
 * only (uses a static child stack: one call at a time per process). */
pid_t launch_spawn_raw(int in_fd, int out_fd, int err_fd, void (*exec_fn)(void *arg), void *arg);

/* The product launcher: pins the interpreter (sha256 into a sealed memfd;
 * expected_ref may be NULL) and runs every capsule through capsule.h. When
 * the process runs a capsule spawner (spawner.h: the daemon starts one),
 * the spawner makes the capsules; otherwise each is a clone of this
 * process. As root, in-process capsule launchers share one empty network
 * namespace while at least one exists (capsule_netns_share; one fd held,
 * closed when the last is destroyed), as do the spawner's capsules;
 * unprivileged, each capsule has its own. */
struct launcher *launcher_capsule_new(const char *interp_path, const char *expected_ref, struct world_err *err);
/* The same, but its capsules are clones of this process even when a
 * spawner runs (the benchmark's side-by-side rows). */
struct launcher *launcher_capsule_new_here(const char *interp_path, const char *expected_ref, struct world_err *err);
/* The same, but the pin (copy, hash, seal: ~1.3 ms) goes on in the
 * background (capsule/pin.h) while the caller sets up; only errors of
 * opening the file return here. The first capsule start waits for it, after
 * the capsule is set up (with an agent) or before (without), and fails with
 * the pin's own error (e.g. WX_HASH_MISMATCH) when it failed: a whole-process
 * run (`worldd run`) hides the pin behind the capsule's setup. For one run
 * per process: it also turns capsule_defer_mntns_release off. */
struct launcher *launcher_capsule_begin(const char *interp_path, const char *expected_ref, struct world_err *err);
/* The pinned interpreter's ref ("sha256:..."), or NULL for another launcher
 * or a pin that failed (waits for a pin still going). */
const char *launcher_capsule_ref(struct launcher *l);

/* The test double: no confinement but a pid namespace (when permitted) so
 * that killing the first process kills the whole tree. */
struct launcher *launcher_unconfined_new(const char *interp_path, struct world_err *err);
#endif
