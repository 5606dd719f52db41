/* audit/probe.c: the escape probe of `worldd audit` and the escape suite,
 * installed as $(pkglibexecdir)/world-probe.
 *
 * A static, self-contained C program (no libc beyond glibc's static copy, no
 * project libraries) that plays the interpreter inside a capsule and tries to
 * get out. It owns: the list of escape attempts, each attempt's code, the
 * posture report, and the host-side helpers the audit needs (a listener for
 * the network attempts). It includes nothing of World; the judge is
 * audit/audit.c (`worldd audit`). See docs/escape-suite.md.
 *
 * Modes (argv):
 *   run ... --args-file F FILE   the interpreter contract (docs/design.md §2): reads
 *                                 the input object from F and performs what
 *                                 it asks ("mode": attempts | one | posture |
 *                                 resource), printing ONE JSON object.
 *   control NAME [JSON]           runs attempt NAME unconfined, as a control;
 *                                 the result goes to stderr; exit 0 = the
 *                                 attempt got through (open), 1 = blocked,
 *                                 3 = this kernel lacks the feature,
 *                                 4 = refused (state-changing control outside
 *                                 a private namespace), 2 = usage.
 *   posture [JSON]                the posture report, unconfined.
 *   list                          "NAME FLAGS" per attempt (flags: state,
 *                                 root, resource, or -).
 *   serve DIR                     host-side listener: TCP, UDP, abstract and
 *                                 path unix sockets, a SysV shm segment; writes
 *                                 DIR/serve.env, logs every hit to DIR/hits.
 *   --version, check FILE         so that the probe passes for an interpreter.
 *
 * Every attempt result is one string: "blocked: <what stopped it>",
 * "open: <what got through>" or "unsupported: <feature this kernel lacks>"
 * (only reported by controls). Attempts that could harm the host if the
 * confinement were missing are written so they cannot: they set values to what
 * they already are, use invalid arguments rejected after the permission check,
 * or carry a safety cap (processes, MiB, milliseconds).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Debian 12's headers predate the pidfd namespace ioctls (Linux 6.11). */
#ifndef PIDFS_IOCTL_MAGIC
#define PIDFS_IOCTL_MAGIC 0xFF
#endif
#ifndef PIDFD_GET_CGROUP_NAMESPACE
#define PIDFD_GET_CGROUP_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 1)
#define PIDFD_GET_IPC_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 2)
#define PIDFD_GET_MNT_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 3)
#define PIDFD_GET_NET_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 4)
#define PIDFD_GET_PID_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 5)
#define PIDFD_GET_TIME_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 7)
#define PIDFD_GET_USER_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 9)
#define PIDFD_GET_UTS_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 10)
#endif
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#endif

#define PROBE_VERSION "escape-probe v1 (World escape-suite probe, not AILANG)"
#define RES_MAX 1536

/* ---------------------------------------------------------------- params */

/* What the test tells the probe about the host (all optional; an attempt
 * that needs a missing one reports "error: ..."). */
struct params {
	int tcp_port, udp_port, shm_id;
	long victim_pid, kill_pid;
	char abstract_name[100], unix_path[108];
	char host_file[1024], host_dir[1024], tag[40];
	long cap_procs, cap_mb, cap_ms; /* safety caps of resource attempts */
	long linger_ms;                 /* posture: sleep before printing */
	char skip[256];                 /* posture: items to leave out */
	/* filled in by the probe itself */
	long parent_pid;  /* the probe's own parent (not the attempt child's) */
	int result_fd;    /* the pipe an isolated attempt reports on, or -1 */
	int control;      /* 1 when run unconfined as a control */
};

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

/* ------------------------------------------------------- tiny JSON input */

/* The input is a flat JSON object of strings and integers (the tests write
 * it). Parsing is deliberately small: unknown keys are ignored. */
struct jkv {
	char key[64];
	char val[1024];
	int is_str;
};

static const char *jskip(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

/* Parse a JSON string literal at s (pointing at the quote) into out (cap
 * bytes, truncated); returns the position after the closing quote or NULL. */
static const char *jstring(const char *s, char *out, size_t cap)
{
	size_t n = 0;
	if (*s != '"')
		return NULL;
	s++;
	while (*s && *s != '"') {
		unsigned c = (unsigned char)*s++;
		if (c == '\\') {
			char e = *s++;
			switch (e) {
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case '/': c = '/'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				unsigned v = 0;
				for (int i = 0; i < 4; i++) {
					char h = *s++;
					v <<= 4;
					if (h >= '0' && h <= '9') v |= (unsigned)(h - '0');
					else if (h >= 'a' && h <= 'f') v |= (unsigned)(h - 'a' + 10);
					else if (h >= 'A' && h <= 'F') v |= (unsigned)(h - 'A' + 10);
					else return NULL;
				}
				c = v < 0x80 ? v : '?'; /* the tests only send ASCII */
				break;
			}
			default: return NULL;
			}
		}
		if (n + 1 < cap)
			out[n++] = (char)c;
	}
	if (*s != '"')
		return NULL;
	if (cap)
		out[n] = 0;
	return s + 1;
}

static int jobject(const char *s, struct jkv *kv, int max)
{
	int n = 0;
	s = jskip(s);
	if (*s++ != '{')
		return -1;
	s = jskip(s);
	if (*s == '}')
		return 0;
	for (;;) {
		struct jkv tmp, *k = n < max ? &kv[n] : &tmp;
		s = jskip(s);
		s = jstring(s, k->key, sizeof k->key);
		if (!s)
			return -1;
		s = jskip(s);
		if (*s++ != ':')
			return -1;
		s = jskip(s);
		if (*s == '"') {
			s = jstring(s, k->val, sizeof k->val);
			if (!s)
				return -1;
			k->is_str = 1;
		} else {
			size_t m = 0;
			while (*s && *s != ',' && *s != '}' && m + 1 < sizeof k->val)
				k->val[m++] = *s++;
			while (m && (k->val[m - 1] == ' ' || k->val[m - 1] == '\n'))
				m--;
			k->val[m] = 0;
			k->is_str = 0;
		}
		if (n < max)
			n++;
		s = jskip(s);
		if (*s == ',') {
			s++;
			continue;
		}
		if (*s == '}')
			return n;
		return -1;
	}
}

static const char *jget(const struct jkv *kv, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key))
			return kv[i].val;
	return NULL;
}

static long jgetl(const struct jkv *kv, int n, const char *key, long dflt)
{
	const char *v = jget(kv, n, key);
	return v && *v ? strtol(v, NULL, 10) : dflt;
}

static void jgets(const struct jkv *kv, int n, const char *key, char *out, size_t cap)
{
	const char *v = jget(kv, n, key);
	snprintf(out, cap, "%s", v ? v : "");
}

static void params_from(struct params *p, const struct jkv *kv, int n)
{
	p->tcp_port = (int)jgetl(kv, n, "tcp_port", -1);
	p->udp_port = (int)jgetl(kv, n, "udp_port", -1);
	p->shm_id = (int)jgetl(kv, n, "shm_id", -1);
	p->victim_pid = jgetl(kv, n, "victim_pid", -1);
	p->kill_pid = jgetl(kv, n, "kill_pid", -1);
	p->cap_procs = jgetl(kv, n, "cap_procs", 512);
	p->cap_mb = jgetl(kv, n, "cap_mb", 1024);
	p->cap_ms = jgetl(kv, n, "cap_ms", 20000);
	p->linger_ms = jgetl(kv, n, "linger_ms", 0);
	jgets(kv, n, "abstract", p->abstract_name, sizeof p->abstract_name);
	jgets(kv, n, "unix_path", p->unix_path, sizeof p->unix_path);
	jgets(kv, n, "host_file", p->host_file, sizeof p->host_file);
	jgets(kv, n, "host_dir", p->host_dir, sizeof p->host_dir);
	jgets(kv, n, "tag", p->tag, sizeof p->tag);
	jgets(kv, n, "skip", p->skip, sizeof p->skip);
	/* safety: whatever the input says, stay survivable if the capsule is
	 * missing entirely */
	if (p->cap_procs < 1 || p->cap_procs > 2048) p->cap_procs = 512;
	if (p->cap_mb < 1 || p->cap_mb > 4096) p->cap_mb = 1024;
	if (p->cap_ms < 1 || p->cap_ms > 60000) p->cap_ms = 20000;
	if (p->linger_ms < 0 || p->linger_ms > 30000) p->linger_ms = 0;
}

/* ------------------------------------------------------- JSON output */

struct buf {
	char *s;
	size_t n, cap;
};

