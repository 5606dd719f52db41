/* tests/supervisor/test_tool.c: tool runs (sup_run_tool, profile tool-run)
 * with a stub tool interpreter: caller-given argv, stdin, exit code and
 * signal from the kernel, every limit reported by the supervisor (never by
 * what the program prints), admission, and the worktree: readable at /work,
 * not writable, nothing else of the host visible, a symlinked or swapped
 * worktree never mounted. Controls: the same attempts through the
 * unconfined test double (no mount namespace) do reach the host, and a
 * path-following read during the swap does see the other directory. The
 * unprivileged path runs in a child as uid 65534 (as root). */
#include "supervisor/supervisor.h"
#include "tests/supervisor/suptest.h"
#include "tests/tap.h"
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static char T[256], WT[300], SECRET[300], OTHER[300];

static const char *tool_path(void)
{
	static char p[4096];
	const char *b = getenv("top_builddir");
	snprintf(p, sizeof p, "%s/tests/supervisor/tool-stub", b ? b : ".");
	return p;
}

static struct supervisor *mk(unsigned capacity, int unconfined)
{
	struct world_err err;
	struct sup_limits lim;
	sup_limits_default(&lim);
	lim.capacity = capacity;
	struct launcher *l = unconfined ? launcher_unconfined_new(tool_path(), &err)
	                                : suptest_capsule_launcher(tool_path(), &err);
	if (!l) bail("launcher: %s", err.msg);
	struct supervisor *s = sup_new(&lim, l, &err);
	if (!s) bail("sup_new: %s", err.msg);
	return s;
}

struct opts {
	const char *worktree;
	const char *in;
	size_t in_len;
	unsigned wall_ms;
	size_t out_max, err_max;
};

/* Run the stub with up to 4 args; returns sup_run_tool's rc. */
static int tool(struct supervisor *s, const struct opts *o, struct sup_tool_result *res, struct world_err *err,
                const char *a0, const char *a1, const char *a2, const char *a3)
{
	const char *args[5] = { a0, a1, a2, a3, NULL };
	struct sup_tool_req req = {
		.args = args,
		.worktree = o ? o->worktree : NULL,
		.stdin_data = o ? o->in : NULL,
		.stdin_len = o ? o->in_len : 0,
		.wall_ms = o ? o->wall_ms : 0,
		.stdout_max = o ? o->out_max : 0,
		.stderr_max = o ? o->err_max : 0,
	};
	err->code = 0;
	err->msg[0] = '\0';
	return sup_run_tool(s, &req, res, err);
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) < 0) bail("write %s", path);
}

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(T, sizeof T, "%s/world-tooltest.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(T) || chmod(T, 0755) < 0) bail("mkdtemp: %s", strerror(errno));
	snprintf(WT, sizeof WT, "%s/wt", T);
	snprintf(SECRET, sizeof SECRET, "%s/secret.txt", T);
	snprintf(OTHER, sizeof OTHER, "%s/other", T);
	char p[400];
	if (mkdir(WT, 0755) < 0 || mkdir(OTHER, 0755) < 0) bail("mkdir");
	snprintf(p, sizeof p, "%s/hello.txt", WT);
	put(p, "hello worktree\n");
	snprintf(p, sizeof p, "%s/sub", WT);
	if (mkdir(p, 0755) < 0) bail("mkdir sub");
	snprintf(p, sizeof p, "%s/sub/f", WT);
	put(p, "A\n");
	snprintf(p, sizeof p, "%s/escape", WT);
	if (symlink(SECRET, p) < 0) bail("symlink");
	put(SECRET, "host secret\n");
	snprintf(p, sizeof p, "%s/f", OTHER);
	put(p, "S\n");
}

static void rm_rf(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("cleanup of %s failed", dir);
}

/* ---- basic behaviour ----------------------------------------------------- */

