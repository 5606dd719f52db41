/* supervisor/launch_capsule.c: the product launcher (see launcher.h): each
 * capsule is capsule/capsule.h's confined process tree (namespaces, tmpfs
 * root, rlimits, cgroups, no capabilities, landlock, seccomp with the
 * denial listener held here) running the pinned interpreter from its sealed
 * memfd. The agent runs as the capsule's `inside` callback, after every
 * confinement step. */
#include "supervisor/launcher.h"
#include "capsule/capsule.h"
#include "supervisor/spawner.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct capl {
	struct capsule_pin *pin; /* the interpreter (capsule/pin.h), maybe still pinning */
	int memfd;            /* its memfd */
	pthread_mutex_t pin_mu; /* guards the one wait for the pin */
	bool pin_done;
	int pin_rc;
	struct world_err pin_err;
	char ref[80];
	int shares_netns;     /* holds a reference on the shared network namespace */
	pthread_t net_thread; /* making that reference, when net_pending */
	bool net_pending;
	bool here;            /* capsules are clones of this process even with a spawner running */
};

static int netns_ref(void);

/* The shared network namespace costs ~0.65 ms to create: a launcher made by
 * launcher_capsule_begin creates it on a thread while the caller goes on
 * (the cgroup sweep, reading its input), and the first start waits. */
static void *netns_thread(void *arg)
{
	struct capl *c = arg;
	c->shares_netns = netns_ref();
	return NULL;
}

static void capl_net_ready(struct capl *c)
{
	pthread_mutex_lock(&c->pin_mu);
	if (c->net_pending) {
		pthread_join(c->net_thread, NULL);
		c->net_pending = false;
	}
	pthread_mutex_unlock(&c->pin_mu);
}

/* The pin's outcome, waiting for it the first time (any thread). */
static int capl_pinned(struct capl *c, struct world_err *err)
{
	pthread_mutex_lock(&c->pin_mu);
	if (!c->pin_done) {
		c->pin_rc = capsule_pin_wait(c->pin, c->ref, &c->pin_err);
		c->pin_done = true;
	}
	int rc = c->pin_rc;
	pthread_mutex_unlock(&c->pin_mu);
	if (rc < 0 && err) *err = c->pin_err;
	return rc;
}

/* capsule_start needs no lock of ours (each call has its own child plan);
 * this one guards only the shared network namespace's reference count. */
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;

/* As root, capsule launchers share one empty network namespace
 * (capsule_netns_share): it saves creating one and its teardown per
 * capsule (bench/supervisor_bench). The namespace is process-wide, so
 * launchers count their references; only the first creates it and only the
 * last closes it (capsule_netns_share itself excludes concurrent starts). */
static unsigned netns_users;

static int netns_ref(void)
{
	if (geteuid() != 0) return 0; /* unprivileged capsules always get their own */
	pthread_mutex_lock(&start_mu);
	struct world_err e;
	int ok = netns_users > 0 || capsule_netns_share(true, &e) == 0;
	if (ok) netns_users++;
	pthread_mutex_unlock(&start_mu);
	return ok; /* on failure each capsule simply makes its own */
}

static void netns_unref(void)
{
	pthread_mutex_lock(&start_mu);
	if (netns_users > 0 && --netns_users == 0) capsule_netns_share(false, NULL);
	pthread_mutex_unlock(&start_mu);
}

struct capl_run {
	struct capsule_handle h;
	int chan; /* made by the spawner: the call's channel to it (spawner.h), else -1 */
};

struct tramp {
	int (*inside)(void *arg, const struct launch_exec *ex);
	void *arg;
};

struct spawn_call {
	const struct capsule_ctx *ctx;
	const char *argv[32];
};

static void capl_execveat(void *arg)
{
	struct spawn_call *sc = arg;
	/* Defense in depth: the profile's RLIMIT_AS/DATA on the interpreter
	 * itself, whatever the agent's own limits are (a sanitized agent may
	 * run without them); fail closed (the child exits 127). */
	if (capsule_apply_interpreter_limits(sc->ctx) < 0) return;
	syscall(SYS_execveat, sc->ctx->interp_fd, "", (char *const *)sc->argv, (char *const *)capsule_env,
	        AT_EMPTY_PATH);
}

/* Like capsule_spawn_interpreter, but through launch_spawn_raw: the capsule
 * is a raw clone of a possibly threaded supervisor, where glibc's fork
 * could wait forever on a lock another thread held at clone time. */
