/* supervisor/agent.c: see agent.h. */
#include "supervisor/agent.h"
#include "supervisor/frame.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *const sup_interp_run_args[] = {
	"run", "--quiet", "--caps", "", "--entry", "main", "--args-file", "args.json",
	"host/capsule/main.ail", NULL,
};
const char *const sup_interp_check_args[] = { "check", "host/capsule/main.ail", NULL };

#define CHECK_STDOUT_MAX (64 * 1024) /* diagnostics carried in `checked` */

struct agent {
	struct sup_agent_args *a;
	const struct launch_exec *ex;
	size_t stdout_max, output_max;
};

static void send_error(struct agent *ag, const char *cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void send_error(struct agent *ag, const char *cls, const char *fmt, ...)
{
	char detail[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	json_t *f = json_pack("{s:s, s:s, s:s}", "type", "error", "class", cls, "detail", detail);
	if (f) frame_write(ag->a->proto_out, f, ag->a->frame_max, NULL);
	json_decref(f);
}

/* args.json holds one JSON string literal whose text is the input. */
static int write_args(struct agent *ag, const char *input)
{
	json_t *s = json_string(input);
	char *text = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
	json_decref(s);
	if (!text) {
		send_error(ag, "setup", "cannot encode args.json");
		return -1;
	}
	int fd = open("args.json", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc = fd < 0 ? -1 : write_all(fd, text, strlen(text));
	int saved = errno;
	if (fd >= 0 && close(fd) < 0 && rc == 0) { rc = -1; saved = errno; }
	free(text);
	if (rc < 0) {
		send_error(ag, "setup", "writing args.json: %s", strerror(saved));
		return -1;
	}
	return 0;
}

/* Run the interpreter with args; capture stdout up to stdout_max. Returns
 * 0 with *status and a malloc'd *out, or -1 after sending an error frame. */
static int run_interp(struct agent *ag, const char *const *args, char **out, size_t *out_len, int *status)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		send_error(ag, "setup", "pipe2: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		send_error(ag, "setup", "fork: %s", strerror(errno));
		close(p[0]); close(p[1]);
		return -1;
	}
	if (pid == 0) {
		if (dup2(p[1], 1) < 0) _exit(126);
		ag->ex->exec_interp(ag->ex, args);
		_exit(127);
	}
	close(p[1]);
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	int over = 0;
	while (buf) {
		if (len == cap) {
			if (cap > ag->stdout_max) { over = 1; break; }
			char *nb = realloc(buf, cap * 2);
			if (!nb) { free(buf); buf = NULL; break; }
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(p[0], buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR) continue;
			break;
		}
		if (n == 0) break;
		len += (size_t)n;
		if (len > ag->stdout_max) { over = 1; break; }
	}
	close(p[0]);
	if (over || !buf) kill(pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
	if (!buf) {
		send_error(ag, "setup", "out of memory capturing interpreter stdout");
		return -1;
	}
	if (over) {
		free(buf);
		send_error(ag, "output-cap", "interpreter stdout exceeded %zu bytes", ag->stdout_max);
		return -1;
	}
	*out = buf;
	*out_len = len;
	*status = st;
	return 0;
}

static void describe_status(int st, char *buf, size_t n)
{
	if (WIFEXITED(st)) snprintf(buf, n, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st)) snprintf(buf, n, "killed by signal %d", WTERMSIG(st));
	else snprintf(buf, n, "ended with wait status %d", st);
}

/* One run phase: returns a new frame {type: kind, kind: output} or NULL
 * after sending an error frame. */
static json_t *run_phase(struct agent *ag, const char *input, const char *kind)
{
	if (write_args(ag, input) < 0) return NULL;
	char *out;
	size_t len;
	int st;
	if (run_interp(ag, sup_interp_run_args, &out, &len, &st) < 0) return NULL;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char d[64];
		describe_status(st, d, sizeof d);
		free(out);
		send_error(ag, "interp", "interpreter %s in the %s phase", d, kind);
		return NULL;
	}
	if (len > 0 && out[len - 1] == '\n') len--; /* exactly one */
	if (len > ag->output_max) {
		free(out);
		send_error(ag, "output-cap", "%s is %zu bytes, over the %zu-byte cap", kind, len, ag->output_max);
		return NULL;
	}
	/* A NUL byte cannot be in a JSON text; json_stringn refuses bad UTF-8. */
	json_t *s = memchr(out, '\0', len) ? NULL : json_stringn(out, len);
	free(out);
	if (!s) {
		send_error(ag, "not-object", "%s is not valid UTF-8 text without NUL bytes", kind);
		return NULL;
	}
	json_t *f = json_pack("{s:s, s:o}", "type", kind, kind, s);
	if (!f) send_error(ag, "setup", "out of memory building the %s frame", kind);
	return f;
}

static json_t *run_check(struct agent *ag)
{
	char *out;
	size_t len;
	int st;
	if (run_interp(ag, sup_interp_check_args, &out, &len, &st) < 0) return NULL;
	if (len > CHECK_STDOUT_MAX) len = CHECK_STDOUT_MAX;
	/* Diagnostics are text for a person: replace bytes that would make the
	 * JSON string invalid rather than lose the whole message. */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)out[i] >= 0x80 || out[i] == '\0') out[i] = '?';
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	json_t *f = json_pack("{s:s, s:i, s:s%}", "type", "checked", "exit", code, "stdout", out, len);
	free(out);
	if (!f) send_error(ag, "setup", "out of memory building the checked frame");
	return f;
}

