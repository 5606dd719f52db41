/* capsule/capsule.c: the setup sequence of capsule/ (see capsule.h).
 *
 * Owns: starting a capsule -- the child plan prepared in the caller, the
 * seccomp filter, clone3, the id maps, the child's steps (identity, mounts
 * and the tmpfs root, fds and rlimits, capabilities, landlock, seccomp),
 * the listener's handover -- and the denial listener, killing and reaping
 * (the final report, the phase timings). The groups a capsule runs in come
 * from the cgroup manager (capsule/cgroups.c), its mount namespace's
 * release, the shared network namespace and the template from the
 * namespace lifecycle (capsule/namespaces.c), both through capsule_int.h.
 * The child side uses only memory prepared before the clone and reports any
 * failure as one line on the setup pipe. */
#include "capsule/capsule.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <dirent.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>
#include <linux/securebits.h>
#include <linux/openat2.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef SECCOMP_GET_NOTIF_SIZES
#define SECCOMP_GET_NOTIF_SIZES 3
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#include "capsule/capsule_int.h"
#include "capsule/exec_capsule.h"

#define SETUP_EXIT 125        /* exit status of a capsule whose setup failed */
#define GO_FD 11              /* parent -> child sync pipe inside the child */
#define ERR_FD CAPSULE_SETUP_FD /* child -> parent setup channel inside the child */
#define SETUP_TIMEOUT_MS 10000

/* ---- the child ---------------------------------------------------------- */

struct child_plan {
	const struct capsule_spec *spec;
	const struct capsule_profile *p;
	struct sock_fprog prog;
	int ll_abi;
	bool root_mode;
	const char *mnt;        /* where the new root is mounted before pivot_root (or the move, in the template) */
	bool in_template;       /* cloned from the template mount namespace: move + chroot, nothing to detach */
	int go_fd, err_fd;      /* as inherited, before renumbering */
	int go_peer, ep_peer;   /* the parent's ends, closed first thing in the child */
	char opts_root[64], opts_cache[64];
	const char *argv[64];
	struct capsule_ctx ctx;
	int kept[CAPSULE_MAX_KEEP_FDS];
	uint64_t ts[6];
	/* The worktree (spec->worktree): its canonical path as the caller's fd
	 * names it, and the identity the child must find there. */
	bool has_worktree;
	int wt_tree;            /* as root: the caller's detached clone of the worktree, or -1 */
	char worktree[PATH_MAX];
	dev_t wt_dev;
	ino_t wt_ino;
	uid_t wt_uid;           /* the worktree's owner, mapped to the capsule user (as root) */
	gid_t wt_gid;
	struct exec_plan *ex;   /* an exec capsule's plan (exec_capsule.h), or NULL */
	bool ex_script;         /* its command is a #! script: fd 10 crosses the exec */
	struct capsule_limits lim; /* the limits applied (the spec's, else the profile's) */
};

/* Report "capsule setup: STEP: strerror" on the setup pipe and exit. */
static void __attribute__((noreturn)) child_fail(int fd, const char *step, int e)
{
	char msg[400];
	/* strerrordesc_np: no locale lookup (no lock another thread may hold) */
	const char *desc = strerrordesc_np(e);
	int n = snprintf(msg, sizeof msg, "Ecapsule setup: %s: %s", step, desc ? desc : "unknown error");
	if (n > 0) {
		ssize_t w = write(fd, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1));
		(void)w;
	}
	_exit(SETUP_EXIT);
}

#define CHECK(cond, step) do { if (!(cond)) child_fail(errfd, (step), errno); } while (0)

static bool is_writable(const struct capsule_profile *p, const char *name)
{
	for (const char *const *w = p->writable; w && *w; w++)
		if (strcmp(*w, name) == 0) return true;
	return false;
}

/* The spec stages an entry of exactly this name (a file, or "dir/"). */
static bool is_staged(const struct capsule_spec *s, const char *name)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (strcmp(s->files[i].name, name) == 0) return true;
	return false;
}

static int stage_file(const struct capsule_file *f, bool writable)
{
	char path[PATH_MAX];
	size_t l = strlen(f->name);
	if (l == 0 || l >= sizeof path || f->name[0] == '/' || strstr(f->name, "..")) {
		errno = EINVAL;
		return -1;
	}
	memcpy(path, f->name, l + 1);
	/* make the parent directories */
	for (char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		if (mkdir(path, 0755) < 0 && errno != EEXIST) return -1;
		*s = '/';
	}
	if (path[l - 1] == '/') return 0; /* a directory: made above */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, writable ? 0600 : 0444);
	if (fd < 0) return -1;
	const char *d = f->data;
	for (size_t off = 0; off < f->len;) {
		ssize_t w = write(fd, d + off, f->len - off);
		if (w < 0 && errno == EINTR) continue;
		if (w < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		off += (size_t)w;
	}
	return close(fd);
}

static int landlock_apply(const struct child_plan *c)
{
	const struct capsule_profile *p = c->p;
	uint64_t fs = capsule_landlock_fs_rights(c->ll_abi);
	struct world_ll_ruleset_attr attr = { .handled_access_fs = fs };
	size_t size = 8;
	if (c->ll_abi >= 4) {
		attr.handled_access_net = CAPSULE_LL_NET_BIND_TCP | CAPSULE_LL_NET_CONNECT_TCP;
		size = 16;
	}
	if (c->ll_abi >= 6) {
		attr.scoped = CAPSULE_LL_SCOPE_ABSTRACT_UNIX | CAPSULE_LL_SCOPE_SIGNAL;
		size = 24;
	}
	int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0) return -1;
	/* The rules of the profile's table (capsule_landlock_rules, which
	 * `profile show` prints). What each path is, known from the setup (no
	 * fstat): the root, the cache and the worktree are directories (made
	 * here, or opened O_DIRECTORY); a device is bound onto a file made for
	 * it (a bind of a directory onto a file fails); a writable file was
	 * opened O_WRONLY (which a directory refuses). */
	struct capsule_ll_rule rules[CAPSULE_LL_MAX_RULES];
	size_t n = capsule_landlock_rules(p, c->has_worktree, rules);
	for (size_t i = 0; i < n; i++) {
		int fd = open(rules[i].path, O_PATH | O_CLOEXEC);
		if (fd < 0) {
			close(rs);
			return -1;
		}
		struct world_ll_path_beneath_attr pb = { .allowed_access = capsule_landlock_rule_rights(&rules[i], c->ll_abi),
		                                         .parent_fd = fd };
		long rc = syscall(__NR_landlock_add_rule, rs, WORLD_LL_RULE_PATH_BENEATH, &pb, 0);
		int e = errno;
		close(fd);
		if (rc < 0) {
			close(rs);
			errno = e;
			return -1;
		}
	}
	long rc = syscall(__NR_landlock_restrict_self, rs, 0);
	int e = errno;
	close(rs);
	errno = e;
	return rc < 0 ? -1 : 0;
}