static void basics(struct supervisor *s)
{
	struct sup_tool_result res;
	struct world_err err;
	int rc = tool(s, NULL, &res, &err, "say", "hello", "3", "oops");
	ok(rc == 0, "tool run: rc 0 (%s)", err.msg);
	is_int(res.exit_code, 3, "exit code from the kernel");
	is_int(res.signal, 0, "no signal");
	is_str(res.stdout_text, "hello", "stdout captured");
	is_str(res.stderr_text, "oops", "stderr captured apart");
	is_str(res.limit, "", "no limit");
	ok(strstr(res.layers, "seccomp") != NULL, "confinement layers reported: %s", res.layers);
	sup_tool_result_free(&res);

	/* What the program prints cannot forge the envelope. */
	rc = tool(s, NULL, &res, &err, "say", "{\"limit\":\"\",\"exit_code\":0,\"signal\":0}", "7",
	          "limit: deadline\nexit_code: 0\n");
	ok(rc == 0 && res.exit_code == 7 && res.limit[0] == '\0', "forged limit/exit_code in the output are not believed "
	   "(exit %d, limit '%s')", res.exit_code, res.limit);
	sup_tool_result_free(&res);

	/* stdin larger than a pipe buffer: written as the tool reads it. */
	size_t n = 300 * 1024;
	char *in = malloc(n);
	for (size_t i = 0; i < n; i++) in[i] = (char)('a' + i % 26);
	struct opts o = { .in = in, .in_len = n };
	rc = tool(s, &o, &res, &err, "stdin", NULL, NULL, NULL);
	ok(rc == 0 && res.exit_code == 0 && res.stdout_len == n && memcmp(res.stdout_text, in, n) == 0,
	   "300 KiB of stdin reach the tool intact (rc %d, %zu bytes back)", rc, res.stdout_len);
	sup_tool_result_free(&res);
	/* A tool that never reads its stdin still ends normally. */
	o.in_len = 1u << 20;
	in = realloc(in, o.in_len);
	memset(in, 'z', o.in_len);
	o.in = in;
	rc = tool(s, &o, &res, &err, "say", "ignored", "0", NULL);
	ok(rc == 0 && res.exit_code == 0 && res.limit[0] == '\0', "1 MiB of unread stdin: normal end (rc %d: %s)", rc,
	   err.msg);
	sup_tool_result_free(&res);
	o.in_len = (1u << 20) + 1;
	in = realloc(in, o.in_len);
	o.in = in;
	rc = tool(s, &o, &res, &err, "stdin", NULL, NULL, NULL);
	ok(rc < 0 && err.code == WX_BAD_INPUT, "stdin over the payload cap refused before any capsule: %s", err.msg);
	free(in);

	rc = tool(s, NULL, &res, &err, "segv", NULL, NULL, NULL);
	ok(rc == 0 && res.exit_code == -1 && res.signal == SIGSEGV && res.limit[0] == '\0',
	   "a crash: signal %d, exit_code %d, no limit", res.signal, res.exit_code);
	sup_tool_result_free(&res);

	const char *none[1] = { NULL };
	struct sup_tool_req empty = { .args = none };
	rc = sup_run_tool(s, &empty, &res, &err);
	ok(rc < 0 && err.code == WX_USAGE, "no interpreter arguments: usage error: %s", err.msg);
}

static void limits(struct supervisor *s)
{
	struct sup_tool_result res;
	struct world_err err;
	struct opts o = { .wall_ms = 300 };
	int rc = tool(s, &o, &res, &err, "spin", NULL, NULL, NULL);
	ok(rc == 0, "spin: the run ends (rc %d: %s)", rc, err.msg);
	is_str(res.limit, "deadline", "spin: limit deadline, from the supervisor's timer");
	is_int(res.signal, SIGKILL, "spin: killed");
	ok(strstr(res.detail, "300 ms") != NULL, "detail names the deadline: %s", res.detail);
	sup_tool_result_free(&res);

	o = (struct opts){ .out_max = 64 * 1024 };
	rc = tool(s, &o, &res, &err, "flood", "1", NULL, NULL);
	ok(rc == 0 && strcmp(res.limit, "stdout cap") == 0 && res.stdout_len == 64 * 1024,
	   "stdout flood: limit '%s', %zu bytes kept", res.limit, res.stdout_len);
	sup_tool_result_free(&res);
	o = (struct opts){ .err_max = 4096 };
	rc = tool(s, &o, &res, &err, "flood", "2", NULL, NULL);
	ok(rc == 0 && strcmp(res.limit, "stderr cap") == 0 && res.stderr_len == 4096,
	   "stderr flood: limit '%s', %zu bytes kept", res.limit, res.stderr_len);
	sup_tool_result_free(&res);

	rc = tool(s, NULL, &res, &err, "syscall", "keyctl", NULL, NULL);
	ok(rc == 0, "denied syscall: the run ends (rc %d: %s)", rc, err.msg);
	is_str(res.limit, "syscall denied: keyctl", "denied syscall named by the seccomp listener");
	ok(strstr(res.stdout_text, "returned") == NULL, "the denied call never returned into the capsule");
	sup_tool_result_free(&res);
}