static pid_t capl_spawn(const struct launch_exec *ex, const char *const *args, int in_fd, int out_fd, int err_fd)
{
	struct spawn_call sc;
	sc.ctx = ex->impl;
	size_t n = 0;
	sc.argv[n++] = "ailang";
	for (size_t i = 0; args[i] && n < 31; i++) sc.argv[n++] = args[i];
	sc.argv[n] = NULL;
	return launch_spawn_raw(in_fd, out_fd, err_fd, capl_execveat, &sc);
}

static int capl_inside(const struct capsule_ctx *ctx, void *arg)
{
	const struct tramp *t = arg;
	if (ctx->nkept < 2) return 126;
	struct launch_exec ex = { capl_spawn, ctx->kept_fds[0], ctx->kept_fds[1], (void *)ctx };
	return t->inside(t->arg, &ex);
}

/* The same for a capsule the spawner made: the agent's argument is the
 * spawner's copy (spawner.h). */
int capl_spawner_inside(const struct capsule_ctx *ctx, void *arg)
{
	const struct sup_spawner_agent *a = arg;
	struct tramp t = { a->inside, (void *)a->arg };
	return capl_inside(ctx, &t);
}

static const struct capsule_profile *profile_of(enum sup_profile p)
{
	return capsule_profile_find(sup_profile_name(p));
}

static int capl_start(struct launcher *l, const struct launch_spec *spec, struct launched *out, struct world_err *err)
{
	struct capl *c = l->ctx;
	const struct capsule_profile *p = profile_of(spec->profile);
	if (!p) return werr(err, WX_SETUP, "capsule launcher: no profile %s", sup_profile_name(spec->profile));
	struct capsule_file files[8];
	if (spec->nfiles > 8) return werr(err, WX_USAGE, "capsule launcher: too many staged files");
	/* Without an agent the capsule execs the interpreter as soon as it is
	 * set up: the pin must be done first. With one, the agent execs only
	 * on the start frame, which the caller sends after we return, so the
	 * pin finishes while the capsule is being set up (pin.h). */
	if (!spec->inside && capl_pinned(c, err) < 0) return -1;
	capl_net_ready(c);
	/* Without an agent the interpreter is the capsule's first process. */
	const char *argv[32];
	if (!spec->inside) {
		size_t n = 0;
		argv[n++] = "ailang";
		for (size_t i = 0; spec->argv && spec->argv[i]; i++) {
			if (n >= 31) return werr(err, WX_USAGE, "capsule launcher: more than 30 interpreter arguments");
			argv[n++] = spec->argv[i];
		}
		argv[n] = NULL;
	}
	for (size_t i = 0; i < spec->nfiles; i++)
		files[i] = (struct capsule_file){ spec->files[i].name, spec->files[i].data, spec->files[i].len };
	struct capl_run *r = calloc(1, sizeof *r);
	if (!r) return werr(err, WX_SETUP, "capsule launcher: out of memory");
	r->chan = -1;
	/* Read by the child from its copy of this stack frame. */
	struct tramp t = { spec->inside, spec->arg };
	struct capsule_spec cs = {
		.profile = p,
		.interp_fd = c->memfd,
		.files = files,
		.nfiles = spec->nfiles,
		.argv = spec->inside ? NULL : argv,
		.stdin_fd = spec->stdin_fd,
		.stdout_fd = spec->stdout_fd,
		.stderr_fd = spec->stderr_fd,
		.keep_fds = spec->inside ? spec->keep_fds : NULL,
		.nkeep = spec->inside ? 2 : 0,
		.inside = spec->inside ? capl_inside : NULL,
		.inside_arg = spec->inside ? &t : NULL,
		.worktree = spec->worktree,
	};
	/* With a spawner (a long-lived supervisor started one), the spawner's
	 * small process makes the capsule, not this one (spawner.h). */
	int rc;
	if (!c->here && sup_spawner_running()) {
		struct sup_spawner_agent agent = { spec->inside, spec->arg, spec->arg_len };
		if (spec->inside && spec->arg && !spec->arg_len) {
			free(r);
			return werr(err, WX_USAGE, "capsule launcher: an agent argument without its size cannot go to the spawner");
		}
		rc = sup_spawner_capsule_start(&cs, spec->inside ? &agent : NULL, &r->h, &r->chan, err);
	} else {
		rc = capsule_start(&cs, &r->h, err);
	}
	if (rc < 0) {
		free(r);
		return -1;
	}
	if (capl_pinned(c, err) < 0) {
		/* the pin failed: this capsule never runs anything */
		struct capsule_report cr;
		struct world_err ignored;
		capsule_kill(&r->h);
		if (r->chan >= 0) (void)sup_spawner_finish(r->chan, &r->h, &cr, &ignored);
		else (void)capsule_finish(&r->h, &cr, &ignored);
		free(r);
		return -1;
	}
	out->pid = r->h.pid;
	out->pidfd = r->h.pidfd;
	out->watch_fd = r->h.notify_fd;
	out->impl = r;
	return 0;
}