/* The worktree, in the child, unprivileged (as root the caller already
 * cloned it: open_worktree), before anything is mounted over the old
 * root's paths (the new root goes on /tmp). The caller's O_PATH fd names a mount of the
 * caller's namespace, which the kernel will not bind into this one
 * (open_tree and bind mounts require a mount of the caller's own
 * namespace), so the directory is resolved again here, from its canonical
 * path, refusing every symlink and magic link on the way, and must be the
 * directory the caller opened (same device and inode; the caller holds its
 * fd until setup is done, so the inode cannot be reused meanwhile). The
 * mount is a detached, non-recursive clone of that fd, made read-only,
 * nosuid, nodev and noexec before it is attached at worktree_mount. */
static int open_worktree_tree(const struct child_plan *c)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, c->worktree, &how, sizeof how);
	if (fd < 0) return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_dev != c->wt_dev || st.st_ino != c->wt_ino) {
		close(fd);
		errno = ESTALE; /* another directory is there now */
		return -1;
	}
	int tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	int e = errno;
	close(fd);
	errno = e;
	return tree;
}

/* Attach the detached clone at worktree_mount (relative to the new root,
 * the cwd), read-only, nosuid, nodev, noexec. Consumes tree. */
static int mount_worktree(const struct child_plan *c, int tree)
{
	const char *at = c->p->worktree_mount + 1;
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	                                       MOUNT_ATTR_NOEXEC };
	if (mkdir(at, 0755) < 0 || syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0 ||
	    syscall(SYS_move_mount, tree, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		int e = errno;
		close(tree);
		errno = e;
		return -1;
	}
	return close(tree);
}

static int dup_high(int fd)
{
	return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 100);
}