static int send_frame(struct agent *ag, json_t *f)
{
	int rc = frame_write(ag->a->proto_out, f, ag->a->frame_max, NULL);
	json_decref(f);
	return rc;
}

int sup_agent_main(void *arg, const struct launch_exec *ex)
{
	struct agent ag = { arg, ex, 8u << 20, FRAME_PAYLOAD_MAX };
	json_t *start = NULL;
	struct world_err err = { 0, "" };
	if (frame_read(ag.a->proto_in, ag.a->frame_max, &start, &err) < 0 || !start) {
		send_error(&ag, "protocol", "reading start: %s", start ? "" : (err.msg[0] ? err.msg : "end of stream"));
		return 3;
	}
	const char *type = json_string_value(json_object_get(start, "type"));
	const char *mode = json_string_value(json_object_get(start, "mode"));
	const char *input = json_string_value(json_object_get(start, "input"));
	json_t *limits = json_object_get(start, "limits");
	json_int_t so = json_integer_value(json_object_get(limits, "stdout"));
	json_int_t om = json_integer_value(json_object_get(limits, "output"));
	if (so > 0) ag.stdout_max = (size_t)so;
	if (om > 0 && (size_t)om <= FRAME_PAYLOAD_MAX) ag.output_max = (size_t)om;
	int rc = 0;
	if (!type || strcmp(type, "start") != 0 || !mode) {
		send_error(&ag, "protocol", "first frame is not a start frame");
		rc = 3;
	} else if (strcmp(mode, "check") == 0) {
		json_t *f = run_check(&ag);
		rc = f ? send_frame(&ag, f) : 1;
	} else if (!input) {
		send_error(&ag, "protocol", "start frame has no input");
		rc = 3;
	} else if (strcmp(mode, "pure") == 0) {
		json_t *f = run_phase(&ag, input, "output");
		rc = f ? send_frame(&ag, f) : 1;
	} else if (strcmp(mode, "effectful") == 0) {
		json_t *f = run_phase(&ag, input, "plan");
		if (!f || send_frame(&ag, f) < 0) {
			rc = 1;
		} else {
			json_t *res = NULL;
			/* End of stream: the broker runs no finish phase. */
			if (frame_read(ag.a->proto_in, ag.a->frame_max, &res, &err) < 0) {
				send_error(&ag, "protocol", "reading results: %s", err.msg);
				rc = 3;
			} else if (res) {
				const char *rt = json_string_value(json_object_get(res, "type"));
				const char *fin = json_string_value(json_object_get(res, "input"));
				if (!rt || strcmp(rt, "results") != 0 || !fin) {
					send_error(&ag, "protocol", "expected a results frame");
					rc = 3;
				} else {
					json_t *o = run_phase(&ag, fin, "output");
					rc = o ? send_frame(&ag, o) : 1;
				}
				json_decref(res);
			}
		}
	} else {
		send_error(&ag, "protocol", "unknown mode");
		rc = 3;
	}
	json_decref(start);
	return rc < 0 ? 1 : rc;
}
