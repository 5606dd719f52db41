/* supervisor/exec.c: one toolchain command in an exec capsule (see exec.h):
 * the capsule from capsule/ (profile "exec", capsule/exec_capsule.h), the
 * wall deadline, the seccomp listener, the output capture (head and tail
 * kept, the whole stream hashed, a flood killed) and the result. */
#include "supervisor/exec.h"
#include "capsule/capsule.h"
#include "capsule/exec_capsule.h"
#include "capsule/profile.h"
#include "supervisor/supervisor.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CAP_KEEP (SUP_EXEC_HEAD_KEEP + SUP_EXEC_TAIL_KEEP)

struct capture {
	char *head;        /* SUP_EXEC_HEAD_KEEP */
	char *ring;        /* SUP_EXEC_TAIL_KEEP: the bytes after the head, the last ones kept */
	uint64_t total;
	EVP_MD_CTX *md;
	int fd;            /* read end, -1 at EOF */
};

static int cap_init(struct capture *c, int fd)
{
	memset(c, 0, sizeof *c);
	c->fd = fd;
	c->head = malloc(SUP_EXEC_HEAD_KEEP);
	c->ring = malloc(SUP_EXEC_TAIL_KEEP);
	c->md = EVP_MD_CTX_new();
	if (!c->head || !c->ring || !c->md || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) return -1;
	return 0;
}

static void cap_free(struct capture *c)
{
	free(c->head);
	free(c->ring);
	EVP_MD_CTX_free(c->md);
	if (c->fd >= 0) close(c->fd);
	c->head = c->ring = NULL;
	c->md = NULL;
	c->fd = -1;
}

static int cap_feed(struct capture *c, const char *b, size_t n)
{
	if (EVP_DigestUpdate(c->md, b, n) != 1) return -1;
	for (size_t i = 0; i < n; i++, c->total++) {
		if (c->total < SUP_EXEC_HEAD_KEEP) c->head[c->total] = b[i];
		else c->ring[(c->total - SUP_EXEC_HEAD_KEEP) % SUP_EXEC_TAIL_KEEP] = b[i];
	}
	return 0;
}

static int cap_finish(struct capture *c, struct sup_exec_stream *s)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned dl = 0;
	if (EVP_DigestFinal_ex(c->md, d, &dl) != 1 || dl != 32) return -1;
	for (unsigned i = 0; i < 32; i++) snprintf(s->sha256 + 2 * i, 3, "%02x", d[i]);
	s->bytes = c->total;
	s->truncated = c->total > CAP_KEEP;
	size_t hl = c->total < SUP_EXEC_HEAD_KEEP ? (size_t)c->total : SUP_EXEC_HEAD_KEEP;
	uint64_t after = c->total - hl;
	size_t tl = after < SUP_EXEC_TAIL_KEEP ? (size_t)after : SUP_EXEC_TAIL_KEEP;
	s->text = malloc(hl + tl + 1);
	if (!s->text) return -1;
	memcpy(s->text, c->head, hl);
	size_t start = (size_t)((after - tl) % SUP_EXEC_TAIL_KEEP);
	for (size_t i = 0; i < tl; i++) s->text[hl + i] = c->ring[(start + i) % SUP_EXEC_TAIL_KEEP];
	s->len = hl + tl;
	s->text[s->len] = 0;
	return 0;
}