static void __attribute__((noreturn)) child_run(struct child_plan *c)
{
	int errfd = c->err_fd;
	const struct capsule_spec *s = c->spec;
	const struct capsule_profile *p = c->p;
	char go;

	/* A clean process state, whatever the caller had: default signal
	 * dispositions (ignored signals would survive the exec), an empty
	 * signal mask, umask 022. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	CHECK(sigprocmask(SIG_SETMASK, &none, NULL) == 0, "reset the signal mask");
	umask(022);
	/* A session (and process group) of its own, without a controlling
	 * terminal: a terminal's ^C, ^\ or hangup goes to the caller's
	 * foreground group only, never to the untrusted interpreter (the caller
	 * decides, and kills the capsule: capsule_exit_on_interrupt), and the
	 * capsule can never read from or write to the caller's terminal by
	 * reopening it. */
	CHECK(setsid() >= 0, "setsid");

	/* 0. die with the caller: the parent's ends of both channels go at
	 * once (so a parent that dies before 'G' gives EOF, not a wait
	 * forever), and the death signal is set now (the id change in step 1
	 * clears it; it is set again there). */
	close(c->go_peer);
	close(c->ep_peer);
	CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0, "prctl PR_SET_PDEATHSIG");

	/* 0. wait until the parent has written the id maps */
	CHECK(read(c->go_fd, &go, 1) == 1 && go == 'G', "wait for the parent");

	/* 1. the capsule user (inside id 1000, mapped by the parent). Raw
	 * syscalls: glibc's wrappers broadcast the change to every thread it
	 * believes exists ("setxid"), and a raw clone of a threaded caller
	 * inherits that list and can wait forever for a thread that is not
	 * here. This child has exactly one thread. */
	if (c->root_mode) CHECK(syscall(SYS_setgroups, 0, NULL) == 0, "setgroups");
	CHECK(syscall(SYS_setresgid, CAPSULE_INSIDE_ID, CAPSULE_INSIDE_ID, CAPSULE_INSIDE_ID) == 0, "setresgid");
	CHECK(syscall(SYS_setresuid, CAPSULE_INSIDE_ID, CAPSULE_INSIDE_ID, CAPSULE_INSIDE_ID) == 0, "setresuid");
	CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0, "prctl PR_SET_PDEATHSIG");
	/* The cgroup namespace is rooted at the caller's group, above the
	 * capsule's own (the parent attaches us meanwhile; see 'C' below). */
	if (p->namespaces & CLONE_NEWCGROUP) CHECK(unshare(CLONE_NEWCGROUP) == 0, "unshare cgroup namespace");
	c->ts[0] = now_ns();
	/* 2. mounts: private; tmpfs root with the staged files; pivot_root (or,
	 * from the template mount namespace, a move over its root) */
	if (!c->in_template) /* the template's one mount is private already */
		CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "make mounts private");
	if (c->ex) {
		/* The exec capsule's root: host system directories, read roots,
		 * worktree, cache, /tmp, /dev, /proc (exec_capsule.c), then the
		 * same pivot_root and read-only root as below. */
		const char *step = "exec root";
		if (exec_plan_mount(c->ex, c->mnt, c->opts_root, &step) < 0) child_fail(errfd, step, errno);
		CHECK(syscall(SYS_pivot_root, ".", ".") == 0, "pivot_root");
		CHECK(umount2(".", MNT_DETACH) == 0, "detach old root");
		CHECK(chdir("/") == 0, "chdir /");
		CHECK(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		            NULL) == 0, "remount root read-only");
		CHECK(exec_plan_loopback() == 0, "bring up loopback");
		goto mounted;
	}
	int wt_tree = c->wt_tree;
	if (c->has_worktree && wt_tree < 0) CHECK((wt_tree = open_worktree_tree(c)) >= 0, "open worktree");
	CHECK(mount("capsule", c->mnt, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, c->opts_root) == 0,
	      "mount tmpfs root");
	CHECK(chdir(c->mnt) == 0, "chdir new root");
	for (size_t i = 0; i < s->nfiles; i++)
		CHECK(stage_file(&s->files[i], is_writable(p, s->files[i].name)) == 0, "stage file");
	/* The profile's writable files: each its own rw mount of the file onto
	 * itself, so the read-only remount of the root below spares it (mount
	 * flags are per mount) and it can be rewritten in place but never
	 * renamed, unlinked or joined by a new file. Created empty if not staged. */
	for (const char *const *w = p->writable; w && *w; w++) {
		if (!is_staged(s, *w)) { /* staged: stage_file made it, O_EXCL */
			int fd = open(*w, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
			CHECK(fd >= 0 && close(fd) == 0, "create writable file");
		}
		CHECK(mount(*w, *w, NULL, MS_BIND, NULL) == 0, "bind writable file");
		CHECK(mount(NULL, *w, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0,
		      "remount writable file nosuid,nodev,noexec");
	}
	if (!is_staged(s, ".capsule-cache/"))
		CHECK(mkdir(".capsule-cache", 0700) == 0 || errno == EEXIST, "mkdir .capsule-cache");
	CHECK(mount("capsule-cache", ".capsule-cache", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	            c->opts_cache) == 0, "mount tmpfs .capsule-cache");
	if (c->has_worktree) CHECK(mount_worktree(c, wt_tree) == 0, "mount worktree");
	for (const char *const *d = p->devices; d && *d; d++) {
		const char *rel = *d + 1;
		CHECK(mkdir("dev", 0755) == 0 || errno == EEXIST, "mkdir dev");
		int fd = open(rel, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
		CHECK(fd >= 0 && close(fd) == 0, "create device mount point");
		CHECK(mount(*d, rel, NULL, MS_BIND, NULL) == 0, "bind device");
		CHECK(mount(NULL, rel, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NOEXEC, NULL) == 0,
		      "remount device nosuid,noexec");
	}
	if (c->in_template) {
		/* The namespace holds only the template's empty read-only root:
		 * the new root goes over it and becomes this process's root. No
		 * host mount was ever here, so nothing is detached (and no RCU
		 * grace period waited for). */
		CHECK(mount(".", "/", NULL, MS_MOVE, NULL) == 0, "move the new root over the template's");
		CHECK(chroot(".") == 0, "chroot new root");
	} else {
		CHECK(syscall(SYS_pivot_root, ".", ".") == 0, "pivot_root");
		CHECK(umount2(".", MNT_DETACH) == 0, "detach old root");
	}
	CHECK(chdir("/") == 0, "chdir /");
	CHECK(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
	            NULL) == 0, "remount root read-only");
mounted:
	if (p->namespaces & CLONE_NEWUTS)
		CHECK(sethostname(p->hostname, strlen(p->hostname)) == 0, "sethostname");

	c->ts[1] = now_ns();
	/* 4 (fds first: renumbering needs room above RLIMIT_NOFILE). Every fd
	 * but 0-2, the kept fds (3..), the pinned interpreter (10) and the two
	 * setup pipes (11, 12; close-on-exec) is closed. */
	int t_in = dup_high(s->stdin_fd), t_out = dup_high(s->stdout_fd), t_err = dup_high(s->stderr_fd);
	int t_keep[CAPSULE_MAX_KEEP_FDS];
	for (size_t i = 0; i < s->nkeep; i++) CHECK((t_keep[i] = dup_high(s->keep_fds[i])) >= 0, "dup kept fd");
	int t_interp = dup_high(s->interp_fd), t_go = dup_high(c->go_fd), t_errp = dup_high(errfd);
	CHECK(t_interp >= 0 && t_go >= 0 && t_errp >= 0 && (s->stdin_fd < 0 || t_in >= 0) &&
	      (s->stdout_fd < 0 || t_out >= 0) && (s->stderr_fd < 0 || t_err >= 0), "dup fds");
	CHECK(dup3(t_errp, ERR_FD, O_CLOEXEC) == ERR_FD, "dup setup pipe");
	errfd = ERR_FD;
	CHECK(dup3(t_go, GO_FD, O_CLOEXEC) == GO_FD, "dup sync pipe");
	/* A #! command is run by its interpreter from /dev/fd/10: that fd
	 * crosses the exec (and only then). */
	CHECK(dup3(t_interp, CAPSULE_INTERP_FD, c->ex_script ? 0 : O_CLOEXEC) == CAPSULE_INTERP_FD,
	      "dup interpreter fd");
	int stdio_t[3] = { t_in, t_out, t_err };
	for (int i = 0; i < 3; i++) {
		if (stdio_t[i] >= 0) CHECK(dup2(stdio_t[i], i) == i, "dup stdio");
		else if (close(i) < 0 && errno != EBADF) child_fail(errfd, "close stdio", errno);
	}
	for (size_t i = 0; i < s->nkeep; i++) {
		CHECK(dup2(t_keep[i], 3 + (int)i) == 3 + (int)i, "renumber kept fd");
		c->kept[i] = 3 + (int)i;
	}
	CHECK(syscall(SYS_close_range, 3 + (unsigned)s->nkeep, CAPSULE_INTERP_FD - 1, 0) == 0, "close_range");
	CHECK(syscall(SYS_close_range, ERR_FD + 1, ~0U, 0) == 0, "close_range");

	/* 3. rlimits: the profile's table (capsule_profile_rlimits, which
	 * `profile show` prints), RLIMIT_NOFILE after the listener's handover,
	 * below */
	struct capsule_rlimit rl[CAPSULE_NRLIMITS];
	struct capsule_profile with_lim = *p; /* this child's copy: the limits applied */
	with_lim.limits = c->lim;
	size_t nrl = capsule_profile_rlimits(&with_lim, rl);
	for (size_t i = 0; i < nrl; i++) {
		if (rl[i].resource == RLIMIT_NOFILE) continue;
		struct rlimit r = { rl[i].soft, rl[i].hard };
		char step[40];
		snprintf(step, sizeof step, "setrlimit %s", rl[i].name);
		CHECK(setrlimit(rl[i].resource, &r) == 0, step);
	}

	c->ts[2] = now_ns();

	/* 4. capabilities: lock root semantics off, empty bounding and ambient
	 * sets, then clear effective/permitted/inheritable; no_new_privs. */
	CHECK(prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
	            SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
	            SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) == 0,
	      "prctl PR_SET_SECUREBITS");
	/* The kernel's capabilities are 0..CAP_LAST_CAP without a gap, and a
	 * number past the last gives EINVAL (cap_valid): the first EINVAL ends
	 * the set, so the ~23 numbers above it are not asked one by one. */
	for (cap_value_t cv = 0; cv <= 63; cv++) {
		if (prctl(PR_CAPBSET_DROP, cv, 0, 0, 0) == 0) continue;
		if (errno == EINVAL && cv > 0) break;
		child_fail(errfd, "drop bounding set", errno);
	}
	CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == 0, "clear ambient capabilities");
	/* Empty effective, permitted and inheritable sets: what libcap's
	 * cap_set_proc of an empty cap_t does, without its cap_init (a capget
	 * and an allocation in the parent for every capsule). */
	struct __user_cap_header_struct caph = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct capd[_LINUX_CAPABILITY_U32S_3];
	memset(capd, 0, sizeof capd);
	CHECK(syscall(SYS_capset, &caph, capd) == 0, "clear capabilities");
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "prctl PR_SET_NO_NEW_PRIVS");
	/* Not dumpable: this process is a copy of the caller's memory (its
	 * environment, its heap, its fds), and an inside callback or an exec
	 * capsule's init runs on as that copy. Unprivileged, the capsule's
	 * processes share its uid: dumpable, its /proc/PID/{environ,maps,mem,fd}
	 * would be theirs to read (and its status pipe theirs to write). A
	 * non-dumpable process is ptrace-accessible only with CAP_SYS_PTRACE in
	 * the caller's user namespace. An exec of the interpreter or of the
	 * command sets its own new image dumpable again (only its own memory).
	 * Before seccomp, which does not allow PR_SET_DUMPABLE. */
	bool nodump = true;
#ifdef WORLD_TEST_HOOKS
	/* TEST HOOK: WORLD_TEST_CAPSULE_DUMPABLE=1 leaves it dumpable (the
	 * control of tests/supervisor/exec.sh). */
	const char *td = getenv("WORLD_TEST_CAPSULE_DUMPABLE");
	if (td && strcmp(td, "1") == 0) nodump = false;
