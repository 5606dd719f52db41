/* capsule/capsule.h: one confined process tree (docs/design.md §4).
 *
 * Owns (with capsule/pin.h, the pin of the interpreter): the setup
 * sequence of a capsule (namespaces, tmpfs root + pivot_root, rlimits,
 * cgroups, uid map, capabilities, no_new_privs, fds, landlock, seccomp),
 * the seccomp denial report (user-notification listener held by the
 * parent), killing a capsule (its whole pid namespace) and reaping it
 * (cgroup cleanup, final report). No I/O loop lives here: the caller polls
 * the handle's fds (capsule/run.h is one such caller, the supervisor
 * another).
 *
 * Threads: capsule_start() may be called from many threads at once: each
 * call prepares its own child plan (the child reads its copy of the
 * caller's stack; no allocation happens in the child before exec or
 * `inside`), and the shared state (the cgroup pool, the filter cache, the
 * shared network namespace) has its own short locks.
 *
 * Cgroups: the groups (world-capsule-<pid>-<start>-<n>-ns<pidns>, below the
 * caller's own) are pooled per process and reused by later capsules once
 * checked empty; they are removed at exit, and on SIGINT/SIGTERM/SIGHUP
 * after capsule_cleanup_on_signals(). Groups a SIGKILLed maker left are
 * removed by the next process's first capsule of the same pid namespace
 * (capsule_cgroups_sweep; another namespace's groups are never touched).
 *
 * The capsule's mount namespace is released after the reap by a thread of
 * this library (started at the first capsule, with a file table of its own:
 * it holds no fd of the caller's), so that nobody waits for its teardown.
 *
 * The capsule's init has PR_SET_PDEATHSIG=SIGKILL: it dies with the
 * *thread* that called capsule_start (start capsules from a long-lived
 * thread). The child resets signal dispositions, the signal mask and the
 * umask, so nothing of the caller's process state reaches the interpreter.
 *
 * Setup failures are one line "capsule setup: STEP: strerror" with code
 * WX_SETUP.
 *
 * Where it lives: the setup sequence, the denial listener and the reap in
 * capsule/capsule.c; the cgroup functions below (the pool, delegation,
 * keep-warm, the sweep, the cleanup on signals) in capsule/cgroups.c; the
 * namespace ones (the shared network namespace, the template, the deferred
 * mount-namespace release) in capsule/namespaces.c; capsule/capsule_int.h
 * is what the three share. */
#ifndef WORLD_CAPSULE_CAPSULE_H
#define WORLD_CAPSULE_CAPSULE_H
#include "capsule/profile.h"
#include "common/error.h"
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "capsule/pin.h"

struct capsule_exec;

/* ---- starting a capsule ------------------------------------------------- */

struct capsule_file {
	const char *name;   /* relative to the root, e.g. "host/capsule/main.ail"; "dir/" = directory */
	const void *data;
	size_t len;
};

/* What the `inside` callback gets: enough to run the pinned interpreter. */
struct capsule_ctx {
	const struct capsule_profile *profile;
	int interp_fd;            /* CAPSULE_INTERP_FD */
	const int *kept_fds;      /* the kept protocol fds, renumbered 3, 4, ... */
	size_t nkept;
};

/* Fork and exec the pinned interpreter from inside a capsule (for the
 * `inside` callback): argv is the full argv (argv[0] included), the
 * environment is exactly capsule_env. in/out/err become fds 0/1/2 of the
 * child (-1: leave closed); every other fd is closed. Returns the child's
 * pid (capsule pid namespace) or -1 with errno. */
pid_t capsule_spawn_interpreter(const struct capsule_ctx *ctx, const char *const argv[],
                                int in_fd, int out_fd, int err_fd);