struct spin_arg {
	struct supervisor *s;
	int rc;
	char limit[128];
};

static void *spin_thread(void *p)
{
	struct spin_arg *a = p;
	struct sup_tool_result res;
	struct world_err err;
	struct opts o = { .wall_ms = 3000 };
	a->rc = tool(a->s, &o, &res, &err, "spin", NULL, NULL, NULL);
	snprintf(a->limit, sizeof a->limit, "%s", res.limit);
	sup_tool_result_free(&res);
	return NULL;
}

static void admission(void)
{
	struct supervisor *s = mk(1, 0);
	struct spin_arg a = { s, -2, "" };
	pthread_t th;
	pthread_create(&th, NULL, spin_thread, &a);
	for (int i = 0; i < 2000 && sup_alive(s) == 0; i++) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	ok(sup_alive(s) == 1, "one tool run alive (capacity 1)");
	struct sup_tool_result res;
	struct world_err err;
	int rc = tool(s, NULL, &res, &err, "say", "x", NULL, NULL);
	ok(rc < 0 && err.code == WX_CAPACITY, "a second tool run is refused at once: %s", err.msg);
	pthread_join(th, NULL);
	ok(a.rc == 0 && strcmp(a.limit, "deadline") == 0, "the admitted run ended at its deadline (%s)", a.limit);
	is_int(sup_alive(s), 0, "nothing alive afterwards");
	sup_free(s);
}

/* ---- the worktree ------------------------------------------------------------ */

static char *run_out(struct supervisor *s, const char *wt, const char *a0, const char *a1, int *rc_out)
{
	struct sup_tool_result res;
	struct world_err err;
	struct opts o = { .worktree = wt };
	int rc = tool(s, &o, &res, &err, a0, a1, NULL, NULL);
	if (rc_out) *rc_out = rc;
	char *out = strdup(rc == 0 ? res.stdout_text : err.msg);
	sup_tool_result_free(&res);
	size_t l = strlen(out);
	if (l && out[l - 1] == '\n') out[l - 1] = '\0';
	return out;
}

static void worktree(struct supervisor *s, const char *who)
{
	char p[400], *o;
	o = run_out(s, WT, "cat", "/work/hello.txt", NULL);
	is_str(o, "hello worktree", "%s: a worktree file is readable at /work", who);
	free(o);
	o = run_out(s, WT, "cat", "work/sub/f", NULL);
	is_str(o, "A", "%s: ... and relative to the root (cwd)", who);
	free(o);
	o = run_out(s, WT, "ls", "/work", NULL);
	is_str(o, "escape hello.txt sub", "%s: /work lists the worktree", who);
	free(o);
	o = run_out(s, WT, "write", "/work/new.txt", NULL);
	is_str(o, "error: EROFS", "%s: creating a file in the worktree fails (read-only mount)", who);
	free(o);
	snprintf(p, sizeof p, "%s/new.txt", WT);
	ok(access(p, F_OK) < 0, "%s: ... and nothing appeared on the host", who);
	o = run_out(s, WT, "write", "/work/hello.txt", NULL);
	is_str(o, "error: EROFS", "%s: overwriting a worktree file fails", who);
	free(o);
	o = run_out(s, WT, "mkdir", "/work/d", NULL);
	is_str(o, "error: EROFS", "%s: mkdir in the worktree fails", who);
	free(o);
	o = run_out(s, WT, "cat", SECRET, NULL);
	is_str(o, "error: ENOENT", "%s: a host file outside the worktree is not visible", who);
	free(o);
	o = run_out(s, WT, "cat", "/work/escape", NULL);
	is_str(o, "error: ENOENT", "%s: a symlink in the worktree to a host file resolves inside the capsule", who);
	free(o);
	o = run_out(s, WT, "ls", "/", NULL);
	is_str(o, ".capsule-cache dev work", "%s: the root holds only the cache, the tool devices and /work", who);
	free(o);
	o = run_out(s, NULL, "ls", "/", NULL);
	is_str(o, ".capsule-cache dev", "%s: without a worktree there is no /work", who);
	free(o);
	o = run_out(s, T, "ls", "/work", NULL);
	is_str(o, "other secret.txt wt", "%s: control: the mount shows exactly the directory given", who);
	free(o);
}