#endif
	if (nodump) CHECK(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0, "prctl PR_SET_DUMPABLE 0");

	c->ts[3] = now_ns();
	/* 5. landlock, then seccomp (the listener goes to the parent) */
	if (c->ll_abi > 0 && p->landlock)
		CHECK((c->ex ? exec_plan_landlock(c->ex, c->ll_abi) : landlock_apply(c)) == 0, "landlock");
	c->ts[4] = now_ns();
	int lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &c->prog);
	CHECK(lfd >= 0, "seccomp filter");
	c->ts[5] = now_ns();
	/* Hand the listener to the parent (SCM_RIGHTS; the filter allows
	 * sendmsg on this fd number only) and close our copy: the capsule
	 * must never hold its own listener. No reply is awaited. */
	char msg[160];
	int n = snprintf(msg, sizeof msg, "L %llu %llu %llu %llu %llu %llu", (unsigned long long)c->ts[0],
	                 (unsigned long long)c->ts[1], (unsigned long long)c->ts[2], (unsigned long long)c->ts[3],
	                 (unsigned long long)c->ts[4], (unsigned long long)c->ts[5]);
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } cbuf;
	memset(&cbuf, 0, sizeof cbuf);
	struct iovec iov = { msg, (size_t)n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.b, .msg_controllen = sizeof cbuf.b };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &lfd, sizeof(int));
	CHECK(sendmsg(errfd, &mh, MSG_NOSIGNAL) == n, "hand over the seccomp listener");
	CHECK(close(lfd) == 0, "close the listener");
	/* Only now: an unprivileged sender of SCM_RIGHTS may have no more fds
	 * in flight, summed over every socket of its user, than its own
	 * RLIMIT_NOFILE (the kernel's too_many_unix_fds; ETOOMANYREFS), and a
	 * capsule spawner's queued start messages carry that user's fds. Still
	 * before anything untrusted runs; lowering needs no privilege. */
	for (size_t i = 0; i < nrl; i++) {
		if (rl[i].resource != RLIMIT_NOFILE) continue;
		struct rlimit r = { rl[i].soft, rl[i].hard };
		CHECK(setrlimit(RLIMIT_NOFILE, &r) == 0, "setrlimit RLIMIT_NOFILE");
	}
	/* The parent attaches us to the capsule's cgroups while we set up (a v1
	 * attach waits for an RCU grace period); nothing untrusted runs before
	 * the placement is done. */
	CHECK(read(GO_FD, &go, 1) == 1 && go == 'C', "wait for the cgroup placement");
	CHECK(close(GO_FD) == 0, "close the sync channel");

	/* 6. exec the pinned interpreter, or run the inside callback (an exec
	 * capsule: its init) */
	if (s->inside || c->ex) {
		close(errfd);
		c->ctx.kept_fds = c->kept;
		c->ctx.nkept = s->nkeep;
		int rc = c->ex ? exec_plan_init(&c->ctx, c->ex) : s->inside(&c->ctx, s->inside_arg);
		_exit(rc & 0xff);
	}
	if (!capsule_interp_sealed(CAPSULE_INTERP_FD)) child_fail(errfd, "the pinned interpreter is not sealed", EPERM);
	syscall(SYS_execveat, CAPSULE_INTERP_FD, "", (char *const *)c->argv, (char *const *)capsule_env,
	        AT_EMPTY_PATH);
	child_fail(errfd, "execveat pinned interpreter", errno);
}

int capsule_apply_interpreter_limits(const struct capsule_ctx *ctx)
{
	/* An unsealed memfd is a pin that failed or has not finished: never
	 * exec it (pin.h). */
	if (!capsule_interp_sealed(ctx->interp_fd)) {
		errno = EPERM;
		return -1;
	}
	const struct capsule_limits *l = &ctx->profile->limits;
	struct rlimit as = { l->rlim_as, l->rlim_as }, data = { l->rlim_data, l->rlim_data };
	if (setrlimit(RLIMIT_AS, &as) < 0 || setrlimit(RLIMIT_DATA, &data) < 0) return -1;
	return 0;
}

pid_t capsule_spawn_interpreter(const struct capsule_ctx *ctx, const char *const argv[],
                                int in_fd, int out_fd, int err_fd)
{
	/* A raw clone, not fork(): glibc's fork takes its own locks and runs
	 * atfork handlers, which can wait forever in a copy of a threaded
	 * caller. The child only dups fds, sets limits and execs. */
	pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, NULL, NULL, 0UL);
	if (pid != 0) return pid;
	int src[3] = { in_fd, out_fd, err_fd }, tmp[3];
	for (int i = 0; i < 3; i++) tmp[i] = src[i] < 0 ? -1 : fcntl(src[i], F_DUPFD_CLOEXEC, 20);
	for (int i = 0; i < 3; i++) {
		if (tmp[i] >= 0) {
			if (dup2(tmp[i], i) != i) _exit(127);
		} else {
			close(i);
		}
	}
	if (capsule_apply_interpreter_limits(ctx) < 0) _exit(127);
	/* Only 0-2 cross the exec: protocol fds stay with the agent. */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) _exit(127);
	syscall(SYS_execveat, ctx->interp_fd, "", (char *const *)argv, (char *const *)capsule_env,
	        AT_EMPTY_PATH);
	_exit(127);
}

/* ---- the parent ----------------------------------------------------------- */

static int write_id_maps(pid_t pid, bool root_mode, unsigned host_id, struct world_err *err)
{
	char path[64], map[64];
	if (!root_mode) {
		snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
		if (write_file(path, "deny") < 0)
			return werr(err, WX_SETUP, "capsule setup: write %s: %s", path, strerror(errno));
	}
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof map, "%d %u 1\n", CAPSULE_INSIDE_ID, root_mode ? host_id : (unsigned)geteuid());
	if (write_file(path, map) < 0)
		return werr(err, WX_SETUP, "capsule setup: write uid_map: %s", strerror(errno));
	snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
	snprintf(map, sizeof map, "%d %u 1\n", CAPSULE_INSIDE_ID, root_mode ? host_id : (unsigned)getegid());
	if (write_file(path, map) < 0)
		return werr(err, WX_SETUP, "capsule setup: write gid_map: %s", strerror(errno));
	return 0;
}

/* The worktree, in the caller: open it without following a symlink at its
 * last component, and record what the child must find (the canonical path
 * of that fd, its device and inode). */
static int open_worktree(struct child_plan *c, const char *dir, int *fd_out, struct world_err *err)
{
	if (!c->p->worktree_mount)
		return werr(err, WX_USAGE, "capsule: profile %s mounts no worktree", c->p->name);
	int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return werr(err, e == ENOENT ? WX_NOT_FOUND : WX_BAD_INPUT, "capsule: worktree %s: %s", dir,
		            e == ENOTDIR ? "not a directory (or a symlink, which is refused)" : strerror(e));
	}
	struct stat st;
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = fstat(fd, &st) < 0 ? -1 : readlink(link, c->worktree, sizeof c->worktree - 1);
	if (n < 0 || (size_t)n >= sizeof c->worktree - 1 || c->worktree[0] != '/') {
		int e = n < 0 ? errno : ENAMETOOLONG;
		close(fd);
		return werr(err, WX_SETUP, "capsule setup: worktree %s: canonical path: %s", dir, strerror(e));
	}
	c->worktree[n] = '\0';
	c->wt_dev = st.st_dev;
	c->wt_ino = st.st_ino;
	c->wt_uid = st.st_uid;
	c->wt_gid = st.st_gid;
	c->has_worktree = true;
	c->wt_tree = -1;
	/* As root, clone the mount right here from this very fd (a detached
	 * tree the child attaches): nothing is resolved again, and the path to
	 * the worktree need not be searchable by the capsule's user. */
	if (c->root_mode) {
		int tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (tree < 0) {
			int e = errno;
			close(fd);
			return werr(err, WX_SETUP, "capsule setup: worktree %s: open_tree: %s", dir, strerror(e));
		}
		close(fd);
		struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		                                       MOUNT_ATTR_NOEXEC };
		if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
			int e = errno;
			close(tree);
			return werr(err, WX_SETUP, "capsule setup: worktree %s: mount_setattr: %s", dir, strerror(e));
		}
		fd = tree;
		c->wt_tree = tree;
	}
	*fd_out = fd;
	return 0;
}