/* Check that the pinned interpreter is sealed (pin.h: else -1, EPERM) and
 * set the profile's RLIMIT_AS and RLIMIT_DATA on the calling process
 * (setrlimit/prlimit64 are allowed: lowering needs no privilege). The
 * capsule's init already has them (so does an `inside` agent: a sanitized
 * agent must reserve its memory before capsule_start); spawning helpers may
 * call it again in each interpreter child. Returns 0 or -1. */
int capsule_apply_interpreter_limits(const struct capsule_ctx *ctx);

typedef int (*capsule_inside_fn)(const struct capsule_ctx *ctx, void *arg);

struct capsule_spec {
	const struct capsule_profile *profile;
	/* The pin's memfd (capsule/pin.h). It may still be unsealed while the
	 * pin finishes on its thread; nothing is ever exec'd from it unsealed
	 * (capsule_apply_interpreter_limits refuses). */
	int interp_fd;
	const struct capsule_file *files;  /* staged in the tmpfs root */
	size_t nfiles;
	/* Interpreter argv (argv[0] included); NULL = "ailang" + profile->argv. */
	const char *const *argv;
	int stdin_fd, stdout_fd, stderr_fd; /* become 0/1/2; -1 = closed */
	const int *keep_fds;               /* extra fds, renumbered 3, 4, ... */
	size_t nkeep;                      /* <= CAPSULE_MAX_KEEP_FDS */
	/* When set, runs in the fully confined child (after seccomp) instead of
	 * the direct exec; its return value is the capsule's exit status. */
	capsule_inside_fn inside;
	void *inside_arg;
	/* A host directory mounted read-only (ro,nosuid,nodev,noexec) at
	 * profile->worktree_mount (only for a profile that has one), or NULL.
	 * capsule_start opens it in the caller (O_PATH|O_DIRECTORY|O_NOFOLLOW: a
	 * symlink is refused). As root the caller clones the mount from that fd
	 * (open_tree OPEN_TREE_CLONE, mount_setattr) and the child attaches the
	 * detached tree (move_mount): nothing is resolved twice. Unprivileged
	 * (no right to clone mounts of the caller's namespace, and the kernel
	 * binds nothing across namespaces) the caller holds its fd until setup
	 * is done and the child resolves the fd's canonical path in its own
	 * mount namespace without following any symlink, requires the same
	 * directory (device and inode) and clones that, so a directory swapped
	 * in meanwhile is refused (WX_SETUP), never mounted. Not recursive:
	 * mounts below the directory are not visible. As root the clone is also
	 * idmapped: the worktree's owner reads as the capsule user (best effort:
	 * wt_note says whether it was); unprivileged the capsule user is the
	 * caller itself. */
	const char *worktree;
	/* The exec capsule (capsule/exec_capsule.h; profile "exec" only): its
	 * root, worktree, cache and init replace the staged tmpfs root and the
	 * direct exec; interp_fd is then the command's binary (any file the
	 * caller opened, executed by fd), inside must be NULL and keep_fds one
	 * fd, the init's status channel. NULL for interpreter runs. */
	const struct capsule_exec *exec;
	/* Limits replacing the profile's (cgroup memory and pids, rlimits),
	 * or NULL. */
	const struct capsule_limits *limits;
	/* A placement of the caller's own (the exec capsule's CPU-time group):
	 * called with the capsule's host pid after the memory and pids
	 * attaches and before the child may go on, so nothing of the command
	 * has run yet. -1 with errno fails the start (WX_SETUP). NULL: none. */
	int (*place)(pid_t pid, void *arg);
	void *place_arg;
};

enum capsule_cg_kind { CAPSULE_CG_NONE = 0, CAPSULE_CG_V1 = 1, CAPSULE_CG_V2 = 2 };

/* Where the time of one capsule goes (ns), for the benchmark's per-layer
 * costs. Child phases are measured in the child, on the same clock. */
