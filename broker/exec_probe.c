/* broker/exec_probe.c: the fail-closed start-up probe of an exec profile
 * (broker/exec_probe.h, docs/exec.md). */
#include "broker/exec_probe.h"
#include "broker/exec.h"
#include "broker/workspace.h"
#include "supervisor/exec.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef WORLD_TEST_HOOKS
static exec_runner_fn test_runner;
void exec_runner_set_for_test(exec_runner_fn fn) { test_runner = fn; }
#else
void exec_runner_set_for_test(exec_runner_fn fn) { (void)fn; }
#endif

exec_runner_fn exec_runner(void)
{
#ifdef WORLD_TEST_HOOKS
	if (test_runner) return test_runner;
#endif
	return sup_run_exec;
}

#define PROBE_BASH "/usr/bin/bash"

/* The probe program: $1 token, $2 port, then the write targets (sibling,
 * store, tmp) and the decoys (home, store, workspace); an empty path is an
 * arm skipped. Every arm prints "ARM NAME RESULT"; the end token last. */
static const char probe_script[] =
	"t=$1 port=$2\n"
	"if printf 'INSIDE-%s' \"$t\" > " SUP_EXEC_WORKTREE "/.world-exec-probe-inside; then echo 'ARM write-inside WROTE'; "
	"else echo 'ARM write-inside REFUSED'; fi\n"
	"i=0\n"
	"for n in sibling store tmp; do f=$3; shift\n"
	"  if [ -n \"$f\" ]; then if (printf x > \"$f\") 2>/dev/null; then echo \"ARM write-$n WROTE\"; "
	"else echo \"ARM write-$n REFUSED\"; fi; fi\n"
	"done\n"
	"for n in home store workspace; do f=$3; shift\n"
	"  if [ -n \"$f\" ]; then if c=$(cat \"$f\" 2>/dev/null); then echo \"ARM read-$n READ $c\"; "
	"else echo \"ARM read-$n UNREADABLE\"; fi; fi\n"
	"done\n"
	"if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo 'ARM network CONNECTED'; "
	"else echo 'ARM network REFUSED'; fi\n"
	"echo \"PROBE-DONE $t\"\n";

static void fail(struct exec_profile *p, const char *arm, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct exec_profile *p, const char *arm, const char *fmt, ...)
{
	if (p->probe_failure[0]) return; /* the first arm that failed is the one named */
	char m[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	snprintf(p->probe_failure, sizeof p->probe_failure, "arm %s: %s", arm, m);
}

static int put_file(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) return -1;
	size_t n = strlen(content);
	ssize_t w = write(fd, content, n);
	int e = errno;
	if (close(fd) < 0 || w != (ssize_t)n) {
		errno = w != (ssize_t)n ? e : errno;
		return -1;
	}
	return 0;
}

static int read_is(const char *path, const char *want)
{
	char b[256];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) return 0;
	ssize_t n = read(fd, b, sizeof b - 1);
	close(fd);
	if (n < 0) return 0;
	b[n] = '\0';
	return strcmp(b, want) == 0;
}

static int absent(const char *path)
{
	struct stat st;
	return lstat(path, &st) < 0 && errno == ENOENT;
}

/* the control of a write arm: the daemon can make and remove the file */
static int writable_control(const char *path)
{
	if (put_file(path, "control") < 0) return 0;
	return unlink(path) == 0;
}

static int line_has(const char *out, const char *line)
{
	size_t n = strlen(line);
	for (const char *s = out; s && *s;) {
		if (strncmp(s, line, n) == 0 && (s[n] == '\n' || s[n] == '\0' || s[n] == ' ')) return 1;
		s = strchr(s, '\n');
		if (s) s++;
	}
	return 0;
}

static int accepts(int lfd)
{
	int n = 0;
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0) break;
		close(c);
		n++;
	}
	return n;
}