/* As root the capsule's user (host id base + pid) owns nothing in the
 * worktree, which the workspace keeps 0700: the detached clone is
 * idmapped (MOUNT_ATTR_IDMAP) through a user namespace that maps the
 * worktree's owner (uid and gid) to the capsule's host id, so the capsule
 * reads the worktree as its owner would, through a read-only mount (no
 * chmod, chown or write can reach the files). Files of other owners keep
 * their "others" permissions. Best effort: a filesystem without idmapped
 * mounts leaves the plain clone, and capsule_describe says so. The user
 * namespace comes from a helper sharing our memory (clone CLONE_VM, on a
 * stack of this call's own: capsule_start may run in many threads at once)
 * that only waits to be killed once its namespace is open. */
static int idmap_helper(void *arg)
{
	(void)arg;
	for (;;) pause();
	return 0;
}

int capsule_idmap_tree(int tree, uid_t uid, gid_t gid, unsigned host_id, char *note, size_t len)
{
	return capsule_idmap_trees(&tree, 1, uid, gid, host_id, note, len);
}

int capsule_idmap_trees(const int *trees, size_t ntrees, uid_t uid, gid_t gid, unsigned host_id, char *note,
                        size_t len)
{
	/* The helper runs on this array while we wait for it below; it is
	 * killed and reaped before this frame goes. */
	char idmap_stack[16384] __attribute__((aligned(16)));
	pid_t pid = clone(idmap_helper, idmap_stack + sizeof idmap_stack, CLONE_VM | CLONE_NEWUSER | SIGCHLD, NULL);
	if (pid < 0) {
		snprintf(note, len, "not idmapped (clone: %s)", strerror(errno));
		return -1;
	}
	char path[64], map[64];
	int fd = -1;
	const char *step = "uid_map";
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, host_id);
	if (write_file(path, map) == 0) {
		step = "gid_map";
		snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, host_id);
		if (write_file(path, map) == 0) {
			step = "open the user namespace";
			snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
	}
	int e = errno;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
	if (fd < 0) {
		snprintf(note, len, "not idmapped (%s: %s)", step, strerror(e));
		return -1;
	}
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)fd };
	int rc = 0;
	for (size_t i = 0; i < ntrees && rc == 0; i++)
		if (syscall(SYS_mount_setattr, trees[i], "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) rc = -1;
	if (rc < 0) {
		snprintf(note, len, "not idmapped (mount_setattr: %s); others' permissions apply", strerror(errno));
	} else {
		snprintf(note, len, "idmapped: owner %u:%u reads as the capsule user", (unsigned)uid, (unsigned)gid);
	}
	close(fd);
	return rc;
}

static void worktree_idmap(struct child_plan *c, struct capsule_handle *h)
{
	(void)capsule_idmap_tree(c->wt_tree, c->wt_uid, c->wt_gid, h->host_id, h->wt_note, sizeof h->wt_note);
}

/* The filter of a profile of the table is the program embedded at build
 * time (capsule/seccomp_gen); any other profile's is built once per process
 * (libseccomp is deterministic; building costs about half a millisecond). */
static int bpf_for(const struct capsule_profile *p, const unsigned char **bpf, size_t *len,
                   struct world_err *err)
{
	const struct capsule_seccomp_program *e = capsule_seccomp_embedded(p);
	if (e) {
		*bpf = e->bpf;
		*len = e->bpf_len;
		return 0;
	}
	static struct { const struct capsule_profile *p; unsigned char *bpf; size_t len; } cache[8];
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mu);
	int rc = 0;
	for (size_t i = 0; i < 8; i++)
		if (cache[i].p == p) {
			*bpf = cache[i].bpf;
			*len = cache[i].len;
			goto out;
		}
	unsigned char *b;
	size_t l;
	if (capsule_seccomp_bpf(p, &b, &l, err) < 0) {
		rc = -1;
		goto out;
	}
	*bpf = b;
	*len = l;
	for (size_t i = 0; i < 8; i++)
		if (!cache[i].p) {
			cache[i].p = p;
			cache[i].bpf = b;
			cache[i].len = l;
			break;
		}
	/* More profiles than slots: this copy is used once (and kept). */
out:
	pthread_mutex_unlock(&mu);
	return rc;
}

const char *const capsule_phase_names[CAPSULE_T_COUNT] = {
	"prepare (filter, cgroup groups)", "clone3 (namespaces, pidfd)", "id maps",
	"cgroup attach (overlaps child setup)", "child: identity, cgroup ns", "child: mounts, tmpfs root, new root",
	"child: fds, rlimits", "child: capabilities, no_new_privs", "child: landlock",
	"child: seccomp", "listener handover", "exit and reap (in capsule_finish)",
	"finish (cgroup check and release)",
};

