/* supervisor/agent.c: see agent.h. */
#include "supervisor/agent.h"
#include "supervisor/frame.h"
#include "common/file.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *const sup_interp_run_args[] = {
	"run", "--quiet", "--caps", "", "--entry", "main", "--args-file", "args.json",
	"host/capsule/main.ail", NULL,
};
const char *const sup_interp_check_args[] = { "check", "host/capsule/main.ail", NULL };

#define CHECK_STDOUT_MAX (64 * 1024) /* diagnostics carried in `checked` */

/* ---- memory: a bump arena, mapped by the supervisor before the clone ---
 * The capsule's RLIMIT_AS counts the whole inherited address space (under
 * AddressSanitizer, terabytes of shadow), so a new mmap inside the capsule
 * may fail. The arena is therefore reserved in the supervisor process
 * (sup_agent_reserve, virtual only) and only touched in the capsule, where
 * its pages become the capsule's private copies. */
#define ARENA_SIZE ((size_t)64 << 20)
static char *arena_base, *arena_cur, *arena_end;
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;

static void arena_map(void)
{
	void *p = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p != MAP_FAILED) arena_base = p;
}

/* The same holds for the stack. A capsule's child runs on a copy of its
 * maker's stack; on a process's main thread that is the growable [stack]
 * mapping, which the capsule's RLIMIT_AS keeps from growing (under
 * AddressSanitizer, whose shadow the limit counts), so an agent that goes
 * deeper than its maker ever went dies of SIGSEGV before it can report
 * (seen, now and then, in CI's sanitizer run of world-publish's source
 * check, which starts its capsule on the main thread). So the main stack
 * is grown here, once, by touching the pages of AGENT_STACK_GROW below this
 * frame: the mapping then stays that large. A thread's stack is one fixed
 * mapping and needs nothing (the spawner makes its capsules on threads). */
#define AGENT_STACK_GROW ((size_t)1 << 20)

__attribute__((noinline)) static void grow_main_stack(size_t n)
{
	volatile char pad[AGENT_STACK_GROW];
	for (size_t i = 0; i < n && i < sizeof pad; i += 4096) pad[sizeof pad - 1 - i] = 0;
	pad[sizeof pad - n] = 0; /* the deepest page */
}

static void stack_grow_once(void)
{
	static int grown; /* only the main thread gets past the test below */
	if (gettid() != getpid() || __atomic_load_n(&grown, __ATOMIC_RELAXED)) return;
	__atomic_store_n(&grown, 1, __ATOMIC_RELAXED);
	struct rlimit rl;
	size_t n = AGENT_STACK_GROW;
	/* never past a quarter of the stack's own limit */
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < n)
		n = (size_t)(rl.rlim_cur / 4) & ~(size_t)4095;
	if (n >= 4096) grow_main_stack(n);
}
int sup_agent_reserve(void)
{
	pthread_once(&arena_once, arena_map);
	stack_grow_once();
	return arena_base ? 0 : -1;
}

static void *arena_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n == 0) n = 16;
	if ((size_t)(arena_end - arena_cur) < n) {
		/* Past the reserved arena: try a fresh mapping (may fail under
		 * the capsule's RLIMIT_AS; callers handle NULL). */
		size_t chunk = n > (4u << 20) ? n : (4u << 20);
		void *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) return NULL;
		arena_cur = p;
		arena_end = arena_cur + chunk;
	}
	void *r = arena_cur;
	arena_cur += n;
	return r;
}

static void arena_free(void *p) { (void)p; }

void sup_agent_alloc_init(void)
{
	/* In the capsule: start from the reserved arena (our private copy). */
	if (arena_base && !arena_cur) {
		arena_cur = arena_base;
		arena_end = arena_base + ARENA_SIZE;
	}
	json_set_alloc_funcs(arena_alloc, arena_free);
}

/* ---- the agent ---------------------------------------------------------- */
struct agent {
	const struct launch_exec *ex;
	size_t frame_max, stdout_max, output_max;
	char *out;        /* stdout capture: stdout_max + 1 bytes, mmap'd once */
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
	if (f) frame_write(ag->ex->proto_out, f, ag->frame_max, NULL);
	json_decref(f);
}

