/* capsule/run.c: one synchronous run in a capsule (see run.h). */
#include "capsule/run.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
}

/* args.json text for an input: one JSON string literal holding the input
 * text, which must parse as JSON (WX_BAD_INPUT otherwise). malloc'd. */
static char *capsule_args_json(const char *input, size_t cap, struct world_err *err)
{
	size_t len = strlen(input);
	if (len > cap) {
		werr(err, WX_BAD_INPUT, "input is %zu bytes, over the %zu-byte args cap", len, cap);
		return NULL;
	}
	json_error_t je;
	json_t *v = json_loadb(input, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
	if (!v) {
		werr(err, WX_BAD_INPUT, "input is not JSON: line %d column %d: %s", je.line, je.column, je.text);
		return NULL;
	}
	json_decref(v);
	json_t *s = json_stringn(input, len);
	if (!s) {
		werr(err, WX_BAD_INPUT, "input is not valid UTF-8");
		return NULL;
	}
	char *text = json_dumps(s, JSON_ENCODE_ANY | JSON_COMPACT);
	json_decref(s);
	if (!text) werr(err, WX_FAIL, "args.json: encoding failed");
	return text;
}

struct buf {
	char *d;
	size_t len, cap, limit;
	bool over;
};

/* Append up to the limit; returns false when more arrived than the limit. */
static bool buf_add(struct buf *b, const char *p, size_t n)
{
	if (b->len + n > b->limit) {
		n = b->limit - b->len;
		b->over = true;
	}
	if (b->len + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 4096;
		while (nc < b->len + n + 1) nc *= 2;
		char *d = realloc(b->d, nc);
		if (!d) return false;
		b->d = d;
		b->cap = nc;
	}
	memcpy(b->d + b->len, p, n);
	b->len += n;
	b->d[b->len] = 0;
	return !b->over;
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int capsule_run(const struct capsule_run_req *req, struct capsule_run_result *res, struct world_err *err)
{
	memset(res, 0, sizeof *res);
	const struct capsule_profile *p = req->profile;
	char *args = capsule_args_json(req->input_json, p->limits.args_cap, err);
	if (!args) return -1;
	struct capsule_file files[2] = {
		{ "host/capsule/main.ail", req->source, req->source_len },
		{ "args.json", args, strlen(args) },
	};
	size_t nf = 2;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, er[2] = { -1, -1 };
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0) {
		werr(err, WX_IO, "capsule run: pipe: %s", strerror(errno));
		goto fail_pipes;
	}
	close(in[1]); /* stdin: an empty pipe */
	in[1] = -1;
	struct capsule_spec spec = {
		.profile = p, .interp_fd = req->interp_fd, .files = files, .nfiles = nf,
		.argv = req->argv, .stdin_fd = in[0], .stdout_fd = out[1], .stderr_fd = er[1],
	};
	struct capsule_handle h;
	unsigned long long t0 = now_us();
	if (capsule_start(&spec, &h, err) < 0) goto fail_pipes;
	close(in[0]);
	close(out[1]);
	close(er[1]);
	in[0] = out[1] = er[1] = -1;
	capsule_describe(&h, res->summary, sizeof res->summary);
	set_nonblock(out[0]);
	set_nonblock(er[0]);

	unsigned long long wall = req->wall_ms ? req->wall_ms : p->limits.wall_ms;
	unsigned long long deadline = t0 + wall * 1000ULL;
	struct buf bo = { .limit = p->limits.stdout_cap }, be = { .limit = p->limits.stderr_cap };
	bool exited = false, out_eof = false, err_eof = false, notify_open = h.notify_fd >= 0;
	static char chunk[65536];
	/* Run until init exits and both pipes reach EOF (every capsule process
	 * is gone by then: the kernel kills the pid namespace with its init). */
	while (!(exited && out_eof && err_eof)) {
		struct pollfd pf[4];
		int n = 0, io = -1, ie = -1, in_ = -1, ip = -1;
		if (!out_eof) { io = n; pf[n++] = (struct pollfd){ out[0], POLLIN, 0 }; }
		if (!err_eof) { ie = n; pf[n++] = (struct pollfd){ er[0], POLLIN, 0 }; }
		if (notify_open && !exited) { in_ = n; pf[n++] = (struct pollfd){ h.notify_fd, POLLIN, 0 }; }
		if (!exited) { ip = n; pf[n++] = (struct pollfd){ h.pidfd, POLLIN, 0 }; }
		unsigned long long t = now_us();
		int timeout = -1;
		if (!h.killed) timeout = t >= deadline ? 0 : (int)((deadline - t + 999) / 1000);
		int pr = poll(pf, (nfds_t)n, timeout);
		if (pr < 0 && errno == EINTR) continue;
		if (pr < 0) {
			capsule_kill(&h);
			break;
		}
		if (pr == 0) {
			if (!h.killed) {
				res->deadline = true;
				capsule_kill(&h);
			}
			continue;
		}
		if (in_ >= 0 && (pf[in_].revents & POLLIN)) capsule_on_notify(&h);
		/* hung up (no process uses the filter: init is exiting): it would
		 * stay "readable" and spin this loop until the pidfd says so */
		else if (in_ >= 0 && pf[in_].revents) notify_open = false;
		if (io >= 0 && pf[io].revents) {
			ssize_t r = read(out[0], chunk, sizeof chunk);
			if (r > 0) {
				if (!buf_add(&bo, chunk, (size_t)r) && !h.killed) {
					res->stdout_over = bo.over;
					capsule_kill(&h);
				}
			} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
				out_eof = true;
			}
		}
		if (ie >= 0 && pf[ie].revents) {
			ssize_t r = read(er[0], chunk, sizeof chunk);
			if (r > 0) {
				/* Over its cap the run fails, as in the supervisor. */
				if (!buf_add(&be, chunk, (size_t)r) && !h.killed) {
					res->stderr_over = be.over;
					capsule_kill(&h);
				}
			}
			else if (r == 0 || (errno != EAGAIN && errno != EINTR)) err_eof = true;
		}
		if (ip >= 0 && (pf[ip].revents & POLLIN)) exited = true;
	}
	res->elapsed_us = now_us() - t0;
	int rc = capsule_finish(&h, &res->report, err);
	close(out[0]);
	close(er[0]);
	free(args);
	res->out = bo.d ? bo.d : strdup("");
	res->out_len = bo.len;
	res->errout = be.d ? be.d : strdup("");
	res->err_len = be.len;
	if (!res->out || !res->errout) {
		capsule_run_result_free(res);
		return werr(err, WX_FAIL, "capsule run: out of memory");
	}
	return rc;

fail_pipes:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0) close(in[i]);
		if (out[i] >= 0) close(out[i]);
		if (er[i] >= 0) close(er[i]);
	}
	free(args);
	return -1;
}