int capsule_start(const struct capsule_spec *spec, struct capsule_handle *h, struct world_err *err)
{
	uint64_t t_mark = now_ns();
	handle_init(h);
	const struct capsule_profile *p = spec->profile;
	if (!p) return werr(err, WX_USAGE, "capsule: no profile");
	if (spec->nkeep > CAPSULE_MAX_KEEP_FDS)
		return werr(err, WX_USAGE, "capsule: at most %d kept fds", CAPSULE_MAX_KEEP_FDS);
	if (spec->interp_fd < 0) return werr(err, WX_USAGE, "capsule: no pinned interpreter fd");
	if (!spec->exec != !p->exec || (spec->exec && (spec->inside || spec->worktree || spec->nfiles || spec->nkeep != 1)))
		return werr(err, WX_USAGE, "capsule: an exec capsule needs the exec profile, one kept fd and nothing staged");

	/* Prepared here, per call: the child reads its copy, so concurrent
	 * starts from several threads share nothing. On the heap, not in this
	 * frame: the child runs on the caller's stack below this frame, and
	 * under a sanitizer's terabytes of shadow the capsule's RLIMIT_AS
	 * forbids growing the stack, so the frame stays small. */
	struct child_plan *cp = calloc(1, sizeof *cp);
	if (!cp) return werr(err, WX_SETUP, "capsule setup: out of memory");
	cp->spec = spec;
	cp->p = p;
	cp->lim = spec->limits ? *spec->limits : p->limits;
	cp->root_mode = geteuid() == 0;
	cp->mnt = pick_mount_point();
	if (!cp->mnt) return free(cp), werr(err, WX_SETUP, "capsule setup: no /tmp or /mnt directory to mount the new root on");
	snprintf(cp->opts_root, sizeof cp->opts_root, "size=%llu,nr_inodes=256,mode=0755",
	         (unsigned long long)p->limits.root_size);
	snprintf(cp->opts_cache, sizeof cp->opts_cache, "size=%llu,nr_inodes=4096,mode=0700",
	         (unsigned long long)p->limits.cache_size);
	size_t ac = 0;
	if (spec->exec) {
		cp->ex = exec_plan_new(p, spec->exec, spec->interp_fd, cp->root_mode, &cp->ex_script, err);
		if (!cp->ex) return free(cp), -1;
		cp->ctx.profile = p;
		cp->ctx.interp_fd = CAPSULE_INTERP_FD;
	} else if (spec->argv) {
		for (; spec->argv[ac] && ac < 63; ac++) cp->argv[ac] = spec->argv[ac];
	} else {
		if (!p->argv) return free(cp), werr(err, WX_USAGE, "capsule: profile %s needs a caller-given argv", p->name);
		cp->argv[ac++] = "ailang";
		for (size_t i = 0; p->argv[i] && ac < 63; i++) cp->argv[ac++] = p->argv[i];
	}
	cp->argv[ac] = NULL;
	cp->ctx.profile = p;
	cp->ctx.interp_fd = CAPSULE_INTERP_FD;
	/* The kernel's landlock ABI is fixed at boot: asked once per process. */
	static int ll_abi = -1;
	int abi = __atomic_load_n(&ll_abi, __ATOMIC_RELAXED);
	if (p->landlock && abi < 0) __atomic_store_n(&ll_abi, abi = capsule_landlock_abi(), __ATOMIC_RELAXED);
	cp->ll_abi = p->landlock ? abi : 0;
	h->landlock_abi = cp->ll_abi;
	h->root_mode = cp->root_mode;

	const unsigned char *bpf = NULL;
	size_t bpf_len = 0;
	if (bpf_for(p, &bpf, &bpf_len, err) < 0) return exec_plan_free(cp->ex), free(cp), werr_prefix(err, "capsule setup");
	cp->prog.len = (unsigned short)(bpf_len / sizeof(struct sock_filter));
	cp->prog.filter = (struct sock_filter *)bpf;
	/* Held until setup is done: the child requires this very directory. */
	int wt_fd = -1;
	if (spec->worktree && open_worktree(cp, spec->worktree, &wt_fd, err) < 0) {
		free(cp);
		return -1;
	}

	cg_take(h, &cp->lim, 0);
	cg_take(h, &cp->lim, 1);

	int go[2] = { -1, -1 }, ep[2] = { -1, -1 }, cgfd = -1;
	/* go: parent -> child ('G' id maps written, 'C' cgroups attached);
	 * ep: child -> parent datagrams (setup error, or the listener). */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, go) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ep) < 0) {
		werr(err, WX_SETUP, "capsule setup: pipe: %s", strerror(errno));
		goto fail;
	}
	cp->go_fd = go[0];
	cp->err_fd = ep[1];
	cp->go_peer = go[1];
	cp->ep_peer = ep[0];

	struct clone_args ca;
	memset(&ca, 0, sizeof ca);
	int pidfd = -1;
	ca.flags = (p->namespaces & ~(unsigned long)CLONE_NEWCGROUP) | CLONE_NEWUSER | CLONE_PIDFD;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	const char *v2dir = h->cg_memory == CAPSULE_CG_V2 ? h->cg_memory_dir
	                  : h->cg_pids == CAPSULE_CG_V2 ? h->cg_pids_dir : NULL;
	if (v2dir) {
		cgfd = open(v2dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgfd < 0) {
			werr(err, WX_SETUP, "capsule setup: open cgroup %s: %s", v2dir, strerror(errno));
			goto fail;
		}
		ca.flags |= CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)cgfd;
	}
	/* As root, the capsule joins the shared empty network namespace (this
	 * thread enters it just for the clone) instead of creating one. */
	int own_net = -1;
	/* Never an exec capsule: its loopback is up, and a shared one would
	 * join two runs' loopbacks. */
	if (cp->root_mode && (p->namespaces & CLONE_NEWNET) && !cp->ex && (own_net = netns_enter_shared()) >= 0) {
		ca.flags &= ~(uint64_t)CLONE_NEWNET;
		h->shared_netns = true;
	}
	/* As root, the capsule's mount namespace is a copy of the template's
	 * one mount when this thread may enter it (see tmpl_enter). */
	struct tmpl_stay stay;
	if (cp->root_mode && !p->devices && !spec->worktree && !cp->ex && tmpl_enter(&stay)) {
		cp->in_template = true;
		cp->mnt = "/r";
		h->mount_template = true;
	}
	h->timing.ns[CAPSULE_T_PREPARE] = now_ns() - t_mark;
	t_mark = now_ns();
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid == 0) child_run(cp);
	int clone_errno = errno;
	int tmpl_back = cp->in_template ? tmpl_leave(&stay) : 0, tmpl_errno = errno;
	if (own_net >= 0) {
		int back = setns(own_net, CLONE_NEWNET);
		int e = errno;
		close_fd(&own_net);
		if (back < 0) {
			/* Should never happen: we came from there. The calling thread is
			 * now in the empty namespace; say so loudly. */
			werr(err, WX_SETUP, "capsule setup: return to the caller's network namespace: %s", strerror(e));
			if (pid > 0) {
				h->pid = (pid_t)pid;
				h->pidfd = pidfd;
				goto fail_child;
			}
			goto fail;
		}
	}
	if (tmpl_back < 0) {
		/* Should never happen either. */
		werr(err, WX_SETUP, "capsule setup: return to the caller's mount namespace: %s (this thread is left "
		     "in the capsules' template)", strerror(tmpl_errno));
		if (pid > 0) {
			h->pid = (pid_t)pid;
			h->pidfd = pidfd;
			goto fail_child;
		}
		goto fail;
	}
	if (pid < 0) {
		werr(err, WX_SETUP, "capsule setup: clone3: %s", strerror(clone_errno));
		goto fail;
	}

	h->timing.ns[CAPSULE_T_CLONE] = now_ns() - t_mark;
	t_mark = now_ns();
	h->pid = (pid_t)pid;
	/* Known to the exit and signal cleanup from here on (cg_release_all). */
	cg_publish(h);
	h->pidfd = pidfd;
	close_fd(&go[0]);
	close_fd(&ep[1]);
	close_fd(&cgfd);
	h->host_id = cp->root_mode ? CAPSULE_HOST_ID_BASE + ((unsigned)pid % CAPSULE_HOST_ID_SPAN) : (unsigned)geteuid();
	if (write_id_maps(h->pid, cp->root_mode, h->host_id, err) < 0) goto fail_child;
	/* Before 'G': the child attaches the worktree only after it. */
	if (cp->has_worktree && cp->wt_tree >= 0) worktree_idmap(cp, h);
	if (cp->ex && cp->root_mode) exec_plan_idmap(cp->ex, h->host_id, h->wt_note, sizeof h->wt_note);
	/* The go channel is a socket written with MSG_NOSIGNAL: if the child
	 * already failed (it exits right after reporting), sending gives EPIPE
	 * rather than killing the caller, and its report is read below. */
	bool child_gone = send(go[1], "G", 1, MSG_NOSIGNAL) != 1;
	if (child_gone && errno != EPIPE && errno != ECONNRESET) {
		werr(err, WX_SETUP, "capsule setup: signal the child: %s", strerror(errno));
		goto fail_child;
	}
	uint64_t t_go = now_ns();
	h->timing.ns[CAPSULE_T_IDMAP] = t_go - t_mark;
	/* v1 attach is slow (the kernel waits for an RCU grace period): the
	 * child does its whole setup meanwhile and waits for 'C' only right
	 * before the exec (or the inside callback). */
	const char *cgdirs[2] = { h->cg_memory == CAPSULE_CG_V1 ? h->cg_memory_dir : NULL,
	                          h->cg_pids == CAPSULE_CG_V1 ? h->cg_pids_dir : NULL };
	for (int i = 0; i < 2; i++)
		if (cgdirs[i] && h->cg_base[i] < 0) h->cg_base[i] = cg_hits(h, i);
	for (int i = 0; i < 2 && !child_gone; i++) {
		if (!cgdirs[i] || cg_attach(h, i) == 0) continue;
		if (errno == ESRCH) {
			child_gone = true; /* it failed already: its report says why */
			break;
		}
		werr(err, WX_SETUP, "capsule setup: attach to %s: %s", cgdirs[i], strerror(errno));
		goto fail_child;
	}
	if (!child_gone && spec->place && spec->place(h->pid, spec->place_arg) < 0) {
		if (errno == ESRCH) {
			child_gone = true; /* it failed already: its report says why */
		} else {
			werr(err, WX_SETUP, "capsule setup: place the capsule: %s", strerror(errno));
			goto fail_child;
		}
	}
	if (!child_gone && send(go[1], "C", 1, MSG_NOSIGNAL) != 1 && errno != EPIPE && errno != ECONNRESET) {
		werr(err, WX_SETUP, "capsule setup: signal the child: %s", strerror(errno));
		goto fail_child;
	}
	t_mark = now_ns();
	h->timing.ns[CAPSULE_T_CGATTACH] = t_mark - t_go;
	/* Here, not earlier: the child waits for nothing from us any more, and
	 * the closer copies the reference while this thread sleeps below. */
	mntns_hold(h);

	/* Wait for the listener (setup done) or a setup error: one datagram,
	 * "L<timestamps>" with the listener as SCM_RIGHTS, or "E<line>". */
	char msg[512];
	ssize_t got = -1;
	int lfd = -1;
	for (;;) {
		struct pollfd pf = { ep[0], POLLIN, 0 };
		int pr = poll(&pf, 1, SETUP_TIMEOUT_MS);
		if (pr < 0 && errno == EINTR) continue;
		if (pr <= 0) {
			werr(err, WX_SETUP, "capsule setup: %s", pr == 0 ? "timed out waiting for the child" : strerror(errno));
			goto fail_child;
		}
		union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } cbuf;
		struct iovec iov = { msg, sizeof msg - 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.b,
		                     .msg_controllen = sizeof cbuf.b };
		got = recvmsg(ep[0], &mh, MSG_CMSG_CLOEXEC);
		if (got < 0 && errno == EINTR) continue;
		if (got < 0) {
			werr(err, WX_SETUP, "capsule setup: read setup channel: %s", strerror(errno));
			goto fail_child;
		}
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
			    cm->cmsg_len == CMSG_LEN(sizeof(int)))
				memcpy(&lfd, CMSG_DATA(cm), sizeof(int));
		msg[got] = 0;
		break;
	}
	if (got <= 0) {
		werr(err, WX_SETUP, "capsule setup: the child ended before reporting");
		goto fail_child;
	}
	if (msg[0] == 'E') {
		if (lfd >= 0) close(lfd);
		werr(err, WX_SETUP, "%s", msg + 1);
		goto fail_child;
	}
	h->notify_fd = lfd;
	/* "L <t_ids> <t_mounts> <t_fds> <t_caps> <t_landlock> <t_seccomp>" (monotonic ns) */
	unsigned long long ct[6] = { 0 };
	if (msg[0] != 'L' || lfd < 0 ||
	    sscanf(msg + 1, "%llu %llu %llu %llu %llu %llu", &ct[0], &ct[1], &ct[2], &ct[3], &ct[4], &ct[5]) != 6) {
		werr(err, WX_SETUP, "capsule setup: malformed setup message from the child");
		goto fail_child;
	}
	uint64_t prev = t_go;
	for (int i = 0; i < 6; i++) {
		h->timing.ns[CAPSULE_T_CHILD_IDS + i] = ct[i] > prev ? ct[i] - prev : 0;
		prev = ct[i];
	}
	close_fd(&go[1]);
	h->setup_fd = ep[0];
	/* From the child's last step (seccomp loaded) to the listener here:
	 * the child's steps are counted above, not again in this one. */
	uint64_t t_now = now_ns();
	h->timing.ns[CAPSULE_T_HANDOVER] = t_now > ct[5] ? t_now - ct[5] : 0;
	close_fd(&wt_fd);
	exec_plan_free(cp->ex);
	free(cp);
	return 0;