/* path is tree or below it (both absolute, no trailing slash but "/") */
static int under(const char *path, const char *tree)
{
	size_t n = strlen(tree);
	if (n == 1 && tree[0] == '/') return path[0] == '/';
	return strncmp(path, tree, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The canonical path of a file that may not exist yet: its realpath, else
 * its folder's realpath and its name; "" when neither resolves. */
static void canon_of(const char *path, char out[PATH_MAX])
{
	out[0] = '\0';
	if (realpath(path, out)) return;
	out[0] = '\0';
	char dir[PATH_MAX], rd[PATH_MAX];
	if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return;
	char *slash = strrchr(dir, '/');
	if (!slash) return;
	const char *base = path + (slash - dir) + 1;
	if (slash == dir) snprintf(dir, sizeof dir, "/");
	else *slash = '\0';
	if (!realpath(dir, rd)) return;
	size_t n = strlen(rd);
	if (n + 1 + strlen(base) >= PATH_MAX) return;
	memcpy(out, rd, n);
	if (n > 1) out[n++] = '/';
	memcpy(out + n, base, strlen(base) + 1);
}

/* Is path under /etc/<mask> for one of the masks the capsule applies (the
 * capsule masks only a mask path that is a directory or a file: a symlink
 * there is not masked, so neither is what lies under it here)? */
static int masked(const char *path, const char *const *etc_masked)
{
	for (const char *const *m = etc_masked; *m; m++) {
		char mp[PATH_MAX];
		struct stat st;
		snprintf(mp, sizeof mp, "/etc/%s", *m);
		if (!under(path, mp)) continue;
		if (lstat(mp, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) return 1;
	}
	return 0;
}

/* 1 when path (literal or canonical) lies under the shown tree (given
 * literally; its realpath checked too); kind names the tree. */
static int shown_under(const char *lit, const char *canon, const char *tree, int is_etc, const char *const *etc_masked)
{
	char rt[PATH_MAX];
	const char *trees[2] = { tree, realpath(tree, rt) ? rt : NULL };
	const char *paths[2] = { lit, canon[0] ? canon : NULL };
	for (int t = 0; t < 2; t++) {
		if (!trees[t]) continue;
		for (int i = 0; i < 2; i++) {
			if (!paths[i] || !under(paths[i], trees[t])) continue;
			/* the /etc masks hold on the capsule's /etc only */
			if (is_etc && t == 0 && masked(paths[i], etc_masked)) continue;
			if (is_etc && t == 1 && strcmp(trees[1], "/etc") == 0 && masked(paths[i], etc_masked)) continue;
			return 1;
		}
	}
	return 0;
}

int exec_secrets_check(struct exec_profile *p, const struct exec_probe_env *pe)
{
	const char *const *sys = NULL, *const *etc_masked = NULL;
	sup_exec_shown(&sys, &etc_masked);
	char cache_default[PATH_MAX + 32] = "";
	if (!pe->cache_root && pe->workspace_root)
		snprintf(cache_default, sizeof cache_default, "%s/%s", pe->workspace_root, EXEC_CACHE_DIR);
	const char *cache = pe->cache_root ? pe->cache_root : cache_default[0] ? cache_default : NULL;
	for (size_t s = 0; s < pe->nsecrets; s++) {
		const char *lit = pe->secrets[s].path, *what = pe->secrets[s].what;
		if (!lit || !lit[0]) continue;
		char abs[PATH_MAX], canon[PATH_MAX];
		if (lit[0] != '/') {
			char cwd[PATH_MAX];
			if (!getcwd(cwd, sizeof cwd) || snprintf(abs, sizeof abs, "%s/%s", cwd, lit) >= (int)sizeof abs) {
				fail(p, "secrets", "the %s %s: cannot make it an absolute path, so cannot show it is outside the capsule",
				     what, lit);
				return 1;
			}
			lit = abs;
		}
		canon_of(lit, canon);
		for (const char *const *d = sys; *d; d++)
			if (shown_under(lit, canon, *d, strcmp(*d, "/etc") == 0, etc_masked)) {
				fail(p, "secrets", "the %s %s is visible inside the exec capsule under the system directory %s "
				     "(bound read-only%s): keep the daemon's secrets outside every tree the capsule shows (docs/exec.md)",
				     what, pe->secrets[s].path, *d, strcmp(*d, "/etc") == 0 ? ", /etc/world masked" : "");
				return 1;
			}
		for (size_t r = 0; r < p->nread_roots; r++)
			if (shown_under(lit, canon, p->read_roots[r], 0, etc_masked)) {
				fail(p, "secrets", "the %s %s is visible inside the exec capsule under the read root %s: keep the "
				     "daemon's secrets outside every tree the capsule shows (docs/exec.md)", what, pe->secrets[s].path,
				     p->read_roots[r]);
				return 1;
			}
		const char *const roots[2] = { pe->workspace_root, cache };
		const char *const rn[2] = { "workspace root (worktrees)", "exec cache root" };
		for (int i = 0; i < 2; i++)
			if (roots[i] && shown_under(lit, canon, roots[i], 0, etc_masked)) {
				fail(p, "secrets", "the %s %s is visible inside the exec capsule under the %s %s: keep the daemon's "
				     "secrets outside every tree the capsule shows (docs/exec.md)", what, pe->secrets[s].path, rn[i],
				     roots[i]);
				return 1;
			}
	}
	return 0;
}

int exec_probe_run(struct exec_profile *p, const struct exec_probe_env *pe, char *note, size_t notelen)
{
	p->probe_failure[0] = '\0';
	if (note) note[0] = '\0';
	if (exec_secrets_check(p, pe)) {
		if (note) snprintf(note, notelen, "failed: %s", p->probe_failure);
		return 1;
	}
	struct world_err err = { 0, "" };
	exec_runner_fn run = exec_runner();
	if (!run) {
		fail(p, "capsule", "this worldd has no exec capsule (supervisor/exec.c)");
		return 1;
	}
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
		fail(p, "setup", "getrandom: %s", strerror(errno));
		return 1;
	}
	char tok[17];
	for (int i = 0; i < 8; i++) snprintf(tok + 2 * i, 3, "%02x", rnd[i]);
	char scratch[PATH_MAX], ep[PATH_MAX + 8], sib[PATH_MAX + 8], cache_root[PATH_MAX + 16];
	snprintf(scratch, sizeof scratch, "%s/.world-exec-probe.XXXXXX", pe->workspace_root);
	if (!mkdtemp(scratch)) {
		fail(p, "setup", "mkdtemp %s: %s", scratch, strerror(errno));
		return 1;
	}
	snprintf(ep, sizeof ep, "%s/ep", scratch);
	snprintf(sib, sizeof sib, "%s/sibling", scratch);
	snprintf(cache_root, sizeof cache_root, "%s/cache", scratch);
	char w_sib[PATH_MAX + 64] = "", w_store[PATH_MAX + 64] = "", w_tmp[128] = "";
	char d_home[PATH_MAX + 64] = "", d_store[PATH_MAX + 64] = "", d_ws[PATH_MAX + 64] = "";
	char decoy[64];
	snprintf(decoy, sizeof decoy, "DECOY-NOT-A-SECRET-%s", tok);
	int lfd = -1, bfd = -1, tfd = -1;
	char **envp = NULL;
	struct sup_exec_result res;
	memset(&res, 0, sizeof res);
	char skipped[200] = "";
	if (mkdir(ep, 0700) < 0 || mkdir(sib, 0700) < 0) {
		fail(p, "setup", "mkdir under %s: %s", scratch, strerror(errno));
		goto out;
	}
	snprintf(w_sib, sizeof w_sib, "%s/written-%s", sib, tok);
	char w_sib_arg[PATH_MAX + 64];
	snprintf(w_sib_arg, sizeof w_sib_arg, "%s", w_sib);
#ifdef WORLD_TEST_HOOKS
	/* TEST HOOK: a leaking capsule for this arm -- the target is inside the
	 * worktree, where the write lands; the probe must refuse to offer */
	const char *leak = getenv("WORLD_TEST_EXEC_PROBE_LEAK");
	if (leak && strcmp(leak, "write-sibling") == 0) {
		snprintf(w_sib, sizeof w_sib, "%s/leak", ep);       /* the host file checked */
		snprintf(w_sib_arg, sizeof w_sib_arg, "%s/leak", SUP_EXEC_WORKTREE); /* the name written inside */
	}
#endif
	if (pe->store_dir) snprintf(w_store, sizeof w_store, "%s/.world-exec-probe-write-%s", pe->store_dir, tok);
	else strcat(skipped, " write-store read-store (no store folder: a URI store)");
	snprintf(w_tmp, sizeof w_tmp, "/tmp/.world-exec-probe-write-%s", tok);
	struct stat hst;
	if (pe->home && strcmp(pe->home, "/") != 0 && stat(pe->home, &hst) == 0 && S_ISDIR(hst.st_mode))
		snprintf(d_home, sizeof d_home, "%s/.world-exec-probe-decoy-%s", pe->home, tok);
	else strcat(skipped, " read-home (no $HOME directory)");
	if (pe->store_dir) snprintf(d_store, sizeof d_store, "%s/.world-exec-probe-decoy-%s", pe->store_dir, tok);
	snprintf(d_ws, sizeof d_ws, "%s/.world-exec-probe-decoy-%s", pe->workspace_root, tok);
	/* controls: the daemon writes each place; plants and reads back each decoy */
	const char *const wt[3] = { w_sib, w_store, w_tmp };
	const char *const wn[3] = { "write-sibling", "write-store", "write-tmp" };
	for (int i = 0; i < 3; i++)
		if (wt[i][0] && strcmp(wt[i] + strlen(wt[i]) - 5, "/leak") != 0 && !writable_control(wt[i])) {
			fail(p, wn[i], "control: the daemon cannot write %s itself (%s), so a refusal would prove nothing", wt[i],
			     strerror(errno));
			goto out;
		}
	const char *const dt[3] = { d_home, d_store, d_ws };
	const char *const dn[3] = { "read-home", "read-store", "read-workspace" };
	for (int i = 0; i < 3; i++)
		if (dt[i][0] && (put_file(dt[i], decoy) < 0 || !read_is(dt[i], decoy))) {
			fail(p, dn[i], "control: cannot plant and read back the decoy %s (%s)", dt[i], strerror(errno));
			goto out;
		}
	/* the live listener and its unconfined control connect */
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof sa;
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 16) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0) {
		fail(p, "network", "control: cannot open a loopback listener: %s", strerror(errno));
		goto out;
	}
	int cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		fail(p, "network", "control: an unconfined connect to 127.0.0.1:%u failed: %s", ntohs(sa.sin_port), strerror(errno));
		if (cfd >= 0) close(cfd);
		goto out;
	}
	close(cfd);
	usleep(10000);
	int before = accepts(lfd);
	if (before != 1) {
		fail(p, "network", "control: the listener counted %d accepts after one unconfined connect", before);
		goto out;
	}
	/* the capsule of the profile, on the scratch episode */
	char cdir[PATH_MAX + 64];
	if (exec_cache_prepare(cache_root, "probe", p, cdir, sizeof cdir, &err) < 0) {
		fail(p, "setup", "%s", err.msg);
		goto out;
	}
	if (exec_build_env(p, &envp, &err) < 0) {
		fail(p, "setup", "%s", err.msg);
		goto out;
	}
	bfd = open(PROBE_BASH, O_RDONLY | O_CLOEXEC);
	if (bfd < 0) {
		fail(p, "setup", "the probe program %s: %s", PROBE_BASH, strerror(errno));
		goto out;
	}
	char port[8];
	snprintf(port, sizeof port, "%u", ntohs(sa.sin_port));
	const char *argv[] = { PROBE_BASH, "-c", probe_script, "world-exec-probe", tok, port, w_sib_arg, w_store, w_tmp,
		               d_home, d_store, d_ws, NULL };
	static const char *const no_roots[] = { NULL };
	struct sup_exec_req rq = {
		.argv = argv, .argv0_fd = bfd, .envp = (const char *const *)envp, .worktree = ep, .cwd_rel = ".",
		.protected_names = workspace_protected_names(), .cache_dir = cdir,
		.read_roots = p->read_roots ? (const char *const *)p->read_roots : no_roots,
		.wall_ms = p->timeout_ms < 10000 ? p->timeout_ms : 10000, .memory_max = p->memory_max,
		.pids_max = p->pids_max, .cpu_ms = p->cpu_ms, .output_max = (uint64_t)1 << 20,
	};
	if (run(&rq, &res, &err) < 0) {
		fail(p, "capsule", "the probe capsule did not start: %s", err.msg);
		goto out;
	}
	const char *o = res.out.text ? res.out.text : "";
	char want[80];
	snprintf(want, sizeof want, "PROBE-DONE %s", tok);
	if (!line_has(o, want)) {
		fail(p, "capsule", "the probe program did not run to its end (exit %d%s; stderr %.120s)", res.exit_code,
		     res.timed_out ? ", timed out" : "", res.err.text ? res.err.text : "");
		goto out;
	}
	char inside[PATH_MAX + 64], want_in[64];
	snprintf(inside, sizeof inside, "%s/.world-exec-probe-inside", ep);
	snprintf(want_in, sizeof want_in, "INSIDE-%s", tok);
	if (!line_has(o, "ARM write-inside WROTE") || !read_is(inside, want_in))
		fail(p, "write-inside", "a write inside the worktree did not land on the host (%s)", inside);
	for (int i = 0; i < 3; i++) {
		if (!wt[i][0]) continue;
		char w1[64], w2[64];
		snprintf(w1, sizeof w1, "ARM %s WROTE", wn[i]);
		snprintf(w2, sizeof w2, "ARM %s REFUSED", wn[i]);
		if (!line_has(o, w1) && !line_has(o, w2)) fail(p, wn[i], "no token: the attempt did not run");
		else if (!absent(wt[i])) fail(p, wn[i], "the host file %s was written from inside the capsule", wt[i]);
	}
	for (int i = 0; i < 3; i++) {
		if (!dt[i][0]) continue;
		char u[64];
		snprintf(u, sizeof u, "ARM %s UNREADABLE", dn[i]);
		if (strstr(o, decoy)) fail(p, dn[i], "the decoy %s was read from inside the capsule", dt[i]);
		else if (!line_has(o, u)) fail(p, dn[i], "no UNREADABLE token for %s", dt[i]);
	}
	usleep(10000);
	int after = accepts(lfd);
	if (!line_has(o, "ARM network REFUSED")) fail(p, "network", "no REFUSED token: the connect to 127.0.0.1:%s was not refused", port);
	else if (after != 0) fail(p, "network", "the listener's accept count moved (%d more) during the probe", after);
	if (p->probe_failure[0]) goto out;
	sup_exec_result_free(&res);
	memset(&res, 0, sizeof res);
	/* the toolchain: its probe argv runs and exits 0 */
	if (exec_binary_open(&p->probe_bin, &tfd, &err) < 0) {
		fail(p, "toolchain", "%s", err.msg);
		goto out;
	}
	char **pargv = calloc(p->probe_argc + 1, sizeof *pargv);
	if (!pargv) {
		fail(p, "toolchain", "out of memory");
		goto out;
	}
	pargv[0] = p->probe_bin.path;
	for (size_t i = 1; i < p->probe_argc; i++) pargv[i] = p->probe_argv[i];
	rq.argv = (const char *const *)pargv;
	rq.argv0_fd = tfd;
	int rr = run(&rq, &res, &err);
	free(pargv);
	if (rr < 0) fail(p, "toolchain", "%s", err.msg);
	else if (res.exit_code != 0 || res.timed_out)
		fail(p, "toolchain", "%s %s exited %d%s (stderr %.120s)", p->probe_bin.path, p->probe_argc > 1 ? p->probe_argv[1] : "",
		     res.exit_code, res.timed_out ? ", timed out" : "", res.err.text ? res.err.text : "");
out:
	sup_exec_result_free(&res);
	if (lfd >= 0) close(lfd);
	if (bfd >= 0) close(bfd);
	if (tfd >= 0) close(tfd);
	exec_argv_free(envp);
	for (int i = 0; i < 3; i++) {
		if (d_home[0] && i == 0) unlink(d_home);
		if (d_store[0] && i == 1) unlink(d_store);
		if (d_ws[0] && i == 2) unlink(d_ws);
	}
	if (w_store[0]) unlink(w_store);
	if (w_tmp[0]) unlink(w_tmp);
	exec_rm_tree(scratch);
	if (note)
		snprintf(note, notelen, "%s%s%s", p->probe_failure[0] ? "failed: " : "every arm passed",
		         p->probe_failure[0] ? p->probe_failure : "", skipped[0] ? "; skipped:" : "");
	if (note && skipped[0]) strncat(note, skipped, notelen - strlen(note) - 1);
	return p->probe_failure[0] ? 1 : 0;
}