static void bput(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t c = b->cap ? b->cap : 4096;
		while (b->n + n + 1 > c)
			c *= 2;
		char *t = realloc(b->s, c);
		if (!t) {
			/* out of memory while reporting: say so on stderr and stop */
			static const char m[] = "escape-probe: out of memory building the report\n";
			if (write(2, m, sizeof m - 1) < 0) {}
			_exit(70);
		}
		b->s = t;
		b->cap = c;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

static void bputs(struct buf *b, const char *s) { bput(b, s, strlen(s)); }

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
	char tmp[2048];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	bput(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void bjstr(struct buf *b, const char *s)
{
	bputs(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			bput(b, e, 2);
		} else if (c < 0x20 || c >= 0x7f) {
			bprintf(b, "\\u%04x", c);
		} else {
			bput(b, (const char *)&c, 1);
		}
	}
	bputs(b, "\"");
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ------------------------------------------------------- results */

struct res {
	char s[RES_MAX];
};

static void rset(struct res *r, const char *kind, const char *fmt, va_list ap)
{
	int n = snprintf(r->s, sizeof r->s, "%s: ", kind);
	vsnprintf(r->s + n, sizeof r->s - (size_t)n, fmt, ap);
}

static void opened(struct res *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void opened(struct res *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rset(r, "open", fmt, ap);
	va_end(ap);
}

static void blocked(struct res *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void blocked(struct res *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rset(r, "blocked", fmt, ap);
	va_end(ap);
}

static void rerror(struct res *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rerror(struct res *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rset(r, "error", fmt, ap);
	va_end(ap);
}

static int g_control;

/* A call failed with errno e. Confined, that is a block. As a control, the
 * errors that mean "this kernel has no such feature" are reported as
 * unsupported so the test can skip instead of failing. */
static void failed(struct res *r, const char *call, int e)
{
	if (g_control && (e == ENOSYS || e == EAFNOSUPPORT || e == EPROTONOSUPPORT)) {
		snprintf(r->s, sizeof r->s, "unsupported: %s: %s (this kernel lacks it)", call, ename(e));
		return;
	}
	blocked(r, "%s: %s", call, ename(e));
}

/* ------------------------------------------------------- helpers */

/* Opening the path is the escape; the read only adds detail (a device such
 * as /dev/kmsg may refuse a short read). */
static void try_read_file(struct res *r, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		blocked(r, "open %s: %s", path, ename(errno));
		return;
	}
	static char b[8192];
	ssize_t n = read(fd, b, sizeof b);
	int e = errno;
	close(fd);
	if (n < 0)
		opened(r, "opened %s (read: %s)", path, ename(e));
	else
		opened(r, "read %zd bytes of %s", n, path);
}

/* Where a transition may write: the interpreter contract's cache directory
 * when set (the only writable place in a capsule), else the cwd. */
static void writable_path(char *out, size_t cap, const char *name)
{
	const char *c = getenv("AILANG_CACHE_DIR");
	if (c && *c)
		snprintf(out, cap, "%s/%s", c, name);
	else
		snprintf(out, cap, "%s", name);
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* Connect fd to addr and expect the host listener's greeting "hello": only
 * the listener the test started on the host says it, so a capsule that has
 * its own loopback cannot produce a false "open". */
static void connect_greet(struct res *r, int fd, const struct sockaddr *a, socklen_t alen,
			  const char *what, int stream)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (connect(fd, a, alen) != 0 && errno != EINPROGRESS) {
		blocked(r, "connect %s: %s", what, ename(errno));
		return;
	}
	if (!stream) {
		if (send(fd, "probe", 5, 0) < 0) {
			blocked(r, "send %s: %s", what, ename(errno));
			return;
		}
	} else {
		struct pollfd pw = { fd, POLLOUT, 0 };
		int pr = poll(&pw, 1, 1500);
		if (pr < 0) {
			blocked(r, "poll %s: %s", what, ename(errno));
			return;
		}
		if (pr == 0) {
			blocked(r, "connect %s: timed out", what);
			return;
		}
		int err = 0;
		socklen_t el = sizeof err;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err) {
			blocked(r, "connect %s: %s", what, ename(err));
			return;
		}
	}
	struct pollfd pfd = { fd, POLLIN, 0 };
	int pr = poll(&pfd, 1, 1500);
	if (pr < 0) {
		blocked(r, "poll %s: %s", what, ename(errno));
		return;
	}
	if (pr == 0) {
		blocked(r, "no greeting from %s within 1.5 s (not the host listener)", what);
		return;
	}
	char b[16] = { 0 };
	ssize_t n = recv(fd, b, sizeof b - 1, 0);
	if (n < 0) {
		blocked(r, "recv %s: %s", what, ename(errno));
		return;
	}
	if (n >= 5 && !memcmp(b, "hello", 5))
		opened(r, "reached the host listener at %s", what);
	else
		blocked(r, "%s answered but not with the host greeting", what);
}

static struct sockaddr_in loop4(int port)
{
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* Wait for pid, at most ms milliseconds; on timeout kill it. Returns the wait
 * status or -1 (timeout or error; errno says which). */
static int wait_ms(pid_t pid, long ms, int *timed_out)
{
	long end = now_ms() + ms;
	int st;
	*timed_out = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return st;
		if (w < 0 && errno != EINTR)
			return -1;
		if (now_ms() > end) {
			*timed_out = 1;
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
			return -1;
		}
		sleep_ms(5);
	}
}

/* ------------------------------------------------------- the attempts */

typedef void (*attempt_fn)(const struct params *p, struct res *r);

/* -- host files and paths -- */

static void a_host_etc_passwd(const struct params *p, struct res *r)
{
	(void)p;
	try_read_file(r, "/etc/passwd");
}

static void a_host_root_listing(const struct params *p, struct res *r)
{
	(void)p;
	DIR *d = opendir("/");
	if (!d) {
		blocked(r, "opendir /: %s", ename(errno));
		return;
	}
	char names[512] = "";
	int host = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		static const char *hostish[] = { "etc", "usr", "bin", "proc", "sys", "home",
						 "root", "var", "boot", "lib", "sbin", "work", NULL };
		for (int i = 0; hostish[i]; i++)
			if (!strcmp(e->d_name, hostish[i]))
				host = 1;
		size_t l = strlen(names);
		snprintf(names + l, sizeof names - l, "%s%s", l ? "," : "", e->d_name);
	}
	closedir(d);
	if (host)
		opened(r, "host root visible: %s", names);
	else
		blocked(r, "the root holds only: %s", names[0] ? names : "(nothing)");
}

static void a_host_secret_file(const struct params *p, struct res *r)
{
	if (!p->host_file[0]) {
		rerror(r, "no host_file given");
		return;
	}
	try_read_file(r, p->host_file);
}

static void a_host_write(const struct params *p, struct res *r)
{
	if (!p->host_dir[0]) {
		rerror(r, "no host_dir given");
		return;
	}
	char path[1200];
	snprintf(path, sizeof path, "%s/escape-probe-wrote", p->host_dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		blocked(r, "create %s: %s", path, ename(errno));
		return;
	}
	ssize_t w = write(fd, "escaped\n", 8);
	close(fd);
	opened(r, "created %s (%zd bytes written)", path, w);
}

static void a_dotdot_cwd(const struct params *p, struct res *r)
{
	(void)p;
	try_read_file(r, "../../../../../../../../../../../../etc/passwd");
}

static void a_dotdot_secret(const struct params *p, struct res *r)
{
	if (!p->host_file[0]) {
		rerror(r, "no host_file given");
		return;
	}
	char path[1200] = "";
	for (int i = 0; i < 24; i++)
		strcat(path, "../");
	strncat(path, p->host_file + (p->host_file[0] == '/'), sizeof path - strlen(path) - 1);
	try_read_file(r, path);
}

static void a_symlink_escape(const struct params *p, struct res *r)
{
	(void)p;
	char name[PATH_MAX];
	writable_path(name, sizeof name, "escape-probe-link");
	unlink(name);
	if (symlink("/etc/passwd", name) != 0) {
		blocked(r, "symlink: %s", ename(errno));
		return;
	}
	try_read_file(r, name);
	unlink(name);
}

static void a_exec_host_binary(const struct params *p, struct res *r)
{
	(void)p;
	char *const argv[] = { "sh", "-c", "exit 0", NULL };
	char *const envp[] = { NULL };
	pid_t pid = fork();
	if (pid < 0) {
		blocked(r, "fork: %s", ename(errno));
		return;
	}
	if (pid == 0) {
		execve("/bin/sh", argv, envp);
		_exit(100 + (errno < 100 ? errno : 99));
	}
	int to, st = wait_ms(pid, 3000, &to);
	if (st < 0)
		blocked(r, "/bin/sh did not finish (%s)", to ? "timeout" : ename(errno));
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		opened(r, "executed the host's /bin/sh");
	else if (WIFEXITED(st) && WEXITSTATUS(st) >= 100)
		blocked(r, "execve /bin/sh: %s", ename(WEXITSTATUS(st) - 100));
	else if (WIFSIGNALED(st))
		blocked(r, "child killed by signal %d (%s)", WTERMSIG(st), sigabbrev_np(WTERMSIG(st)) ?: "?");
	else
		blocked(r, "/bin/sh exited %d", WEXITSTATUS(st));
}

/* Write into the working directory: in a capsule that is the root, which is
 * read-only after staging (nothing the interpreter writes there persists or
 * replaces a staged file). */
static void a_root_write(const struct params *p, struct res *r)
{
	(void)p;
	const char *name = "escape-probe-file";
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		blocked(r, "create %s in the working directory: %s", name, ename(errno));
		return;
	}
	close(fd);
	unlink(name);
	opened(r, "created %s in the working directory", name);
}

/* Run code the capsule did not pin: write a file where writing is allowed,
 * put it on fd 10 (the one fd the filter lets execveat use, for the pinned
 * interpreter) and exec it. EACCES = the mount (noexec) or landlock refused
 * execution; ENOEXEC or success = execution was permitted. */
static void a_exec_written_file(const struct params *p, struct res *r)
{
	(void)p;
	char path[PATH_MAX];
	writable_path(path, sizeof path, "escape-probe-exec");
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0) {
		blocked(r, "create %s: %s", path, ename(errno));
		return;
	}
	static const char script[] = "#!/bin/true\n";
	if (write(fd, script, sizeof script - 1) != (ssize_t)(sizeof script - 1)) {
		blocked(r, "write %s: %s", path, ename(errno));
		close(fd);
		unlink(path);
		return;
	}
	close(fd);
	pid_t pid = fork();
	if (pid < 0) {
		blocked(r, "fork: %s", ename(errno));
		unlink(path);
		return;
	}
	if (pid == 0) {
		int xfd = open(path, O_RDONLY); /* no O_CLOEXEC: a script needs its fd */
		if (xfd < 0)
			_exit(100 + (errno < 100 ? errno : 99));
		if (xfd != 10 && dup2(xfd, 10) < 0)
			_exit(100 + (errno < 100 ? errno : 99));
		char *const argv[] = { "escape-probe-exec", NULL };
		char *const envp[] = { NULL };
		syscall(SYS_execveat, 10, "", argv, envp, AT_EMPTY_PATH);
		_exit(100 + (errno < 100 ? errno : 99));
	}
	int to, st = wait_ms(pid, 3000, &to);
	unlink(path);
	if (st < 0)
		blocked(r, "the exec child did not finish (%s)", to ? "timeout" : ename(errno));
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		opened(r, "executed a file it wrote (%s) through fd 10", path);
	else if (WIFEXITED(st) && WEXITSTATUS(st) - 100 == ENOEXEC)
		opened(r, "execveat(fd 10) of a written file passed the permission checks (ENOEXEC)");
	else if (WIFEXITED(st) && WEXITSTATUS(st) >= 100)
		blocked(r, "execveat(fd 10, written file): %s", ename(WEXITSTATUS(st) - 100));
	else if (WIFSIGNALED(st))
		blocked(r, "exec child killed by signal %d (%s)", WTERMSIG(st), sigabbrev_np(WTERMSIG(st)) ?: "?");
	else
		blocked(r, "exec child exited %d", WEXITSTATUS(st));
}

/* -- /proc, /dev, /sys -- */

static void a_proc_self(const struct params *p, struct res *r)
{
	(void)p;
	try_read_file(r, "/proc/self/status");
}

/* Another process's root through /proc: the host init's, and the probe's
 * parent's (a capsule must show neither). */
static void a_proc_host_root(const struct params *p, struct res *r)
{
	char path[64], why[256];
	try_read_file(r, "/proc/1/root/etc/passwd");
	if (!strncmp(r->s, "open:", 5) || p->parent_pid <= 0)
		return;
	snprintf(why, sizeof why, "%s", r->s + 9);
	snprintf(path, sizeof path, "/proc/%ld/root/etc/passwd", p->parent_pid);
	try_read_file(r, path);
	if (strncmp(r->s, "open:", 5)) {
		char mine[RES_MAX];
		snprintf(mine, sizeof mine, "%s", r->s + 9);
		blocked(r, "%s; %s", why, mine);
	}
}

static void a_dev_block_device(const struct params *p, struct res *r)
{
	(void)p;
	static const char *fixed[] = { "/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/xvda",
				       "/dev/loop0", "/dev/zram0", NULL };
	char tried[512] = "";
	for (int i = 0; fixed[i]; i++) {
		int fd = open(fixed[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			close(fd);
			opened(r, "opened block device %s", fixed[i]);
			return;
		}
		size_t l = strlen(tried);
		snprintf(tried + l, sizeof tried - l, "%s%s:%s", l ? " " : "", fixed[i], ename(errno));
	}
	DIR *d = opendir("/dev");
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			char path[300];
			struct stat st;
			snprintf(path, sizeof path, "/dev/%s", e->d_name);
			if (stat(path, &st) == 0 && S_ISBLK(st.st_mode)) {
				int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
				if (fd >= 0) {
					close(fd);
					closedir(d);
					opened(r, "opened block device %s", path);
					return;
				}
			}
		}
		closedir(d);
	}
	blocked(r, "no block device opened (%s)", tried);
}