fail_child:
	if (h->pidfd >= 0) syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0);
	else kill(h->pid, SIGKILL);
	{
		siginfo_t si;
		while (waitid(P_PID, (id_t)h->pid, &si, WEXITED) < 0 && errno == EINTR) {}
	}
fail:
	close_fd(&go[0]);
	close_fd(&go[1]);
	close_fd(&ep[0]);
	close_fd(&ep[1]);
	close_fd(&cgfd);
	mntns_release(h);
	close_fd(&h->pidfd);
	close_fd(&h->notify_fd);
	cg_put(h, 0);
	cg_put(h, 1);
	h->mntns_req = -1;
	close_fd(&wt_fd);
	exec_plan_free(cp->ex);
	free(cp);
	h->pid = -1;
	return -1;
}

int capsule_kill(struct capsule_handle *h)
{
	if (h->reaped || h->pidfd < 0) return 0;
	h->killed = true;
	if (syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH) return -1;
	return 0;
}

/* The ABI of a notified call, by the kernel's AUDIT_ARCH_* word: the
 * filter lets only the native one reach the listener, so this is normally
 * "x86_64"; the word is kept (as hex) for any other. */
static void denial_arch(uint32_t arch, char *out, size_t len)
{
	switch (arch) {
	case AUDIT_ARCH_X86_64: snprintf(out, len, "x86_64"); break;
	case AUDIT_ARCH_I386: snprintf(out, len, "i386"); break;
	case AUDIT_ARCH_AARCH64: snprintf(out, len, "aarch64"); break;
	default: snprintf(out, len, "0x%x", (unsigned)arch); break;
	}
}

