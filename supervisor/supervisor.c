/* supervisor/supervisor.c: see supervisor.h. */
#include "supervisor/supervisor.h"
#include "supervisor/agent.h"
#include "supervisor/frame.h"
#include "capsule/capsule.h"
#include "common/pause.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *sup_profile_name(enum sup_profile p)
{
	return p == SUP_PROFILE_SOURCE_CHECK ? "source-check" : p == SUP_PROFILE_TOOL_RUN ? "tool-run" : "transition";
}

void sup_exit_on_interrupt(const char *who)
{
	capsule_exit_on_interrupt(who);
	(void)capsule_cleanup_on_signals(); /* the launcher installs them too; twice is harmless */
}

int sup_cgroup_delegate_self(char *note, size_t len) { return capsule_cgroup_delegate_self(note, len); }

int sup_cgroups_sweep(unsigned *removed, struct world_err *err) { return capsule_cgroups_sweep(removed, err); }

int sup_cgroup_keepwarm(bool on) { return capsule_cgroup_keepwarm(on); }

int sup_cgroups_check(char *line, size_t len)
{
	const struct capsule_profile *p = capsule_profile_find("transition");
	char why[256] = "";
	int missing = p ? capsule_cgroup_probe(p, why, sizeof why) : 3;
	if (!missing) return 0;
	const struct capsule_limits *l = p ? &p->limits : NULL;
	snprintf(line, len,
	         "capsules get no %s cgroup (%s); rlimits remain: RLIMIT_AS %llu MiB, RLIMIT_DATA %llu MiB, RLIMIT_NPROC %llu, "
	         "RLIMIT_CPU %llu s, RLIMIT_FSIZE %llu MiB, RLIMIT_NOFILE %llu",
	         missing == 3 ? "memory and no pids" : missing == 1 ? "memory" : "pids", why[0] ? why : "no profile",
	         l ? (unsigned long long)l->rlim_as >> 20 : 0, l ? (unsigned long long)l->rlim_data >> 20 : 0,
	         l ? (unsigned long long)l->rlim_nproc : 0, l ? (unsigned long long)l->rlim_cpu_s : 0,
	         l ? (unsigned long long)l->rlim_fsize >> 20 : 0, l ? (unsigned long long)l->rlim_nofile : 0);
	return missing;
}

void sup_limits_default(struct sup_limits *lim)
{
	lim->plan_ms = 4000;
	lim->finish_ms = 2000;
	lim->pure_ms = 4000;
	lim->check_ms = 10000;
	lim->invocation_ms = 20000;
	lim->stdout_max = 8u << 20;
	lim->stderr_max = 8u << 20;
	lim->output_max = 1u << 20;
	lim->payload_max = 1u << 20;
	lim->capacity = 8;
	lim->tool_ms = 20000;
}

struct supervisor {
	struct sup_limits lim;
	struct launcher *launcher;
	pthread_mutex_t mu;
	unsigned alive;
	int (*agent)(void *arg, const struct launch_exec *ex);
};

#ifdef WORLD_TEST_HOOKS
/* The hostile agent of WORLD_TEST_AGENT=hostile (supervisor.h): runs the
 * pinned interpreter as `INTERP hostile-hook host/capsule/main.ail` with the
 * capsule's frame fds as its stdin and stdout, through the launcher's own
 * spawn_interp, then waits for it. No malloc (see agent.h). */
static int sup_agent_hostile(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	static const char *const args[] = { "hostile-hook", "host/capsule/main.ail", NULL };
	pid_t p = ex->spawn_interp(ex, args, ex->proto_in, ex->proto_out, 2);
	if (p < 0) return 126;
	if (close(ex->proto_in) < 0 || close(ex->proto_out) < 0) return 125;
	int st = 0;
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR) return 124;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int sup_test_agent_env(void)
{
	const char *v = getenv("WORLD_TEST_AGENT");
	return v && strcmp(v, "hostile") == 0;
}
#endif

struct supervisor *sup_new(const struct sup_limits *lim, struct launcher *launcher, struct world_err *err)
{
	struct sup_limits d;
	sup_limits_default(&d);
	if (!lim) lim = &d;
	if (!launcher) {
		werr(err, WX_USAGE, "supervisor: no launcher");
		return NULL;
	}
	if (lim->capacity == 0 || lim->output_max > FRAME_PAYLOAD_MAX || lim->payload_max > FRAME_PAYLOAD_MAX) {
		launcher->destroy(launcher);
		werr(err, WX_USAGE, "supervisor: limits out of range (capacity >= 1, output and payload <= %zu bytes)",
		     FRAME_PAYLOAD_MAX);
		return NULL;
	}
	if (sup_agent_reserve() < 0) {
		int e = errno;
		launcher->destroy(launcher);
		errno = e;
		werr(err, WX_FAIL, "supervisor: cannot reserve the capsule agent's memory: %s", strerror(errno));
		return NULL;
	}
	struct supervisor *s = calloc(1, sizeof *s);
	if (!s) {
		launcher->destroy(launcher);
		werr(err, WX_FAIL, "supervisor: out of memory");
		return NULL;
	}
	s->lim = *lim;
	s->launcher = launcher;
	s->agent = sup_agent_main;
#ifdef WORLD_TEST_HOOKS
	if (sup_test_agent_env()) s->agent = sup_agent_hostile;
#endif
	pthread_mutex_init(&s->mu, NULL);
	/* Seed jansson's hash function now: a capsule child must not need
	 * /dev/urandom (there is none in its root). */
	json_object_seed(0);
	return s;
}