static void a_dev_kmsg(const struct params *p, struct res *r)
{
	(void)p;
	try_read_file(r, "/dev/kmsg");
}

static void a_dev_ptmx(const struct params *p, struct res *r)
{
	(void)p;
	int fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		blocked(r, "open /dev/ptmx: %s", ename(errno));
		return;
	}
	close(fd);
	opened(r, "allocated a pseudo-terminal via /dev/ptmx");
}

static void a_dev_userfaultfd(const struct params *p, struct res *r)
{
	(void)p;
	int fd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		blocked(r, "open /dev/userfaultfd: %s", ename(errno));
		return;
	}
	close(fd);
	opened(r, "opened /dev/userfaultfd");
}

static void a_sys_kernel(const struct params *p, struct res *r)
{
	(void)p;
	try_read_file(r, "/sys/kernel/uevent_seqnum");
}

static void a_sys_cgroup(const struct params *p, struct res *r)
{
	(void)p;
	DIR *d = opendir("/sys/fs/cgroup");
	if (!d) {
		blocked(r, "opendir /sys/fs/cgroup: %s", ename(errno));
		return;
	}
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	if (n)
		opened(r, "listed %d entries of /sys/fs/cgroup", n);
	else
		blocked(r, "/sys/fs/cgroup is empty");
}

/* -- network -- */

static void a_net_tcp_host(const struct params *p, struct res *r)
{
	if (p->tcp_port <= 0) {
		rerror(r, "no tcp_port given");
		return;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		failed(r, "socket(AF_INET, SOCK_STREAM)", errno);
		return;
	}
	struct sockaddr_in a = loop4(p->tcp_port);
	char what[64];
	snprintf(what, sizeof what, "tcp 127.0.0.1:%d", p->tcp_port);
	connect_greet(r, fd, (struct sockaddr *)&a, sizeof a, what, 1);
	close(fd);
}

static void a_net_udp_host(const struct params *p, struct res *r)
{
	if (p->udp_port <= 0) {
		rerror(r, "no udp_port given");
		return;
	}
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		failed(r, "socket(AF_INET, SOCK_DGRAM)", errno);
		return;
	}
	struct sockaddr_in a = loop4(p->udp_port);
	char what[64];
	snprintf(what, sizeof what, "udp 127.0.0.1:%d", p->udp_port);
	connect_greet(r, fd, (struct sockaddr *)&a, sizeof a, what, 0);
	close(fd);
}

static void a_net_abstract_unix(const struct params *p, struct res *r)
{
	if (!p->abstract_name[0]) {
		rerror(r, "no abstract socket name given");
		return;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		failed(r, "socket(AF_UNIX)", errno);
		return;
	}
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	size_t l = strlen(p->abstract_name);
	memcpy(a.sun_path + 1, p->abstract_name, l);
	char what[128];
	snprintf(what, sizeof what, "abstract unix @%s", p->abstract_name);
	connect_greet(r, fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l),
		      what, 1);
	close(fd);
}

static void a_net_unix_path(const struct params *p, struct res *r)
{
	if (!p->unix_path[0]) {
		rerror(r, "no unix_path given");
		return;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		failed(r, "socket(AF_UNIX)", errno);
		return;
	}
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", p->unix_path);
	char what[160];
	snprintf(what, sizeof what, "unix socket %s", p->unix_path);
	connect_greet(r, fd, (struct sockaddr *)&a, sizeof a, what, 1);
	close(fd);
}

static void socket_created(struct res *r, int dom, int type, int proto, const char *what)
{
	int fd = socket(dom, type | SOCK_CLOEXEC, proto);
	if (fd < 0) {
		failed(r, what, errno);
		return;
	}
	close(fd);
	opened(r, "%s created", what);
}

static void a_net_netlink(const struct params *p, struct res *r)
{
	(void)p;
	socket_created(r, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, "socket(AF_NETLINK, NETLINK_ROUTE)");
}

static void a_net_raw(const struct params *p, struct res *r)
{
	(void)p;
	socket_created(r, AF_INET, SOCK_RAW, IPPROTO_ICMP, "socket(AF_INET, SOCK_RAW)");
}

static void a_net_packet(const struct params *p, struct res *r)
{
	(void)p;
	socket_created(r, AF_PACKET, SOCK_RAW, htons(ETH_P_ALL), "socket(AF_PACKET, SOCK_RAW)");
}

/* vsock is not namespaced: a process in an empty network namespace can still
 * reach the hypervisor (CID 2) if the socket can be made. */
static void a_net_vsock(const struct params *p, struct res *r)
{
	(void)p;
	socket_created(r, AF_VSOCK, SOCK_STREAM, 0, "socket(AF_VSOCK)");
}

/* -- processes -- */

static void do_ptrace(struct res *r, long target, const char *who)
{
	if (target <= 0) {
		blocked(r, "%s is outside the probe's pid namespace (pid %ld)", who, target);
		return;
	}
	if (target == getpid()) {
		blocked(r, "%s is the probe itself", who);
		return;
	}
	/* SEIZE does not stop the tracee; the tracer's exit detaches it. */
	if (ptrace(PTRACE_SEIZE, (pid_t)target, 0, 0) != 0) {
		blocked(r, "ptrace(PTRACE_SEIZE, %s %ld): %s", who, target, ename(errno));
		return;
	}
	ptrace(PTRACE_DETACH, (pid_t)target, 0, 0);
	opened(r, "ptrace-seized %s (pid %ld)", who, target);
}

static void a_ptrace_parent(const struct params *p, struct res *r)
{
	do_ptrace(r, p->parent_pid, "the probe's parent");
}

static void a_ptrace_host(const struct params *p, struct res *r)
{
	if (p->victim_pid <= 0) {
		rerror(r, "no victim_pid given");
		return;
	}
	do_ptrace(r, p->victim_pid, "host process");
}

/* process_vm_readv checks the target and the ptrace permission first, then
 * copies: EFAULT on an unmapped probe address means access was granted. */
static void do_vm_read(struct res *r, long target, const char *who)
{
	if (target <= 0) {
		blocked(r, "%s is outside the probe's pid namespace (pid %ld)", who, target);
		return;
	}
	char b[8];
	struct iovec l = { b, sizeof b }, rm = { (void *)0x1000, sizeof b };
	ssize_t n = process_vm_readv((pid_t)target, &l, 1, &rm, 1, 0);
	if (n >= 0 || errno == EFAULT)
		opened(r, "process_vm_readv on %s (pid %ld) passed the access check", who, target);
	else
		blocked(r, "process_vm_readv %s %ld: %s", who, target, ename(errno));
}

static void a_process_vm_parent(const struct params *p, struct res *r)
{
	do_vm_read(r, p->parent_pid, "the probe's parent");
}

static void a_process_vm_host(const struct params *p, struct res *r)
{
	if (p->victim_pid <= 0) {
		rerror(r, "no victim_pid given");
		return;
	}
	do_vm_read(r, p->victim_pid, "host process");
}

static void a_pidfd_getfd_host(const struct params *p, struct res *r)
{
	if (p->victim_pid <= 0) {
		rerror(r, "no victim_pid given");
		return;
	}
	int pfd = (int)syscall(SYS_pidfd_open, (pid_t)p->victim_pid, 0);
	if (pfd < 0) {
		failed(r, "pidfd_open(host pid)", errno);
		return;
	}
	int fd = (int)syscall(SYS_pidfd_getfd, pfd, 0, 0);
	int e = errno;
	close(pfd);
	if (fd < 0) {
		failed(r, "pidfd_getfd(host pid, 0)", e);
		return;
	}
	close(fd);
	opened(r, "took a copy of fd 0 of host pid %ld", p->victim_pid);
}

static void a_kill_host(const struct params *p, struct res *r)
{
	if (p->kill_pid <= 0) {
		rerror(r, "no kill_pid given");
		return;
	}
	if (kill((pid_t)p->kill_pid, SIGKILL) != 0) {
		blocked(r, "kill(host pid %ld, SIGKILL): %s", p->kill_pid, ename(errno));
		return;
	}
	opened(r, "sent SIGKILL to host pid %ld", p->kill_pid);
}

static void a_pid_namespace(const struct params *p, struct res *r)
{
	/* kill(pid, 0) == 0 or EPERM: the pid exists from where we stand */
	int victim = 0, seen = 0;
	if (p->victim_pid > 0) {
		if (kill((pid_t)p->victim_pid, 0) == 0 || errno == EPERM)
			victim = 1;
		else if (errno != ESRCH) {
			blocked(r, "kill(pid, 0): %s", ename(errno));
			return;
		}
	}
	for (pid_t q = 1; q <= 32768; q++)
		if (kill(q, 0) == 0 || errno == EPERM)
			seen++;
	if (victim || seen > 64)
		opened(r, "%d pids visible; host pid %ld %s", seen, p->victim_pid,
		       victim ? "visible" : "not visible");
	else
		blocked(r, "only %d pids visible (pid %d, parent %ld); host pid %ld not visible", seen,
			(int)getpid(), p->parent_pid, p->victim_pid);
}

static void a_ipc_host_shm(const struct params *p, struct res *r)
{
	if (p->shm_id < 0) {
		rerror(r, "no shm_id given");
		return;
	}
	struct shmid_ds ds;
	if (shmctl(p->shm_id, IPC_STAT, &ds) != 0) {
		failed(r, "shmctl(host shm id, IPC_STAT)", errno);
		return;
	}
	opened(r, "host SysV shm segment %d visible (%zu bytes)", p->shm_id, (size_t)ds.shm_segsz);
}

/* -- mounts and namespaces -- */

static void a_mount_tmpfs(const struct params *p, struct res *r)
{
	(void)p;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd)) {
		rerror(r, "getcwd: %s", ename(errno));
		return;
	}
	if (mount("escape-probe", cwd, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=16k") != 0) {
		blocked(r, "mount tmpfs on %s: %s", cwd, ename(errno));
		return;
	}
	umount2(cwd, MNT_DETACH);
	opened(r, "mounted a tmpfs on %s", cwd);
}

static void a_fsopen(const struct params *p, struct res *r)
{
	(void)p;
	int fd = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fd < 0) {
		failed(r, "fsopen(tmpfs)", errno);
		return;
	}
	close(fd);
	opened(r, "fsopen(tmpfs) gave a filesystem context");
}

static void do_unshare(struct res *r, int flag, const char *name)
{
	if (unshare(flag) != 0) {
		failed(r, name, errno);
		return;
	}
	opened(r, "%s succeeded", name);
}

static void a_unshare_user(const struct params *p, struct res *r)
{
	(void)p;
	do_unshare(r, CLONE_NEWUSER, "unshare(CLONE_NEWUSER)");
}

static void a_unshare_mount(const struct params *p, struct res *r)
{
	(void)p;
	do_unshare(r, CLONE_NEWNS, "unshare(CLONE_NEWNS)");
}