/* The finish phase's args.json, rewritten in place: the profile keeps
 * /args.json writable (its own bind mount) while the rest of the root is
 * read-only, so the finish phase runs exactly like the plan phase: cwd =
 * root, --args-file args.json, host/capsule/main.ail. */
static int stage_finish_args(struct agent *ag, const char *input)
{
	json_t *s = json_string(input);
	char *text = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
	json_decref(s);
	if (!text) {
		send_error(ag, "setup", "cannot encode the finish-phase args.json");
		return -1;
	}
	int fd = open("args.json", O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		send_error(ag, "setup", "rewriting args.json for the finish phase: open: %s", strerror(errno));
		return -1;
	}
	if (write_all(fd, text, strlen(text)) < 0) {
		int e = errno;
		close(fd);
		send_error(ag, "setup", "rewriting args.json for the finish phase: write: %s", strerror(e));
		return -1;
	}
	if (close(fd) < 0) {
		send_error(ag, "setup", "rewriting args.json for the finish phase: close: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Run the interpreter with args; capture stdout up to stdout_max into
 * ag->out. Returns 0 with *len and *status, or -1 after an error frame. */
static int run_interp(struct agent *ag, const char *const *args, size_t *out_len, int *status)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		send_error(ag, "setup", "pipe2: %s", strerror(errno));
		return -1;
	}
	/* stdin: the capsule's own fd 0, a pipe the supervisor closed (end of
	 * stream), never a closed fd 0 that the interpreter's next open() would
	 * reuse; stderr: the capsule's stderr, read by the supervisor. */
	pid_t pid = ag->ex->spawn_interp(ag->ex, args, 0, p[1], 2);
	int spawn_errno = errno;
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		send_error(ag, "setup", "spawning the interpreter: %s", strerror(spawn_errno));
		return -1;
	}
	size_t len = 0;
	int over = 0;
	for (;;) {
		ssize_t n = read(p[0], ag->out + len, ag->stdout_max + 1 - len);
		if (n < 0) {
			if (errno == EINTR) continue;
			break;
		}
		if (n == 0) break;
		len += (size_t)n;
		if (len > ag->stdout_max) {
			over = 1;
			break;
		}
	}
	close(p[0]);
	if (over) kill(pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
	if (over) {
		send_error(ag, "output-cap", "interpreter stdout exceeded %zu bytes", ag->stdout_max);
		return -1;
	}
	*out_len = len;
	*status = st;
	return 0;
}

/* A kill the operator can act on is named, not numbered: SIGXCPU is the
 * profile's CPU-time rlimit (this process has the same one), SIGSYS the
 * filter's kill of a non-native syscall ABI (native syscalls are denied
 * through the listener, never by SIGSYS). */
static void describe_status(int st, char *buf, size_t n)
{
	struct rlimit cpu;
	if (WIFEXITED(st)) snprintf(buf, n, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU && getrlimit(RLIMIT_CPU, &cpu) == 0 &&
	         cpu.rlim_cur != RLIM_INFINITY)
		snprintf(buf, n, "killed: CPU time limit (%llu s) exceeded", (unsigned long long)cpu.rlim_cur);
	else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
		snprintf(buf, n, "killed by SIGSYS: a syscall of a non-native ABI (x32 or i386) was refused");
	else if (WIFSIGNALED(st)) snprintf(buf, n, "killed by signal %d", WTERMSIG(st));
	else snprintf(buf, n, "ended with wait status %d", st);
}

/* One run phase: returns a new frame {type: kind, kind: stdout} or NULL
 * after sending an error frame. */
static json_t *run_phase(struct agent *ag, const char *kind, const char *phase)
{
	size_t len;
	int st;
	if (run_interp(ag, sup_interp_run_args, &len, &st) < 0) return NULL;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char d[128];
		describe_status(st, d, sizeof d);
		send_error(ag, "interp", "interpreter %s in the %s phase", d, phase);
		return NULL;
	}
	if (len > 0 && ag->out[len - 1] == '\n') len--; /* exactly one */
	if (len > ag->output_max) {
		send_error(ag, "output-cap", "%s is %zu bytes, over the %zu-byte cap", kind, len, ag->output_max);
		return NULL;
	}
	/* A NUL byte cannot be in a JSON text; json_stringn refuses bad UTF-8. */
	json_t *s = memchr(ag->out, '\0', len) ? NULL : json_stringn(ag->out, len);
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
	size_t len;
	int st;
	if (run_interp(ag, sup_interp_check_args, &len, &st) < 0) return NULL;
	if (len > CHECK_STDOUT_MAX) len = CHECK_STDOUT_MAX;
	/* Diagnostics are text for a person: replace bytes that would make the
	 * JSON string invalid rather than lose the whole message. */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)ag->out[i] >= 0x80 || ag->out[i] == '\0') ag->out[i] = '?';
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	json_t *f = json_pack("{s:s, s:i, s:s%}", "type", "checked", "exit", code, "stdout", ag->out, len);
	if (!f) send_error(ag, "setup", "out of memory building the checked frame");
	return f;
}