void sup_free(struct supervisor *s)
{
	if (!s) return;
	if (s->launcher) s->launcher->destroy(s->launcher);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

const struct sup_limits *sup_get_limits(const struct supervisor *s) { return &s->lim; }
struct launcher *sup_launcher(struct supervisor *s) { return s->launcher; }

unsigned sup_alive(struct supervisor *s)
{
	pthread_mutex_lock(&s->mu);
	unsigned n = s->alive;
	pthread_mutex_unlock(&s->mu);
	return n;
}

void sup_set_agent(struct supervisor *s, int (*agent)(void *arg, const struct launch_exec *ex))
{
	s->agent = agent ? agent : sup_agent_main;
}

void sup_result_free(struct sup_result *r)
{
	if (!r) return;
	free(r->plan);
	free(r->output);
	free(r->check_stdout);
	free(r->stderr_text);
	memset(r, 0, sizeof *r);
}

/* ---- one call ---------------------------------------------------------- */

enum mode { M_PURE, M_EFFECTFUL, M_CHECK, M_TOOL };
enum state { ST_PLAN, ST_RUN, ST_CHECK, ST_FINISH, ST_DONE, ST_TOOL };
enum tag { T_TO = 1, T_FROM, T_OUT, T_ERR, T_PID, T_TIMER, T_WATCH, T_CANCEL };

struct capbuf {
	char *p;
	size_t len, max;
	int fd, eof;
	const char *name;
	int over;      /* killed: more than max bytes arrived */
};

struct run {
	struct supervisor *s;
	const struct sup_limits *lim;
	enum mode mode;
	enum state state;
	const char *args;
	size_t args_len;
	sup_broker_fn broker;
	void *ctx;
	const struct sup_cancel *cancel; /* NULL: not cancellable */
	struct sup_result *res;
	struct world_err *err;
	int failed;
	int ep, tfd, to_fd, from_fd, pidfd;
	struct launched *cap;
	struct capbuf out, errb;
	char *wbuf;
	size_t wlen, woff;
	int wbuf_borrowed;     /* tool run: wbuf is the caller's stdin bytes */
	int to_registered;
	struct frame_reader fr;
	uint64_t t0, phase_end, inv_end;
	const char *phase;   /* "plan", "finish", "pure run", "source check" */
	unsigned phase_ms;
	int exited, from_eof;
	const char *premature; /* what we were waiting for when the protocol ended early */
	int cut;               /* ... and it ended inside a frame */
	int check_done;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int fail(struct run *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct run *r, int code, const char *fmt, ...)
{
	if (r->failed) return -1; /* keep the first error */
	va_list ap;
	va_start(ap, fmt);
	werr_v(r->err, code, fmt, ap);
	va_end(ap);
	r->failed = 1;
	return -1;
}

static int arm_timer(struct run *r)
{
	uint64_t t = r->phase_end < r->inv_end ? r->phase_end : r->inv_end;
	struct itimerspec its = { { 0, 0 }, { (time_t)(t / 1000000000u), (long)(t % 1000000000u) } };
	if (timerfd_settime(r->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return fail(r, WX_FAIL, "supervisor: timerfd_settime: %s", strerror(errno));
	return 0;
}

static int start_phase(struct run *r, const char *phase, unsigned ms)
{
	r->phase = phase;
	r->phase_ms = ms;
	r->phase_end = now_ns() + (uint64_t)ms * 1000000u;
	return arm_timer(r);
}

/* write() with SIGPIPE blocked for this thread only: a capsule that closed
 * its end gives EPIPE, never a signal that would kill the supervisor. */
static ssize_t write_nosigpipe(int fd, const void *buf, size_t len)
{
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	ssize_t n = write(fd, buf, len);
	int saved = errno;
	if (n < 0 && saved == EPIPE && !sigismember(&old, SIGPIPE)) {
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR) {}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return n;
}

static void close_to(struct run *r)
{
	if (r->to_fd < 0) return;
	if (r->to_registered) epoll_ctl(r->ep, EPOLL_CTL_DEL, r->to_fd, NULL);
	r->to_registered = 0;
	close(r->to_fd);
	r->to_fd = -1;
}

static int flush_to(struct run *r)
{
	while (r->woff < r->wlen) {
		ssize_t n = write_nosigpipe(r->to_fd, r->wbuf + r->woff, r->wlen - r->woff);
		if (n < 0) {
			if (errno == EINTR) continue;
			if (errno == EAGAIN) break;
			/* A tool may exit without reading all its stdin. */
			if (r->mode == M_TOOL && errno == EPIPE) {
				r->woff = r->wlen;
				break;
			}
			return fail(r, WX_PROTOCOL, "capsule stopped reading its protocol pipe during the %s phase (%s)",
			            r->phase, strerror(errno));
		}
		r->woff += (size_t)n;
	}
	int want = r->woff < r->wlen;
	if (want && !r->to_registered) {
		struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = T_TO };
		if (epoll_ctl(r->ep, EPOLL_CTL_ADD, r->to_fd, &ev) < 0)
			return fail(r, WX_FAIL, "supervisor: epoll_ctl: %s", strerror(errno));
		r->to_registered = 1;
	} else if (!want) {
		if (r->to_registered) epoll_ctl(r->ep, EPOLL_CTL_DEL, r->to_fd, NULL);
		r->to_registered = 0;
		if (!r->wbuf_borrowed) frame_buf_free(r->wbuf);
		r->wbuf = NULL;
		r->wlen = r->woff = 0;
		if (r->mode == M_TOOL) close_to(r); /* all of stdin written: end of stream */
	}
	return 0;
}

static int send_frame(struct run *r, json_t *f)
{
	char *buf;
	size_t len;
	struct world_err e;
	int rc = frame_encode(f, FRAME_MAX, &buf, &len, &e);
	json_decref(f);
	if (rc < 0) return fail(r, WX_BAD_INPUT, "supervisor: %s", e.msg);
	r->wbuf = buf;
	r->wlen = len;
	r->woff = 0;
	return flush_to(r);
}

/* Only the listed members may appear in a capsule frame. */
static int only_members(struct run *r, json_t *f, const char *type, const char *const *allowed)
{
	const char *key;
	json_t *v;
	json_object_foreach(f, key, v) {
		int okk = 0;
		for (size_t i = 0; allowed[i]; i++)
			if (strcmp(key, allowed[i]) == 0) okk = 1;
		if (!okk) return fail(r, WX_PROTOCOL, "capsule frame \"%s\": unexpected member \"%.64s\"", type, key);
	}
	return 0;
}

/* A payload string member: present, a string, within max. */
static const char *payload(struct run *r, json_t *f, const char *type, const char *member, size_t max,
                           size_t *len, int cap_code)
{
	json_t *v = json_object_get(f, member);
	if (!json_is_string(v)) {
		fail(r, WX_PROTOCOL, "capsule frame \"%s\": member \"%s\" missing or not a string", type, member);
		return NULL;
	}
	*len = json_string_length(v);
	if (*len > max) {
		fail(r, cap_code, "capsule frame \"%s\": %s is %zu bytes, over the %zu-byte cap", type, member, *len, max);
		return NULL;
	}
	return json_string_value(v);
}

static int is_json_object(const char *p, size_t len)
{
	/* \u0000 is accepted here as by common/canon (JSON_ALLOW_NUL). */
	json_t *v = json_loadb(p, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	int okk = json_is_object(v);
	json_decref(v);
	return okk;
}

static char *dup_bytes(const char *p, size_t len)
{
	char *d = malloc(len + 1);
	if (!d) return NULL;
	memcpy(d, p, len);
	d[len] = '\0';
	return d;
}

static const char *expected(const struct run *r)
{
	switch (r->state) {
	case ST_PLAN: return "its plan";
	case ST_RUN: case ST_FINISH: return "its output";
	case ST_CHECK: return "its check result";
	default: return "nothing more";
	}
}

static int handle_error_frame(struct run *r, json_t *f)
{
	static const char *const allowed[] = { "type", "class", "detail", NULL };
	if (only_members(r, f, "error", allowed) < 0) return -1;
	const char *cls = json_string_value(json_object_get(f, "class"));
	const char *detail = json_string_value(json_object_get(f, "detail"));
	if (!cls || !detail) return fail(r, WX_PROTOCOL, "capsule frame \"error\": class or detail missing");
	int code = WX_PROTOCOL;
	if (strcmp(cls, "interp") == 0) code = WX_INTERP;
	else if (strcmp(cls, "output-cap") == 0) code = WX_OUTPUT_CAP;
	else if (strcmp(cls, "not-object") == 0) code = WX_NOT_OBJECT;
	else if (strcmp(cls, "setup") == 0) code = WX_SETUP;
	else if (strcmp(cls, "protocol") != 0)
		return fail(r, WX_PROTOCOL, "capsule frame \"error\": unknown class \"%.32s\"", cls);
	if (code == WX_NOT_OBJECT)
		return fail(r, code, "transition output is not a JSON object (%.200s)", detail);
	if (code == WX_INTERP) return fail(r, code, "%.300s", detail); /* names the phase */
	return fail(r, code, "capsule reported a %s error in the %s phase: %.300s", cls, r->phase, detail);
}

static int handle_plan(struct run *r, json_t *f)
{
	static const char *const allowed[] = { "type", "plan", NULL };
	size_t len;
	if (only_members(r, f, "plan", allowed) < 0) return -1;
	const char *plan = payload(r, f, "plan", "plan", r->lim->payload_max, &len, WX_OUTPUT_CAP);
	if (!plan) return -1;
	if (!is_json_object(plan, len)) return fail(r, WX_NOT_OBJECT, "transition plan is not a JSON object");
	r->res->plan = dup_bytes(plan, len);
	r->res->plan_len = len;
	if (!r->res->plan) return fail(r, WX_FAIL, "supervisor: out of memory");
	if (now_ns() >= r->inv_end)
		return fail(r, WX_DEADLINE, "whole-invocation deadline (%u ms) passed; capsule killed", r->lim->invocation_ms);
	/* The broker decides; the capsule waits (its plan phase is over). */
	r->phase_end = r->inv_end;
	if (arm_timer(r) < 0) return -1;
	struct sup_broker_reply reply = { 0, NULL, 0, 0 };
	struct world_err berr = { 0, "" };
	uint64_t t_broker = now_ns();
	int brc = r->broker(r->ctx, r->res->plan, len, &reply, &berr);
	/* An effect under a deadline of its own (an exec run): the invocation
	 * deadline moves by the time it took. */
	if (reply.own_deadline && r->inv_end != UINT64_MAX) r->inv_end += now_ns() - t_broker;
	if (brc < 0) {
		free(reply.results);
		return fail(r, berr.code ? berr.code : WX_FAIL, "%s", berr.msg[0] ? berr.msg : "broker refused the plan");
	}
	if (now_ns() >= r->inv_end) {
		free(reply.results);
		return fail(r, WX_DEADLINE, "whole-invocation deadline (%u ms) passed while the broker handled the plan; capsule killed",
		            r->lim->invocation_ms);
	}
	if (sup_cancel_fired(r->cancel)) {
		free(reply.results);
		return fail(r, WX_CANCELLED, "call cancelled while the broker handled the plan; capsule killed");
	}
	if (!reply.finish) {
		free(reply.results);
		r->state = ST_DONE;
		close_to(r); /* end of stream: no finish phase */
		return start_phase(r, "plan", r->lim->plan_ms);
	}
	json_t *results = reply.results ? json_loadb(reply.results, reply.results_len, JSON_REJECT_DUPLICATES, NULL) : NULL;
	int is_array = json_is_array(results);
	json_decref(results);
	if (!is_array) {
		free(reply.results);
		return fail(r, WX_FAIL, "broker: finish-phase results are not a JSON array");
	}
	/* {"phase":"finish","args":ARGS,"results":RESULTS}, bytes as given. */
	static const char a[] = "{\"phase\":\"finish\",\"args\":", b[] = ",\"results\":";
	size_t n = sizeof a - 1 + r->args_len + sizeof b - 1 + reply.results_len + 1;
	char *in = malloc(n + 1);
	if (!in) {
		free(reply.results);
		return fail(r, WX_FAIL, "supervisor: out of memory");
	}
	snprintf(in, n + 1, "%s%.*s%s%.*s}", a, (int)r->args_len, r->args, b, (int)reply.results_len, reply.results);
	free(reply.results);
	json_t *fr = json_pack("{s:s, s:s%}", "type", "results", "input", in, n);
	free(in);
	if (!fr) return fail(r, WX_FAIL, "supervisor: cannot build the results frame");
	r->state = ST_FINISH;
	r->res->finished = 1;
	if (start_phase(r, "finish", r->lim->finish_ms) < 0) return -1;
	return send_frame(r, fr);
}

static int handle_output(struct run *r, json_t *f)
{
	static const char *const allowed[] = { "type", "output", NULL };
	size_t len;
	if (only_members(r, f, "output", allowed) < 0) return -1;
	const char *out = payload(r, f, "output", "output", r->lim->output_max, &len, WX_OUTPUT_CAP);
	if (!out) return -1;
	if (!is_json_object(out, len)) return fail(r, WX_NOT_OBJECT, "transition output is not a JSON object");
	r->res->output = dup_bytes(out, len);
	r->res->output_len = len;
	if (!r->res->output) return fail(r, WX_FAIL, "supervisor: out of memory");
	r->state = ST_DONE;
	close_to(r);
	return 0;
}

static int handle_checked(struct run *r, json_t *f)
{
	static const char *const allowed[] = { "type", "exit", "stdout", NULL };
	size_t len;
	if (only_members(r, f, "checked", allowed) < 0) return -1;
	json_t *ex = json_object_get(f, "exit");
	if (!json_is_integer(ex) || json_integer_value(ex) < 0 || json_integer_value(ex) > 255)
		return fail(r, WX_PROTOCOL, "capsule frame \"checked\": exit missing or not in 0..255");
	const char *out = payload(r, f, "checked", "stdout", 64 * 1024, &len, WX_PROTOCOL);
	if (!out) return -1;
	r->res->check_exit = (int)json_integer_value(ex);
	r->res->check_stdout = dup_bytes(out, len);
	if (!r->res->check_stdout) return fail(r, WX_FAIL, "supervisor: out of memory");
	r->check_done = 1;
	r->state = ST_DONE;
	close_to(r);
	return 0;
}

static int handle_frame(struct run *r, json_t *f)
{
	const char *type = json_string_value(json_object_get(f, "type"));
	if (strcmp(type, "error") == 0 && r->state != ST_DONE) return handle_error_frame(r, f);
	switch (r->state) {
	case ST_PLAN:
		if (strcmp(type, "plan") == 0) return handle_plan(r, f);
		break;
	case ST_RUN:
	case ST_FINISH:
		if (strcmp(type, "output") == 0) return handle_output(r, f);
		break;
	case ST_CHECK:
		if (strcmp(type, "checked") == 0) return handle_checked(r, f);
		break;
	case ST_DONE:
		return fail(r, WX_PROTOCOL, "capsule sent a \"%.32s\" frame after its final message", type);
	case ST_TOOL:
		break; /* a tool run has no protocol */
	}
	return fail(r, WX_PROTOCOL, "capsule sent a \"%.32s\" frame while the supervisor waited for %s",
	            type, expected(r));
}

static int on_from(struct run *r)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(r->from_fd, buf, sizeof buf);
		if (n < 0) {
			if (errno == EINTR) continue;
			if (errno == EAGAIN) return 0;
			return fail(r, WX_PROTOCOL, "supervisor: reading the protocol pipe: %s", strerror(errno));
		}
		if (n == 0) {
			r->from_eof = 1;
			epoll_ctl(r->ep, EPOLL_CTL_DEL, r->from_fd, NULL);
			if (frame_reader_partial(&r->fr)) {
				r->premature = expected(r);
				r->cut = 1;
				return fail(r, WX_PROTOCOL, "capsule closed its protocol pipe inside a frame");
			}
			if (r->state != ST_DONE) {
				r->premature = expected(r);
				return fail(r, WX_PROTOCOL, "capsule closed its protocol pipe before sending %s", r->premature);
			}
			return 0;
		}
		if (r->state == ST_DONE)
			return fail(r, WX_PROTOCOL, "capsule sent bytes after its final message");
		size_t off = 0;
		while (off < (size_t)n) {
			size_t used;
			json_t *f = NULL;
			int rc = frame_reader_feed(&r->fr, buf + off, (size_t)n - off, &used, &f, r->err);
			off += used;
			if (rc < 0) {
				r->failed = 1; /* r->err set by the reader */
				return werr_prefix(r->err, "capsule during the %s phase", r->phase);
			}
			if (rc == 1) {
				int hr = handle_frame(r, f);
				json_decref(f);
				if (hr < 0) return -1;
				if (r->state == ST_DONE && off < (size_t)n)
					return fail(r, WX_PROTOCOL, "capsule sent bytes after its final message");
			}
		}
	}
}

/* Read what is available straight into a capped buffer; over the cap
 * kills. The buffer is allocated once, at the cap plus one byte, on the
 * first byte read: a large malloc is mapped lazily, so memory grows with
 * what was written, never beyond the cap, and nothing is copied (growing
 * by realloc copied every chunk and, under AddressSanitizer, parked each
 * old block in the quarantine: hundreds of MiB for one 8 MiB flood). */
static int on_capture(struct run *r, struct capbuf *b)
{
	if (!b->p) {
		b->p = malloc(b->max + 1);
		if (!b->p) return fail(r, WX_FAIL, "supervisor: out of memory capturing %s (%zu bytes)", b->name, b->max);
		b->p[0] = '\0';
	}
	for (;;) {
		/* Room for the cap; one more byte read means it was exceeded. */
		ssize_t n = read(b->fd, b->p + b->len, b->max + 1 - b->len);
		if (n < 0) {
			if (errno == EINTR) continue;
			if (errno == EAGAIN) return 0;
			return fail(r, WX_FAIL, "supervisor: reading capsule %s: %s", b->name, strerror(errno));
		}
		if (n == 0) {
			b->eof = 1;
			if (r->ep >= 0) epoll_ctl(r->ep, EPOLL_CTL_DEL, b->fd, NULL);
			return 0;
		}
		if (b->len + (size_t)n > b->max) {
			b->len = b->max; /* keep what fits; drop the excess byte */
			b->p[b->len] = '\0';
			b->eof = 1;
			b->over = 1;
			if (r->ep >= 0) epoll_ctl(r->ep, EPOLL_CTL_DEL, b->fd, NULL);
			return fail(r, WX_OUTPUT_CAP, "capsule %s exceeded %zu bytes; capsule killed", b->name, b->max);
		}
		b->len += (size_t)n;
		b->p[b->len] = '\0';
	}
}

static int on_timer(struct run *r)
{
	uint64_t ticks;
	if (read(r->tfd, &ticks, sizeof ticks) < 0 && errno != EAGAIN)
		return fail(r, WX_FAIL, "supervisor: reading timerfd: %s", strerror(errno));
	uint64_t t = now_ns();
	if (r->mode == M_TOOL && t >= r->phase_end)
		return fail(r, WX_DEADLINE, "tool run deadline (%u ms) passed; capsule killed", r->phase_ms);
	if (t >= r->inv_end)
		return fail(r, WX_DEADLINE, "whole-invocation deadline (%u ms) passed during the %s phase; capsule killed",
		            r->lim->invocation_ms, r->phase);
	if (t >= r->phase_end) {
		if (r->state == ST_DONE)
			return fail(r, WX_DEADLINE, "capsule did not exit after its final message within the %s phase deadline (%u ms); capsule killed",
			            r->phase, r->phase_ms);
		return fail(r, WX_DEADLINE, "%s phase deadline (%u ms) passed; capsule killed", r->phase, r->phase_ms);
	}
	return arm_timer(r); /* woke early: re-arm */
}

static int epoll_add(struct run *r, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };
	if (epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return fail(r, WX_FAIL, "supervisor: epoll_ctl: %s", strerror(errno));
	return 0;
}

static int loop(struct run *r)
{
	while (!r->failed) {
		if ((r->state == ST_DONE || r->state == ST_TOOL) && r->from_eof && r->exited && r->out.eof &&
		    r->errb.eof)
			return 0;
		struct epoll_event evs[8];
		int n = epoll_wait(r->ep, evs, 8, -1);
		if (n < 0) {
			if (errno == EINTR) continue;
			return fail(r, WX_FAIL, "supervisor: epoll_wait: %s", strerror(errno));
		}
		/* A cancel comes first: whatever else is ready with it (an
		 * output, a deadline), the caller asked for the call to stop. */
		for (int i = 0; i < n; i++)
			if (evs[i].data.u32 == T_CANCEL)
				fail(r, WX_CANCELLED, "call cancelled during the %s phase; capsule killed", r->phase);
		/* Pipes before the pidfd: frames written before exit count. */
		for (int pass = 0; pass < 2 && !r->failed; pass++)
			for (int i = 0; i < n && !r->failed; i++) {
				uint32_t tag = evs[i].data.u32;
				if ((tag == T_PID || tag == T_TIMER || tag == T_WATCH || tag == T_CANCEL) != (pass == 1)) continue;
				switch (tag) {
				case T_FROM: if (!r->from_eof) on_from(r); break;
				case T_OUT: if (!r->out.eof) on_capture(r, &r->out); break;
				case T_ERR: if (!r->errb.eof) on_capture(r, &r->errb); break;
				case T_TO: if (r->to_fd >= 0) flush_to(r); break;
				case T_PID:
					r->exited = 1;
					epoll_ctl(r->ep, EPOLL_CTL_DEL, r->pidfd, NULL);
					break;
				case T_TIMER: on_timer(r); break;
				case T_CANCEL:
					fail(r, WX_CANCELLED, "call cancelled during the %s phase; capsule killed", r->phase);
					break;
				case T_WATCH:
					/* Only a readable listener has a request waiting. */
					if ((evs[i].events & EPOLLIN) &&
					    r->s->launcher->on_watch(r->s->launcher, r->cap) > 0) {
						fail(r, WX_DENIED_SYSCALL, "capsule stopped by the seccomp filter");
						break;
					}
					/* It hangs up once no task uses the filter; being
					 * level-triggered, it would spin this loop. */
					if (evs[i].events & (EPOLLHUP | EPOLLERR))
						epoll_ctl(r->ep, EPOLL_CTL_DEL, r->cap->watch_fd, NULL);
					break;
				}
			}
	}
	return -1;
}

static int admit(struct supervisor *s, struct world_err *err)
{
	pthread_mutex_lock(&s->mu);
	int okk = s->alive < s->lim.capacity;
	if (okk) s->alive++;
	unsigned alive = s->alive;
	pthread_mutex_unlock(&s->mu);
	if (!okk)
		return werr(err, WX_CAPACITY, "capacity: %u capsules already alive (limit %u); call refused, retry later",
		            alive, s->lim.capacity);
	return 0;
}

static void release(struct supervisor *s)
{
	pthread_mutex_lock(&s->mu);
	s->alive--;
	pthread_mutex_unlock(&s->mu);
}

static void first_line(const char *text, char *out, size_t n)
{
	out[0] = '\0';
	if (!text) return;
	while (*text) {
		const char *e = strchr(text, '\n');
		size_t len = e ? (size_t)(e - text) : strlen(text);
		size_t i = 0;
		while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) i++;
		if (i < len) {
			snprintf(out, n, "%.*s", (int)(len - i), text + i);
			return;
		}
		if (!e) return;
		text = e + 1;
	}
}

static void drain(struct run *r, struct capbuf *b)
{
	if (b->fd < 0 || b->eof) return;
	int saved_failed = r->failed;
	r->failed = 1; /* a cap here must not replace the call's error */
	on_capture(r, b);
	r->failed = saved_failed;
}

static int invoke(struct supervisor *s, enum mode mode, const char *source, size_t source_len,
                  const char *args, size_t args_len, sup_broker_fn broker, void *ctx,
                  const struct sup_cancel *cancel, struct sup_result *res, struct world_err *err)
{
	memset(res, 0, sizeof *res);
	res->profile = mode == M_CHECK ? SUP_PROFILE_SOURCE_CHECK : SUP_PROFILE_TRANSITION;
	struct world_err scratch_err;
	if (!err) err = &scratch_err;
	const struct sup_limits *lim = &s->lim;
	if (!source) return werr(err, WX_BAD_INPUT, "source: missing");
	if (source_len > SUP_SOURCE_MAX)
		return werr(err, WX_BAD_INPUT, "source: %zu bytes, over the %zu-byte cap", source_len, SUP_SOURCE_MAX);

	/* The phase input, checked before anything is started; it reaches the
	 * interpreter as the staged args.json (one JSON string literal). */
	char *args_json = NULL;
	if (mode != M_CHECK) {
		if (!args) return werr(err, WX_BAD_INPUT, "args: missing");
		if (args_len > lim->payload_max)
			return werr(err, WX_BAD_INPUT, "args: %zu bytes, over the %zu-byte cap", args_len, lim->payload_max);
		json_error_t je;
		json_t *a = json_loadb(args, args_len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
		int obj = json_is_object(a);
		json_decref(a);
		if (!a) return werr(err, WX_BAD_INPUT, "args: malformed JSON at byte %d: %s", je.position, je.text);
		if (!obj) return werr(err, WX_BAD_INPUT, "args: not a JSON object");
		json_t *lit;
		if (mode == M_EFFECTFUL) {
			static const char pre[] = "{\"phase\":\"plan\",\"args\":";
			size_t n = sizeof pre - 1 + args_len + 1;
			char *input = malloc(n + 1);
			if (!input) return werr(err, WX_FAIL, "supervisor: out of memory");
			snprintf(input, n + 1, "%s%.*s}", pre, (int)args_len, args);
			lit = json_stringn(input, n);
			free(input);
		} else {
			lit = json_stringn(args, args_len);
		}
		args_json = lit ? json_dumps(lit, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
		json_decref(lit);
		if (!args_json) return werr(err, WX_BAD_INPUT, "args: cannot be encoded as args.json");
	}
	json_t *start = json_pack("{s:s, s:i, s:s, s:{s:I, s:I}}", "type", "start", "v", 1,
	                          "mode", mode == M_PURE ? "pure" : mode == M_EFFECTFUL ? "effectful" : "check",
	                          "limits", "stdout", (json_int_t)lim->stdout_max, "output", (json_int_t)lim->output_max);
	if (!start) {
		free(args_json);
		return werr(err, WX_FAIL, "supervisor: cannot build the start frame");
	}
	struct launch_file files[2] = {
		{ "host/capsule/main.ail", source, source_len },
		{ "args.json", args_json, args_json ? strlen(args_json) : 0 },
	};

	if (sup_cancel_fired(cancel)) {
		json_decref(start);
		free(args_json);
		return werr(err, WX_CANCELLED, "call cancelled before its capsule started; nothing ran");
	}
	if (admit(s, err) < 0) {
		json_decref(start);
		free(args_json);
		return -1;
	}

	struct run r;
	memset(&r, 0, sizeof r);
	r.s = s;
	r.lim = lim;
	r.mode = mode;
	r.args = args;
	r.args_len = args_len;
	r.broker = broker;
	r.ctx = ctx;
	r.cancel = cancel && cancel->fd >= 0 ? cancel : NULL;
	r.res = res;
	r.err = err;
	r.ep = r.tfd = r.to_fd = r.from_fd = r.pidfd = -1;
	r.out = (struct capbuf){ NULL, 0, lim->stdout_max, -1, 0, "stdout", 0 };
	r.errb = (struct capbuf){ NULL, 0, lim->stderr_max, -1, 0, "stderr", 0 };
	frame_reader_init(&r.fr, FRAME_MAX);
	r.t0 = now_ns();
	r.inv_end = r.t0 + (uint64_t)lim->invocation_ms * 1000000u;
	r.state = mode == M_PURE ? ST_RUN : mode == M_EFFECTFUL ? ST_PLAN : ST_CHECK;

	/* Pipes: [0] read end, [1] write end. Every fd is close-on-exec so no
	 * concurrent launch on another thread inherits it. */
	int to[2] = { -1, -1 }, from[2] = { -1, -1 }, o[2] = { -1, -1 }, e[2] = { -1, -1 }, in[2] = { -1, -1 };
	struct launched cap = { -1, -1, -1, NULL };
	int launched = 0;
	struct launch_report rep;
	memset(&rep, 0, sizeof rep);
	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0 || pipe2(o, O_CLOEXEC) < 0 ||
	    pipe2(e, O_CLOEXEC) < 0 || pipe2(in, O_CLOEXEC) < 0) {
		fail(&r, WX_FAIL, "supervisor: pipe2: %s", strerror(errno));
		goto out;
	}
	r.ep = epoll_create1(EPOLL_CLOEXEC);
	r.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (r.ep < 0 || r.tfd < 0) {
		fail(&r, WX_FAIL, "supervisor: epoll/timerfd: %s", strerror(errno));
		goto out;
	}
	/* The capsule gets a stdin at end of stream. */
	close(in[1]);
	in[1] = -1;

	struct sup_agent_args aargs = { FRAME_MAX };
	struct launch_spec spec = {
		.profile = res->profile,
		.files = files,
		.nfiles = mode == M_CHECK ? 1 : 2,
		.stdin_fd = in[0],
		.stdout_fd = o[1],
		.stderr_fd = e[1],
		.keep_fds = { to[0], from[1] },
		.inside = s->agent,
		.arg = &aargs,
		.arg_len = sizeof aargs,
	};
	if (s->launcher->start(s->launcher, &spec, &cap, err) < 0) {
		r.failed = 1;
		goto out;
	}
	launched = 1;
	r.pidfd = cap.pidfd;
	r.cap = &cap;
	/* Our copies of the child's ends: closing them is what lets EOF mean
	 * "the capsule is gone". */
	close(to[0]); close(from[1]); close(o[1]); close(e[1]); close(in[0]);
	to[0] = from[1] = o[1] = e[1] = in[0] = -1;
	r.to_fd = to[1];
	r.from_fd = from[0];
	r.out.fd = o[0];
	r.errb.fd = e[0];
	to[1] = from[0] = o[0] = e[0] = -1;
	int fds[] = { r.to_fd, r.from_fd, r.out.fd, r.errb.fd };
	for (size_t i = 0; i < 4; i++)
		if (fcntl(fds[i], F_SETFL, O_NONBLOCK) < 0) {
			fail(&r, WX_FAIL, "supervisor: fcntl O_NONBLOCK: %s", strerror(errno));
			goto out;
		}
	if (epoll_add(&r, r.from_fd, T_FROM) < 0 || epoll_add(&r, r.out.fd, T_OUT) < 0 ||
	    epoll_add(&r, r.errb.fd, T_ERR) < 0 || epoll_add(&r, r.pidfd, T_PID) < 0 ||
	    epoll_add(&r, r.tfd, T_TIMER) < 0 || (cap.watch_fd >= 0 && epoll_add(&r, cap.watch_fd, T_WATCH) < 0) ||
	    (r.cancel && epoll_add(&r, r.cancel->fd, T_CANCEL) < 0))
		goto out;
	if (start_phase(&r, mode == M_PURE ? "pure run" : mode == M_EFFECTFUL ? "plan" : "source check",
	                mode == M_PURE ? lim->pure_ms : mode == M_EFFECTFUL ? lim->plan_ms : lim->check_ms) < 0)
		goto out;
	json_t *sf = start;
	start = NULL;
	if (send_frame(&r, sf) < 0) goto out;
	if (mode != M_CHECK) world_pause("sup.running"); /* test-only (common/pause.h) */
	loop(&r);

out:
	json_decref(start);
	free(args_json);
	if (launched) {
		if (r.failed || !r.exited) s->launcher->kill(s->launcher, &cap);
		struct world_err ferr;
		/* Bounded: a killed pid namespace is torn down by the kernel. */
		int frc = s->launcher->finish(s->launcher, &cap, &rep, &ferr);
		if (frc < 0 && !r.failed) {
			r.failed = 1;
			*err = ferr;
		}
		drain(&r, &r.out);
		drain(&r, &r.errb);
		/* The launcher's own findings are more precise than what the
		 * protocol saw: a setup step or the seccomp filter, or that it
		 * could not reap (the report, its status too, is then unknown:
		 * e.g. the capsule spawner died). */
		if (r.failed && frc < 0) *err = ferr;
		else if (r.failed && err->code == WX_CANCELLED) { /* the caller's word: not a protocol break */ }
		else if (r.failed && rep.setup_failed) werr(err, WX_SETUP, "%s", rep.detail);
		else if (r.failed && rep.denied_syscall) werr(err, WX_DENIED_SYSCALL, "%s", rep.detail);
		else if (r.failed && r.premature) {
			char st[64];
			if (WIFSIGNALED(rep.status)) snprintf(st, sizeof st, "killed by signal %d", WTERMSIG(rep.status));
			else snprintf(st, sizeof st, "exit status %d", WEXITSTATUS(rep.status));
			char line[300];
			first_line(r.errb.p, line, sizeof line);
			werr(err, WX_PROTOCOL, "capsule ended before sending %s (%s%s)%s%s", r.premature, st,
			     r.cut ? "; its protocol pipe closed inside a frame" : "", line[0] ? ": " : "", line);
		} else if (r.failed && err->code == WX_INTERP) {
			char line[300];
			first_line(r.errb.p, line, sizeof line);
			if (line[0]) {
				size_t l = strlen(err->msg);
				snprintf(err->msg + l, sizeof err->msg - l, ": %s", line);
			}
		}
	}
	if (r.wbuf && !r.wbuf_borrowed) frame_buf_free(r.wbuf);
	frame_reader_free(&r.fr);
	int all[] = { to[0], to[1], from[0], from[1], o[0], o[1], e[0], e[1], in[0], in[1],
	              r.to_fd, r.from_fd, r.out.fd, r.errb.fd, r.tfd, r.ep };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (all[i] >= 0) close(all[i]);
	release(s);
	memcpy(res->layers, rep.layers, sizeof res->layers);
	if (rep.denied_syscall) res->denial = rep.denial;
	free(r.out.p);
	res->stderr_text = r.errb.p;
	res->stderr_len = r.errb.len;
	res->elapsed_ms = (long)((now_ns() - r.t0) / 1000000u);
	if (r.failed) {
		/* A failed call hands back no output, even one that arrived
		 * whole before the violation (a second output, a flood). */
		free(res->output);
		res->output = NULL;
		res->output_len = 0;
		return -1;
	}
	if (mode == M_CHECK && res->check_exit != 0) {
		char line[400];
		first_line(res->check_stdout, line, sizeof line);
		if (!line[0]) first_line(res->stderr_text, line, sizeof line);
		return werr(err, WX_CHECK_REFUSED, "source check refused (interpreter exit %d)%s%s", res->check_exit,
		            line[0] ? ": " : "", line);
	}
	return 0;
}

int sup_run_pure(struct supervisor *s, const char *source, size_t source_len, const char *args,
                 size_t args_len, struct sup_result *res, struct world_err *err)
{
	return invoke(s, M_PURE, source, source_len, args, args_len, NULL, NULL, NULL, res, err);
}

int sup_run_pure_cancellable(struct supervisor *s, const char *source, size_t source_len, const char *args,
                             size_t args_len, const struct sup_cancel *cancel, struct sup_result *res,
                             struct world_err *err)
{
	return invoke(s, M_PURE, source, source_len, args, args_len, NULL, NULL, cancel, res, err);
}

int sup_run_effectful_cancellable(struct supervisor *s, const char *source, size_t source_len, const char *args,
                                  size_t args_len, sup_broker_fn broker, void *ctx, const struct sup_cancel *cancel,
                                  struct sup_result *res, struct world_err *err)
{
	if (!broker) {
		memset(res, 0, sizeof *res);
		return werr(err, WX_USAGE, "supervisor: effectful run without a broker");
	}
	return invoke(s, M_EFFECTFUL, source, source_len, args, args_len, broker, ctx, cancel, res, err);
}

int sup_run_effectful(struct supervisor *s, const char *source, size_t source_len, const char *args,
                      size_t args_len, sup_broker_fn broker, void *ctx, struct sup_result *res,
                      struct world_err *err)
{
	return sup_run_effectful_cancellable(s, source, source_len, args, args_len, broker, ctx, NULL, res, err);
}

int sup_check_source(struct supervisor *s, const char *source, size_t source_len, struct sup_result *res,
                     struct world_err *err)
{
	return invoke(s, M_CHECK, source, source_len, NULL, 0, NULL, NULL, NULL, res, err);
}

/* ---- cancellation -------------------------------------------------------- */

int sup_cancel_init(struct sup_cancel *c, struct world_err *err)
{
	c->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->fd < 0) return werr(err, WX_FAIL, "supervisor: cancel handle: eventfd: %s", strerror(errno));
	return 0;
}

void sup_cancel_fire(struct sup_cancel *c)
{
	if (!c || c->fd < 0) return;
	uint64_t one = 1;
	/* EAGAIN only when the counter is full: it is fired already */
	ssize_t n = write(c->fd, &one, sizeof one);
	(void)n;
}

int sup_cancel_fired(const struct sup_cancel *c)
{
	if (!c || c->fd < 0) return 0;
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	int n;
	do n = poll(&p, 1, 0);
	while (n < 0 && errno == EINTR);
	return n > 0 && (p.revents & POLLIN);
}

void sup_cancel_close(struct sup_cancel *c)
{
	if (c && c->fd >= 0) close(c->fd);
	if (c) c->fd = -1;
}

/* ---- tool runs ----------------------------------------------------------- */

void sup_tool_result_free(struct sup_tool_result *r)
{
	if (!r) return;
	free(r->stdout_text);
	free(r->stderr_text);
	memset(r, 0, sizeof *r);
}

/* What the supervisor itself saw end the run early, or NULL. */
static void tool_limit(const struct run *r, const struct launch_report *rep, int code, struct sup_tool_result *res)
{
	res->limit[0] = '\0';
	if (rep->denied_syscall) snprintf(res->limit, sizeof res->limit, "syscall denied: %s", rep->denied);
	else if (r->failed && code == WX_DEADLINE) snprintf(res->limit, sizeof res->limit, "deadline");
	else if (r->out.over) snprintf(res->limit, sizeof res->limit, "stdout cap");
	else if (r->errb.over) snprintf(res->limit, sizeof res->limit, "stderr cap");
	else if (rep->memory_limit_hit) snprintf(res->limit, sizeof res->limit, "memory");
	else if (rep->pids_limit_hit) snprintf(res->limit, sizeof res->limit, "pids");
	else if (WIFSIGNALED(rep->status) && WTERMSIG(rep->status) == SIGXCPU) snprintf(res->limit, sizeof res->limit, "cpu");
}

int sup_run_tool(struct supervisor *s, const struct sup_tool_req *req, struct sup_tool_result *res,
                 struct world_err *err)
{
	memset(res, 0, sizeof *res);
	struct world_err scratch_err;
	if (!err) err = &scratch_err;
	const struct sup_limits *lim = &s->lim;
	if (!req || !req->args || !req->args[0]) return werr(err, WX_USAGE, "tool run: no interpreter arguments");
	size_t nargs = 0;
	while (req->args[nargs]) nargs++;
	if (nargs > 30) return werr(err, WX_USAGE, "tool run: %zu interpreter arguments, at most 30", nargs);
	if (req->nfiles > 8 || (req->nfiles && !req->files))
		return werr(err, WX_USAGE, "tool run: at most 8 staged files");
	if (req->stdin_len > lim->payload_max)
		return werr(err, WX_BAD_INPUT, "tool run: stdin is %zu bytes, over the %zu-byte cap", req->stdin_len,
		            lim->payload_max);
	if (req->stdin_len && !req->stdin_data) return werr(err, WX_USAGE, "tool run: stdin length without data");
	unsigned wall = req->wall_ms ? req->wall_ms : lim->tool_ms;
	size_t out_max = req->stdout_max && req->stdout_max < lim->stdout_max ? req->stdout_max : lim->stdout_max;
	size_t err_max = req->stderr_max && req->stderr_max < lim->stderr_max ? req->stderr_max : lim->stderr_max;

	if (admit(s, err) < 0) return -1;

	struct world_err rerr = { 0, "" }; /* the run's own error; the caller's only on -1 */
	struct run r;
	memset(&r, 0, sizeof r);
	r.s = s;
	r.lim = lim;
	r.mode = M_TOOL;
	r.state = ST_TOOL;
	r.err = &rerr;
	r.ep = r.tfd = r.to_fd = r.from_fd = r.pidfd = -1;
	r.from_eof = 1; /* no protocol */
	r.out = (struct capbuf){ NULL, 0, out_max, -1, 0, "stdout", 0 };
	r.errb = (struct capbuf){ NULL, 0, err_max, -1, 0, "stderr", 0 };
	frame_reader_init(&r.fr, FRAME_MAX);
	r.t0 = now_ns();
	r.inv_end = UINT64_MAX; /* one deadline: the tool run's own (start_phase) */

	int o[2] = { -1, -1 }, e[2] = { -1, -1 }, in[2] = { -1, -1 };
	struct launched cap = { -1, -1, -1, NULL };
	int launched = 0, started_failed = 0;
	struct launch_report rep;
	memset(&rep, 0, sizeof rep);
	if (pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0 || pipe2(in, O_CLOEXEC) < 0) {
		fail(&r, WX_FAIL, "supervisor: pipe2: %s", strerror(errno));
		goto out;
	}
	r.ep = epoll_create1(EPOLL_CLOEXEC);
	r.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (r.ep < 0 || r.tfd < 0) {
		fail(&r, WX_FAIL, "supervisor: epoll/timerfd: %s", strerror(errno));
		goto out;
	}
	struct launch_spec spec = {
		.profile = SUP_PROFILE_TOOL_RUN,
		.files = req->files,
		.nfiles = req->nfiles,
		.stdin_fd = in[0],
		.stdout_fd = o[1],
		.stderr_fd = e[1],
		.keep_fds = { -1, -1 },
		.inside = NULL,
		.arg = NULL,
		.argv = req->args,
		.worktree = req->worktree,
	};
	if (s->launcher->start(s->launcher, &spec, &cap, &rerr) < 0) {
		r.failed = 1;
		started_failed = 1;
		goto out;
	}
	launched = 1;
	r.pidfd = cap.pidfd;
	r.cap = &cap;
	close(o[1]); close(e[1]); close(in[0]);
	o[1] = e[1] = in[0] = -1;
	r.out.fd = o[0];
	r.errb.fd = e[0];
	r.to_fd = in[1];
	o[0] = e[0] = in[1] = -1;
	int fds[] = { r.to_fd, r.out.fd, r.errb.fd };
	for (size_t i = 0; i < 3; i++)
		if (fcntl(fds[i], F_SETFL, O_NONBLOCK) < 0) {
			fail(&r, WX_FAIL, "supervisor: fcntl O_NONBLOCK: %s", strerror(errno));
			goto out;
		}
	if (epoll_add(&r, r.out.fd, T_OUT) < 0 || epoll_add(&r, r.errb.fd, T_ERR) < 0 ||
	    epoll_add(&r, r.pidfd, T_PID) < 0 || epoll_add(&r, r.tfd, T_TIMER) < 0 ||
	    (cap.watch_fd >= 0 && epoll_add(&r, cap.watch_fd, T_WATCH) < 0))
		goto out;
	if (start_phase(&r, "tool run", wall) < 0) goto out;
	if (req->stdin_len) {
		r.wbuf = (char *)req->stdin_data;
		r.wbuf_borrowed = 1;
		r.wlen = req->stdin_len;
		r.woff = 0;
		if (flush_to(&r) < 0) goto out;
	} else {
		close_to(&r); /* stdin at end of stream */
	}
	loop(&r);

out:
	if (launched) {
		if (r.failed || !r.exited) s->launcher->kill(s->launcher, &cap);
		struct world_err ferr;
		if (s->launcher->finish(s->launcher, &cap, &rep, &ferr) < 0 && !r.failed) {
			r.failed = 1;
			rerr = ferr;
		}
		drain(&r, &r.out);
		drain(&r, &r.errb);
	}
	int all[] = { o[0], o[1], e[0], e[1], in[0], in[1], r.to_fd, r.out.fd, r.errb.fd, r.tfd, r.ep };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (all[i] >= 0) close(all[i]);
	frame_reader_free(&r.fr);
	release(s);
	memcpy(res->layers, rep.layers, sizeof res->layers);
	if (rep.denied_syscall) res->denial = rep.denial;
	res->elapsed_ms = (long)((now_ns() - r.t0) / 1000000u);
	res->stdout_text = r.out.p ? r.out.p : strdup("");
	res->stdout_len = r.out.len;
	res->stderr_text = r.errb.p ? r.errb.p : strdup("");
	res->stderr_len = r.errb.len;
	if (!res->stdout_text || !res->stderr_text) {
		sup_tool_result_free(res);
		return werr(err, WX_FAIL, "supervisor: out of memory");
	}
	if (started_failed || !launched) {
		*err = rerr;
		goto failed;
	}
	if (rep.setup_failed) {
		werr(err, WX_SETUP, "%s", rep.detail);
		goto failed;
	}
	if (WIFEXITED(rep.status)) {
		res->exit_code = WEXITSTATUS(rep.status);
	} else {
		res->exit_code = -1;
		res->signal = WIFSIGNALED(rep.status) ? WTERMSIG(rep.status) : 0;
	}
	tool_limit(&r, &rep, rerr.code, res);
	if (r.failed && !res->limit[0]) {
		/* Not a limit of the run: the supervisor itself failed. */
		*err = rerr;
		goto failed;
	}
	if (res->limit[0])
		snprintf(res->detail, sizeof res->detail, "%.290s", rep.denied_syscall ? rep.detail : r.failed ? rerr.msg
		         : rep.detail[0] ? rep.detail : res->limit);
	return 0;
failed:
	/* Nothing to free on -1; layers and elapsed_ms stay for a summary. */
	free(res->stdout_text);
	free(res->stderr_text);
	res->stdout_text = res->stderr_text = NULL;
	res->stdout_len = res->stderr_len = 0;
	return -1;
}
