/* supervisor/launch_unconfined.c: the unconfined launcher, a TEST DOUBLE
 * (see launcher.h). Never used by the product path: it has no seccomp, no
 * mount namespace and sees the host filesystem. What it does keep is what
 * the supervisor's tests need to mean something: the capsule is the init of
 * a fresh pid namespace (so one SIGKILL takes the whole tree and the kernel
 * reaps the rest; root only, else a process group), the interpreter gets
 * exactly the §2 argv and environment, and the scratch root is a private
 * directory removed on finish. */
#include "supervisor/launcher.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <unistd.h>

struct unconfined {
	char *interp;
	int pidns_fd;  /* our own pid namespace, to restore after each unshare */
};

struct unconfined_run {
	char root[256];
	int pidns;     /* the capsule is a pid namespace init */
	int killed;
};

struct unconfined_exec {
	const char *interp;
	const char *root;
	char env_sandbox[300], env_cache[320];
};

struct spawn_call {
	const struct unconfined_exec *ue;
	const char *const *args;
};

static void unconfined_execve(void *arg)
{
	const struct spawn_call *sc = arg;
	const char *argv[32];
	size_t n = 0;
	argv[n++] = sc->ue->interp;
	for (size_t i = 0; sc->args[i] && n < 31; i++) argv[n++] = sc->args[i];
	argv[n] = NULL;
	const char *envp[] = { sc->ue->env_sandbox, "AILANG_RELAX_MODULES=1", sc->ue->env_cache, NULL };
	execve(sc->ue->interp, (char *const *)argv, (char *const *)envp);
}

static pid_t unconfined_spawn(const struct launch_exec *ex, const char *const *args, int in_fd, int out_fd,
                              int err_fd)
{
	struct spawn_call sc = { ex->impl, args };
	return launch_spawn_raw(in_fd, out_fd, err_fd, unconfined_execve, &sc);
}

struct spawn_ctx {
	int fds[3];
	void (*exec_fn)(void *arg);
	void *arg;
};

static int spawn_child(void *p)
{
	struct spawn_ctx *c = p;
	int tmp[3];
	for (int i = 0; i < 3; i++) tmp[i] = c->fds[i] < 0 ? -1 : fcntl(c->fds[i], F_DUPFD_CLOEXEC, 20);
	for (int i = 0; i < 3; i++) {
		if (tmp[i] >= 0) {
			if (dup2(tmp[i], i) != i) _exit(127);
		} else {
			close(i);
		}
	}
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) _exit(127);
	c->exec_fn(c->arg);
	_exit(127);
}

pid_t launch_spawn_raw(int in_fd, int out_fd, int err_fd, void (*exec_fn)(void *arg), void *arg)
{
	/* vfork-style (CLONE_VM|CLONE_VFORK, the posix_spawn technique): no
	 * copy of the address space, no glibc fork handlers, no allocation.
	 * The caller is suspended until the child execs or exits. The child's
	 * stack is static: this runs only on the capsule side, one at a time. */
	static char stack[64 * 1024] __attribute__((aligned(16)));
	struct spawn_ctx c = { { in_fd, out_fd, err_fd }, exec_fn, arg };
	return clone(spawn_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 ? -1 : 0;
}

static int remove_tree(const char *root)
{
	return nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) return -1;
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0) {
			if (errno == EINTR) continue;
			close(fd);
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return close(fd);
}

static int mkdirs(char *path)
{
	/* Create every parent of path (path is modified and restored). */
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		int rc = mkdir(path, 0700);
		*p = '/';
		if (rc < 0 && errno != EEXIST) return -1;
	}
	return 0;
}

