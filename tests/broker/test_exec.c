/* tests/broker/test_exec.c: the Workspace.Exec handler (broker/exec.h) and
 * the start-up probe (broker/exec_probe.h) around the capsule.
 *
 * The policy half needs no capsule: a test runner (exec_runner_set_for_test,
 * test builds only) stands in for sup_run_exec, runs exactly the request it
 * is handed UNCONFINED and counts its runs, so every refusal is shown to run
 * nothing (the count does not move) and every run shows the argv, the
 * environment, the cache and the result object the handler built. The same
 * unconfined runner is the probe's control: the probe must refuse to offer
 * exec over it. With the real capsule linked (supervisor/exec.c), the probe
 * runs over it and passes, and a leak forced by the test hook
 * WORLD_TEST_EXEC_PROBE_LEAK fails the arm it names. */
#include "broker/exec.h"
#include "broker/exec_probe.h"
#include "common/pause.h"
#include "common/ref.h"
#include "supervisor/exec.h"
#include "tests/tap.h"
#include "tests/broker/exec_fixture.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char T[1024], WS[2048], STORE[2048], HOMED[2048], BIN[2048], ETC[2048], SEED[2048];

static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return NULL;
	char *b = calloc(1, 1 << 16);
	ssize_t n = b ? read(fd, b, (1 << 16) - 1) : -1;
	close(fd);
	if (n < 0) {
		free(b);
		return NULL;
	}
	return b;
}

/* ---- the unconfined runner ---- */

static int runs;