static int send_frame(struct agent *ag, json_t *f)
{
	int rc = frame_write(ag->ex->proto_out, f, ag->frame_max, NULL);
	json_decref(f);
	return rc;
}

int sup_agent_main(void *arg, const struct launch_exec *ex)
{
	sup_agent_alloc_init();
	struct sup_agent_args *a = arg;
	struct agent ag = { ex, a->frame_max, 8u << 20, FRAME_PAYLOAD_MAX, NULL };
	json_t *start = NULL;
	struct world_err err = { 0, "" };
	if (frame_read(ex->proto_in, ag.frame_max, &start, &err) < 0 || !start) {
		send_error(&ag, "protocol", "reading start: %s", err.msg[0] ? err.msg : "end of stream");
		return 3;
	}
	const char *type = json_string_value(json_object_get(start, "type"));
	const char *mode = json_string_value(json_object_get(start, "mode"));
	json_t *limits = json_object_get(start, "limits");
	json_int_t so = json_integer_value(json_object_get(limits, "stdout"));
	json_int_t om = json_integer_value(json_object_get(limits, "output"));
	if (so > 0 && so <= (1 << 30)) ag.stdout_max = (size_t)so;
	if (om > 0 && (size_t)om <= FRAME_PAYLOAD_MAX) ag.output_max = (size_t)om;
	if (!type || strcmp(type, "start") != 0 || !mode) {
		send_error(&ag, "protocol", "first frame is not a start frame");
		return 3;
	}
	ag.out = arena_alloc(ag.stdout_max + 1);
	if (!ag.out) {
		send_error(&ag, "setup", "no memory for a %zu-byte stdout buffer", ag.stdout_max + 1);
		return 1;
	}
	if (strcmp(mode, "check") == 0) {
		json_t *f = run_check(&ag);
		return f && send_frame(&ag, f) == 0 ? 0 : 1;
	}
	if (strcmp(mode, "pure") == 0) {
		json_t *f = run_phase(&ag, "output", "pure run");
		return f && send_frame(&ag, f) == 0 ? 0 : 1;
	}
	if (strcmp(mode, "effectful") != 0) {
		send_error(&ag, "protocol", "unknown mode");
		return 3;
	}
	json_t *f = run_phase(&ag, "plan", "plan");
	if (!f || send_frame(&ag, f) < 0) return 1;
	json_t *res = NULL;
	if (frame_read(ex->proto_in, ag.frame_max, &res, &err) < 0) {
		send_error(&ag, "protocol", "reading results: %s", err.msg);
		return 3;
	}
	if (!res) return 0; /* end of stream: the broker runs no finish phase */
	const char *rt = json_string_value(json_object_get(res, "type"));
	const char *fin = json_string_value(json_object_get(res, "input"));
	if (!rt || strcmp(rt, "results") != 0 || !fin) {
		send_error(&ag, "protocol", "expected a results frame");
		return 3;
	}
	if (stage_finish_args(&ag, fin) < 0) return 1;
	json_t *o = run_phase(&ag, "output", "finish");
	return o && send_frame(&ag, o) == 0 ? 0 : 1;
}