static int stage_root(struct unconfined_run *r, const struct launch_spec *spec, struct world_err *err)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp) tmp = "/tmp";
	snprintf(r->root, sizeof r->root, "%s/world-capsule.XXXXXX", tmp);
	if (!mkdtemp(r->root)) return werr(err, WX_SETUP, "unconfined launcher: mkdtemp %s: %s", r->root, strerror(errno));
	char p[600];
	snprintf(p, sizeof p, "%s/.capsule-cache", r->root);
	if (mkdir(p, 0700) < 0) goto fail;
	for (size_t i = 0; i < spec->nfiles; i++) {
		const struct launch_file *f = &spec->files[i];
		if (!f->name[0] || f->name[0] == '/' || strstr(f->name, "..")) {
			errno = EINVAL;
			snprintf(p, sizeof p, "%s", f->name);
			goto fail;
		}
		snprintf(p, sizeof p, "%s/%s", r->root, f->name);
		if (mkdirs(p) < 0 || write_file(p, f->data, f->len) < 0) goto fail;
	}
	/* No mount here: the worktree is a symlink (the double confines nothing). */
	snprintf(p, sizeof p, "%s/work", r->root);
	if (spec->worktree && symlink(spec->worktree, p) < 0) goto fail;
	return 0;
fail:;
	int saved = errno;
	remove_tree(r->root);
	return werr(err, WX_SETUP, "unconfined launcher: staging %s: %s", p, strerror(saved));
}

/* In the child: put fds in place and close everything else. */
static int child_fds(const struct launch_spec *spec)
{
	int fds[3] = { spec->stdin_fd, spec->stdout_fd, spec->stderr_fd };
	for (int i = 0; i < 3; i++) {
		/* dup2 to itself would keep CLOEXEC; dup3 refuses equal fds. */
		if (fds[i] == i) {
			if (fcntl(i, F_SETFD, 0) < 0) return -1;
		} else if (dup2(fds[i], i) < 0) {
			return -1;
		}
	}
	if (!spec->inside) return syscall(SYS_close_range, 3, ~0U, 0) < 0 ? -1 : 0; /* no protocol fds */
	int keep_lo = spec->keep_fds[0] < spec->keep_fds[1] ? spec->keep_fds[0] : spec->keep_fds[1];
	int keep_hi = spec->keep_fds[0] < spec->keep_fds[1] ? spec->keep_fds[1] : spec->keep_fds[0];
	if (keep_lo < 3) return -1;
	if (keep_lo > 3 && syscall(SYS_close_range, 3, keep_lo - 1, 0) < 0) return -1;
	if (keep_hi > keep_lo + 1 && syscall(SYS_close_range, keep_lo + 1, keep_hi - 1, 0) < 0) return -1;
	if (syscall(SYS_close_range, keep_hi + 1, ~0U, 0) < 0) return -1;
	return 0;
}

static int unconfined_start(struct launcher *l, const struct launch_spec *spec, struct launched *out,
                            struct world_err *err)
{
	struct unconfined *u = l->ctx;
	struct unconfined_run *r = calloc(1, sizeof *r);
	if (!r) return werr(err, WX_SETUP, "unconfined launcher: out of memory");
	if (stage_root(r, spec, err) < 0) {
		free(r);
		return -1;
	}
	/* The pid namespace for children is per thread: unshare, fork the
	 * namespace's init, then point this thread back at our own namespace. */
	r->pidns = u->pidns_fd >= 0 && unshare(CLONE_NEWPID) == 0;
	pid_t pid = fork();
	int fork_errno = errno;
	if (pid != 0 && r->pidns && setns(u->pidns_fd, CLONE_NEWPID) < 0) {
		/* Cannot happen for our own namespace; stop rather than fork
		 * later children into a dead namespace. */
		abort();
	}
	if (pid < 0) {
		remove_tree(r->root);
		free(r);
		return werr(err, WX_SETUP, "unconfined launcher: fork: %s", strerror(fork_errno));
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (!r->pidns) setpgid(0, 0);
		if (child_fds(spec) < 0 || chdir(r->root) < 0) _exit(126);
		struct unconfined_exec ue = { u->interp, r->root, "", "" };
		snprintf(ue.env_sandbox, sizeof ue.env_sandbox, "AILANG_FS_SANDBOX=%s", r->root);
		snprintf(ue.env_cache, sizeof ue.env_cache, "AILANG_CACHE_DIR=%s/.capsule-cache", r->root);
		if (!spec->inside) {
			/* A tool run: the interpreter itself, argv as given. */
			const char *argv[32];
			size_t n = 0;
			argv[n++] = u->interp;
			for (size_t i = 0; spec->argv && spec->argv[i] && n < 31; i++) argv[n++] = spec->argv[i];
			argv[n] = NULL;
			const char *envp[] = { ue.env_sandbox, "AILANG_RELAX_MODULES=1", ue.env_cache, NULL };
			execve(u->interp, (char *const *)argv, (char *const *)envp);
			_exit(127);
		}
		struct launch_exec ex = { unconfined_spawn, spec->keep_fds[0], spec->keep_fds[1], &ue };
		_exit(spec->inside(spec->arg, &ex) & 0xff);
	}
	if (!r->pidns) setpgid(pid, pid); /* both sides, whichever runs first */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		int saved = errno;
		kill(r->pidns ? pid : -pid, SIGKILL);
		waitpid(pid, NULL, 0);
		remove_tree(r->root);
		free(r);
		return werr(err, WX_SETUP, "unconfined launcher: pidfd_open %d: %s", (int)pid, strerror(saved));
	}
	out->pid = pid;
	out->pidfd = pidfd;
	out->watch_fd = -1;
	out->impl = r;
	return 0;
}