int capsule_on_notify(struct capsule_handle *h)
{
	if (h->notify_fd < 0) return 0;
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0) {
		capsule_kill(h);
		return -1;
	}
	/* The kernel's structs may be larger than this build's headers. */
	size_t rq = sz.seccomp_notif > sizeof(struct seccomp_notif) ? sz.seccomp_notif : sizeof(struct seccomp_notif);
	size_t rs = sz.seccomp_notif_resp > sizeof(struct seccomp_notif_resp) ? sz.seccomp_notif_resp
	                                                                      : sizeof(struct seccomp_notif_resp);
	struct seccomp_notif *req = calloc(1, rq);
	struct seccomp_notif_resp *resp = calloc(1, rs);
	int ret = 0;
	if (!req || !resp) {
		ret = -1;
		capsule_kill(h);
		goto out;
	}
	if (ioctl(h->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		/* ENOENT: the caller died meanwhile; EINTR: retry on next readiness. */
		if (errno != ENOENT && errno != EINTR) {
			ret = -1;
			capsule_kill(h);
		}
		goto out;
	}
	resp->id = req->id;
	resp->val = 0;
	char *name = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);
	if (!name) {
		/* Newer than this libseccomp knows: ENOSYS lets runtimes fall back. */
		resp->error = -ENOSYS;
	} else {
		resp->error = -EPERM;
		if (!h->denied[0]) {
			struct capsule_denial *d = &h->denial;
			memset(d, 0, sizeof *d);
			snprintf(d->syscall, sizeof d->syscall, "%s", name);
			d->nr = req->data.nr;
			denial_arch(req->data.arch, d->arch, sizeof d->arch);
			if (strcmp(name, "ioctl") == 0) {
				const char *cn = capsule_ioctl_name((unsigned long)req->data.args[1]);
				d->has_cmd = 1;
				d->cmd = (unsigned)(req->data.args[1] & 0xffffffffULL);
				if (cn) snprintf(d->cmd_name, sizeof d->cmd_name, "%s", cn);
				if (cn) snprintf(h->denied, sizeof h->denied, "ioctl(%s)", cn);
				else snprintf(h->denied, sizeof h->denied, "ioctl(0x%llx)",
				              (unsigned long long)(req->data.args[1] & 0xffffffffULL));
			} else {
				snprintf(h->denied, sizeof h->denied, "%s", name);
			}
			ret = 1;
		}
		free(name);
	}
	/* A denial kills the capsule and is never answered: the denied call
	 * does not return into the capsule (its thread dies in the wait, as
	 * does every process of the pid namespace). */
	if (resp->error == -EPERM) {
		if (capsule_kill(h) < 0) (void)ioctl(h->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
	} else {
		/* ENOENT: the caller died meanwhile; nothing to answer. */
		(void)ioctl(h->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
	}
out:
	free(req);
	free(resp);
	return ret;
}

int capsule_finish(struct capsule_handle *h, struct capsule_report *r, struct world_err *err)
{
	memset(r, 0, sizeof *r);
	if (h->pid < 0) return werr(err, WX_FAIL, "capsule: finish without a started capsule");
	uint64_t t_fin = now_ns();
	siginfo_t si;
	memset(&si, 0, sizeof si);
	/* Answer denials that raced with the exit, then reap. */
	while (h->notify_fd >= 0) {
		struct pollfd pf = { h->notify_fd, POLLIN, 0 };
		if (poll(&pf, 1, 0) <= 0 || !(pf.revents & POLLIN)) break;
		if (capsule_on_notify(h) < 0) break;
	}
	for (;;) {
		if (waitid((idtype_t)P_PIDFD, (id_t)h->pidfd, &si, WEXITED) == 0) break;
		if (errno == EINTR) continue;
		/* Older kernels: fall back to the pid (still our unreaped child). */
		if (errno == EINVAL && waitid(P_PID, (id_t)h->pid, &si, WEXITED) == 0) break;
		return werr(err, WX_FAIL, "capsule: waitid pid %d: %s", (int)h->pid, strerror(errno));
	}
	h->reaped = true;
	uint64_t t_reaped = now_ns();
	h->timing.ns[CAPSULE_T_REAP] = t_reaped - t_fin;
	mntns_release(h);
	r->killed = h->killed;
	if (si.si_code == CLD_EXITED) {
		r->exited = true;
		r->exit_status = si.si_status;
	} else {
		r->term_signal = si.si_status;
	}
	/* A late setup error (execveat failed) is on the setup pipe. */
	if (h->setup_fd >= 0) {
		char msg[512];
		size_t got = 0;
		for (;;) {
			ssize_t n = read(h->setup_fd, msg + got, sizeof msg - 1 - got);
			if (n < 0 && errno == EINTR) continue;
			if (n <= 0) break;
			got += (size_t)n;
			if (got == sizeof msg - 1) break;
		}
		msg[got] = 0;
		if (got > 1 && msg[0] == 'E') {
			r->setup_failed = true;
			snprintf(r->setup_error, sizeof r->setup_error, "%s", msg + 1);
		}
	}
	snprintf(r->denied, sizeof r->denied, "%s", h->denied);
	r->denial = h->denial;
	r->memory_limit_hit = h->cg_slot[0] >= 0 && cg_hits(h, 0) > h->cg_base[0];
	r->pids_limit_hit = h->cg_slot[1] >= 0 && cg_hits(h, 1) > h->cg_base[1];
	cg_put(h, 0);
	cg_put(h, 1);
	h->mntns_req = -1; /* the closer finishes on its own */
	close_fd(&h->pidfd);
	close_fd(&h->notify_fd);
	close_fd(&h->setup_fd);
	h->timing.ns[CAPSULE_T_FINISH] = now_ns() - t_reaped;
	return 0;
}

void capsule_describe(const struct capsule_handle *h, char *buf, size_t len)
{
	const char *kind[] = { "none", "v1", "v2" };
	char ids[96];
	if (h->root_mode)
		snprintf(ids, sizeof ids, "root mode: capsule uid/gid %d -> host %u", CAPSULE_INSIDE_ID, h->host_id);
	else
		snprintf(ids, sizeof ids, "unprivileged: capsule uid/gid %d -> host %u (own)", CAPSULE_INSIDE_ID, h->host_id);
	snprintf(buf, len, "%s; net: %s; mounts: %s; cgroups: memory %s, pids %s%s%s%s%s; landlock: %s%d; seccomp: allowlist + user-notif listener%s%s",
	         ids, h->shared_netns ? "shared empty namespace" : "own empty namespace",
	         h->mount_template ? "template (root moved over it)" : "caller's copied (old root detached)",
	         kind[h->cg_memory], kind[h->cg_pids],
	         h->cg_note[0] ? " (" : "", h->cg_note, h->cg_note[0] ? "; rlimits remain)" : "",
	         h->cg_memory != CAPSULE_CG_V1 && h->cg_pids != CAPSULE_CG_V1 ? ""
	         : h->cg_favordynmods ? " (favordynmods: attaches never wait)"
	                              : " (v1 without favordynmods: an attach after a quiet spell waits ~10 ms for an RCU "
	                                "grace period; docs/security.md)",
	         h->landlock_abi ? "ABI " : "unavailable", h->landlock_abi, h->wt_note[0] ? "; worktree: " : "",
	         h->wt_note);
}