enum capsule_phase {
	CAPSULE_T_PREPARE, CAPSULE_T_CLONE, CAPSULE_T_IDMAP, CAPSULE_T_CGATTACH,
	CAPSULE_T_CHILD_IDS, CAPSULE_T_CHILD_MOUNTS, CAPSULE_T_CHILD_FDS, CAPSULE_T_CHILD_CAPS,
	CAPSULE_T_CHILD_LANDLOCK, CAPSULE_T_CHILD_SECCOMP, CAPSULE_T_HANDOVER, CAPSULE_T_REAP,
	CAPSULE_T_FINISH,
	CAPSULE_T_COUNT
};
extern const char *const capsule_phase_names[CAPSULE_T_COUNT];
struct capsule_timing { uint64_t ns[CAPSULE_T_COUNT]; };

/* The first call the seccomp filter stopped, as the listener read it from
 * the kernel's notification (capsule_on_notify): what the run's error names
 * ("syscall denied: keyctl") plus the facts an audit needs -- the number,
 * its ABI, and for ioctl the request that was refused. */
struct capsule_denial {
	char syscall[48];  /* libseccomp's name for nr ("keyctl", "ioctl"); "" = no denial */
	int nr;            /* the syscall number in arch's table */
	char arch[16];     /* the ABI of the call: "x86_64", "i386", "aarch64", or "0xHEX" (AUDIT_ARCH_*) */
	int has_cmd;       /* an ioctl: cmd is the refused request */
	unsigned cmd;      /* its low 32 bits (the kernel compares those) */
	char cmd_name[32]; /* "TIOCSTI", or "" when the build has no name for it */
};

struct capsule_handle {
	pid_t pid;        /* host pid of the capsule's init (pid 1 inside) */
	int pidfd;        /* readable when the capsule's init exits */
	int notify_fd;    /* seccomp listener: readable when a denied call waits; call capsule_on_notify */
	int setup_fd;     /* EOF = exec happened; a line = late setup error (read by capsule_finish) */
	int mntns_fd;     /* our reference to the capsule's mount namespace (capsule.c: mntns_hold), or -1 */
	int mntns_req;    /* its request to the closer thread, or -1 */
	unsigned mntns_gen;       /* (capsule.c: mntns_wait) */
	bool root_mode;   /* started as root: ids mapped to the dedicated range */
	unsigned host_id; /* host uid/gid of the capsule user */
	int landlock_abi; /* 0 = not applied */
	bool shared_netns; /* joined the shared empty network namespace (capsule_netns_share) */
	bool mount_template; /* its mount namespace is a copy of the template's (capsule_mount_template) */
	enum capsule_cg_kind cg_memory, cg_pids;
	char cg_memory_dir[256], cg_pids_dir[256];
	char cg_note[256];        /* why cgroups are not used, when they are not */
	char wt_note[160];        /* how the worktree is mounted (idmapped or not), when there is one */
	int cg_slot[2];           /* the pooled groups (memory, pids), or -1 */
	long cg_base[2];          /* their limit-hit counters when taken (v1: before the attach) */
	bool cg_favordynmods;     /* the host has cgroup favordynmods on (no RCU wait on attach) */
	bool killed;              /* capsule_kill was called */
	char denied[96];          /* first denied syscall, e.g. "keyctl" or "ioctl(TIOCSTI)" */
	struct capsule_denial denial; /* the same call: number, ABI, ioctl request */
	bool reaped;
	struct capsule_timing timing;
};

/* Opt-in for long-lived root supervisors: create one empty network
 * namespace (loopback down, owned by the initial user namespace) that every
 * capsule started afterwards joins instead of creating its own — creating
 * one costs ~0.65 ms per capsule plus a teardown in a kernel thread, and a
 * capsule can open no socket to use it. Holds one fd until
 * capsule_netns_share(false). Root only (WX_SETUP otherwise); unprivileged
 * capsules always get their own. Thread-safe: it excludes concurrent starts
 * only for its own short change (a read-write lock). */
int capsule_netns_share(bool on, struct world_err *err);