static void unconfined_kill(struct launcher *l, struct launched *c)
{
	(void)l;
	struct unconfined_run *r = c->impl;
	if (!r || r->killed) return;
	r->killed = 1;
	if (r->pidns) {
		/* Killing a pid namespace's init kills every process in it. */
		syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
	} else {
		kill(-c->pid, SIGKILL);
	}
}

static int unconfined_finish(struct launcher *l, struct launched *c, struct launch_report *rep,
                             struct world_err *err)
{
	(void)l;
	struct unconfined_run *r = c->impl;
	memset(rep, 0, sizeof *rep);
	int rc = 0, status = 0;
	if (!r->pidns && !r->killed) kill(-c->pid, SIGKILL); /* no stragglers in the group */
	while (waitpid(c->pid, &status, 0) < 0) {
		if (errno == EINTR) continue;
		rc = werr(err, WX_FAIL, "unconfined launcher: waitpid %d: %s", (int)c->pid, strerror(errno));
		break;
	}
	rep->status = status;
	snprintf(rep->layers, sizeof rep->layers, "UNCONFINED test double: %s only",
	         r->pidns ? "a pid namespace" : "a process group");
	close(c->pidfd);
	c->pidfd = -1;
	if (remove_tree(r->root) < 0 && rc == 0)
		rc = werr(err, WX_IO, "unconfined launcher: removing scratch %s: %s", r->root, strerror(errno));
	free(r);
	c->impl = NULL;
	return rc;
}

static int unconfined_describe(struct launcher *l, enum sup_profile p, int fd, struct world_err *err)
{
	(void)l;
	dprintf(fd, "profile %s: UNCONFINED TEST DOUBLE (no namespaces but pid, no seccomp, host filesystem visible)\n",
	        sup_profile_name(p));
	(void)err;
	return 0;
}

static void unconfined_destroy(struct launcher *l)
{
	struct unconfined *u = l->ctx;
	if (u->pidns_fd >= 0) close(u->pidns_fd);
	free(u->interp);
	free(u);
	free(l);
}

struct launcher *launcher_unconfined_new(const char *interp_path, struct world_err *err)
{
	struct launcher *l = calloc(1, sizeof *l);
	struct unconfined *u = calloc(1, sizeof *u);
	char *interp = realpath(interp_path, NULL);
	if (!l || !u || !interp) {
		werr(err, interp ? WX_FAIL : WX_NOT_FOUND, "unconfined launcher: interpreter %s: %s", interp_path,
		     strerror(errno));
		free(l); free(u); free(interp);
		return NULL;
	}
	u->interp = interp;
	u->pidns_fd = geteuid() == 0 ? open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC) : -1;
	l->name = "unconfined (test double)";
	l->ctx = u;
	l->start = unconfined_start;
	l->kill = unconfined_kill;
	l->finish = unconfined_finish;
	l->on_watch = NULL;
	l->describe = unconfined_describe;
	l->destroy = unconfined_destroy;
	return l;
}