/* The workspace keeps a worktree 0700: as root the capsule user (a host id
 * of its own) reads it through the idmapped clone. */
static void private_worktree(struct supervisor *s)
{
	if (geteuid() != 0) {
		skip("not root", "a 0700 worktree with a 0600 file is readable (idmapped mount)");
		return;
	}
	char dir[400], f[420];
	snprintf(dir, sizeof dir, "%s/private", T);
	snprintf(f, sizeof f, "%s/p.txt", dir);
	if (mkdir(dir, 0700) < 0) bail("mkdir private");
	put(f, "private\n");
	if (chmod(f, 0600) < 0) bail("chmod");
	struct sup_tool_result res;
	struct world_err err;
	struct opts o = { .worktree = dir };
	int rc = tool(s, &o, &res, &err, "cat", "/work/p.txt", NULL, NULL);
	ok(rc == 0 && strcmp(res.stdout_text, "private\n") == 0, "a 0700 worktree's 0600 file is readable (%s%s)",
	   rc == 0 ? res.stdout_text : err.msg, rc == 0 ? "" : "");
	ok(strstr(res.layers, "worktree: idmapped") != NULL, "the layers say the worktree is idmapped: %s", res.layers);
	sup_tool_result_free(&res);
	rc = tool(s, &o, &res, &err, "write", "/work/p.txt", NULL, NULL);
	ok(rc == 0 && strcmp(res.stdout_text, "error: EROFS\n") == 0, "... and still not writable (%s)",
	   rc == 0 ? res.stdout_text : err.msg);
	sup_tool_result_free(&res);
	/* Control: the capsule user as such has no right to it. */
	pid_t pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(0x70000001, 0x70000001, 0x70000001) < 0 ||
		    setresuid(0x70000001, 0x70000001, 0x70000001) < 0)
			_exit(100);
		int fd = open(f, O_RDONLY);
		_exit(fd < 0 && errno == EACCES ? 0 : 1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "control: a capsule host id cannot open that file directly (EACCES)");
}

static void worktree_refusals(struct supervisor *s)
{
	char link[400], nope[400];
	snprintf(link, sizeof link, "%s/link", T);
	snprintf(nope, sizeof nope, "%s/nope", T);
	if (symlink(WT, link) < 0) bail("symlink");
	int rc;
	char *o = run_out(s, link, "ls", "/work", &rc);
	ok(rc < 0 && strstr(o, "symlink"), "a worktree given as a symlink is refused: %s", o);
	free(o);
	o = run_out(s, nope, "ls", "/work", &rc);
	ok(rc < 0 && strstr(o, "No such file"), "a missing worktree is refused: %s", o);
	free(o);
	o = run_out(s, SECRET, "ls", "/work", &rc);
	ok(rc < 0 && strstr(o, "not a directory"), "a file as worktree is refused: %s", o);
	free(o);
	unlink(link);
}

/* A thread swaps WT/../swap between a directory (f = "A") and a symlink to
 * OTHER (f = "S") with RENAME_EXCHANGE while runs mount it. */
