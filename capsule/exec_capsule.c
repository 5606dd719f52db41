/* capsule/exec_capsule.c: the exec capsule's root, loopback, landlock
 * domain and init (see exec_capsule.h; the sequence around them is
 * capsule_start's, capsule.c). The child side allocates nothing: it reads
 * its copy of the plan the caller prepared. */
#include "capsule/exec_capsule.h"
#include "capsule/capsule.h"
#include "capsule/capsule_int.h"
#include "capsule/profile.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define EX_MAX_SYS 16
#define EX_MAX_MASK 40
#define EX_MAX_DEV 8
#define EX_MAX_ROOTS 16
#define EX_MAX_PROT 32

enum { EXS_DIR, EXS_LINK };

struct ex_tree {          /* a host directory bound into the root */
	char path[PATH_MAX];  /* host path = inside path (canonical) */
	dev_t dev;
	ino_t ino;
};

struct exec_plan {
	const struct capsule_profile *p;
	const struct capsule_exec_layout *x;
	const char *const *argv;
	const char *const *envp;
	struct { int kind; char path[64]; char target[PATH_MAX]; } sys[EX_MAX_SYS];
	size_t nsys;
	struct { char rel[128]; bool dir; } mask[EX_MAX_MASK];
	size_t nmask;
	char dev[EX_MAX_DEV][32];
	size_t ndev;
	struct ex_tree roots[EX_MAX_ROOTS];
	size_t nroots;
	/* The worktree and the cache: the caller's O_PATH fds (held until
	 * setup is done), and as root their detached clones (else -1: the
	 * child clones them after checking the inode). */
	struct ex_tree wt, cache;
	bool has_cache;
	int wt_fd, cache_fd, wt_tree, cache_tree;
	uid_t wt_uid, cache_uid;
	gid_t wt_gid, cache_gid;
	char prot[EX_MAX_PROT][NAME_MAX + 1];
	size_t nprot;
	char cwd[PATH_MAX];
	char tmp_opts[96];
};

static int perr(struct world_err *err, int code, const char *fmt, const char *a, const char *b)
{
	return werr(err, code, fmt, a, b);
}

void exec_plan_free(struct exec_plan *pl)
{
	if (!pl) return;
	int *fds[] = { &pl->wt_fd, &pl->cache_fd, &pl->wt_tree, &pl->cache_tree };
	for (size_t i = 0; i < 4; i++)
		if (*fds[i] >= 0) close(*fds[i]);
	free(pl);
}

/* Open a host directory (no symlink at its last component), its canonical
 * path, identity and owner; as root also its detached clone, nosuid,nodev. */
static int open_dir(const char *what, const char *dir, bool root_mode, struct ex_tree *t, int *fd_out, int *tree_out,
                    uid_t *uid, gid_t *gid, struct world_err *err)
{
	int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return werr(err, e == ENOENT ? WX_NOT_FOUND : WX_BAD_INPUT, "exec capsule: %s %s: %s", what, dir,
		            e == ENOTDIR ? "not a directory (or a symlink, which is refused)" : strerror(e));
	}
	*fd_out = fd;
	char link[64];
	struct stat st;
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = fstat(fd, &st) < 0 ? -1 : readlink(link, t->path, sizeof t->path - 1);
	if (n < 0 || (size_t)n >= sizeof t->path - 1 || t->path[0] != '/')
		return werr(err, WX_SETUP, "exec capsule: %s %s: canonical path: %s", what, dir,
		            strerror(n < 0 ? errno : ENAMETOOLONG));
	t->path[n] = 0;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	*uid = st.st_uid;
	*gid = st.st_gid;
	if (!root_mode) return 0;
	int tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0) return werr(err, WX_SETUP, "exec capsule: %s %s: open_tree: %s", what, dir, strerror(errno));
	*tree_out = tree;
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
		return werr(err, WX_SETUP, "exec capsule: %s %s: mount_setattr: %s", what, dir, strerror(errno));
	return 0;
}

static bool under(const char *path, const char *top)
{
	size_t l = strlen(top);
	return strncmp(path, top, l) == 0 && (path[l] == 0 || path[l] == '/');
}