static void a_unshare_net(const struct params *p, struct res *r)
{
	(void)p;
	do_unshare(r, CLONE_NEWNET, "unshare(CLONE_NEWNET)");
}

static void reap_child(struct res *r, pid_t pid, const char *what)
{
	int to, st = wait_ms(pid, 3000, &to);
	(void)st;
	opened(r, "%s created a child (pid %d)", what, (int)pid);
}

static void a_clone_newuser(const struct params *p, struct res *r)
{
	(void)p;
	long pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), 0, 0, 0, 0);
	if (pid < 0) {
		failed(r, "clone(CLONE_NEWUSER)", errno);
		return;
	}
	if (pid == 0)
		_exit(0);
	reap_child(r, (pid_t)pid, "clone(CLONE_NEWUSER)");
}

static void a_clone3_newuser(const struct params *p, struct res *r)
{
	(void)p;
	struct clone_args ca;
	memset(&ca, 0, sizeof ca);
	ca.flags = CLONE_NEWUSER;
	ca.exit_signal = SIGCHLD;
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid < 0) {
		failed(r, "clone3(CLONE_NEWUSER)", errno);
		return;
	}
	if (pid == 0)
		_exit(0);
	reap_child(r, (pid_t)pid, "clone3(CLONE_NEWUSER)");
}

/* Join another process's network namespace through a pidfd: the probe's
 * parent when it can see it (the control: the host's namespace), else its
 * own pid 1 (inside a capsule: itself, still a setns the filter must stop);
 * then through /proc/1/ns/net. */
static void a_setns(const struct params *p, struct res *r)
{
	char why[512] = "";
	long target = p->parent_pid > 0 ? p->parent_pid : 1;
	int pfd = (int)syscall(SYS_pidfd_open, (pid_t)target, 0);
	if (pfd >= 0) {
		if (setns(pfd, CLONE_NEWNET) == 0) {
			close(pfd);
			opened(r, "setns into the network namespace of pid %ld", target);
			return;
		}
		snprintf(why, sizeof why, "setns(pidfd of %ld): %s", target, ename(errno));
		close(pfd);
	} else {
		snprintf(why, sizeof why, "pidfd_open(%ld): %s", target, ename(errno));
	}
	int fd = open("/proc/1/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (setns(fd, CLONE_NEWNET) == 0) {
			close(fd);
			opened(r, "setns into /proc/1/ns/net");
			return;
		}
		size_t l = strlen(why);
		snprintf(why + l, sizeof why - l, "; setns(/proc/1/ns/net): %s", ename(errno));
		close(fd);
	} else {
		size_t l = strlen(why);
		snprintf(why + l, sizeof why - l, "; open /proc/1/ns/net: %s", ename(errno));
	}
	blocked(r, "%s", why);
}

static void a_chroot(const struct params *p, struct res *r)
{
	(void)p;
	if (chroot(".") != 0) {
		blocked(r, "chroot(.): %s", ename(errno));
		return;
	}
	opened(r, "chroot(.) succeeded");
}

/* -- kernel interfaces the filter must refuse -- */

static void a_keyctl(const struct params *p, struct res *r)
{
	(void)p;
	long k = syscall(SYS_add_key, "user", "world-escape-probe", "x", 1, KEY_SPEC_PROCESS_KEYRING);
	if (k < 0) {
		failed(r, "add_key(user, process keyring)", errno);
		return;
	}
	opened(r, "add_key created key %ld", k);
}

static void a_bpf(const struct params *p, struct res *r)
{
	(void)p;
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	int fd = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
	if (fd < 0) {
		failed(r, "bpf(BPF_MAP_CREATE)", errno);
		return;
	}
	close(fd);
	opened(r, "bpf(BPF_MAP_CREATE) made a map");
}

static void a_perf_event_open(const struct params *p, struct res *r)
{
	(void)p;
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof a;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		failed(r, "perf_event_open", errno);
		return;
	}
	close(fd);
	opened(r, "perf_event_open gave a counter");
}

static void a_io_uring(const struct params *p, struct res *r)
{
	(void)p;
	struct io_uring_params pr;
	memset(&pr, 0, sizeof pr);
	int fd = (int)syscall(SYS_io_uring_setup, 4, &pr);
	if (fd < 0) {
		failed(r, "io_uring_setup", errno);
		return;
	}
	close(fd);
	opened(r, "io_uring_setup gave a ring");
}

static void a_userfaultfd(const struct params *p, struct res *r)
{
	(void)p;
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (fd < 0) {
		failed(r, "userfaultfd", errno);
		return;
	}
	close(fd);
	opened(r, "userfaultfd gave an fd");
}

/* TIOCSTI on a terminal pushes input into it: a sandbox escape when the
 * terminal is the supervisor's. The filter must stop the ioctl itself; if it
 * reaches the kernel (ENOTTY on a non-terminal proves it did), a terminal fd
 * would be enough to escape. */
static int sti_filter_errno(int e)
{
	return e == EPERM || e == EACCES || e == ENOSYS;
}

static void do_tiocsti(struct res *r, unsigned long junk)
{
	unsigned long cmd = (unsigned long)TIOCSTI | junk;
	char c = ' ';
	char why[512] = "";
	int fds[4] = { -1, 0, 1, 2 }; /* a pty of our own first, then stdio */
	int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m >= 0) {
		int lock = 0;
		char name[64];
		if (ioctl(m, TIOCSPTLCK, &lock) == 0 && ioctl(m, TIOCGPTN, &lock) == 0) {
			snprintf(name, sizeof name, "/dev/pts/%d", lock);
			fds[0] = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
		}
	}
	for (int i = 0; i < 4; i++) {
		if (fds[i] < 0)
			continue;
		long rc = syscall(SYS_ioctl, fds[i], cmd, &c);
		int e = errno;
		if (rc == 0) {
			opened(r, "ioctl(fd %d, TIOCSTI%s) injected a byte", fds[i], junk ? "|junk<<32" : "");
			goto out;
		}
		if (e == EBADF)
			continue;
		size_t l = strlen(why);
		snprintf(why + l, sizeof why - l, "%sfd %d: %s", l ? ", " : "", fds[i], ename(e));
		if (!sti_filter_errno(e)) {
			opened(r, "ioctl(TIOCSTI%s) reached the kernel (%s): only the lack of a terminal stopped it",
			       junk ? "|junk<<32" : "", why);
			goto out;
		}
	}
	blocked(r, "ioctl(TIOCSTI%s) refused: %s", junk ? "|junk<<32" : "", why[0] ? why : "no fd open");
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (m >= 0)
		close(m);
}

static void a_tiocsti(const struct params *p, struct res *r)
{
	(void)p;
	do_tiocsti(r, 0);
}

static void a_tiocsti_high_bits(const struct params *p, struct res *r)
{
	(void)p;
	do_tiocsti(r, 0xdeadbeef00000000UL);
}

static void a_x32_syscall(const struct params *p, struct res *r)
{
	(void)p;
	long rc = syscall(__X32_SYSCALL_BIT | 39 /* x32 getpid */);
	if (rc < 0) {
		failed(r, "x32 getpid", errno);
		return;
	}
	opened(r, "x32 getpid returned %ld", rc);
}

/* The i386 entry point: int $0x80 with eax = 20 (getpid). The kernel clears
 * r8-r15 on return from a compat entry, so all of them are clobbered. */
static long int80_getpid(void)
{
	long ret;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(20L)
			 : "memory", "cc", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15");
	return ret;
}

static void a_i386_syscall(const struct params *p, struct res *r)
{
	(void)p;
	long rc = int80_getpid();
	if (rc < 0) {
		failed(r, "int $0x80 getpid", (int)-rc);
		return;
	}
	opened(r, "i386 getpid via int $0x80 returned %ld", rc);
}

/* reboot() checks CAP_SYS_BOOT before the magic numbers: a bad second magic
 * gives EINVAL exactly when the call would have been allowed, and changes
 * nothing either way. */
static void a_reboot(const struct params *p, struct res *r)
{
	(void)p;
	long rc = syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, 0x0badbad, LINUX_REBOOT_CMD_CAD_OFF, 0);
	if (rc == 0 || errno == EINVAL)
		opened(r, "reboot() passed the CAP_SYS_BOOT check (%s on a bad magic)", rc == 0 ? "0" : "EINVAL");
	else
		failed(r, "reboot(bad magic)", errno);
}

/* finit_module checks CAP_SYS_MODULE before the fd: EBADF = allowed. */
static void a_module_load(const struct params *p, struct res *r)
{
	(void)p;
	long rc = syscall(SYS_finit_module, -1, "", 0);
	if (rc == 0 || errno == EBADF)
		opened(r, "finit_module passed the CAP_SYS_MODULE check (EBADF on fd -1)");
	else
		failed(r, "finit_module(-1)", errno);
}

static void a_mknod(const struct params *p, struct res *r)
{
	(void)p;
	char name[PATH_MAX];
	writable_path(name, sizeof name, "escape-probe-node");
	unlink(name);
	if (mknod(name, S_IFCHR | 0600, makedev(1, 3)) != 0) {
		blocked(r, "mknod(char 1:3): %s", ename(errno));
		return;
	}
	unlink(name);
	opened(r, "mknod made a character device node (1:3)");
}

/* The "shocker" attack: open a file by handle on a filesystem, bypassing the
 * path walk. If name_to_handle_at is refused, a crafted handle (inode 2, the
 * root of most filesystems) is tried: ESTALE then means the capability check
 * passed and only the guess failed. */
static void a_open_by_handle_at(const struct params *p, struct res *r)
{
	(void)p;
	struct {
		struct file_handle fh;
		unsigned char bytes[128];
	} h;
	int mnt = -1;
	char how[128];
	h.fh.handle_bytes = sizeof h.bytes;
	if (name_to_handle_at(AT_FDCWD, ".", &h.fh, &mnt, 0) == 0) {
		snprintf(how, sizeof how, "handle of .");
	} else {
		snprintf(how, sizeof how, "crafted handle (name_to_handle_at: %s)", ename(errno));
		uint32_t ino2[2] = { 2, 0 };
		h.fh.handle_bytes = 8;
		h.fh.handle_type = 1; /* FILEID_INO32_GEN */
		memcpy(h.fh.f_handle, ino2, 8);
	}
	int dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		blocked(r, "open .: %s", ename(errno));
		return;
	}
	int fd = open_by_handle_at(dfd, &h.fh, O_RDONLY | O_CLOEXEC);
	int e = errno;
	close(dfd);
	if (fd >= 0) {
		close(fd);
		opened(r, "open_by_handle_at opened a file by %s", how);
	} else if (e == ESTALE) {
		opened(r, "open_by_handle_at passed the CAP_DAC_READ_SEARCH check (ESTALE on %s)", how);
	} else {
		failed(r, "open_by_handle_at", e);
	}
}

/* clock_settime with an invalid value: EINVAL means the call reached the
 * kernel's clock code (nothing changes). Only the filter can stop it. */