static atomic_int swapping, swaps;
static char SWAP[400], SWAP_ALT[400], UDIR[300];
static void *swapper(void *p)
{
	(void)p;
	unsigned seed = (unsigned)getpid();
	while (atomic_load(&swapping)) {
		if (syscall(SYS_renameat2, AT_FDCWD, SWAP, AT_FDCWD, SWAP_ALT, RENAME_EXCHANGE) < 0) {
			diag("swapper: renameat2: %s", strerror(errno));
			break;
		}
		atomic_fetch_add(&swaps, 1);
		/* Irregular windows (1..8 ms) where either is in place. */
		struct timespec ts = { 0, 1000000L * (1 + rand_r(&seed) % 8) };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* n runs while the swapper exchanges SWAP (a directory, f = "A") with
 * SWAP_ALT (a symlink to OTHER, f = "S"). saw_other: the control, a
 * path-following read during the swap reaches OTHER. */
struct swap_counts {
	int saw_other, mounted, refused, leaked, in_child;
};

static struct swap_counts swap_runs(struct supervisor *s, const char *base, int n)
{
	struct swap_counts k = { 0, 0, 0, 0, 0 };
	char p[500];
	snprintf(SWAP, sizeof SWAP, "%s/swap", base);
	snprintf(SWAP_ALT, sizeof SWAP_ALT, "%s/swap-alt", base);
	if (mkdir(SWAP, 0755) < 0 || symlink(OTHER, SWAP_ALT) < 0) bail("swap setup: %s", strerror(errno));
	snprintf(p, sizeof p, "%s/f", SWAP);
	put(p, "A\n");
	atomic_store(&swapping, 1);
	pthread_t th;
	pthread_create(&th, NULL, swapper, NULL);
	for (int i = 0; i < 200000 && !k.saw_other; i++) {
		int fd = open(p, O_RDONLY);
		char c = 0;
		if (fd >= 0) {
			if (read(fd, &c, 1) == 1 && c == 'S') k.saw_other = 1;
			close(fd);
		}
	}
	for (int i = 0; i < n; i++) {
		int rc;
		/* A refused run returns at once: let the swapper move on first. */
		int c0 = atomic_load(&swaps);
		for (int w = 0; w < 5000 && atomic_load(&swaps) == c0; w++) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		}
		char *o = run_out(s, SWAP, "cat", "/work/f", &rc);
		if (rc == 0 && strcmp(o, "A") == 0) k.mounted++;
		else if (rc == 0 && strcmp(o, "S") == 0) k.leaked++;
		else k.refused++;
		if (rc < 0 && strstr(o, "open worktree")) k.in_child++; /* caught by the capsule's re-check */
		free(o);
	}
	atomic_store(&swapping, 0);
	pthread_join(th, NULL);
	return k;
}

static void swap_race(struct supervisor *s)
{
	struct swap_counts k = swap_runs(s, T, 40);
	ok(k.saw_other, "control: during the swap, opening swap/f by path reaches the other directory");
	diag("swap: %d mounted the directory, %d refused", k.mounted, k.refused);
	is_int(k.leaked, 0, "40 runs during the swap: the symlinked directory was never mounted (%d mounted, %d refused)",
	       k.mounted, k.refused);
}

static void controls(void)
{
	struct supervisor *u = mk(2, 1);
	char *o = run_out(u, WT, "cat", SECRET, NULL);
	is_str(o, "host secret", "control (unconfined double): the host file is readable");
	free(o);
	o = run_out(u, WT, "write", "work/new.txt", NULL);
	is_str(o, "ok", "control (unconfined double): the worktree is writable");
	free(o);
	char p[400];
	snprintf(p, sizeof p, "%s/new.txt", WT);
	ok(access(p, F_OK) == 0, "control: ... the file appeared on the host");
	unlink(p);
	sup_free(u);
}

/* As root: the unprivileged path (user namespace of its own), in a child
 * running as uid/gid 65534. Exit code = number of failed checks. */
static void unprivileged(void)
{
	if (geteuid() != 0) {
		skip("not root: this whole run is the unprivileged path", "unprivileged tool run as uid 65534");
		return;
	}
	int pfd[2];
	if (pipe(pfd) < 0) bail("pipe");
	snprintf(UDIR, sizeof UDIR, "%s/unpriv", T);
	if (mkdir(UDIR, 0755) < 0 || chown(UDIR, 65534, 65534) < 0) bail("unpriv dir");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(100);
		/* Changing ids made us non-dumpable: our /proc files (and the
		 * capsule child's id maps) would belong to root. exec resets it;
		 * without one, say so. */
		if (prctl(PR_SET_DUMPABLE, 1) < 0) _exit(101);
		/* With SUPTEST_SPAWNER=1: a spawner of this child's own, as uid
		 * 65534 (a forked copy does not use its parent's: spawner.h). */
		int spuid = -1;
		if (suptest_spawner()) {
			struct world_err e;
			struct sup_spawner_info si;
			if (sup_spawner_running() || sup_spawner_start(NULL, &si, &e) < 0) _exit(102);
			char st[64], line[256];
			snprintf(st, sizeof st, "/proc/%d/status", (int)si.pid);
			FILE *f = fopen(st, "r");
			while (f && fgets(line, sizeof line, f))
				if (sscanf(line, "Uid: %d", &spuid) == 1) break;
			if (f) fclose(f);
		}
		struct supervisor *s = mk(2, 0);
		char *a = run_out(s, WT, "cat", "/work/hello.txt", NULL);
		char *b = run_out(s, WT, "write", "/work/x", NULL);
		char *c = run_out(s, WT, "cat", SECRET, NULL);
		/* The unprivileged path re-resolves the worktree in the capsule:
		 * race it (the swap directory belongs to this user). */
		struct swap_counts k = swap_runs(s, UDIR, 40);
		dprintf(pfd[1], "%d|%s|%s|%s|%d %d %d %d %d", spuid, a, b, c, k.saw_other, k.leaked, k.mounted, k.refused,
		        k.in_child);
		sup_free(s);
		sup_spawner_stop();
		_exit(0);
	}
	close(pfd[1]);
	char buf[1024] = "";
	ssize_t n = read(pfd[0], buf, sizeof buf - 1);
	close(pfd[0]);
	if (n > 0) buf[n] = '\0';
	int st = 0;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "unprivileged child ran (status %d)", st);
	char *counts = strrchr(buf, '|');
	int saw = 0, leaked = -1, mounted = 0, refusedn = 0, in_child = 0;
	if (counts) {
		*counts++ = '\0';
		if (sscanf(counts, "%d %d %d %d %d", &saw, &leaked, &mounted, &refusedn, &in_child) != 5) leaked = -1;
	}
	char *body = strchr(buf, '|');
	int spuid = atoi(buf);
	if (suptest_spawner())
		is_int(spuid, 65534, "unprivileged: the child's capsules are made by a spawner of its own, as uid 65534");
	is_str(body ? body + 1 : buf, "hello worktree|error: EROFS|error: ENOENT",
	       "unprivileged: worktree readable, not writable, host file invisible");
	ok(saw, "unprivileged control: a path-following read during the swap reaches the other directory");
	diag("unprivileged swap: %d mounted, %d refused, %d of them by the capsule's identity re-check", mounted,
	     refusedn, in_child);
	is_int(leaked, 0, "unprivileged: 40 runs during the swap never mounted the symlinked directory");
}

int main(void)
{
	setup();
	is_str(sup_profile_name(SUP_PROFILE_TOOL_RUN), "tool-run", "the supervisor's tool-run profile");
	int fds0 = count_fds();
	struct supervisor *s = mk(4, 0);
	basics(s);
	limits(s);
	worktree(s, "root");
	private_worktree(s);
	worktree_refusals(s);
	swap_race(s);
	sup_free(s);
	admission();
	controls();
	unprivileged();
	is_int(count_fds(), fds0, "no fd leaked");
	is_int(count_children(), 0, "no child left");
	rm_rf(T);
	return done_testing();
}