struct exec_plan *exec_plan_new(const struct capsule_profile *p, const struct capsule_exec *x, int argv0_fd,
                                bool root_mode, bool *script, struct world_err *err)
{
	if (!x->argv || !x->argv[0] || !x->envp || !x->worktree) {
		werr(err, WX_USAGE, "exec capsule: argv, envp and worktree are required");
		return NULL;
	}
	struct exec_plan *pl = calloc(1, sizeof *pl);
	if (!pl) {
		werr(err, WX_SETUP, "exec capsule: out of memory");
		return NULL;
	}
	pl->wt_fd = pl->cache_fd = pl->wt_tree = pl->cache_tree = -1;
	pl->p = p;
	pl->x = p->exec;
	pl->argv = x->argv;
	pl->envp = x->envp;
	const struct capsule_exec_layout *lay = p->exec;
	/* What the command is: a #! script needs its fd across the exec. */
	char head[2];
	*script = pread(argv0_fd, head, 2, 0) == 2 && head[0] == '#' && head[1] == '!';

	if (open_dir("worktree", x->worktree, root_mode, &pl->wt, &pl->wt_fd, &pl->wt_tree, &pl->wt_uid, &pl->wt_gid,
	             err) < 0)
		goto fail;
	if (x->cache_dir) {
		if (open_dir("cache", x->cache_dir, root_mode, &pl->cache, &pl->cache_fd, &pl->cache_tree, &pl->cache_uid,
		             &pl->cache_gid, err) < 0)
			goto fail;
		pl->has_cache = true;
	}
	/* The working directory, below the worktree. */
	const char *rel = x->cwd_rel && *x->cwd_rel && strcmp(x->cwd_rel, ".") ? x->cwd_rel : NULL;
	if (rel) {
		if (rel[0] == '/' || strcmp(rel, "..") == 0 || strncmp(rel, "../", 3) == 0 || strstr(rel, "/../") ||
		    (strlen(rel) >= 3 && strcmp(rel + strlen(rel) - 3, "/..") == 0)) {
			perr(err, WX_BAD_INPUT, "exec capsule: cwd %s: %s", rel, "must be relative, without \"..\"");
			goto fail;
		}
		struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
		int cfd = (int)syscall(SYS_openat2, pl->wt_fd, rel, &how, sizeof how);
		if (cfd < 0) {
			perr(err, WX_BAD_INPUT, "exec capsule: cwd %s: %s", rel, strerror(errno));
			goto fail;
		}
		close(cfd);
	}
	if ((size_t)snprintf(pl->cwd, sizeof pl->cwd, "/work%s%s", rel ? "/" : "", rel ? rel : "") >= sizeof pl->cwd) {
		perr(err, WX_BAD_INPUT, "exec capsule: cwd %s: %s", rel, "too long");
		goto fail;
	}
	/* Protected names: each present directory or file is bound over itself
	 * read-only; an absent one (or a symlink, which cannot be bound over)
	 * is not there to protect (docs/exec.md: the caller checks after). */
	for (const char *const *n = x->protected_names; n && *n; n++) {
		if (!**n || strchr(*n, '/') || !strcmp(*n, ".") || !strcmp(*n, "..") || strlen(*n) > NAME_MAX) {
			perr(err, WX_BAD_INPUT, "exec capsule: protected name \"%s\": %s", *n, "not a single name");
			goto fail;
		}
		struct stat st;
		if (fstatat(pl->wt_fd, *n, &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) < 0) {
			if (errno == ENOENT) continue;
			perr(err, WX_SETUP, "exec capsule: protected name %s: %s", *n, strerror(errno));
			goto fail;
		}
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) continue;
		if (pl->nprot == EX_MAX_PROT) {
			perr(err, WX_BAD_INPUT, "exec capsule: protected names: %s%s", "more than 32", "");
			goto fail;
		}
		snprintf(pl->prot[pl->nprot++], sizeof pl->prot[0], "%s", *n);
	}
	/* Read roots: canonical, a directory, never / nor a path the capsule
	 * makes itself. */
	for (const char *const *r = x->read_roots; r && *r; r++) {
		char canon[PATH_MAX];
		if ((*r)[0] != '/' || !realpath(*r, canon)) {
			perr(err, (*r)[0] != '/' ? WX_BAD_INPUT : WX_NOT_FOUND, "exec capsule: read root %s: %s", *r,
			     (*r)[0] != '/' ? "not absolute" : strerror(errno));
			goto fail;
		}
		struct stat st;
		if (stat(canon, &st) < 0 || !S_ISDIR(st.st_mode)) {
			perr(err, WX_BAD_INPUT, "exec capsule: read root %s: %s", *r, "not a directory");
			goto fail;
		}
		static const char *const own[] = { "/work", "/cache", "/tmp", "/proc", "/dev" };
		bool bad = strcmp(canon, "/") == 0 || strcmp(canon, "/tmp") == 0;
		for (size_t i = 0; i < 5 && !bad; i++) bad = i != 2 && under(canon, own[i]);
		if (bad) {
			perr(err, WX_BAD_INPUT, "exec capsule: read root %s: %s", *r,
			     "is / or /tmp, or under a path the capsule makes (/work, /cache, /proc, /dev)");
			goto fail;
		}
		if (pl->nroots == EX_MAX_ROOTS) {
			perr(err, WX_BAD_INPUT, "exec capsule: read roots: %s%s", "more than 16", "");
			goto fail;
		}
		snprintf(pl->roots[pl->nroots].path, sizeof pl->roots[0].path, "%s", canon);
		pl->roots[pl->nroots].dev = st.st_dev;
		pl->roots[pl->nroots++].ino = st.st_ino;
	}
	/* The layout, as this host has it. */
	for (const char *const *d = lay->system; *d && pl->nsys < EX_MAX_SYS; d++) {
		struct stat st;
		if (lstat(*d, &st) < 0) continue;
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(*d, pl->sys[pl->nsys].target, sizeof pl->sys[0].target - 1);
			if (n <= 0) continue;
			pl->sys[pl->nsys].target[n] = 0;
			pl->sys[pl->nsys].kind = EXS_LINK;
		} else if (S_ISDIR(st.st_mode)) {
			pl->sys[pl->nsys].kind = EXS_DIR;
		} else {
			continue;
		}
		snprintf(pl->sys[pl->nsys++].path, sizeof pl->sys[0].path, "%s", *d);
	}
	for (const char *const *m = lay->etc_masked; *m && pl->nmask < EX_MAX_MASK; m++) {
		char path[160];
		struct stat st;
		snprintf(path, sizeof path, "/etc/%s", *m);
		if (lstat(path, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) continue;
		snprintf(pl->mask[pl->nmask].rel, sizeof pl->mask[0].rel, "etc/%s", *m);
		pl->mask[pl->nmask++].dir = S_ISDIR(st.st_mode);
	}
	for (const char *const *d = lay->devices; *d && pl->ndev < EX_MAX_DEV; d++) {
		struct stat st;
		if (stat(*d, &st) < 0 || !S_ISCHR(st.st_mode)) continue;
		snprintf(pl->dev[pl->ndev++], sizeof pl->dev[0], "%s", *d);
	}
	snprintf(pl->tmp_opts, sizeof pl->tmp_opts, "size=%llu,mode=1777", (unsigned long long)lay->tmp_size);
	return pl;
fail:
	exec_plan_free(pl);
	return NULL;
}