static void capl_kill(struct launcher *l, struct launched *c)
{
	(void)l;
	struct capl_run *r = c->impl;
	if (r) capsule_kill(&r->h);
}

static int capl_on_watch(struct launcher *l, struct launched *c)
{
	(void)l;
	struct capl_run *r = c->impl;
	/* 1: a denial was recorded (the capsule is killed; finish reports
	 * the syscall). -1: the listener failed and the capsule was killed;
	 * the protocol then ends early and says so. */
	return capsule_on_notify(&r->h) == 1 ? 1 : 0;
}

static int capl_finish(struct launcher *l, struct launched *c, struct launch_report *rep, struct world_err *err)
{
	(void)l;
	struct capl_run *r = c->impl;
	memset(rep, 0, sizeof *rep);
	struct capsule_report cr;
	memset(&cr, 0, sizeof cr);
	capsule_describe(&r->h, rep->layers, sizeof rep->layers);
	int rc = r->chan >= 0 ? sup_spawner_finish(r->chan, &r->h, &cr, err) : capsule_finish(&r->h, &cr, err);
	rep->status = cr.exited ? (cr.exit_status & 0xff) << 8 : (cr.term_signal & 0x7f);
	if (cr.setup_failed) {
		rep->setup_failed = 1;
		snprintf(rep->detail, sizeof rep->detail, "%s", cr.setup_error);
	} else if (cr.denied[0]) {
		rep->denied_syscall = 1;
		snprintf(rep->denied, sizeof rep->denied, "%s", cr.denied);
		struct sup_denial *d = &rep->denial;
		snprintf(d->syscall, sizeof d->syscall, "%s", cr.denial.syscall);
		d->nr = cr.denial.nr;
		snprintf(d->arch, sizeof d->arch, "%s", cr.denial.arch);
		d->has_cmd = cr.denial.has_cmd;
		d->cmd = cr.denial.cmd;
		snprintf(d->cmd_name, sizeof d->cmd_name, "%s", cr.denial.cmd_name);
		snprintf(rep->detail, sizeof rep->detail, "syscall denied: %s; capsule killed", cr.denied);
	} else if (cr.memory_limit_hit) {
		snprintf(rep->detail, sizeof rep->detail, "the capsule reached its cgroup memory limit");
	} else if (cr.pids_limit_hit) {
		snprintf(rep->detail, sizeof rep->detail, "the capsule reached its cgroup pids limit");
	}
	rep->memory_limit_hit = cr.memory_limit_hit;
	rep->pids_limit_hit = cr.pids_limit_hit;
	free(r);
	c->impl = NULL;
	c->pidfd = c->watch_fd = -1; /* closed by capsule_finish */
	return rc;
}

static int capl_describe(struct launcher *l, enum sup_profile sp, int fd, struct world_err *err)
{
	struct capl *c = l->ctx;
	const struct capsule_profile *p = profile_of(sp);
	if (!p) return werr(err, WX_NOT_FOUND, "profile %s not found", sup_profile_name(sp));
	if (capl_pinned(c, err) < 0) return -1;
	const struct capsule_limits *lim = &p->limits;
	size_t nsys = 0;
	for (const struct capsule_syscall *s = p->syscalls; s && s->name; s++)
		if (s->kind != SC_ERRNO) nsys++;
	int ll = capsule_landlock_abi();
	dprintf(fd,
	        "profile %s: %s\n"
	        "  interpreter   %s (sealed memfd, exec'd by fd)\n"
	        "  namespaces    user mount pid net ipc uts cgroup\n"
	        "  root          tmpfs %llu KiB, read-only; staged:",
	        p->name, p->purpose, c->ref, (unsigned long long)(lim->root_size >> 10));
	for (const char *const *s = p->staged; s && *s; s++) dprintf(fd, " %s", *s);
	if (p->worktree_mount)
		dprintf(fd, "\n  worktree      %s: the caller's directory, read-only bind (ro,nosuid,nodev,noexec)",
		        p->worktree_mount);
	dprintf(fd,
	        "\n  cache         /.capsule-cache tmpfs %llu KiB rw,noexec\n"
	        "  rlimits       as %llu MiB, data %llu MiB, cpu %llu s, fsize %llu MiB, nofile %llu, nproc %llu\n"
	        "  cgroups       memory %llu MiB, pids %llu (where the host offers them)\n"
	        "  privileges    all capabilities dropped, no_new_privs, uid/gid 1000 inside\n"
	        "  seccomp       default deny (denials reported by name), %zu syscalls allowed\n"
	        "  landlock      %s\n",
	        (unsigned long long)(lim->cache_size >> 10), (unsigned long long)(lim->rlim_as >> 20),
	        (unsigned long long)(lim->rlim_data >> 20), (unsigned long long)lim->rlim_cpu_s,
	        (unsigned long long)(lim->rlim_fsize >> 20), (unsigned long long)lim->rlim_nofile,
	        (unsigned long long)lim->rlim_nproc, (unsigned long long)(lim->cg_memory >> 20),
	        (unsigned long long)lim->cg_pids, nsys,
	        p->landlock ? (ll > 0 ? "applied (kernel ABI present)" : "not available on this kernel") : "off");
	return 0;
}