static void a_clock_settime(const struct params *p, struct res *r)
{
	(void)p;
	struct timespec ts = { time(NULL), 2000000000L };
	long rc = syscall(SYS_clock_settime, CLOCK_REALTIME, &ts);
	if (rc == 0 || errno == EINVAL)
		opened(r, "clock_settime(CLOCK_REALTIME) reached the kernel (%s on an invalid value)",
		       rc == 0 ? "0" : "EINVAL");
	else
		failed(r, "clock_settime", errno);
}

/* clock_adjtime checks CAP_SYS_TIME before validating: an out-of-range tick
 * gives EINVAL exactly when the clock could have been changed. */
static void a_clock_adjtime(const struct params *p, struct res *r)
{
	(void)p;
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	tx.modes = ADJ_TICK;
	tx.tick = 1;
	long rc = syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx);
	if (rc >= 0 || errno == EINVAL)
		opened(r, "clock_adjtime passed the CAP_SYS_TIME check (EINVAL on an invalid tick)");
	else
		failed(r, "clock_adjtime(ADJ_TICK)", errno);
}

/* Sets the hostname to the value it already has: proves the permission
 * without changing anything, even if the capsule were missing. */
static void a_sethostname(const struct params *p, struct res *r)
{
	(void)p;
	char h[HOST_NAME_MAX + 1];
	if (gethostname(h, sizeof h) != 0) {
		blocked(r, "gethostname: %s", ename(errno));
		return;
	}
	h[HOST_NAME_MAX] = 0;
	if (sethostname(h, strlen(h)) != 0) {
		blocked(r, "sethostname: %s", ename(errno));
		return;
	}
	opened(r, "sethostname(\"%s\") succeeded (same value)", h);
}

static void a_syslog_read(const struct params *p, struct res *r)
{
	(void)p;
	char b[256];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, b, sizeof b);
	if (n < 0) {
		failed(r, "syslog(READ_ALL)", errno);
		return;
	}
	opened(r, "read %d bytes of the kernel log", n);
}

static void a_ioperm(const struct params *p, struct res *r)
{
	(void)p;
	if (syscall(SYS_ioperm, 0x80UL, 1UL, 1) != 0) {
		failed(r, "ioperm(0x80)", errno);
		return;
	}
	syscall(SYS_ioperm, 0x80UL, 1UL, 0);
	opened(r, "ioperm gave access to I/O port 0x80");
}

/* -- credentials -- */

struct capsets {
	uint64_t eff, prm, inh, bnd, amb;
	int err;         /* errno of capget, or 0 */
	int amb_implied; /* ambient not queried: permitted or inheritable is empty */
};

static void read_caps(struct capsets *c)
{
	struct __user_cap_header_struct hd = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(c, 0, sizeof *c);
	memset(d, 0, sizeof d);
	if (syscall(SYS_capget, &hd, d) != 0) {
		c->err = errno;
	} else {
		c->eff = d[0].effective | (uint64_t)d[1].effective << 32;
		c->prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
		c->inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	}
	for (int i = 0; i < 64; i++) {
		int b = prctl(PR_CAPBSET_READ, i, 0, 0, 0);
		if (b > 0)
			c->bnd |= 1ULL << i;
	}
	/* The kernel keeps ambient a subset of permitted and inheritable: when
	 * their intersection is empty, so is ambient, and the query (which a
	 * filter may refuse) is not needed. */
	if (!c->err && !(c->prm & c->inh)) {
		c->amb_implied = 1;
		return;
	}
	for (int i = 0; i < 64; i++) {
		int a = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, i, 0, 0);
		if (a > 0)
			c->amb |= 1ULL << i;
	}
}

static void a_caps_held(const struct params *p, struct res *r)
{
	(void)p;
	struct capsets c;
	read_caps(&c);
	if (c.err) {
		blocked(r, "capget: %s (bounding 0x%llx, ambient 0x%llx)", ename(c.err),
			(unsigned long long)c.bnd, (unsigned long long)c.amb);
		if (c.bnd || c.amb)
			opened(r, "capabilities left: bounding 0x%llx ambient 0x%llx", (unsigned long long)c.bnd,
			       (unsigned long long)c.amb);
		return;
	}
	char d[256];
	snprintf(d, sizeof d, "effective 0x%llx permitted 0x%llx inheritable 0x%llx bounding 0x%llx ambient 0x%llx",
		 (unsigned long long)c.eff, (unsigned long long)c.prm, (unsigned long long)c.inh,
		 (unsigned long long)c.bnd, (unsigned long long)c.amb);
	if (c.eff | c.prm | c.inh | c.bnd | c.amb)
		opened(r, "capabilities held: %s", d);
	else
		blocked(r, "every capability set is empty");
}

static void a_cap_ambient_raise(const struct params *p, struct res *r)
{
	(void)p;
	struct __user_cap_header_struct hd = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	if (syscall(SYS_capget, &hd, d) != 0) {
		blocked(r, "capget: %s", ename(errno));
		return;
	}
	d[0].inheritable |= 1u << CAP_NET_BIND_SERVICE;
	if (syscall(SYS_capset, &hd, d) != 0) {
		blocked(r, "capset(inheritable += CAP_NET_BIND_SERVICE): %s", ename(errno));
		return;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0) != 0) {
		blocked(r, "PR_CAP_AMBIENT_RAISE: %s", ename(errno));
		return;
	}
	opened(r, "raised CAP_NET_BIND_SERVICE into the ambient set");
}

static void a_no_new_privs(const struct params *p, struct res *r)
{
	(void)p;
	int v = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (v < 0)
		blocked(r, "prctl(PR_GET_NO_NEW_PRIVS) refused: %s", ename(errno));
	else if (v == 0)
		opened(r, "no_new_privs is off: a setuid binary would gain privileges");
	else
		blocked(r, "no_new_privs is on");
}

static void a_seccomp_mode(const struct params *p, struct res *r)
{
	(void)p;
	int v = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	if (v < 0)
		blocked(r, "prctl(PR_GET_SECCOMP) refused (%s): a filter is installed", ename(errno));
	else if (v == 0)
		opened(r, "no seccomp filter (mode 0)");
	else
		blocked(r, "seccomp mode %d", v);
}

static const char *fd_type(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return "unknown";
	switch (st.st_mode & S_IFMT) {
	case S_IFIFO: return "pipe";
	case S_IFCHR: return "chardev";
	case S_IFDIR: return "dir";
	case S_IFREG: return "file";
	case S_IFSOCK: return "socket";
	case S_IFBLK: return "blockdev";
	case S_IFLNK: return "link";
	default: return "anon";
	}
}

static void a_leaked_fds(const struct params *p, struct res *r)
{
	char list[1024] = "";
	int leak = 0;
	struct rlimit rl;
	long max = 4096;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur < max)
		max = (long)rl.rlim_cur;
	for (int fd = 0; fd < max; fd++) {
		if (fd == p->result_fd)
			continue;
		if (fcntl(fd, F_GETFD) < 0)
			continue;
		const char *t = fd_type(fd);
		size_t l = strlen(list);
		snprintf(list + l, sizeof list - l, "%s%d:%s", l ? " " : "", fd, t);
		if (fd > 2 || !strcmp(t, "dir") || !strcmp(t, "file"))
			leak = 1;
	}
	if (leak)
		opened(r, "inherited fds: %s", list);
	else
		blocked(r, "only stdio: %s", list[0] ? list : "(none)");
}

static int allowed_env(const char *e)
{
	static const char *ok[] = { "AILANG_FS_SANDBOX=", "AILANG_RELAX_MODULES=", "AILANG_CACHE_DIR=", NULL };
	for (int i = 0; ok[i]; i++)
		if (!strncmp(e, ok[i], strlen(ok[i])))
			return 1;
	return 0;
}

static void a_environment(const struct params *p, struct res *r)
{
	(void)p;
	char extra[512] = "";
	int n = 0;
	for (char **e = environ; e && *e; e++) {
		if (allowed_env(*e))
			continue;
		n++;
		size_t l = strlen(extra), k = strcspn(*e, "=");
		if (l + k + 2 < sizeof extra)
			snprintf(extra + l, sizeof extra - l, "%s%.*s", l ? "," : "", (int)k, *e);
	}
	if (n)
		opened(r, "%d variables beyond the contract: %s", n, extra);
	else
		blocked(r, "environment is exactly the interpreter contract");
}

/* -- resource attempts: the capsule must end these by its limits -- */

struct bomb_shared {
	volatile int count;
	volatile int first_errno;
	volatile int failures;
};

static void a_fork_bomb(const struct params *p, struct res *r)
{
	struct bomb_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		blocked(r, "mmap: %s", ename(errno));
		return;
	}
	sh->count = 1;
	/* every bomb process ends on its own at this time (inherited through
	 * fork), so nothing outlives a missing capsule for long; it needs only
	 * clock_gettime and nanosleep, which any runtime is allowed */
	long bomb_end = now_ms() + p->cap_ms + 2000;
	pid_t first = fork();
	if (first < 0) {
		blocked(r, "fork: %s", ename(errno));
		return;
	}
	if (first == 0) {
		/* every bomb process keeps forking until the cap */
		__atomic_add_fetch(&sh->count, 1, __ATOMIC_SEQ_CST);
		while (now_ms() < bomb_end) {
			if (__atomic_load_n(&sh->count, __ATOMIC_SEQ_CST) >= p->cap_procs) {
				sleep_ms(50);
				continue;
			}
			pid_t c = fork();
			if (c == 0) {
				__atomic_add_fetch(&sh->count, 1, __ATOMIC_SEQ_CST);
				continue;
			}
			if (c < 0) {
				int e = errno;
				__atomic_compare_exchange_n(&sh->first_errno, &(int){ 0 }, e, 0, __ATOMIC_SEQ_CST,
							    __ATOMIC_SEQ_CST);
				__atomic_add_fetch(&sh->failures, 1, __ATOMIC_SEQ_CST);
				sleep_ms(20);
			}
		}
		_exit(0);
	}
	/* watch: stop when the count stays put with failures, or at the cap */
	long end = now_ms() + p->cap_ms, stable_since = now_ms();
	int last = -1;
	while (now_ms() < end) {
		int c = __atomic_load_n(&sh->count, __ATOMIC_SEQ_CST);
		if (c >= p->cap_procs)
			break;
		if (c != last) {
			last = c;
			stable_since = now_ms();
		} else if (sh->failures > 0 && now_ms() - stable_since > 400) {
			break;
		}
		sleep_ms(20);
	}
	int c = sh->count;
	if (c >= p->cap_procs)
		opened(r, "reached the safety cap of %d processes", c);
	else if (sh->failures)
		blocked(r, "fork failed (%s) at %d processes", ename(sh->first_errno), c);
	else
		blocked(r, "only %d processes after %ld ms", c, p->cap_ms);
	/* Confined, the capsule must end the rest of the bomb; unconfined, the
	 * control runs as pid 1 of a throwaway pid namespace (F_STATE), whose
	 * end kills it. Either way each bomb process stops at bomb_end. */
}