void exec_plan_idmap(struct exec_plan *pl, unsigned host_id, char *note, size_t len)
{
	char a[160] = "", b[160] = "";
	/* One user namespace for both when one owner has both (the usual case:
	 * the daemon's user), else one each. */
	if (pl->cache_tree >= 0 && pl->cache_uid == pl->wt_uid && pl->cache_gid == pl->wt_gid) {
		int t[2] = { pl->wt_tree, pl->cache_tree };
		(void)capsule_idmap_trees(t, 2, pl->wt_uid, pl->wt_gid, host_id, a, sizeof a);
		snprintf(note, len, "/work and /cache %s", a);
		return;
	}
	if (pl->wt_tree >= 0) (void)capsule_idmap_tree(pl->wt_tree, pl->wt_uid, pl->wt_gid, host_id, a, sizeof a);
	if (pl->cache_tree >= 0)
		(void)capsule_idmap_tree(pl->cache_tree, pl->cache_uid, pl->cache_gid, host_id, b, sizeof b);
	snprintf(note, len, "/work %s%s%s", a, b[0] ? "; /cache " : "", b);
}

/* ---- the child ------------------------------------------------------------ */

#define STEP(cond, s) do { if (!(cond)) { *step = (s); return -1; } } while (0)

/* A detached clone of a host path in the caller's (copied) namespace: not
 * recursive where the kernel allows it (a mount with locked mounts below
 * it must be cloned whole), with attrs set on all of it. */
