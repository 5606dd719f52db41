/* capsule/capsule_int.h: what capsule/'s own files share (not for callers
 * outside capsule/).
 *
 * Owns: the seams between the setup sequence (capsule.c), the cgroup manager
 * (cgroups.c) and the namespace lifecycle (namespaces.c) -- a handle's
 * groups taken, attached, counted and put back; its mount namespace held
 * and released; the shared network namespace and the template mount
 * namespace entered around the clone -- and the small file helpers the
 * three use. Also what capsule.c shares with exec_capsule.c: the landlock
 * ABI structures Debian 12's headers lack, and the idmapping of a detached
 * mount. */
#ifndef WORLD_CAPSULE_INT_H
#define WORLD_CAPSULE_INT_H
#include "capsule/capsule.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* Landlock ABI structures, carried here (Debian 12 headers stop at ABI 1). */
#define WORLD_LL_RULE_PATH_BENEATH 1
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
struct world_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};
struct world_ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* Idmap the detached mount tree (MOUNT_ATTR_IDMAP) through a user namespace
 * mapping owner uid/gid to host_id, so the capsule's host id reads (and, on
 * a writable mount, writes) as the owner. Root only. 0, or -1 with note
 * saying why not (the tree is left as it was). */
int capsule_idmap_tree(int tree, uid_t uid, gid_t gid, unsigned host_id, char *note, size_t len);
/* The same for several trees of one owner (one user namespace for all). */
int capsule_idmap_trees(const int *trees, size_t ntrees, uid_t uid, gid_t gid, unsigned host_id, char *note,
                        size_t len);

/* ---- small helpers (cgroupfs and procfs files are short) ----------------- */

/* Write text to an existing file; 0, or -1 with errno. */
static inline int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) return -1;
	size_t len = strlen(text);
	ssize_t w = write(fd, text, len);
	int e = errno;
	if (close(fd) < 0 && w >= 0) return -1;
	if (w != (ssize_t)len) {
		errno = w < 0 ? e : EIO;
		return -1;
	}
	return 0;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Copy src into dst (cap bytes); -1 when it does not fit. */
static inline int copy_str(char *dst, size_t cap, const char *src)
{
	size_t l = strlen(src);
	if (l >= cap) return -1;
	memcpy(dst, src, l + 1);
	return 0;
}

/* Read at most cap - 1 bytes of path, NUL-terminated; the length, or -1
 * with errno. */
static inline int read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return -1;
	ssize_t n = read(fd, buf, cap - 1);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	buf[n] = 0;
	return (int)n;
}

static inline void close_fd(int *fd)
{
	if (*fd >= 0) close(*fd);
	*fd = -1;
}

/* A directory to mount a new root on (the capsule's, or the template's). */
static inline const char *pick_mount_point(void)
{
	static const char *const cands[] = { "/tmp", "/mnt", "/var/tmp", NULL };
	for (size_t i = 0; cands[i]; i++) {
		struct stat st;
		if (lstat(cands[i], &st) == 0 && S_ISDIR(st.st_mode)) return cands[i];
	}
	return NULL;
}

/* A handle holding nothing: every fd and pool slot -1. */
static inline void handle_init(struct capsule_handle *h)
{
	memset(h, 0, sizeof *h);
	h->pid = -1;
	h->pidfd = h->notify_fd = h->setup_fd = h->mntns_fd = h->mntns_req = -1;
	h->cg_slot[0] = h->cg_slot[1] = -1;
}

/* ---- cgroups.c: a capsule's groups (ci: 0 memory, 1 pids) --------------- */

/* Take a group for controller ci from the pool, or make one, with the
 * limit of lim; without one the capsule has rlimits only (h->cg_note). */
void cg_take(struct capsule_handle *h, const struct capsule_limits *lim, int ci);
/* From the clone on, h->pid is known to the exit and signal cleanup. */
void cg_publish(struct capsule_handle *h);
/* Move h->pid into its v1 group ci; 0, or -1 with errno. */
int cg_attach(struct capsule_handle *h, int ci);
/* The limit-hit counter of h's group ci (h->cg_slot[ci] >= 0). */
long cg_hits(struct capsule_handle *h, int ci);
/* After the reap (or a failed start): the group back to the pool when it
 * is empty, else removed; h->cg_slot[ci] is -1 after. */
void cg_put(struct capsule_handle *h, int ci);

/* ---- namespaces.c: the capsule's mount namespace, the shared network ----
 * namespace, the template mount namespace */

/* After the clone: a reference of our own to the capsule's mount namespace,
 * handed to the closer thread (h->mntns_fd, h->mntns_req). */
void mntns_hold(struct capsule_handle *h);
/* After the reap: close our reference and let the closer drop the last. */
void mntns_release(struct capsule_handle *h);
/* Wait until the closer has dropped what mntns_release handed it. */
void mntns_wait(struct capsule_handle *h);

/* The calling thread into the shared empty network namespace (see
 * capsule_netns_share): an fd to the thread's own one, to go back to with
 * setns; -1 when there is none to share, or the thread stays where it is. */
int netns_enter_shared(void);

/* The calling thread, with its signals blocked, in the template mount
 * namespace (1), or as it was (0: no template, or this thread may not
 * enter it). Undone by tmpl_leave; -1 with errno if the way back failed
 * (the thread is stranded in the template: the caller says so loudly). */
struct tmpl_stay { int own_ns, own_cwd; sigset_t mask; };
int tmpl_enter(struct tmpl_stay *t);
int tmpl_leave(struct tmpl_stay *t);
#endif