static void hexsha(const char *b, size_t n, char out[65])
{
	unsigned char d[WORLD_DIGEST_LEN];
	struct world_err e;
	if (world_sha256(b, n, d, &e) < 0) bail("sha256: %s", e.msg);
	for (int i = 0; i < WORLD_DIGEST_LEN; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void drain(int fd, struct sup_exec_stream *s)
{
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap + 1);
	if (!b) bail("oom");
	for (;;) {
		if (n == cap) {
			cap *= 2;
			b = realloc(b, cap + 1);
			if (!b) bail("oom");
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
		n += (size_t)r;
	}
	b[n] = '\0';
	s->text = b;
	s->len = n;
	s->bytes = n;
	s->truncated = false;
	hexsha(b, n, s->sha256);
}

static int unconfined_run(const struct sup_exec_req *rq, struct sup_exec_result *res, struct world_err *err)
{
	runs++;
	struct stat a, b;
	if (fstat(rq->argv0_fd, &a) < 0 || stat(rq->argv[0], &b) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev)
		return werr(err, WX_SETUP, "test runner: argv0_fd is not %s", rq->argv[0]);
	/* as the capsule does: the protected names absent before the run */
	int absent_before[64] = { 0 };
	const char *const *pn = rq->protected_names;
	for (int i = 0; pn && pn[i] && i < 64; i++) {
		struct stat x;
		absent_before[i] = lstat(fmt("%s/%s", rq->worktree, pn[i]), &x) < 0;
	}
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) bail("pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) bail("fork: %s", strerror(errno));
	if (pid == 0) {
		char cwd[PATH_MAX];
		snprintf(cwd, sizeof cwd, "%s/%s", rq->worktree, rq->cwd_rel);
		int nul = open("/dev/null", O_RDONLY);
		if (chdir(cwd) < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0) _exit(126);
		execve(rq->argv[0], (char *const *)rq->argv, (char *const *)rq->envp);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	memset(res, 0, sizeof *res);
	drain(po[0], &res->out);
	drain(pe[0], &res->err);
	close(po[0]);
	close(pe[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) bail("waitpid: %s", strerror(errno));
	res->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	for (int i = 0; pn && pn[i] && i < 64; i++) {
		struct stat x;
		if (absent_before[i] && lstat(fmt("%s/%s", rq->worktree, pn[i]), &x) == 0) {
			size_t o = strlen(res->protected_created);
			snprintf(res->protected_created + o, sizeof res->protected_created - o, "%s%s", o ? "," : "", pn[i]);
		}
	}
	snprintf(res->profile_name, sizeof res->profile_name, "unconfined-test");
	snprintf(res->profile_digest, sizeof res->profile_digest, "sha256:%064d", 0);
	return 0;
}

/* ---- the handler ---- */

static struct exec_profiles set;
static struct broker_handler_ctx ctx;
static struct world_err err;
static json_t *out;

static int call(const char *payload_json)
{
	json_decref(out);
	out = NULL;
	json_error_t je;
	json_t *pl = json_loads(payload_json, 0, &je);
	if (!pl) bail("payload %s: %s", payload_json, je.text);
	err.code = 0;
	err.msg[0] = '\0';
	int rc = workspace_exec(&ctx, pl, &out, &err);
	json_decref(pl);
	return rc;
}

static const char *refusal(void)
{
	const char *r = json_string_value(json_object_get(out, "refused"));
	return r && json_is_false(json_object_get(out, "ok")) ? r : NULL;
}

#define REFUSED(payload, frag, what)                                                                      \
	do {                                                                                              \
		int before_ = runs;                                                                       \
		int rc_ = call(payload);                                                                  \
		ok(rc_ == 0 && refusal() && strstr(refusal(), frag) && runs == before_,                   \
		   "refused, nothing run: %s (%s)", what, rc_ == 0 && refusal() ? refusal() : err.msg);     \
	} while (0)

static const char *sval(const char *k) { return json_string_value(json_object_get(out, k)); }

static void setup(void)
{
	char tmpl[] = "/tmp/test_exec.XXXXXX";
	char rp[PATH_MAX];
	if (!mkdtemp(tmpl) || !realpath(tmpl, rp) || strlen(rp) > 900) bail("mkdtemp: %s", strerror(errno));
	memcpy(T, rp, strlen(rp) + 1); /* checked above: it fits */
	/* a read root must be reachable by the capsule's user (not the owner) */
	if (chmod(T, 0755) < 0) bail("chmod %s: %s", T, strerror(errno));
	snprintf(WS, sizeof WS, "%s/ws", T);
	snprintf(STORE, sizeof STORE, "%s/state", T);
	snprintf(HOMED, sizeof HOMED, "%s/home-op", T);
	snprintf(BIN, sizeof BIN, "%s/opt/bin", T);
	snprintf(ETC, sizeof ETC, "%s/etc", T);
	snprintf(SEED, sizeof SEED, "%s/seeds/gocache", T);
	mk(WS);
	mk(STORE);
	mk(HOMED);
	mk(fmt("%s/opt", T));
	mk(BIN);
	mk(ETC);
	mk(fmt("%s/seeds", T));
	mk(SEED);
	mk(fmt("%s/sub", SEED));
	put(fmt("%s/sub/entry", SEED), "SEEDED\n", 0644);
	put(fmt("%s/tool", BIN), "#!/bin/sh\nprintf '%s|' \"$@\"\n", 0755);
}

static struct exec_profile *load(const char *name, const char *text)
{
	const char *path = fmt("%s/%s", ETC, name);
	put(path, text, 0644);
	struct exec_profile_env pe = { .workspace_root = WS, .store_dir = STORE, .home = HOMED, .homes_dir = NULL };
	struct exec_profile *p = NULL;
	if (exec_profile_load(path, &pe, &p, &err) < 0) bail("load %s: %s", name, err.msg);
	return p;
}

static void test_handler(void)
{
	ctx.workspace_root = WS;
	ctx.episode = "ep1";
	ctx.wall_ms = 10000;
	ctx.output_max = 1 << 20;
	ctx.file_max = 512 << 10;
	/* no profile at all */
	ctx.exec_profiles = NULL;
	REFUSED("{\"command\":\"test\"}", "no exec profile: start worldd serve with --exec-profile FILE", "no profile loaded");
	struct exec_profile *p = load("demo.json", fmt(
		"{\"profile\":\"world/exec-profile/v1\",\"project\":\"demo\",\"path\":[\"%s\",\"/usr/bin\"],"
		"\"env\":{\"FOO\":\"bar baz\"},\"read_roots\":[\"%s\"],\"probe\":[\"env\",\"--version\"],\"caches\":{\"GOCACHE\":{\"seed\":\"%s\"}},\"timeout_ms\":5000,"
		"\"commands\":{\"echo\":{\"argv\":[\"tool\",\"pre\"],\"flags\":{\"-n\":\"int\",\"--mode\":\"enum:[a,b]\",\"-v\":\"bool\"},"
		"\"positional\":\"relpath\",\"max_args\":6},"
		"\"env\":{\"argv\":[\"env\"],\"max_args\":0},"
		"\"pwd\":{\"argv\":[\"pwd\"],\"max_args\":0},"
		"\"fail\":{\"argv\":[\"sh\",\"-c\",\"echo out; echo err >&2; exit 3\"],\"max_args\":0},"
		"\"append\":{\"argv\":[\"sh\",\"-c\",\"echo ran >> ran.log\"],\"max_args\":0},"
		"\"plant\":{\"argv\":[\"sh\",\"-c\",\"mkdir -p .git/hooks sub && echo evil > .git/hooks/pre-commit && "
		"echo x > .envrc && ln -s /etc .github && echo ok > sub/kept && echo planted\"],\"max_args\":0}}}",
		BIN, BIN, SEED));
	if (exec_profiles_add(&set, p, &err) < 0) bail("%s", err.msg);
	ctx.exec_profiles = &set;
	exec_runner_set_for_test(unconfined_run);

	/* the payload: exactly {command, args?} within the tool's bounds */
	REFUSED("{\"command\":\"echo\",\"cwd\":\"/\"}", "unknown key \"cwd\"", "an unknown payload key");
	REFUSED("{\"args\":[]}", "command must be", "no command");
	REFUSED("{\"command\":\"Echo\"}", "command must be", "a command id outside ^[a-z][a-z0-9-]{0,31}$");
	REFUSED("{\"command\":\"echo\",\"args\":\"-v\"}", "args must be an array", "args not an array");
	REFUSED("{\"command\":\"echo\",\"args\":[\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\"]}",
	        "args has 17 items", "17 args");
	REFUSED("{\"command\":\"echo\",\"args\":[\"\"]}", "args[0] is 0 bytes", "an empty arg");
	REFUSED("{\"command\":\"echo\",\"args\":[1]}", "args[0] is not a string", "a number as an arg");
	/* the profile: a command not in it, args outside its grammar */
	REFUSED("{\"command\":\"deploy\"}", "command deploy is not in project demo's profile (append, echo, env, fail, plant, pwd)",
	        "a command id not in the profile");
	REFUSED("{\"command\":\"echo\",\"args\":[\"-v\",\"-x\"]}", "args[1] \"-x\": flag -x is not one of command echo's flags",
	        "an unknown flag, the first bad arg named");
	REFUSED("{\"command\":\"echo\",\"args\":[\"../etc/passwd\"]}", "args[0] \"../etc/passwd\"", "a path climbing out");
	REFUSED("{\"command\":\"echo\",\"args\":[\"--\",\"x\"]}", "'--' is refused", "-- without passthrough");

	/* a run: argv as run, the result object */
	int before = runs;
	int rc = call("{\"command\":\"echo\",\"args\":[\"-n\",\"5\",\"--mode\",\"a\",\"-v\",\"src/x.c\"]}");
	ok(rc == 0 && json_is_true(json_object_get(out, "ok")) && runs == before + 1, "a command in its grammar runs once (%s)",
	   rc == 0 ? (refusal() ? refusal() : "ok") : err.msg);
	is_str(sval("stdout"), "pre|-n|5|--mode=a|-v|src/x.c|", "the program saw the normalised argv");
	json_t *av = json_object_get(out, "argv");
	ok(json_array_size(av) == 7 && strcmp(json_string_value(json_array_get(av, 0)), fmt("%s/tool", BIN)) == 0 &&
	       strcmp(json_string_value(json_array_get(av, 4)), "--mode=a") == 0,
	   "argv as run: the resolved argv[0], the prefix, the normalised args");
	is_int(json_integer_value(json_object_get(out, "exit_code")), 0, "exit_code");
	ok(json_is_false(json_object_get(out, "timed_out")) && json_is_null(json_object_get(out, "limit")), "timed_out false, limit null");
	is_int(json_integer_value(json_object_get(out, "stdout_bytes")), strlen("pre|-n|5|--mode=a|-v|src/x.c|"), "stdout_bytes");
	char sha[65];
	hexsha("pre|-n|5|--mode=a|-v|src/x.c|", strlen("pre|-n|5|--mode=a|-v|src/x.c|"), sha);
	is_str(sval("stdout_sha256"), sha, "stdout_sha256 is the stream's");
	ok(json_is_false(json_object_get(out, "stdout_truncated")) && json_is_string(json_object_get(out, "stderr")) &&
	       json_is_integer(json_object_get(out, "duration_ms")) && json_is_string(json_object_get(out, "stderr_sha256")),
	   "stderr, duration_ms, the truncation flags present");
	json_t *pr = json_object_get(out, "profile");
	ok(pr && strcmp(json_string_value(json_object_get(pr, "project")), "demo") == 0 &&
	       strcmp(json_string_value(json_object_get(pr, "digest")), p->digest) == 0 &&
	       strcmp(json_string_value(json_object_get(pr, "command")), "echo") == 0 &&
	       strcmp(json_string_value(json_object_get(pr, "argv0_sha256")), exec_profile_command(p, "echo")->bin.sha256) == 0,
	   "profile {project, digest, command, argv0_sha256}");
	json_t *sb = json_object_get(out, "sandbox");
	ok(sb && strcmp(json_string_value(json_object_get(sb, "network")), "none") == 0 &&
	       strcmp(json_string_value(json_object_get(sb, "profile")), "unconfined-test") == 0 && json_object_get(sb, "digest"),
	   "sandbox {profile, digest, network: none} from the capsule's answer");
	size_t nk = json_object_size(out);
	is_int(nk, 18, "exactly the result's 18 keys (the reference's 16, denied, protected_removed)");
	ok(json_is_null(json_object_get(out, "denied")) && json_array_size(json_object_get(out, "protected_removed")) == 0,
	   "denied null, protected_removed []");

	/* protected names the command created are removed, the rest kept */
	rc = call("{\"command\":\"plant\"}");
	json_t *rm = json_object_get(out, "protected_removed");
	struct stat pst;
	ok(rc == 0 && json_is_true(json_object_get(out, "ok")) && strcmp(sval("stdout"), "planted\n") == 0,
	   "a command planting .git, .envrc and a .github symlink runs (%s)", rc == 0 ? "ok" : err.msg);
	is_int(json_array_size(rm), 3, "protected_removed names the three");
	ok(lstat(fmt("%s/ep1/.git", WS), &pst) < 0 && lstat(fmt("%s/ep1/.envrc", WS), &pst) < 0 &&
	       lstat(fmt("%s/ep1/.github", WS), &pst) < 0,
	   "... and none is left in the worktree");
	ok(stat("/etc/passwd", &pst) == 0, "... the .github symlink was removed, not what it pointed at");
	char *kept = slurp(fmt("%s/ep1/sub/kept", WS));
	is_str(kept, "ok\n", "control: what else the command wrote is kept");
	free(kept);

	/* the exit code is reported, never judged */
	rc = call("{\"command\":\"fail\"}");
	ok(rc == 0 && json_is_true(json_object_get(out, "ok")) && json_integer_value(json_object_get(out, "exit_code")) == 3 &&
	       strcmp(sval("stdout"), "out\n") == 0 && strcmp(sval("stderr"), "err\n") == 0,
	   "a command exiting 3: ok true, exit_code 3, both streams");

	/* the environment: built, nothing inherited */
	setenv("WORLD_TEST_EXEC_SECRET", "hunter2", 1);
	ok(getenv("WORLD_TEST_EXEC_SECRET") != NULL, "control: the test process holds a secret variable");
	rc = call("{\"command\":\"env\"}");
	const char *env = rc == 0 ? sval("stdout") : NULL;
	const char *want = fmt("PATH=%s:/usr/bin\nHOME=/cache/home\nTMPDIR=/cache/tmp\nLANG=C.UTF-8\nLC_ALL=C.UTF-8\nCI=1\n"
	                       "PYTHONPYCACHEPREFIX=/cache/pycache\nnpm_config_cache=/cache/npm\nGOCACHE=/cache/var-GOCACHE\n"
	                       "FOO=bar baz\n", BIN);
	is_str(env, want, "the child's environment is exactly World's and the profile's");
	ok(env && !strstr(env, "hunter2"), "the daemon's own variables are not inherited");

	/* the exec cache: outside the worktree, 0700, seeded once */
	char cache[2200];
	snprintf(cache, sizeof cache, "%s/.world-exec/ep1/demo", WS);
	struct stat st;
	ok(stat(cache, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700, "the cache %s exists, 0700", cache);
	ok(stat(fmt("%s/.world-exec", WS), &st) == 0 && (st.st_mode & 0777) == 0700, "the caches' root is 0700");
	static const char *const sub[] = { "home", "tmp", "pycache", "npm", "var-GOCACHE", NULL };
	int all = 1;
	for (const char *const *s = sub; *s; s++) all &= stat(fmt("%s/%s", cache, *s), &st) == 0 && S_ISDIR(st.st_mode);
	ok(all, "home, tmp, pycache, npm and var-GOCACHE made");
	char *seeded = slurp(fmt("%s/var-GOCACHE/sub/entry", cache));
	is_str(seeded, "SEEDED\n", "the seed was copied on first use");
	free(seeded);
	put(fmt("%s/var-GOCACHE/sub/entry", cache), "EPISODE-WROTE\n", 0644);
	rc = call("{\"command\":\"pwd\"}");
	seeded = slurp(fmt("%s/var-GOCACHE/sub/entry", cache));
	is_str(seeded, "EPISODE-WROTE\n", "a later call does not copy the seed again");
	free(seeded);
	seeded = slurp(fmt("%s/sub/entry", SEED));
	is_str(seeded, "SEEDED\n", "the seed itself is unchanged");
	free(seeded);
	is_str(rc == 0 ? sval("stdout") : err.msg, fmt("%s/ep1\n", WS), "the command starts in the episode's worktree");
	ok(stat(fmt("%s/ep2", WS), &st) < 0, "control: no other episode's directory was made");

	/* the profile's root */
	struct exec_profile *q = load("rooted.json", fmt(
		"{\"profile\":\"world/exec-profile/v1\",\"project\":\"rooted\",\"root\":\"proj/sub\",\"path\":[\"/usr/bin\"],"
		"\"commands\":{\"pwd\":{\"argv\":[\"pwd\"]}}}"));
	struct exec_profiles one = { 0 };
	if (exec_profiles_add(&one, q, &err) < 0) bail("%s", err.msg);
	ctx.exec_profiles = &one;
	REFUSED("{\"command\":\"pwd\"}", "the profile's root \"proj/sub\" is not a directory in the worktree", "a root missing");
	mk(fmt("%s/ep1/proj", WS));
	if (symlink("/tmp", fmt("%s/ep1/proj/sub", WS)) < 0) bail("symlink");
	REFUSED("{\"command\":\"pwd\"}", "is not a directory in the worktree", "a root that is a symlink out");
	if (unlink(fmt("%s/ep1/proj/sub", WS)) < 0) bail("unlink");
	mk(fmt("%s/ep1/proj/sub", WS));
	rc = call("{\"command\":\"pwd\"}");
	is_str(rc == 0 ? sval("stdout") : err.msg, fmt("%s/ep1/proj/sub\n", WS), "control: the root made, the command starts there");
	/* several profiles: an episode without a mapping is refused naming the flag */
	struct exec_profile *p2 = load("demo2.json", fmt(
		"{\"profile\":\"world/exec-profile/v1\",\"project\":\"other\",\"path\":[\"/usr/bin\"],"
		"\"commands\":{\"pwd\":{\"argv\":[\"pwd\"]}}}"));
	if (exec_profiles_add(&one, p2, &err) < 0) bail("%s", err.msg);
	REFUSED("{\"command\":\"pwd\"}", "--exec-episode-project ep1=PROJECT", "two profiles, no mapping");
	if (exec_profiles_map(&one, "ep1=other", &err) < 0) bail("%s", err.msg);
	rc = call("{\"command\":\"pwd\"}");
	ok(rc == 0 && json_is_true(json_object_get(out, "ok")) &&
	       strcmp(json_string_value(json_object_get(json_object_get(out, "profile"), "project")), "other") == 0,
	   "control: mapped, the episode's project runs");
	exec_profiles_free(&one);
	ctx.exec_profiles = &set;

	/* a failed probe: every call refused naming the arm */
	snprintf(p->probe_failure, sizeof p->probe_failure, "arm network: the listener's accept count moved (1 more)");
	REFUSED("{\"command\":\"pwd\"}", "the start-up probe failed: arm network", "a profile whose probe failed");
	p->probe_failure[0] = '\0';

	/* a swapped binary: a failed effect, nothing run */
	put(fmt("%s/tool", BIN), "#!/bin/sh\necho swapped\n", 0755);
	before = runs;
	rc = call("{\"command\":\"echo\"}");
	ok(rc < 0 && !out && err.code == WX_HASH_MISMATCH && strstr(err.msg, fmt("%s/tool", BIN)) && runs == before,
	   "a swapped argv[0] is a failed effect naming it, nothing run (%s)", err.msg);
	put(fmt("%s/tool", BIN), "#!/bin/sh\nprintf '%s|' \"$@\"\n", 0755);
	rc = call("{\"command\":\"echo\"}");
	ok(rc == 0 && runs == before + 1, "control: the recorded bytes back, it runs");

	exec_runner_set_for_test(unconfined_run);
}

static void test_probe(void)
{
	const struct exec_probe_env pe = { .workspace_root = WS, .store_dir = STORE, .home = HOMED };
	struct exec_profile *p = set.p[0];
	char note[1024];
	/* over the unconfined runner: never offered */
	int before = runs;
	int r = exec_probe_run(p, &pe, note, sizeof note);
	ok(r == 1 && strncmp(p->probe_failure, "arm ", 4) == 0 && runs > before,
	   "an unconfined runner fails the probe (%s)", p->probe_failure);
	ok(strstr(p->probe_failure, "write-inside") != NULL, "  the first arm it fails is named (write-inside: no /work outside a capsule)");
	int left = 0;
	const char *const dirs[] = { WS, STORE, HOMED, "/tmp" };
	for (int i = 0; i < 4; i++) {
		DIR *d = opendir(dirs[i]);
		for (struct dirent *de; d && (de = readdir(d));) left += strncmp(de->d_name, ".world-exec-probe", 17) == 0;
		if (d) closedir(d);
	}
	is_int(left, 0, "nothing of the probe (scratch, decoys, write targets) is left in the workspace root, the store folder, $HOME, /tmp");
	/* the real capsule */
	exec_runner_set_for_test(NULL);
	{
		r = exec_probe_run(p, &pe, note, sizeof note);
		ok(r == 0 && !p->probe_failure[0], "the real capsule passes every arm (%s)", r ? p->probe_failure : note);
		if (WORLD_PAUSE_COMPILED) {
			setenv("WORLD_TEST_EXEC_PROBE_LEAK", "write-sibling", 1);
			r = exec_probe_run(p, &pe, note, sizeof note);
			unsetenv("WORLD_TEST_EXEC_PROBE_LEAK");
			ok(r == 1 && strstr(p->probe_failure, "arm write-sibling: the host file"),
			   "a forced leak fails the arm it names (%s)", p->probe_failure);
			int rc = call("{\"command\":\"pwd\"}");
			ok(rc == 0 && refusal() && strstr(refusal(), "arm write-sibling"), "and an exec call is refused naming it (%s)",
			   refusal() ? refusal() : err.msg);
			p->probe_failure[0] = '\0';
		} else
			skip("needs --enable-test-hooks", "a forced leak fails the arm it names");
	}
	exec_runner_set_for_test(unconfined_run);
}

/* The policy arm "secrets": the daemon's own secret files, by literal path
 * and realpath, under no tree the capsule shows (system dirs, /etc less
 * its masks, read roots, the workspace root, the exec cache root). */
static void test_secrets(void)
{
	struct exec_profile *p = set.p[0];
	char keys[1100];
	snprintf(keys, sizeof keys, "%s/keys", T);
	mkdir(keys, 0700);
	put(fmt("%s/db.pw", keys), "pw\n", 0600);
	put(fmt("%s/db.pw", BIN), "pw\n", 0600);
	put(fmt("%s/db.pw", WS), "pw\n", 0600);
	struct exec_secret sec[1] = { { "store password file (--store-password-file)", NULL } };
	struct exec_probe_env pe = { .workspace_root = WS, .store_dir = STORE, .home = HOMED, .secrets = sec, .nsecrets = 1 };
	char got[8192];
	const struct { const char *path, *want, *what; } cases[] = {
		{ fmt("%s/db.pw", keys), NULL, "outside every shown tree: offered (the control)" },
		{ fmt("%s/db.pw", BIN), "under the read root", "under a read root: refused" },
		{ fmt("%s/db.pw", WS), "under the workspace root", "in the workspace root: refused" },
		{ fmt("%s/not-yet", WS), "under the workspace root", "a file not there yet, in the workspace root: refused" },
		{ fmt("%s/.world-exec/k", WS), "under the workspace root", "in the exec cache root: refused" },
		{ "/usr/share/world-db.pw", "under the system directory /usr", "under /usr: refused" },
		{ "/etc/world-db.pw", "under the system directory /etc", "under /etc, not masked: refused" },
		{ "/etc/shadow", NULL, "under a mask of /etc (shadow): not visible, offered" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (strcmp(cases[i].path, "/etc/shadow") == 0 && access("/etc/shadow", F_OK) != 0) {
			skip("no /etc/shadow on this host", "%s", cases[i].what);
			continue;
		}
		snprintf(got, sizeof got, "%s", cases[i].path);
		sec[0].path = got;
		p->probe_failure[0] = '\0';
		int r = exec_secrets_check(p, &pe);
		if (!cases[i].want)
			ok(r == 0 && !p->probe_failure[0], "secrets: %s (%s)", cases[i].what, p->probe_failure);
		else
			ok(r == 1 && strstr(p->probe_failure, "arm secrets: the store password file (--store-password-file) ") == p->probe_failure &&
			   strstr(p->probe_failure, got) && strstr(p->probe_failure, cases[i].want),
			   "secrets: %s, naming the file and the tree (%s)", cases[i].what, p->probe_failure);
	}
	/* by realpath: a symlink outside every shown tree to a file inside one */
	char link[2100];
	snprintf(link, sizeof link, "%s/link.pw", keys);
	if (symlink(fmt("%s/db.pw", BIN), link) < 0) bail("symlink: %s", strerror(errno));
	sec[0].path = link;
	p->probe_failure[0] = '\0';
	ok(exec_secrets_check(p, &pe) == 1 && strstr(p->probe_failure, link) && strstr(p->probe_failure, "under the read root"),
	   "secrets: a symlink outside to a file under a read root is refused by its realpath (%s)", p->probe_failure);
	/* exec_probe_run runs the arm first: the profile is not offered, and a call is refused naming the file */
	char note[1024];
	int before = runs;
	ok(exec_probe_run(p, &pe, note, sizeof note) == 1 && runs == before && strstr(note, "arm secrets: "),
	   "the probe fails on the secrets arm before any capsule runs (%s)", note);
	int rc = call("{\"command\":\"pwd\"}");
	ok(rc == 0 && refusal() && strstr(refusal(), "the start-up probe failed: arm secrets: ") && strstr(refusal(), link),
	   "and an exec call is refused naming the file (%s)", refusal() ? refusal() : err.msg);
	p->probe_failure[0] = '\0';
	unlink(link);
	unlink(fmt("%s/db.pw", BIN));
	unlink(fmt("%s/db.pw", WS));
}

int main(void)
{
	setup();
	test_handler();
	test_secrets();
	test_probe();
	json_decref(out);
	exec_profiles_free(&set);
	if (system(fmt("rm -rf '%s'", T)) != 0) diag("could not remove %s", T);
	return done_testing();
}