static int clone_path(int dirfd, const char *path, uint64_t set)
{
	unsigned rec = 0, empty = *path ? 0 : AT_EMPTY_PATH;
	int tree = (int)syscall(SYS_open_tree, dirfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | empty);
	if (tree < 0 && errno == EINVAL) {
		rec = AT_RECURSIVE;
		tree = (int)syscall(SYS_open_tree, dirfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | empty | AT_RECURSIVE);
	}
	if (tree < 0) return -1;
	struct mount_attr attr = { .attr_set = set };
	if (set && syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | rec, &attr, sizeof attr) < 0) {
		int e = errno;
		close(tree);
		errno = e;
		return -1;
	}
	return tree;
}

static int attach(int tree, const char *at)
{
	int rc = (int)syscall(SYS_move_mount, tree, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH);
	int e = errno;
	close(tree);
	errno = e;
	return rc;
}

/* Unprivileged: the worktree or cache again, from its canonical path in
 * this namespace, without symlinks, required to be the caller's inode. */
static int reopen_tree(const struct ex_tree *t)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, t->path, &how, sizeof how);
	if (fd < 0) return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_dev != t->dev || st.st_ino != t->ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	int tree = clone_path(fd, "", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	int e = errno;
	close(fd);
	errno = e;
	return tree;
}

/* mkdir -p of an absolute path, relative to the cwd (the new root). */
static int mkdirs(const char *abs)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s", abs + 1);
	for (char *s = p; *s; s++) {
		if (*s != '/') continue;
		*s = 0;
		if (mkdir(p, 0755) < 0 && errno != EEXIST) return -1;
		*s = '/';
	}
	return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