void capsule_run_result_free(struct capsule_run_result *res)
{
	free(res->out);
	free(res->errout);
	res->out = res->errout = NULL;
}

/* First non-empty line of s, trimmed to fit a one-line message. */
static void first_line(const char *s, char *out, size_t cap)
{
	while (*s == '\n' || *s == '\r' || *s == ' ') s++;
	size_t l = strcspn(s, "\r\n");
	if (l >= cap) l = cap - 1;
	memcpy(out, s, l);
	out[l] = 0;
}

int capsule_run_classify(const struct capsule_run_result *res, const struct capsule_run_req *req,
                         const char *what, struct world_err *err)
{
	const struct capsule_report *r = &res->report;
	const struct capsule_profile *p = req->profile;
	unsigned long long wall = req->wall_ms ? req->wall_ms : p->limits.wall_ms;
	if (r->setup_failed) return werr(err, WX_SETUP, "%s", r->setup_error);
	if (r->denied[0]) return werr(err, WX_DENIED_SYSCALL, "%s: syscall denied: %s", what, r->denied);
	if (res->deadline) return werr(err, WX_DEADLINE, "%s: deadline of %llu ms exceeded; capsule killed", what, wall);
	if (res->stdout_over)
		return werr(err, WX_OUTPUT_CAP, "%s: interpreter stdout over its %llu-byte cap; capsule killed", what,
		            (unsigned long long)p->limits.stdout_cap);
	if (res->stderr_over)
		return werr(err, WX_OUTPUT_CAP, "%s: interpreter stderr over its %llu-byte cap; capsule killed", what,
		            (unsigned long long)p->limits.stderr_cap);
	char line[300];
	first_line(res->errout[0] ? res->errout : res->out, line, sizeof line);
	if (!r->exited) {
		const char *why = "";
		if (r->term_signal == SIGSYS) why = " (non-native syscall ABI: x32 or i386)";
		else if (r->memory_limit_hit) why = " (memory limit)";
		else if (r->term_signal == SIGXCPU || r->term_signal == SIGKILL) why = " (resource limit)";
		return werr(err, WX_INTERP, "%s: interpreter killed by signal %d (%s)%s%s%s", what, r->term_signal,
		            strsignal(r->term_signal), why, line[0] ? ": " : "", line);
	}
	if (r->exit_status != 0) {
		const char *why = r->pids_limit_hit ? " (process limit reached)" : r->memory_limit_hit ? " (memory limit)" : "";
		return werr(err, WX_INTERP, "%s: interpreter exited with status %d%s%s%s", what, r->exit_status, why,
		            line[0] ? ": " : "", line);
	}
	return 0;
}