/* Opt-in for long-lived root makers of capsules (the capsule spawner): one
 * template mount namespace, an empty read-only tmpfs root, that every later
 * capsule without device nodes or a worktree is cloned from instead of
 * from the caller's whole mount table; the capsule's root then goes over
 * the template's (move + chroot) and nothing is unmounted. Saves the copy
 * of the caller's mounts and the old root's detach (an RCU grace period).
 * A start uses it from a thread whose filesystem context is its own: the
 * only thread of a process, or one that called capsule_thread_private_fs;
 * other threads start as before. Root only (WX_SETUP otherwise), and not
 * in a chrooted process. Costs a fork once; holds one fd until
 * capsule_mount_template(false). Thread-safe like capsule_netns_share. */
int capsule_mount_template(bool on, struct world_err *err);

/* Give the calling thread a filesystem context (root, working directory,
 * umask) of its own, copied from the process's (unshare CLONE_FS): for
 * threads a capsule maker dedicates to capsule_start (the spawner's pool),
 * so that they may enter the template mount namespace. A later chdir by
 * another thread no longer moves this one. Returns 0, or -1 with errno. */
int capsule_thread_private_fs(void);

/* Remove the capsule cgroups whose maker is dead (its pid gone, or reused
 * by a process with another start time), in the directories this process
 * makes its own in (below its own memory and pids groups): the groups of
 * this pid namespace, killing what is left in them; groups named by an
 * earlier version (no namespace in the name) only when already empty; the
 * groups of another pid namespace never. Runs once by
 * itself at a process's first capsule_start; a daemon calls it at start-up.
 * *removed (may be NULL) counts the groups removed. Returns 0, or -1 with
 * WX_IO naming the first stale group that could not be removed. */
int capsule_cgroups_sweep(unsigned *removed, struct world_err *err);

/* Do now what the first capsule_start of a process would: look up the
 * cgroup hierarchies, sweep the groups of dead makers (above), and make one
 * idle pooled group per controller with p's limits, so that the first
 * capsule only takes them. For a caller with time to spare before its
 * first capsule (`worldd run` while its pin and network namespace are made
 * on other threads). Returns how many groups are ready (0-2); a failure
 * only leaves the work to capsule_start, which reports it. */
int capsule_prepare(const struct capsule_profile *p);

/* Whether this process's capsules of profile p get their memory and pids
 * groups: takes (or makes) one pair into the pool, as capsule_prepare.
 * Returns a mask of what is missing (1 memory, 2 pids; 0: both there), and
 * in why the reason as capsule_describe's note gives it. */
int capsule_cgroup_probe(const struct capsule_profile *p, char *why, size_t len);

/* cgroup v2 delegation (systemd's Delegate=): the group ROOT OWN (a
 * cgroupfs mount and this process's group in it) offers memory and pids
 * in cgroup.controllers, but a group holding a process cannot enable
 * controllers for its children (the no-internal-process rule). When this
 * process is alone in it: move it into the leaf ROOT OWN/LEAF, then enable
 * memory and pids in the group's cgroup.subtree_control; capsule groups go
 * beside the leaf. 0 with *base the group (also when the controllers were
 * enabled already: nothing moved); 1 with err saying why when there is
 * nothing to do (not offered, others in the group: nothing changed); -1
 * with err when a step failed (moved back, leaf removed). The root is a
 * parameter so that tests run it on a directory tree of plain files. */
int capsule_cgroup_delegate(const char *root, const char *own, const char *leaf, char *base, size_t blen,
                            struct world_err *err);
/* capsule_cgroup_delegate for this process on /sys/fs/cgroup (v2 mounted
 * there) with leaf "daemon"; on success later capsule groups of this process
 * and of spawners it forks go below the delegated group. Call before any
 * capsule, spawner or thread. Same returns; note says what happened. */
int capsule_cgroup_delegate_self(char *note, size_t len);

/* Kill this process's live capsules and remove all its pooled groups
 * (within ~2 s). Registered with atexit at the first capsule; a daemon may
 * call it when it stops. Async-signal-safe. */