static void a_memory_bomb(const struct params *p, struct res *r)
{
	long mb = 0;
	for (; mb < p->cap_mb; mb++) {
		char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			blocked(r, "mmap failed (%s) after %ld MiB", ename(errno), mb);
			return;
		}
		for (long i = 0; i < (1 << 20); i += 4096)
			m[i] = (char)i;
	}
	opened(r, "allocated and touched %ld MiB (safety cap)", mb);
}

static void a_disk_fill(const struct params *p, struct res *r)
{
	char name[PATH_MAX];
	writable_path(name, sizeof name, "escape-probe-fill");
	signal(SIGXFSZ, SIG_IGN);
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		blocked(r, "create %s: %s", name, ename(errno));
		return;
	}
	static char chunk[65536];
	memset(chunk, 'x', sizeof chunk);
	long long total = 0, cap = (long long)p->cap_mb << 20;
	while (total < cap) {
		ssize_t w = write(fd, chunk, sizeof chunk);
		if (w < 0) {
			int e = errno;
			close(fd);
			unlink(name);
			blocked(r, "write failed (%s) after %lld KiB", ename(e), total >> 10);
			return;
		}
		total += w;
	}
	close(fd);
	unlink(name);
	opened(r, "wrote %lld MiB (safety cap)", total >> 20);
}

static void a_cpu_spin(const struct params *p, struct res *r)
{
	long start = now_ms();
	volatile unsigned long x = 0;
	while (now_ms() - start < p->cap_ms)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
	opened(r, "spun the CPU for %ld ms (safety cap)", now_ms() - start);
}

static void a_sleep_forever(const struct params *p, struct res *r)
{
	long start = now_ms();
	sleep_ms(p->cap_ms);
	opened(r, "slept %ld ms (safety cap)", now_ms() - start);
}

static void flood(const struct params *p, struct res *r, int fd)
{
	static char chunk[65536];
	memset(chunk, 'x', sizeof chunk);
	long long total = 0, cap = (long long)p->cap_mb << 20;
	signal(SIGPIPE, SIG_IGN);
	while (total < cap) {
		ssize_t w = write(fd, chunk, sizeof chunk);
		if (w < 0) {
			blocked(r, "write to fd %d failed (%s) after %lld KiB", fd, ename(errno), total >> 10);
			return;
		}
		total += w;
	}
	opened(r, "wrote %lld MiB to fd %d (safety cap)", total >> 20, fd);
}

static void a_stdout_flood(const struct params *p, struct res *r) { flood(p, r, 1); }
static void a_stderr_flood(const struct params *p, struct res *r) { flood(p, r, 2); }

/* ------------------------------------------------------- the table */

enum {
	F_STATE = 1,    /* control changes (private) state: private namespace only */
	F_ROOT = 2,     /* control needs real root */
	F_RESOURCE = 4, /* resource attempt: one per capsule run, ended by limits */
};

struct attempt {
	const char *name;
	attempt_fn fn;
	int flags;
};

static const struct attempt attempts[] = {
	{ "host_etc_passwd", a_host_etc_passwd, 0 },
	{ "host_root_listing", a_host_root_listing, 0 },
	{ "host_secret_file", a_host_secret_file, 0 },
	{ "host_write", a_host_write, 0 },
	{ "dotdot_cwd", a_dotdot_cwd, 0 },
	{ "dotdot_secret", a_dotdot_secret, 0 },
	{ "symlink_escape", a_symlink_escape, 0 },
	{ "exec_host_binary", a_exec_host_binary, 0 },
	{ "root_write", a_root_write, 0 },
	{ "exec_written_file", a_exec_written_file, 0 },
	{ "proc_self", a_proc_self, 0 },
	{ "proc_host_root", a_proc_host_root, F_ROOT },
	{ "dev_block_device", a_dev_block_device, F_ROOT },
	{ "dev_kmsg", a_dev_kmsg, F_ROOT },
	{ "dev_ptmx", a_dev_ptmx, 0 },
	{ "dev_userfaultfd", a_dev_userfaultfd, F_ROOT },
	{ "sys_kernel", a_sys_kernel, 0 },
	{ "sys_cgroup", a_sys_cgroup, 0 },
	{ "net_tcp_host", a_net_tcp_host, 0 },
	{ "net_udp_host", a_net_udp_host, 0 },
	{ "net_abstract_unix", a_net_abstract_unix, 0 },
	{ "net_unix_path", a_net_unix_path, 0 },
	{ "net_netlink", a_net_netlink, 0 },
	{ "net_raw", a_net_raw, F_ROOT },
	{ "net_packet", a_net_packet, F_ROOT },
	{ "net_vsock", a_net_vsock, 0 },
	{ "ptrace_parent", a_ptrace_parent, F_ROOT },
	{ "ptrace_host", a_ptrace_host, F_ROOT },
	{ "process_vm_parent", a_process_vm_parent, F_ROOT },
	{ "process_vm_host", a_process_vm_host, F_ROOT },
	{ "pidfd_getfd_host", a_pidfd_getfd_host, F_ROOT },
	{ "kill_host", a_kill_host, F_ROOT },
	{ "pid_namespace", a_pid_namespace, 0 },
	{ "ipc_host_shm", a_ipc_host_shm, 0 },
	{ "mount_tmpfs", a_mount_tmpfs, F_STATE },
	{ "fsopen", a_fsopen, F_STATE },
	{ "unshare_user", a_unshare_user, 0 },
	{ "unshare_mount", a_unshare_mount, F_ROOT },
	{ "unshare_net", a_unshare_net, F_ROOT },
	{ "clone_newuser", a_clone_newuser, 0 },
	{ "clone3_newuser", a_clone3_newuser, 0 },
	{ "setns", a_setns, F_ROOT },
	{ "chroot", a_chroot, F_ROOT },
	{ "keyctl", a_keyctl, 0 },
	{ "bpf", a_bpf, F_ROOT },
	{ "perf_event_open", a_perf_event_open, 0 },
	{ "io_uring", a_io_uring, 0 },
	{ "userfaultfd", a_userfaultfd, 0 },
	{ "tiocsti", a_tiocsti, F_ROOT },
	{ "tiocsti_high_bits", a_tiocsti_high_bits, F_ROOT },
	{ "x32_syscall", a_x32_syscall, 0 },
	{ "i386_syscall", a_i386_syscall, 0 },
	{ "reboot", a_reboot, F_STATE },
	{ "module_load", a_module_load, F_ROOT },
	{ "mknod", a_mknod, F_STATE | F_ROOT },
	{ "open_by_handle_at", a_open_by_handle_at, F_ROOT },
	{ "clock_settime", a_clock_settime, 0 },
	{ "clock_adjtime", a_clock_adjtime, F_ROOT },
	{ "sethostname", a_sethostname, F_STATE },
	{ "syslog_read", a_syslog_read, F_ROOT },
	{ "ioperm", a_ioperm, F_ROOT },
	{ "caps_held", a_caps_held, 0 },
	{ "cap_ambient_raise", a_cap_ambient_raise, F_ROOT },
	{ "no_new_privs", a_no_new_privs, 0 },
	{ "seccomp_mode", a_seccomp_mode, 0 },
	{ "leaked_fds", a_leaked_fds, 0 },
	{ "environment", a_environment, 0 },
	{ "fork_bomb", a_fork_bomb, F_RESOURCE | F_STATE },
	{ "memory_bomb", a_memory_bomb, F_RESOURCE },
	{ "disk_fill", a_disk_fill, F_RESOURCE },
	{ "cpu_spin", a_cpu_spin, F_RESOURCE },
	{ "sleep_forever", a_sleep_forever, F_RESOURCE },
	{ "stdout_flood", a_stdout_flood, F_RESOURCE },
	{ "stderr_flood", a_stderr_flood, F_RESOURCE },
	{ NULL, NULL, 0 },
};