void sup_exec_result_free(struct sup_exec_result *r)
{
	if (!r) return;
	free(r->out.text);
	free(r->err.text);
	r->out.text = r->err.text = NULL;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static double now_fms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The exec profile's settings digest: sha256 of its JSON (what `worldd
 * profile show exec --format json` prints without this host's facts),
 * keys sorted, computed once. */
static pthread_once_t digest_once = PTHREAD_ONCE_INIT;
static char digest[72];
static void digest_make(void)
{
	const struct capsule_profile *p = capsule_profile_find("exec");
	json_t *o = p ? capsule_profile_json(p, NULL) : NULL;
	char *t = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned dl = 0;
	if (t && EVP_Digest(t, strlen(t), d, &dl, EVP_sha256(), NULL) == 1 && dl == 32) {
		memcpy(digest, "sha256:", 7);
		for (unsigned i = 0; i < 32; i++) snprintf(digest + 7 + 2 * i, 3, "%02x", d[i]);
	}
	free(t);
}

const char *sup_exec_profile_digest(void)
{
	pthread_once(&digest_once, digest_make);
	return digest;
}

void sup_exec_shown(const char *const **system, const char *const **etc_masked)
{
	static const char *const none[] = { NULL };
	const struct capsule_profile *p = capsule_profile_find("exec");
	*system = p && p->exec ? p->exec->system : none;
	*etc_masked = p && p->exec ? p->exec->etc_masked : none;
}

/* ---- CPU time of the whole tree: a v1 cpuacct group of its own ----------
 * RLIMIT_CPU bounds each process; where this process may make a cpuacct
 * group (v1, below its own), the run gets one more group, made for the call
 * and removed after it, and the supervisor reads its usage while the run
 * goes: past cpu_ms the tree is killed (limit "time"). Not pooled: the
 * group is empty at the reap (the pid namespace is gone) and rmdir is
 * cheap. A SIGKILLed supervisor leaves its empty group behind. */
struct cpu_group {
	char dir[512];
	int usage_fd;      /* cpuacct.usage, read with pread */
	char why[128];     /* why there is none */
};

static unsigned long cpu_seq;

static int cpu_group_make(struct cpu_group *g)
{
	g->dir[0] = 0;
	g->usage_fd = -1;
	static const char *const mnts[] = { "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct",
	                                    "/sys/fs/cgroup/cpuacct,cpu", NULL };
	const char *mnt = NULL;
	char probe[600];
	for (size_t i = 0; mnts[i] && !mnt; i++) {
		snprintf(probe, sizeof probe, "%s/cpuacct.usage", mnts[i]);
		if (access(probe, F_OK) == 0) mnt = mnts[i];
	}
	if (!mnt) {
		snprintf(g->why, sizeof g->why, "no v1 cpuacct hierarchy");
		return -1;
	}
	/* this process's group in it: the /proc/self/cgroup line naming cpuacct */
	char own[400] = "";
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[600];
	while (f && fgets(line, sizeof line, f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2) continue;
		*c2 = 0;
		bool has = false;
		char *sv = NULL; /* strtok_r: concurrent calls (the daemon's workers) each parse their own line */
		for (char *w = strtok_r(c1 + 1, ",", &sv); w && !has; w = strtok_r(NULL, ",", &sv)) has = strcmp(w, "cpuacct") == 0;
		if (!has) continue;
		snprintf(own, sizeof own, "%s", c2 + 1);
		own[strcspn(own, "\n")] = 0;
		break;
	}
	if (f) fclose(f);
	if (!own[0]) {
		snprintf(g->why, sizeof g->why, "no cpuacct line in /proc/self/cgroup");
		return -1;
	}
	unsigned long n = __atomic_add_fetch(&cpu_seq, 1, __ATOMIC_RELAXED);
	if ((size_t)snprintf(g->dir, sizeof g->dir, "%s%s/world-exec-%d-%lu", mnt, strcmp(own, "/") ? own : "",
	                     (int)getpid(), n) >= sizeof g->dir || mkdir(g->dir, 0755) < 0) {
		snprintf(g->why, sizeof g->why, "mkdir a cpuacct group: %s", strerror(errno));
		g->dir[0] = 0;
		return -1;
	}
	snprintf(probe, sizeof probe, "%s/cpuacct.usage", g->dir);
	g->usage_fd = open(probe, O_RDONLY | O_CLOEXEC);
	if (g->usage_fd < 0) {
		snprintf(g->why, sizeof g->why, "open cpuacct.usage: %s", strerror(errno));
		rmdir(g->dir);
		g->dir[0] = 0;
		return -1;
	}
	return 0;
}

/* capsule_spec.place: the capsule's init into the group, before it goes on */
static int cpu_group_place(pid_t pid, void *arg)
{
	struct cpu_group *g = arg;
	if (!g->dir[0]) return 0;
	char path[600], val[24];
	snprintf(path, sizeof path, "%s/cgroup.procs", g->dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) return -1;
	int n = snprintf(val, sizeof val, "%d", (int)pid);
	ssize_t w = write(fd, val, (size_t)n);
	int e = errno;
	close(fd);
	errno = w == n ? 0 : w < 0 ? e : EIO;
	return w == n ? 0 : -1;
}

/* ns of CPU the tree used so far, or -1 */
static long long cpu_group_usage(struct cpu_group *g)
{
	char buf[32];
	ssize_t n = g->usage_fd >= 0 ? pread(g->usage_fd, buf, sizeof buf - 1, 0) : -1;
	if (n <= 0) return -1;
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

static void cpu_group_drop(struct cpu_group *g)
{
	if (g->usage_fd >= 0) close(g->usage_fd);
	g->usage_fd = -1;
	if (!g->dir[0]) return;
	/* the pid namespace is gone at the reap; its tasks leave the group a
	 * moment later */
	for (int i = 0; i < 200 && rmdir(g->dir) < 0 && errno == EBUSY; i++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	g->dir[0] = 0;
}

/* capsule/'s "capsule setup: ..." lines become "exec capsule: ...". */
static void reprefix(struct world_err *err)
{
	static const char from[] = "capsule setup: ";
	if (strncmp(err->msg, from, sizeof from - 1) == 0) {
		char tmp[sizeof err->msg];
		snprintf(tmp, sizeof tmp, "exec capsule: %s", err->msg + sizeof from - 1);
		snprintf(err->msg, sizeof err->msg, "%s", tmp);
	}
}

static void close_fd(int *fd)
{
	if (*fd >= 0) close(*fd);
	*fd = -1;
}

int sup_run_exec(const struct sup_exec_req *req, struct sup_exec_result *res, struct world_err *err)
{
	memset(res, 0, sizeof *res);
	long t0 = now_ms();
	double f0 = now_fms(), f_group = 0, f_start = 0; /* WORLD_EXEC_TIMING */
	const struct capsule_profile *p = capsule_profile_find("exec");
	if (!p || !p->exec) return werr(err, WX_FAIL, "exec capsule: no exec profile in this build");
	if (!req->argv || !req->argv[0] || req->argv0_fd < 0 || !req->envp || !req->worktree)
		return werr(err, WX_USAGE, "exec capsule: argv, argv0_fd, envp and worktree are required");
	if (sup_cancel_fired(req->cancel)) return werr(err, WX_CANCELLED, "exec capsule: call cancelled before the command ran");
	snprintf(res->profile_name, sizeof res->profile_name, "%s", p->name);
	snprintf(res->profile_digest, sizeof res->profile_digest, "%s", sup_exec_profile_digest());

	uint64_t mem = req->memory_max ? req->memory_max : SUP_EXEC_MEMORY_MAX;
	unsigned pids = req->pids_max ? req->pids_max : SUP_EXEC_PIDS_MAX;
	unsigned cpu_ms = req->cpu_ms ? req->cpu_ms : SUP_EXEC_CPU_MS;
	unsigned wall_ms = req->wall_ms ? req->wall_ms : SUP_EXEC_WALL_MS;
	uint64_t out_max = req->output_max ? req->output_max : SUP_EXEC_OUTPUT_MAX;
	struct capsule_limits lim = p->limits;
	lim.cg_memory = mem;
	lim.cg_pids = pids;
	/* RLIMIT_NPROC a little above the pids group's limit, so that with a
	 * group the group is what stops a fork bomb (and says so); without one
	 * (unprivileged) it is the bound, counting the user's every task. */
	lim.rlim_nproc = pids + 32;
	lim.rlim_cpu_s = (cpu_ms + 999) / 1000;
	lim.rlim_data = 2 * mem; /* per process, where no memory group bounds the tree */
	lim.wall_ms = wall_ms;
	lim.output_cap = out_max;

	/* Protected names absent now: reported if the command makes one. */
	bool absent[32] = { false };
	size_t nprot = 0;
	int wtfd = open(req->worktree, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	for (const char *const *n = req->protected_names; n && *n && nprot < 32; n++, nprot++) {
		struct stat st;
		absent[nprot] = wtfd >= 0 && !strchr(*n, '/') && fstatat(wtfd, *n, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
		                errno == ENOENT;
	}

	struct capsule_exec x = {
		.argv = req->argv, .envp = req->envp, .worktree = req->worktree, .cwd_rel = req->cwd_rel,
		.protected_names = req->protected_names, .cache_dir = req->cache_dir, .read_roots = req->read_roots,
	};
	int in = -1, outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, stp[2] = { -1, -1 };
	struct cpu_group cpu = { "", -1, "" };
	struct capture co, ce;
	bool cap_ok = cap_init(&co, -1) == 0;
	cap_ok = cap_init(&ce, -1) == 0 && cap_ok;
	if (!cap_ok) {
		cap_free(&co);
		cap_free(&ce);
		if (wtfd >= 0) close(wtfd);
		return werr(err, WX_SETUP, "exec capsule: output capture: out of memory");
	}
	if ((in = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 || pipe2(outp, O_CLOEXEC) < 0 ||
	    pipe2(errp, O_CLOEXEC) < 0 || pipe2(stp, O_CLOEXEC) < 0) {
		werr(err, WX_SETUP, "exec capsule: pipes: %s", strerror(errno));
		goto fail;
	}
	co.fd = outp[0];
	ce.fd = errp[0];
	outp[0] = errp[0] = -1;
	int keep[1] = { stp[1] };
	f_group = now_fms();
	bool have_cpu = cpu_group_make(&cpu) == 0;
	f_start = now_fms();
	struct capsule_spec spec = {
		.profile = p, .interp_fd = req->argv0_fd, .stdin_fd = in, .stdout_fd = outp[1], .stderr_fd = errp[1],
		.keep_fds = keep, .nkeep = 1, .exec = &x, .limits = &lim,
		.place = have_cpu ? cpu_group_place : NULL, .place_arg = &cpu,
	};
	struct capsule_handle h;
	int rc = capsule_start(&spec, &h, err);
	close_fd(&in);
	close_fd(&outp[1]);
	close_fd(&errp[1]);
	close_fd(&stp[1]);
	if (rc < 0) {
		reprefix(err);
		goto fail;
	}
	long t_started = now_ms(), t_exited = 0;
	capsule_describe(&h, res->layers, sizeof res->layers);
	{
		size_t ll = strlen(res->layers);
		snprintf(res->layers + ll, sizeof res->layers - ll, "; cpu time: %s%s",
		         have_cpu ? "cpuacct v1 group (tree)" : "RLIMIT_CPU per process only: ", have_cpu ? "" : cpu.why);
	}
	bool cpu_hit = false;
	long long cpu_max = (long long)cpu_ms * 1000000LL, t_cpu = 0;
	(void)fcntl(co.fd, F_SETFL, O_NONBLOCK);
	(void)fcntl(ce.fd, F_SETFL, O_NONBLOCK);

	long deadline = t0 + (long)wall_ms;
	bool exited = false, output_hit = false, notify_open = h.notify_fd >= 0;
	char status[256];
	size_t slen = 0;
	char *buf = malloc(65536);
	if (!buf) {
		capsule_kill(&h);
		werr(err, WX_SETUP, "exec capsule: out of memory");
	}
	while (buf && (!exited || co.fd >= 0 || ce.fd >= 0 || stp[0] >= 0)) {
		struct pollfd pf[6];
		int np = 0, i_pid = -1, i_not = -1, i_out = -1, i_err = -1, i_st = -1, i_can = -1;
		if (!exited) pf[i_pid = np++] = (struct pollfd){ h.pidfd, POLLIN, 0 };
		if (!exited && !h.killed && req->cancel && req->cancel->fd >= 0)
			pf[i_can = np++] = (struct pollfd){ req->cancel->fd, POLLIN, 0 };
		if (!exited && notify_open) pf[i_not = np++] = (struct pollfd){ h.notify_fd, POLLIN, 0 };
		if (co.fd >= 0) pf[i_out = np++] = (struct pollfd){ co.fd, POLLIN, 0 };
		if (ce.fd >= 0) pf[i_err = np++] = (struct pollfd){ ce.fd, POLLIN, 0 };
		if (stp[0] >= 0) pf[i_st = np++] = (struct pollfd){ stp[0], POLLIN, 0 };
		long left = deadline - now_ms();
		int timeout = exited ? 1000 : h.killed ? 100 : left > 0 ? (int)left : 0;
		if (have_cpu && !exited && !h.killed && timeout > 50) timeout = 50; /* the tree's CPU time, read 20 times a second */
		int pr = poll(pf, (nfds_t)np, timeout);
		if (pr < 0 && errno == EINTR) continue;
		if (pr < 0) {
			capsule_kill(&h);
			break;
		}
		if (pr == 0) {
			if (exited) break; /* nobody can hold the pipes after the namespace died: never wait forever */
			if (!h.killed && now_ms() >= deadline) {
				res->timed_out = true;
				capsule_kill(&h);
			}
			if (have_cpu && !h.killed && cpu_group_usage(&cpu) > cpu_max) {
				cpu_hit = true;
				capsule_kill(&h);
			}
			continue;
		}
		if (i_can >= 0 && (pf[i_can].revents & POLLIN)) {
			res->cancelled = true;
			capsule_kill(&h);
		}
		if (i_not >= 0 && (pf[i_not].revents & POLLIN)) (void)capsule_on_notify(&h);
		/* The listener hangs up once no process uses the filter (the init
		 * is exiting): from then on it is always "readable", and polling
		 * it again would spin on the CPU the init's exit needs. */
		else if (i_not >= 0 && pf[i_not].revents) notify_open = false;
		struct capture *caps[2] = { &co, &ce };
		int idx[2] = { i_out, i_err };
		for (int k = 0; k < 2; k++) {
			if (idx[k] < 0 || !(pf[idx[k]].revents & (POLLIN | POLLHUP | POLLERR))) continue;
			ssize_t n = read(caps[k]->fd, buf, 65536);
			if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
			if (n <= 0) {
				close_fd(&caps[k]->fd);
				continue;
			}
			if (cap_feed(caps[k], buf, (size_t)n) < 0) {
				capsule_kill(&h);
				close_fd(&caps[k]->fd);
				continue;
			}
			if (!output_hit && co.total + ce.total > out_max) {
				/* Killed, and read no further: the streams end here (a writer
				 * still running until the namespace dies gets EPIPE). */
				output_hit = true;
				capsule_kill(&h);
				close_fd(&co.fd);
				close_fd(&ce.fd);
				break;
			}
		}
		if (i_st >= 0 && (pf[i_st].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = read(stp[0], status + slen, sizeof status - 1 - slen);
			if (n < 0 && errno == EINTR) continue;
			if (n <= 0 || slen + (size_t)n >= sizeof status - 1) close_fd(&stp[0]);
			if (n > 0) slen += (size_t)n;
		}
		if (i_pid >= 0 && (pf[i_pid].revents & POLLIN)) exited = true, t_exited = now_ms();
		if (!exited && !h.killed && now_ms() >= deadline) {
			res->timed_out = true;
			capsule_kill(&h);
		}
		if (have_cpu && !exited && !h.killed && now_ms() - t_cpu >= 50) {
			t_cpu = now_ms();
			long long used = cpu_group_usage(&cpu);
			if (used > cpu_max) {
				cpu_hit = true;
				capsule_kill(&h);
			}
		}
	}
	free(buf);
	status[slen] = 0;
	long t_drained = now_ms();
	struct capsule_report rep;
	struct world_err ferr = { 0, "" };
	if (capsule_finish(&h, &rep, &ferr) < 0) {
		*err = ferr;
		goto fail;
	}
	res->duration_ms = now_ms() - t0;
	if (getenv("WORLD_EXEC_TIMING")) {
		for (int i = 0; i < CAPSULE_T_COUNT; i++)
			fprintf(stderr, "%s=%.2f ", capsule_phase_names[i], h.timing.ns[i] / 1e6);
		fprintf(stderr, "\nstart %ld exited %ld drained %ld finished %ld\n", t_started - t0, t_exited - t0,
		        t_drained - t0, res->duration_ms);
		fprintf(stderr, "exec before capsule_start ms: checks+pipes=%.2f cpuacct_group=%.2f\n", f_group - f0,
		        f_start - f_group);
	}
	snprintf(res->denied, sizeof res->denied, "%s", rep.denied);
	if (!buf) goto fail;
	if (status[0] == 'E') {
		/* The init could not start the command: nothing ran. */
		char *nl = strchr(status, '\n');
		if (nl) *nl = 0;
		werr(err, WX_SETUP, "exec capsule: %s", status + 2);
		goto fail;
	}
	int wst = 0;
	bool have = status[0] == 'W' && sscanf(status + 2, "%d", &wst) == 1;
	/* No status: the tree was killed (deadline, output, a denied call, the
	 * memory group's OOM killer choosing the init) before the command ended. */
	if (have && WIFEXITED(wst)) res->exit_code = WEXITSTATUS(wst);
	else if (have && WIFSIGNALED(wst)) res->exit_code = 128 + WTERMSIG(wst);
	else res->exit_code = 128 + SIGKILL;
	/* Which limit ended it, the supervisor's own first. */
	cpu_group_drop(&cpu);
	const char *limit = output_hit ? "output" : res->timed_out || cpu_hit ? "time" : rep.memory_limit_hit ? "memory"
	                  : rep.pids_limit_hit ? "pids"
	                  : have && WIFSIGNALED(wst) && WTERMSIG(wst) == SIGXCPU ? "time" : "";
	snprintf(res->limit, sizeof res->limit, "%s", limit);
	if (cap_finish(&co, &res->out) < 0 || cap_finish(&ce, &res->err) < 0) {
		sup_exec_result_free(res);
		werr(err, WX_FAIL, "exec capsule: output digest failed");
		goto fail;
	}
	size_t plen = 0;
	nprot = 0;
	for (const char *const *n = req->protected_names; n && *n && nprot < 32; n++, nprot++) {
		struct stat st;
		if (!absent[nprot] || wtfd < 0 || fstatat(wtfd, *n, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
		int w = snprintf(res->protected_created + plen, sizeof res->protected_created - plen, "%s%s",
		                 plen ? "," : "", *n);
		if (w > 0 && plen + (size_t)w < sizeof res->protected_created) plen += (size_t)w;
	}
	cap_free(&co);
	cap_free(&ce);
	close_fd(&stp[0]);
	if (wtfd >= 0) close(wtfd);
	return 0;

fail:
	cpu_group_drop(&cpu);
	cap_free(&co);
	cap_free(&ce);
	close_fd(&in);
	close_fd(&outp[0]);
	close_fd(&outp[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	close_fd(&stp[0]);
	close_fd(&stp[1]);
	if (wtfd >= 0) close(wtfd);
	memset(res, 0, sizeof *res);
	return -1;
}
