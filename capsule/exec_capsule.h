/* capsule/exec_capsule.h: the exec capsule's own steps (one
 * project command, Workspace.Exec; docs/exec.md "The exec capsule").
 *
 * Owns: what an exec capsule adds to capsule_start's setup sequence -- the
 * root made of the host's system directories (read-only, /etc less its
 * secrets), the read roots, a private /tmp, a minimal /dev, a fresh /proc,
 * the worktree read-write at /work with its protected names read-only, the
 * cache read-write at /cache; loopback up in the run's own network
 * namespace; the landlock rules matching those mounts; and the capsule's
 * init, which forks the command (execveat of the caller's fd), reaps every
 * orphan and exits with the command, so the kernel kills whatever is left.
 * The caller fills struct capsule_exec and puts it in capsule_spec.exec with
 * the profile "exec" (capsule_profile_find); supervisor/exec.c is the one
 * caller. No policy: which command, environment and roots is the caller's. */
#ifndef WORLD_CAPSULE_EXEC_CAPSULE_H
#define WORLD_CAPSULE_EXEC_CAPSULE_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "common/error.h"

/* Where the init reports the command's end: a line "W <wait status>\n"
 * on the kept fd 3 (capsule_spec.keep_fds[0]), or "E <step>: <errno>\n"
 * when it could not start it. */
#define CAPSULE_EXEC_STATUS_FD 3

struct capsule_exec {
	const char *const *argv;          /* NULL-terminated; argv[0] as the command sees it */
	const char *const *envp;          /* exactly the environment */
	const char *worktree;             /* host directory, bound read-write at /work */
	const char *cwd_rel;              /* "" / "." / NULL = /work, else a relative path without ".." */
	const char *const *protected_names; /* single names in the worktree made read-only; may be NULL */
	const char *cache_dir;            /* host directory bound read-write at /cache, or NULL (no /cache) */
	const char *const *read_roots;    /* absolute host directories bound read-only at their paths; may be NULL */
};

/* The per-run state capsule.c keeps beside its child plan (opaque there). */
struct exec_plan;

/* In the caller, before the clone: check the request, open the worktree and
 * the cache (O_PATH|O_DIRECTORY|O_NOFOLLOW; as root also their detached
 * clones, read-write, nosuid, nodev), look up what of the layout exists.
 * *script is set when argv0_fd starts with "#!". NULL with err (WX_BAD_INPUT,
 * WX_NOT_FOUND, WX_SETUP). */
struct capsule_profile;
struct exec_plan *exec_plan_new(const struct capsule_profile *p, const struct capsule_exec *x, int argv0_fd,
                                bool root_mode, bool *script, struct world_err *err);
void exec_plan_free(struct exec_plan *pl);
/* In the caller, after the clone (as root): idmap the worktree and cache
 * clones so that their owner reads and writes as the capsule's host id.
 * note says what was done. */
void exec_plan_idmap(struct exec_plan *pl, unsigned host_id, char *note, size_t len);

/* In the child, mounts private, before pivot_root: clone every host tree
 * the layout binds, mount the new root's tmpfs (opts) on mnt, chdir there
 * and make every mount of the layout. -1 with errno and *step naming the
 * failed step. */
int exec_plan_mount(const struct exec_plan *pl, const char *mnt, const char *opts, const char **step);
/* In the child, with CAP_NET_ADMIN of its own network namespace: loopback up. */
int exec_plan_loopback(void);
/* In the child, after no_new_privs: the landlock domain matching the
 * mounts under ABI abi (> 0). -1 with errno. */
int exec_plan_landlock(const struct exec_plan *pl, int abi);
/* The init (capsule_spec.inside with arg = the struct exec_plan). */
struct capsule_ctx;
int exec_plan_init(const struct capsule_ctx *ctx, void *arg);
#endif