static const struct attempt *find_attempt(const char *name)
{
	for (const struct attempt *a = attempts; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

/* Run one attempt in a child so that a filter that kills (SIGSYS) ends only
 * that attempt. Falls back to running inline when fork itself is refused. */
static void run_isolated(const struct attempt *a, struct params *p, struct res *r, long limit_ms)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		a->fn(p, r);
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		a->fn(p, r);
		return;
	}
	if (pid == 0) {
		close(pfd[0]);
		struct params cp = *p;
		cp.result_fd = pfd[1];
		struct res cr;
		memset(&cr, 0, sizeof cr);
		a->fn(&cp, &cr);
		write_all(pfd[1], cr.s, strlen(cr.s));
		_exit(0);
	}
	close(pfd[1]);
	char b[RES_MAX];
	size_t n = 0;
	long end = now_ms() + limit_ms;
	for (;;) {
		long left = end - now_ms();
		if (left <= 0)
			break;
		struct pollfd pp = { pfd[0], POLLIN, 0 };
		int pr = poll(&pp, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		ssize_t k = read(pfd[0], b + n, sizeof b - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
		if (n >= sizeof b - 1)
			break;
	}
	b[n] = 0;
	close(pfd[0]);
	int to, st = wait_ms(pid, n ? 2000 : 100, &to);
	if (n) {
		snprintf(r->s, sizeof r->s, "%s", b);
	} else if (st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) {
		blocked(r, "killed by SIGSYS (the seccomp filter)");
	} else if (st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV && g_control &&
		   a->fn == a_i386_syscall) {
		/* A kernel built without IA32 emulation (or booted with
		 * ia32_emulation=0) has no int $0x80 entry: the trap is a general
		 * protection fault, SIGSEGV, before any syscall filter runs. There
		 * is no i386 ABI to escape through, so the control cannot apply. */
		snprintf(r->s, sizeof r->s,
			 "unsupported: int $0x80: this kernel has no i386 entry point (SIGSEGV: IA32 emulation off)");
	} else if (st >= 0 && WIFSIGNALED(st)) {
		rerror(r, "attempt child killed by signal %d (%s)", WTERMSIG(st), sigabbrev_np(WTERMSIG(st)) ?: "?");
	} else if (to || st < 0) {
		rerror(r, "attempt did not report within %ld ms", limit_ms);
	} else {
		rerror(r, "attempt child exited %d without a result", WEXITSTATUS(st));
	}
}

/* ------------------------------------------------------- posture */

/* Posture items the test asks to leave out ("skip", comma list): under a
 * filter that ends the capsule on the first refused call, the test learns
 * which item was refused and asks again without it. */
static int skip_item(const struct params *p, const char *item)
{
	size_t l = strlen(item);
	for (const char *s = p->skip; (s = strstr(s, item)); s += l)
		if ((s == p->skip || s[-1] == ',') && (s[l] == ',' || s[l] == 0))
			return 1;
	return 0;
}

static void posture_json(struct params *p, struct buf *b)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	bputs(b, "{");
	bputs(b, "\"skipped\":");
	bjstr(b, p->skip);
	bputs(b, ",");
	if (getresuid(&ru, &eu, &su) == 0)
		bprintf(b, "\"uid\":[%u,%u,%u]", ru, eu, su);
	else
		bprintf(b, "\"uid\":\"denied: %s\"", ename(errno));
	if (getresgid(&rg, &eg, &sg) == 0)
		bprintf(b, ",\"gid\":[%u,%u,%u]", rg, eg, sg);
	else
		bprintf(b, ",\"gid\":\"denied: %s\"", ename(errno));
	gid_t gs[64];
	int ng = getgroups(64, gs);
	if (ng >= 0) {
		bputs(b, ",\"groups\":[");
		for (int i = 0; i < ng; i++)
			bprintf(b, "%s%u", i ? "," : "", gs[i]);
		bputs(b, "]");
	} else {
		bprintf(b, ",\"groups\":\"denied: %s\"", ename(errno));
	}
	bprintf(b, ",\"pid\":%d,\"ppid\":%ld", (int)getpid(), p->parent_pid);

	if (!skip_item(p, "caps")) {
		struct capsets c;
		read_caps(&c);
		char amb[64];
		if (c.amb_implied)
			snprintf(amb, sizeof amb, "0x0 (implied: permitted & inheritable = 0)");
		else
			snprintf(amb, sizeof amb, "0x%llx", (unsigned long long)c.amb);
		if (c.err)
			bprintf(b, ",\"caps\":{\"capget\":\"denied: %s\",\"bounding\":\"0x%llx\",\"ambient\":\"%s\"}",
				ename(c.err), (unsigned long long)c.bnd, amb);
		else
			bprintf(b,
				",\"caps\":{\"effective\":\"0x%llx\",\"permitted\":\"0x%llx\",\"inheritable\":\"0x%llx\","
				"\"bounding\":\"0x%llx\",\"ambient\":\"%s\"}",
				(unsigned long long)c.eff, (unsigned long long)c.prm, (unsigned long long)c.inh,
				(unsigned long long)c.bnd, amb);
	}
	int v;
	if (!skip_item(p, "no_new_privs")) {
		v = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
		if (v >= 0)
			bprintf(b, ",\"no_new_privs\":%d", v);
		else
			bprintf(b, ",\"no_new_privs\":\"denied: %s\"", ename(errno));
	}
	if (!skip_item(p, "seccomp")) {
		v = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
		if (v >= 0)
			bprintf(b, ",\"seccomp\":%d", v);
		else
			bprintf(b, ",\"seccomp\":\"denied: %s\"", ename(errno));
	}

	/* namespaces: inode numbers through the pidfd namespace ioctls, since
	 * there is no /proc in a capsule */
	static const struct {
		const char *name;
		unsigned long req;
	} ns[] = {
		{ "cgroup", PIDFD_GET_CGROUP_NAMESPACE }, { "ipc", PIDFD_GET_IPC_NAMESPACE },
		{ "mnt", PIDFD_GET_MNT_NAMESPACE },       { "net", PIDFD_GET_NET_NAMESPACE },
		{ "pid", PIDFD_GET_PID_NAMESPACE },       { "time", PIDFD_GET_TIME_NAMESPACE },
		{ "user", PIDFD_GET_USER_NAMESPACE },     { "uts", PIDFD_GET_UTS_NAMESPACE },
	};
	int pfd = -1, pe = 0;
	if (!skip_item(p, "namespaces")) {
		bputs(b, ",\"namespaces\":{");
		pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
		pe = errno;
	}
	for (size_t i = 0; !skip_item(p, "namespaces") && i < sizeof ns / sizeof ns[0]; i++) {
		bprintf(b, "%s\"%s\":", i ? "," : "", ns[i].name);
		if (pfd < 0) {
			bprintf(b, "\"denied: pidfd_open: %s\"", ename(pe));
			continue;
		}
		int nfd = ioctl(pfd, ns[i].req, 0);
		if (nfd < 0) {
			bprintf(b, "\"denied: ioctl: %s\"", ename(errno));
			continue;
		}
		struct stat st;
		if (fstat(nfd, &st) == 0)
			bprintf(b, "%llu", (unsigned long long)st.st_ino);
		else
			bprintf(b, "\"denied: fstat: %s\"", ename(errno));
		close(nfd);
	}
	if (pfd >= 0)
		close(pfd);
	if (!skip_item(p, "namespaces"))
		bputs(b, "}");

	bputs(b, ",\"fds\":{");
	int first = 1;
	for (int fd = 0; fd < 1024; fd++) {
		if (fd == p->result_fd || fcntl(fd, F_GETFD) < 0)
			continue;
		bprintf(b, "%s\"%d\":\"%s\"", first ? "" : ",", fd, fd_type(fd));
		first = 0;
	}
	bputs(b, "}");

	bputs(b, ",\"env\":{");
	first = 1;
	for (char **e = environ; e && *e; e++) {
		size_t k = strcspn(*e, "=");
		char key[256];
		snprintf(key, sizeof key, "%.*s", (int)(k < 255 ? k : 255), *e);
		bputs(b, first ? "" : ",");
		bjstr(b, key);
		bputs(b, ":");
		bjstr(b, (*e)[k] ? *e + k + 1 : "");
		first = 0;
	}
	bputs(b, "}");

	char cwd[PATH_MAX];
	bputs(b, ",\"cwd\":");
	bjstr(b, getcwd(cwd, sizeof cwd) ? cwd : "(unknown)");
	bputs(b, ",\"root\":[");
	DIR *d = opendir("/");
	if (d) {
		struct dirent *e;
		first = 1;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			bputs(b, first ? "" : ",");
			bjstr(b, e->d_name);
			first = 0;
		}
		closedir(d);
	}
	bputs(b, "]");

	char host[HOST_NAME_MAX + 1];
	bputs(b, ",\"hostname\":");
	bjstr(b, gethostname(host, sizeof host) == 0 ? host : "(denied)");

	static const struct {
		const char *name;
		int res;
	} rl[] = {
		{ "as", RLIMIT_AS },         { "data", RLIMIT_DATA },     { "cpu", RLIMIT_CPU },
		{ "fsize", RLIMIT_FSIZE },   { "nofile", RLIMIT_NOFILE }, { "core", RLIMIT_CORE },
		{ "nproc", RLIMIT_NPROC },   { "stack", RLIMIT_STACK },   { "memlock", RLIMIT_MEMLOCK },
	};
	bputs(b, ",\"rlimits\":{");
	for (size_t i = 0; i < sizeof rl / sizeof rl[0]; i++) {
		struct rlimit x;
		bprintf(b, "%s\"%s\":", i ? "," : "", rl[i].name);
		if (getrlimit(rl[i].res, &x) != 0) {
			bprintf(b, "\"denied: %s\"", ename(errno));
			continue;
		}
		if (x.rlim_cur == RLIM_INFINITY)
			bputs(b, "[-1,");
		else
			bprintf(b, "[%llu,", (unsigned long long)x.rlim_cur);
		if (x.rlim_max == RLIM_INFINITY)
			bputs(b, "-1]");
		else
			bprintf(b, "%llu]", (unsigned long long)x.rlim_max);
	}
	bputs(b, "}");

	/* landlock: only the ABI the kernel offers can be read from inside */
	if (skip_item(p, "landlock")) {
		bputs(b, "}");
		return;
	}
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1UL /* LANDLOCK_CREATE_RULESET_VERSION */);
	if (abi >= 0)
		bprintf(b, ",\"landlock_abi\":%ld", abi);
	else
		bprintf(b, ",\"landlock_abi\":\"denied: %s\"", ename(errno));
	bputs(b, "}");
}

/* ------------------------------------------------------- modes */

/* Overwrite our argv area so /proc/PID/cmdline carries the test's tag: the
 * test finds strays by it, and the forked attempts inherit it. Needs no
 * syscall, so it works under any filter. */
static void mark_cmdline(int argc, char **argv, const char *tag)
{
	if (!tag[0] || argc < 1)
		return;
	char *start = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]);
	size_t room = (size_t)(end - start);
	char m[64];
	int n = snprintf(m, sizeof m, "escprobe:%s", tag);
	if (n < 0 || (size_t)n > room)
		return;
	memset(start, 0, room);
	memcpy(start, m, (size_t)n);
}

static char *read_whole(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *s = malloc(max + 1);
	size_t n = 0;
	if (!s) {
		close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t k = read(fd, s + n, max - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
		if (n == max)
			break;
	}
	close(fd);
	s[n] = 0;
	return s;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: probe run ... --args-file F FILE | probe control NAME [JSON] | probe posture [JSON]\n"
		"       probe list | probe serve DIR | probe --version | probe check FILE\n");
	return 2;
}

static int emit(struct buf *b)
{
	bputs(b, "\n");
	return write_all(1, b->s, b->n) == 0 ? 0 : 1;
}

/* `BIN check FILE` (the source-check profile runs only this): a source line
 * "-- escape-probe: {JSON}" asks for one attempt, whose result is printed;
 * the check "accepts" (exit 0) when it was blocked and "refuses" (exit 1,
 * the result as its diagnostic) when it got through. Any other source is
 * accepted untouched. */
static int mode_check(int argc, char **argv)
{
	static const char key[] = "-- escape-probe: ";
	if (argc < 3)
		return 0;
	char *src = read_whole(argv[2], 1 << 20);
	char *d = src ? strstr(src, key) : NULL;
	if (!d)
		return 0;
	d += sizeof key - 1;
	d[strcspn(d, "\n")] = 0;
	struct jkv kv[48];
	int n = jobject(d, kv, 48);
	if (n < 0) {
		printf("escape-probe: the directive is not a flat JSON object\n");
		return 1;
	}
	struct params p;
	memset(&p, 0, sizeof p);
	params_from(&p, kv, n);
	p.parent_pid = getppid();
	p.result_fd = -1;
	char which[64], mode[32];
	jgets(kv, n, "attempt", which, sizeof which);
	jgets(kv, n, "mode", mode, sizeof mode);
	if (!strcmp(mode, "posture")) {
		/* worldd check prints only "accepted": the report goes to stderr,
		 * which `worldd check --show-stderr` copies out */
		struct buf pb = { 0 };
		posture_json(&p, &pb);
		/* tagged only now (the host's view finds the probe by its tag):
		 * while posture_json runs, the probe has its own /proc files open
		 * (fd 3), which the host would see as an inherited fd */
		mark_cmdline(argc, argv, p.tag);
		if (p.linger_ms)
			sleep_ms(p.linger_ms);
		bputs(&pb, "\n");
		return write_all(2, pb.s, pb.n) == 0 ? 0 : 1;
	}
	mark_cmdline(argc, argv, p.tag);
	const struct attempt *a = find_attempt(which);
	if (!a) {
		printf("escape-probe: unknown attempt '%s'\n", which);
		return 1;
	}
	struct res r;
	memset(&r, 0, sizeof r);
	a->fn(&p, &r);
	struct buf b = { 0 };
	bputs(&b, "{");
	bjstr(&b, a->name);
	bputs(&b, ":");
	bjstr(&b, r.s);
	bputs(&b, "}");
	emit(&b);
	return strncmp(r.s, "blocked:", 8) ? 1 : 0;
}

/* The interpreter entry point: BIN run --quiet --caps "" --entry main
 * --args-file args.json FILE */