void capsule_cgroups_release(void);

/* Install handlers for SIGINT, SIGTERM and SIGHUP that run
 * capsule_cgroups_release() and then die of the signal as before. Only
 * signals whose disposition is the default are taken (a caller's own
 * handler, or an ignored signal, stays). Returns how many were installed,
 * or -1 with errno. */
int capsule_cleanup_on_signals(void);

/* After the cleanup of capsule_cleanup_on_signals, print one line on
 * stderr, "WHO: interrupted by SIGINT: ...", and exit 128+N (130 SIGINT,
 * 143 SIGTERM, 129 HUP) instead of dying of the signal. For the CLI verbs
 * that run capsules; NULL or "" goes back to dying of the signal. */
void capsule_exit_on_interrupt(const char *who);

/* Keep the v1 cgroup attach from waiting for an RCU grace period (see
 * capsule.c): while on, a thread of this process writes its own pid into
 * its own v1 group every 5 ms (nothing moves). Reference-counted: each
 * true needs one false, the last stops the thread. Does nothing on v2, with
 * favordynmods, or without the right to write the group. For long-lived
 * supervisors (the daemon calls it at start-up); a short-lived process
 * would only pay the first write's wait itself. Returns 1 when the keeper
 * runs, 0 when it is not needed or not possible. */
int capsule_cgroup_keepwarm(bool on);

/* Whether the host has cgroup favordynmods on (some cgroup root is mounted
 * with it: a cgroup.procs write then never waits for an RCU grace period).
 * The same finding as every capsule's cg_favordynmods, looked up once. */
bool capsule_cgroup_favordynmods(void);

/* Whether the closer thread releases each capsule's mount namespace after
 * the reap (the default, for long-lived callers: nobody waits for its
 * teardown). A process that runs one capsule and exits (`worldd run`) turns
 * it off before its first capsule: the deferred release would only move the
 * same wait into its own exit, after a thread made for nothing. */
void capsule_defer_mntns_release(bool on);

/* Start a capsule. On success the handle is filled and the capsule runs
 * (setup complete up to and including seccomp). Returns -1 with WX_SETUP
 * (one line naming the failed step) or another code. */
int capsule_start(const struct capsule_spec *spec, struct capsule_handle *h, struct world_err *err);

/* Handle pending seccomp notifications: a known syscall is never answered:
 * recorded in h->denied and h->denial (first one) and the capsule is killed; a number
 * libseccomp does not know is answered ENOSYS. Returns 1 if a denial was
 * recorded now, 0 otherwise, -1 on listener failure (capsule killed). */
int capsule_on_notify(struct capsule_handle *h);

/* SIGKILL the capsule's init via its pidfd: the kernel kills the whole pid
 * namespace. Idempotent. */
int capsule_kill(struct capsule_handle *h);

struct capsule_report {
	bool exited;            /* normal exit */
	int exit_status;        /* when exited */
	int term_signal;        /* when killed by a signal */
	bool killed;            /* capsule_kill was called */
	bool setup_failed;
	char setup_error[512];  /* "capsule setup: STEP: ..." */
	char denied[96];        /* denied syscall, or "" */
	struct capsule_denial denial; /* its number, ABI and ioctl request (denial.syscall "" = none) */
	bool memory_limit_hit;  /* the cgroup memory limit was reached */
	bool pids_limit_hit;    /* the cgroup pids limit refused a fork */
};

/* Wait for the capsule to end (blocking; use after pidfd is readable or
 * after capsule_kill), reap it, remove its cgroups, close the handle's fds,
 * and fill the report. */
int capsule_finish(struct capsule_handle *h, struct capsule_report *r, struct world_err *err);

/* One line describing the handle's layers as applied (uid map, cgroups,
 * landlock), for a run's profile summary. */
void capsule_describe(const struct capsule_handle *h, char *buf, size_t len);
#endif