static void capl_destroy(struct launcher *l)
{
	struct capl *c = l->ctx;
	capsule_pin_free(c->pin); /* waits for it, closes the memfd */
	capl_net_ready(c);
	pthread_mutex_destroy(&c->pin_mu);
	if (c->shares_netns) netns_unref();
	free(c);
	free(l);
}

static struct launcher *capl_new(const char *interp_path, const char *expected_ref, bool wait, bool here,
                                 struct world_err *err)
{
	struct launcher *l = calloc(1, sizeof *l);
	struct capl *c = calloc(1, sizeof *c);
	if (!l || !c) {
		free(l);
		free(c);
		werr(err, WX_FAIL, "capsule launcher: out of memory");
		return NULL;
	}
	c->pin = capsule_pin_begin(interp_path, expected_ref, err);
	if (!c->pin) {
		free(l);
		free(c);
		return NULL;
	}
	c->memfd = capsule_pin_fd(c->pin);
	c->here = here;
	pthread_mutex_init(&c->pin_mu, NULL);
	if (wait && capl_pinned(c, err) < 0) {
		capsule_pin_free(c->pin);
		pthread_mutex_destroy(&c->pin_mu);
		free(l);
		free(c);
		return NULL;
	}
	/* With a spawner, the network namespace, the groups and their cleanup
	 * are the spawner's (it makes the capsules). */
	bool spawned = !here && sup_spawner_running();
	if (!wait && !spawned) {
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		c->net_pending = pthread_create(&c->net_thread, NULL, netns_thread, c) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (!c->net_pending && !spawned) c->shares_netns = netns_ref();
	/* Every verb that makes capsules: nothing outlives an interrupted run
	 * (the groups go on SIGINT/SIGTERM/SIGHUP; the capsules die with us),
	 * and groups left by a SIGKILLed run are removed now; the first
	 * capsule's groups are made meanwhile too (while the pin and the
	 * network namespace are under way). A group that will not go harms no
	 * run: failures are not fatal. */
	if (!spawned) {
		(void)capsule_cleanup_on_signals();
		(void)capsule_prepare(profile_of(SUP_PROFILE_TRANSITION)); /* sweeps, and one group pair ready */
	}
	l->name = "capsule";
	l->ctx = c;
	l->start = capl_start;
	l->kill = capl_kill;
	l->on_watch = capl_on_watch;
	l->finish = capl_finish;
	l->describe = capl_describe;
	l->destroy = capl_destroy;
	return l;
}

struct launcher *launcher_capsule_new(const char *interp_path, const char *expected_ref, struct world_err *err)
{
	return capl_new(interp_path, expected_ref, true, false, err);
}

struct launcher *launcher_capsule_new_here(const char *interp_path, const char *expected_ref, struct world_err *err)
{
	return capl_new(interp_path, expected_ref, true, true, err);
}

struct launcher *launcher_capsule_begin(const char *interp_path, const char *expected_ref, struct world_err *err)
{
	/* one run per process: its capsule's mount namespace may go at its exit */
	capsule_defer_mntns_release(false);
	return capl_new(interp_path, expected_ref, false, true, err);
}

const char *launcher_capsule_ref(struct launcher *l)
{
	if (!l || l->start != capl_start) return NULL;
	struct capl *c = l->ctx;
	return capl_pinned(c, NULL) == 0 ? c->ref : NULL;
}