int exec_plan_mount(const struct exec_plan *pl, const char *mnt, const char *opts, const char **step)
{
	const uint64_t ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	int sys[EX_MAX_SYS], dev[EX_MAX_DEV], roots[EX_MAX_ROOTS];
	/* 1. every host tree, cloned before the new root covers mnt (a
	 * worktree may live below it) */
	for (size_t i = 0; i < pl->nsys; i++)
		if (pl->sys[i].kind == EXS_DIR) STEP((sys[i] = clone_path(AT_FDCWD, pl->sys[i].path, ro)) >= 0, "clone a system directory");
	for (size_t i = 0; i < pl->ndev; i++)
		STEP((dev[i] = clone_path(AT_FDCWD, pl->dev[i], MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)) >= 0, "clone a device node");
	for (size_t i = 0; i < pl->nroots; i++) {
		STEP((roots[i] = clone_path(AT_FDCWD, pl->roots[i].path, ro)) >= 0, "clone a read root");
		struct stat st;
		STEP(fstat(roots[i], &st) == 0, "stat a read root");
		if (st.st_dev != pl->roots[i].dev || st.st_ino != pl->roots[i].ino) {
			errno = ESTALE;
			*step = "read root replaced during setup";
			return -1;
		}
	}
	int wt = pl->wt_tree, cache = pl->cache_tree;
	if (wt < 0) STEP((wt = reopen_tree(&pl->wt)) >= 0, "open worktree");
	if (pl->has_cache && cache < 0) STEP((cache = reopen_tree(&pl->cache)) >= 0, "open cache");

	/* 2. the new root: mount points and symlinks only */
	STEP(mount("exec-capsule", mnt, "tmpfs", MS_NOSUID | MS_NODEV, opts) == 0, "mount tmpfs root");
	STEP(chdir(mnt) == 0, "chdir new root");
	for (size_t i = 0; i < pl->nsys; i++) {
		const char *rel = pl->sys[i].path + 1;
		if (pl->sys[i].kind == EXS_LINK) {
			STEP(symlink(pl->sys[i].target, rel) == 0, "symlink a system directory");
			continue;
		}
		STEP(mkdir(rel, 0755) == 0, "mkdir a system directory");
		STEP(attach(sys[i], rel) == 0, "bind a system directory");
	}
	/* 3. /dev: a small tmpfs with the host's nodes and the usual links */
	STEP(mkdir("dev", 0755) == 0, "mkdir dev");
	STEP(mount("exec-dev", "dev", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,nr_inodes=64,mode=0755") == 0,
	     "mount /dev tmpfs");
	for (size_t i = 0; i < pl->ndev; i++) {
		const char *rel = pl->dev[i] + 1;
		int fd = open(rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
		STEP(fd >= 0 && close(fd) == 0, "create device mount point");
		STEP(attach(dev[i], rel) == 0, "bind device");
	}
	static const char *const links[][2] = { { "/proc/self/fd", "dev/fd" }, { "/proc/self/fd/0", "dev/stdin" },
	                                        { "/proc/self/fd/1", "dev/stdout" }, { "/proc/self/fd/2", "dev/stderr" } };
	for (size_t i = 0; i < 4; i++) STEP(symlink(links[i][0], links[i][1]) == 0, "symlink in /dev");
	/* a private /dev/shm (POSIX semaphores and shared memory: Python's
	 * multiprocessing), charged to the memory group like /tmp */
	STEP(mkdir("dev/shm", 01777) == 0, "mkdir /dev/shm");
	STEP(mount("exec-shm", "dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64m,mode=1777") == 0,
	     "mount /dev/shm tmpfs");
	/* 4. /etc's secrets: a file under /dev/null, a directory under an
	 * empty read-only tmpfs */
	for (size_t i = 0; i < pl->nmask; i++) {
		if (pl->mask[i].dir) {
			STEP(mount("exec-mask", pl->mask[i].rel, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			           "size=4k,nr_inodes=2,mode=0755") == 0, "mask a directory of /etc");
		} else {
			int t;
			STEP((t = clone_path(AT_FDCWD, "dev/null", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)) >= 0,
			     "clone /dev/null");
			STEP(attach(t, pl->mask[i].rel) == 0, "mask a file of /etc");
		}
	}
	STEP(mount(NULL, "dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0,
	     "remount /dev read-only");
	/* 5. a private /tmp; then the read roots at their own (canonical)
	 * paths (one below /tmp goes inside the private /tmp, read-only) */
	STEP(mkdir("tmp", 01777) == 0, "mkdir tmp");
	STEP(mount("exec-tmp", "tmp", "tmpfs", MS_NOSUID | MS_NODEV, pl->tmp_opts) == 0, "mount /tmp tmpfs");
	for (size_t i = 0; i < pl->nroots; i++) {
		STEP(mkdirs(pl->roots[i].path) == 0, "mkdir a read root");
		STEP(attach(roots[i], pl->roots[i].path + 1) == 0, "bind a read root");
	}
	/* 6. /proc of the pid namespace */
	STEP(mkdir("proc", 0555) == 0, "mkdir proc");
	STEP(mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0, "mount /proc");
	/* 7. the worktree, its protected names read-only over themselves */
	STEP(mkdir("work", 0755) == 0, "mkdir work");
	STEP(attach(wt, "work") == 0, "bind worktree");
	int wfd = open("work", O_PATH | O_DIRECTORY | O_CLOEXEC);
	STEP(wfd >= 0, "open /work");
	for (size_t i = 0; i < pl->nprot; i++) {
		struct open_how how = { .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
		                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV };
		int nfd = (int)syscall(SYS_openat2, wfd, pl->prot[i], &how, sizeof how);
		if (nfd < 0 && errno == ENOENT) continue; /* gone meanwhile: nothing to protect */
		STEP(nfd >= 0, "open a protected name");
		int t = (int)syscall(SYS_open_tree, nfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		close(nfd);
		STEP(t >= 0, "clone a protected name");
		struct mount_attr attr = { .attr_set = ro };
		if (syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
			int e = errno;
			close(t);
			errno = e;
			*step = "protect a name read-only";
			return -1;
		}
		int rc = (int)syscall(SYS_move_mount, t, "", wfd, pl->prot[i], MOVE_MOUNT_F_EMPTY_PATH);
		int e = errno;
		close(t);
		errno = e;
		STEP(rc == 0, "bind a protected name read-only");
	}
	close(wfd);
	/* 8. the cache */
	if (pl->has_cache) {
		STEP(mkdir("cache", 0755) == 0, "mkdir cache");
		STEP(attach(cache, "cache") == 0, "bind cache");
	}
	return 0;
}

int exec_plan_loopback(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) return -1;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (rc == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

static int ll_add(int rs, const char *path, uint64_t rights)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) return errno == ENOENT ? 0 : -1; /* not in this root (no cache, /lib32, ...) */
	struct world_ll_path_beneath_attr pb = { .allowed_access = rights, .parent_fd = fd };
	long rc = syscall(__NR_landlock_add_rule, rs, WORLD_LL_RULE_PATH_BENEATH, &pb, 0);
	int e = errno;
	close(fd);
	errno = e;
	return rc < 0 ? -1 : 0;
}

int exec_plan_landlock(const struct exec_plan *pl, int abi)
{
	struct world_ll_ruleset_attr attr = { .handled_access_fs = capsule_landlock_fs_rights(abi) };
	size_t size = 8;
	if (abi >= 6) {
		/* TCP is not handled (the network namespace is the capsule's own,
		 * loopback only); abstract sockets and signals stay in the domain. */
		attr.scoped = CAPSULE_LL_SCOPE_ABSTRACT_UNIX | CAPSULE_LL_SCOPE_SIGNAL;
		size = 24;
	}
	int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0) return -1;
	struct capsule_ll_rule rules[CAPSULE_LL_MAX_RULES];
	size_t n = capsule_landlock_rules(pl->p, 1, rules);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = ll_add(rs, rules[i].path, capsule_landlock_rule_rights(&rules[i], abi));
	struct capsule_ll_rule root = { "", pl->x->ll_system, 1 };
	for (size_t i = 0; i < pl->nroots && rc == 0; i++)
		rc = ll_add(rs, pl->roots[i].path, capsule_landlock_rule_rights(&root, abi));
	if (rc == 0) rc = (int)syscall(__NR_landlock_restrict_self, rs, 0);
	int e = errno;
	close(rs);
	errno = e;
	return rc < 0 ? -1 : 0;
}

/* ---- the init ------------------------------------------------------------- */

static void report(const char *what, int e)
{
	char msg[160];
	const char *d = strerrordesc_np(e);
	int n = snprintf(msg, sizeof msg, "E %s: %s\n", what, d ? d : "unknown error");
	if (n > 0) {
		ssize_t w = write(CAPSULE_EXEC_STATUS_FD, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
		(void)w;
	}
}

/* The command's side: 0-2, and fd 10 for a #! script (else close-on-exec);
 * the status channel only until the exec. */
static int command_main(void *arg)
{
	const struct exec_plan *pl = arg;
	if (fcntl(CAPSULE_EXEC_STATUS_FD, F_SETFD, FD_CLOEXEC) < 0 ||
	    syscall(SYS_close_range, CAPSULE_EXEC_STATUS_FD + 1, CAPSULE_INTERP_FD - 1, 0) < 0 ||
	    syscall(SYS_close_range, CAPSULE_INTERP_FD + 1, ~0U, 0) < 0) {
		report("close fds", errno);
		_exit(127);
	}
	syscall(SYS_execveat, CAPSULE_INTERP_FD, "", (char *const *)pl->argv, (char *const *)pl->envp, AT_EMPTY_PATH);
	report("execveat", errno);
	_exit(127);
}

int exec_plan_init(const struct capsule_ctx *ctx, void *arg)
{
	(void)ctx;
	const struct exec_plan *pl = arg;
	if (chdir(pl->cwd) < 0) {
		report("chdir", errno);
		return 127;
	}
	/* The command, started as posix_spawn does: sharing the init's memory
	 * (no copy of the caller's page tables, which the init still carries)
	 * on a stack of its own, the init suspended until the exec. */
	static char stack[64 * 1024] __attribute__((aligned(16)));
	pid_t pid = clone(command_main, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)pl);
	if (pid < 0) {
		report("fork the command", errno);
		return 127;
	}
	/* Reap every orphan until the command ends; then exit, and the kernel
	 * kills whatever is left in the pid namespace. */
	close(CAPSULE_INTERP_FD);
	for (;;) {
		int st;
		pid_t r = (pid_t)syscall(SYS_wait4, -1, &st, 0, NULL);
		if (r == pid) {
			char msg[32];
			int n = snprintf(msg, sizeof msg, "W %d\n", st);
			ssize_t w = write(CAPSULE_EXEC_STATUS_FD, msg, (size_t)n);
			(void)w;
			return 0;
		}
		if (r < 0 && errno != EINTR) break;
	}
	report("wait", errno);
	return 127;
}