static int mode_run(int argc, char **argv)
{
	const char *args_file = NULL;
	for (int i = 2; i < argc - 1; i++)
		if (!strcmp(argv[i], "--args-file"))
			args_file = argv[i + 1];
	if (!args_file) {
		fprintf(stderr, "escape-probe: run needs --args-file\n");
		return 2;
	}
	char *lit = read_whole(args_file, 1 << 20);
	if (!lit) {
		fprintf(stderr, "escape-probe: cannot read %s: %s\n", args_file, ename(errno));
		return 1;
	}
	char *input = malloc(strlen(lit) + 1);
	if (!input || !jstring(jskip(lit), input, strlen(lit) + 1)) {
		fprintf(stderr, "escape-probe: %s does not hold one JSON string literal\n", args_file);
		return 1;
	}
	struct jkv kv[48];
	int n = jobject(input, kv, 48);
	if (n < 0) {
		fprintf(stderr, "escape-probe: the input is not a flat JSON object\n");
		return 1;
	}
	struct params p;
	memset(&p, 0, sizeof p);
	params_from(&p, kv, n);
	p.parent_pid = getppid();
	p.result_fd = -1;
	char mode[32], which[64];
	jgets(kv, n, "mode", mode, sizeof mode);
	jgets(kv, n, "attempt", which, sizeof which);
	struct buf b = { 0 };
	if (!strcmp(mode, "posture")) {
		posture_json(&p, &b);
		mark_cmdline(argc, argv, p.tag); /* only now: as above */
		if (p.linger_ms)
			sleep_ms(p.linger_ms);
		return emit(&b);
	}
	mark_cmdline(argc, argv, p.tag);
	if (!strcmp(mode, "one") || !strcmp(mode, "resource")) {
		const struct attempt *a = find_attempt(which);
		if (!a) {
			fprintf(stderr, "escape-probe: unknown attempt '%s'\n", which);
			return 1;
		}
		struct res r;
		memset(&r, 0, sizeof r);
		a->fn(&p, &r);
		bputs(&b, "{");
		bjstr(&b, a->name);
		bputs(&b, ":");
		bjstr(&b, r.s);
		bputs(&b, "}");
		return emit(&b);
	}
	if (mode[0] && strcmp(mode, "attempts")) {
		fprintf(stderr, "escape-probe: unknown mode '%s'\n", mode);
		return 1;
	}
	/* all non-resource attempts, each isolated in a child */
	bputs(&b, "{");
	int first = 1;
	for (const struct attempt *a = attempts; a->name; a++) {
		if (a->flags & F_RESOURCE)
			continue;
		struct res r;
		memset(&r, 0, sizeof r);
		run_isolated(a, &p, &r, 5000);
		bputs(&b, first ? "" : ",");
		bjstr(&b, a->name);
		bputs(&b, ":");
		bjstr(&b, r.s);
		first = 0;
	}
	bputs(&b, "}");
	return emit(&b);
}

/* State-changing controls only run where the test made private namespaces:
 * the mount, UTS and pid namespaces must differ from the ones named in
 * WORLD_ESCAPE_HOST_NS ("mnt:INO,uts:INO,pid:INO", the host's). */
static int in_private_namespaces(char *why, size_t cap)
{
	const char *h = getenv("WORLD_ESCAPE_HOST_NS");
	if (!h || !*h) {
		snprintf(why, cap, "WORLD_ESCAPE_HOST_NS is not set");
		return 0;
	}
	static const char *kinds[] = { "mnt", "uts", "pid", NULL };
	for (int i = 0; kinds[i]; i++) {
		char key[16], path[64];
		snprintf(key, sizeof key, "%s:", kinds[i]);
		const char *at = strstr(h, key);
		if (!at) {
			snprintf(why, cap, "WORLD_ESCAPE_HOST_NS lacks %s", kinds[i]);
			return 0;
		}
		unsigned long long host = strtoull(at + strlen(key), NULL, 10);
		snprintf(path, sizeof path, "/proc/self/ns/%s", kinds[i]);
		struct stat st;
		if (stat(path, &st) != 0) {
			snprintf(why, cap, "stat %s: %s", path, ename(errno));
			return 0;
		}
		if ((unsigned long long)st.st_ino == host) {
			snprintf(why, cap, "still in the host's %s namespace", kinds[i]);
			return 0;
		}
	}
	return 1;
}

static int parse_params_arg(const char *json, struct params *p)
{
	struct jkv kv[48];
	int n = 0;
	if (json) {
		n = jobject(json, kv, 48);
		if (n < 0)
			return -1;
	}
	params_from(p, kv, n);
	return 0;
}

static int mode_control(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	const struct attempt *a = find_attempt(argv[2]);
	if (!a) {
		fprintf(stderr, "escape-probe: unknown attempt '%s'\n", argv[2]);
		return 2;
	}
	struct params p;
	memset(&p, 0, sizeof p);
	if (parse_params_arg(argc > 3 ? argv[3] : NULL, &p) != 0) {
		fprintf(stderr, "escape-probe: the parameters are not a flat JSON object\n");
		return 2;
	}
	p.parent_pid = getppid();
	p.result_fd = -1;
	g_control = 1;
	char why[256];
	if ((a->flags & F_STATE) && !in_private_namespaces(why, sizeof why)) {
		fprintf(stderr, "%s: refused: a state-changing control runs only in private namespaces (%s)\n",
			a->name, why);
		return 4;
	}
	struct res r;
	memset(&r, 0, sizeof r);
	if (a->flags & F_RESOURCE)
		a->fn(&p, &r);
	else
		run_isolated(a, &p, &r, 10000);
	fprintf(stderr, "%s: %s\n", a->name, r.s);
	if (!strncmp(r.s, "open:", 5))
		return 0;
	if (!strncmp(r.s, "unsupported:", 12))
		return 3;
	return 1;
}

static int mode_posture(int argc, char **argv)
{
	struct params p;
	memset(&p, 0, sizeof p);
	if (parse_params_arg(argc > 2 ? argv[2] : NULL, &p) != 0)
		return usage();
	p.parent_pid = getppid();
	p.result_fd = -1;
	struct buf b = { 0 };
	posture_json(&p, &b);
	return emit(&b);
}

/* ------------------------------------------------------- serve (host side) */

static volatile sig_atomic_t serve_stop;
static void on_term(int s)
{
	(void)s;
	serve_stop = 1;
}

static void log_hit(const char *dir, const char *what)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/hits", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	char line[64];
	int n = snprintf(line, sizeof line, "%s\n", what);
	write_all(fd, line, (size_t)n);
	close(fd);
}

static int serve_die(const char *what)
{
	fprintf(stderr, "escape-probe serve: %s: %s\n", what, ename(errno));
	return 1;
}

static int mode_serve(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	const char *dir = argv[2];
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	int t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ab = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int up = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (t < 0 || u < 0 || ab < 0 || up < 0)
		return serve_die("socket");
	struct sockaddr_in a4 = loop4(0);
	socklen_t l4 = sizeof a4;
	if (bind(t, (struct sockaddr *)&a4, sizeof a4) || listen(t, 16) ||
	    getsockname(t, (struct sockaddr *)&a4, &l4))
		return serve_die("tcp listener");
	int tcp_port = ntohs(a4.sin_port);
	a4 = loop4(0);
	l4 = sizeof a4;
	if (bind(u, (struct sockaddr *)&a4, sizeof a4) || getsockname(u, (struct sockaddr *)&a4, &l4))
		return serve_die("udp socket");
	int udp_port = ntohs(a4.sin_port);

	char abname[64];
	snprintf(abname, sizeof abname, "world-escape-%d", (int)getpid());
	struct sockaddr_un au;
	memset(&au, 0, sizeof au);
	au.sun_family = AF_UNIX;
	memcpy(au.sun_path + 1, abname, strlen(abname));
	if (bind(ab, (struct sockaddr *)&au, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abname))) ||
	    listen(ab, 16))
		return serve_die("abstract unix listener");

	char upath[108];
	snprintf(upath, sizeof upath, "%s/sock", dir);
	memset(&au, 0, sizeof au);
	au.sun_family = AF_UNIX;
	snprintf(au.sun_path, sizeof au.sun_path, "%s", upath);
	unlink(upath);
	if (bind(up, (struct sockaddr *)&au, sizeof au) || listen(up, 16))
		return serve_die("path unix listener");
	chmod(upath, 0777);

	int shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0666);
	if (shm < 0)
		return serve_die("shmget");

	char envp[1200], tmpp[1200];
	snprintf(envp, sizeof envp, "%s/serve.env", dir);
	snprintf(tmpp, sizeof tmpp, "%s/serve.env.tmp", dir);
	FILE *f = fopen(tmpp, "w");
	if (!f) {
		shmctl(shm, IPC_RMID, NULL);
		return serve_die("write serve.env");
	}
	fprintf(f, "SERVE_PID=%d\nTCP_PORT=%d\nUDP_PORT=%d\nABSTRACT=%s\nUNIX_PATH=%s\nSHM_ID=%d\n", (int)getpid(),
		tcp_port, udp_port, abname, upath, shm);
	if (fclose(f) != 0 || rename(tmpp, envp) != 0) {
		shmctl(shm, IPC_RMID, NULL);
		return serve_die("write serve.env");
	}

	/* runs until SIGTERM, and never longer than 10 minutes (no stray) */
	long end = now_ms() + 600000;
	while (!serve_stop && now_ms() < end) {
		struct pollfd pf[4] = { { t, POLLIN, 0 }, { u, POLLIN, 0 }, { ab, POLLIN, 0 }, { up, POLLIN, 0 } };
		int pr = poll(pf, 4, 500);
		if (pr <= 0)
			continue;
		static const char *names[4] = { "tcp", "udp", "abstract", "unixpath" };
		for (int i = 0; i < 4; i++) {
			if (!(pf[i].revents & POLLIN))
				continue;
			if (i == 1) {
				char b[64];
				struct sockaddr_storage from;
				socklen_t fl = sizeof from;
				ssize_t n = recvfrom(u, b, sizeof b, 0, (struct sockaddr *)&from, &fl);
				if (n >= 0) {
					sendto(u, "hello", 5, 0, (struct sockaddr *)&from, fl);
					log_hit(dir, names[i]);
				}
				continue;
			}
			int c = accept4(pf[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0) {
				write_all(c, "hello", 5);
				close(c);
				log_hit(dir, names[i]);
			}
		}
	}
	shmctl(shm, IPC_RMID, NULL);
	unlink(upath);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *m = argv[1];
	if (!strcmp(m, "--version")) {
		printf("%s\n", PROBE_VERSION);
		return 0;
	}
	if (!strcmp(m, "check"))
		return mode_check(argc, argv);
	if (!strcmp(m, "run"))
		return mode_run(argc, argv);
	if (!strcmp(m, "control"))
		return mode_control(argc, argv);
	if (!strcmp(m, "posture"))
		return mode_posture(argc, argv);
	if (!strcmp(m, "serve"))
		return mode_serve(argc, argv);
	if (!strcmp(m, "list")) {
		for (const struct attempt *a = attempts; a->name; a++) {
			char f[64] = "";
			if (a->flags & F_STATE) strcat(f, "state,");
			if (a->flags & F_ROOT) strcat(f, "root,");
			if (a->flags & F_RESOURCE) strcat(f, "resource,");
			if (f[0]) f[strlen(f) - 1] = 0;
			printf("%s %s\n", a->name, f[0] ? f : "-");
		}
		return 0;
	}
	return usage();
}
