/* tests/broker/test_exec_profile.c: world/exec-profile/v1 loading and the
 * args grammar (broker/exec_profile.h, docs/exec.md). No capsule runs here.
 *
 * Every load refusal is asserted with its code, the file and the field's
 * JSON pointer in its one line, and carries a control: the same profile
 * with the one field made valid loads. Every grammar refusal names the
 * first bad arg, and its control (the nearest valid args) matches. */
#include "broker/exec_profile.h"
#include "tests/tap.h"
#include "tests/broker/exec_fixture.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char T[1024], WS[2048], STORE[2048], HOMED[2048], HOMES[2048], BIN[2048],
	PFILE[2048], SEED[2048], MOD[2048];
static struct exec_profile_env penv;

/* A profile: the valid base with extra top-level members and a commands object. */
static const char *profile(const char *extra, const char *commands)
{
	/* BIN is a read root (a binary must be where the capsule shows it) unless
	 * the test names its own read roots */
	int own = extra && strstr(extra, "\"read_roots\"");
	return fmt("{\"profile\":\"world/exec-profile/v1\",\"project\":\"demo\","
	           "\"path\":[\"%s\",\"/usr/bin\"]%s%s%s%s%s,\"commands\":%s}",
	           BIN, own ? "" : ",\"read_roots\":[\"", own ? "" : BIN, own ? "" : "\"]",
	           extra && *extra ? "," : "", extra ? extra : "",
	           commands ? commands : "{\"test\":{\"argv\":[\"tool\",\"test\"]}}");
}

static struct world_err err;

static struct exec_profile *load_text(const char *path, const char *text)
{
	put(path, text, 0644);
	struct exec_profile *p = NULL;
	err.code = 0;
	err.msg[0] = '\0';
	if (exec_profile_load(path, &penv, &p, &err) < 0) return NULL;
	return p;
}

/* The refusal: code, the file, the pointer and a phrase in one line. */
static void refused(const char *text, int code, const char *ptr, const char *phrase, const char *what)
{
	struct exec_profile *p = load_text(PFILE, text);
	ok(!p && err.code == code && strstr(err.msg, PFILE) && strstr(err.msg, ptr) && strstr(err.msg, phrase) &&
	       !strchr(err.msg, '\n'),
	   "refused: %s (code %d: %s)", what, err.code, err.msg);
	exec_profile_free(p);
}

static void loads(const char *text, const char *what)
{
	struct exec_profile *p = load_text(PFILE, text);
	ok(p != NULL, "control loads: %s%s%s", what, p ? "" : ": ", p ? "" : err.msg);
	exec_profile_free(p);
}

static void setup(void)
{
	char tmpl[] = "/tmp/test_exec_profile.XXXXXX";
	if (!mkdtemp(tmpl)) bail("mkdtemp: %s", strerror(errno));
	char rp[PATH_MAX];
	if (!realpath(tmpl, rp) || strlen(rp) > 900) bail("realpath %s", tmpl);
	memcpy(T, rp, strlen(rp) + 1); /* checked above: it fits */
	snprintf(WS, sizeof WS, "%s/ws", T);
	snprintf(STORE, sizeof STORE, "%s/state", T);
	snprintf(HOMED, sizeof HOMED, "%s/home-op", T);
	snprintf(HOMES, sizeof HOMES, "%s/homes", T);
	snprintf(BIN, sizeof BIN, "%s/opt/bin", T);
	snprintf(PFILE, sizeof PFILE, "%s/etc/p.json", T);
	snprintf(SEED, sizeof SEED, "%s/seeds/gocache", T);
	snprintf(MOD, sizeof MOD, "%s/opt/mod", T);
	mk(WS);
	mk(fmt("%s/ep1", WS));
	mk(STORE);
	mk(HOMED);
	mk(HOMES);
	mk(fmt("%s/alice", HOMES));
	mk(fmt("%s/opt", T));
	mk(BIN);
	mk(MOD);
	mk(fmt("%s/etc", T));
	mk(fmt("%s/seeds", T));
	mk(SEED);
	put(fmt("%s/tool", BIN), "#!/bin/sh\necho tool\n", 0755);
	put(fmt("%s/notexec", BIN), "#!/bin/sh\n", 0644);
	penv.workspace_root = WS;
	penv.store_dir = STORE;
	penv.home = HOMED;
	penv.homes_dir = HOMES;
}

static void test_load(void)
{
	/* the control of every refusal below */
	struct exec_profile *p = load_text(PFILE, profile("\"env\":{\"GOFLAGS\":\"-mod=readonly\"}", NULL));
	ok(p != NULL, "a valid profile loads (%s)", p ? "" : err.msg);
	if (p) {
		is_str(p->project, "demo", "project");
		is_str(p->commands[0].bin.path, fmt("%s/tool", BIN), "argv[0] resolved on path to an absolute file");
		ok(strlen(p->commands[0].bin.sha256) == 64, "its sha256 recorded (%s)", p->commands[0].bin.sha256);
		ok(world_ref_valid(p->digest), "the profile's digest is a ref (%s)", p->digest);
		is_int(p->timeout_ms, 120000, "timeout_ms defaults to SUP_EXEC_WALL_MS");
		is_str(p->env[0], "GOFLAGS=-mod=readonly", "env kept as K=V");
		is_int(p->probe_argc, 2, "the default probe: argv0 --version");
	}
	/* the digest is of the canonical JSON: reordering keys and whitespace does not change it */
	struct exec_profile *q = load_text(PFILE, fmt("{ \"commands\":{\"test\":{\"argv\":[\"tool\",\"test\"]}},"
	                                              "\"env\":{\"GOFLAGS\":\"-mod=readonly\"},\"path\":[\"%s\",\"/usr/bin\"],"
	                                              " \"project\":\"demo\",\"read_roots\":[\"%s\"],\"profile\":\"world/exec-profile/v1\"}", BIN, BIN));
	ok(p && q && strcmp(p->digest, q->digest) == 0, "the digest is of the canonical JSON (same for reordered keys)");
	exec_profile_free(q);
	q = load_text(PFILE, profile("\"env\":{\"GOFLAGS\":\"-mod=mod\"}", NULL));
	ok(p && q && strcmp(p->digest, q->digest) != 0, "control: another value, another digest");
	exec_profile_free(q);
	exec_profile_free(p);

	/* unknown keys at every level */
	refused(profile("\"shell\":true", NULL), WX_BAD_INPUT, "/shell", "unknown key", "an unknown top-level key");
	refused(profile(NULL, "{\"test\":{\"argv\":[\"tool\"],\"cwd\":\"x\"}}"), WX_BAD_INPUT, "/commands/test/cwd",
	        "unknown key", "an unknown command key");
	loads(profile(NULL, "{\"test\":{\"argv\":[\"tool\"],\"max_args\":2}}"), "a known command key");
	refused(profile(fmt("\"caches\":{\"GOCACHE\":{\"seed\":\"%s\",\"mode\":\"rw\"}}", SEED), NULL), WX_BAD_INPUT,
	        "/caches/GOCACHE/mode", "unknown key", "an unknown cache key");
	loads(profile(fmt("\"caches\":{\"GOCACHE\":{\"seed\":\"%s\"}}", SEED), NULL), "a cache with a seed");
	refused(profile("\"limits\":{\"swap\":1}", NULL), WX_BAD_INPUT, "/limits/swap", "unknown key", "an unknown limits key");
	loads(profile("\"limits\":{\"memory_bytes\":536870912,\"pids\":64,\"cpu_ms\":5000}", NULL), "limits");
	refused("{\"profile\":\"world/exec-profile/v2\"}", WX_BAD_INPUT, "/profile", "world/exec-profile/v1", "another format");
	refused(profile(NULL, "{\"Test\":{\"argv\":[\"tool\"]}}"), WX_BAD_INPUT, "/commands/Test", "^[a-z]", "a bad command id");
	refused(profile("\"root\":\"../up\"", NULL), WX_BAD_INPUT, "/root", "'..'", "a root climbing out");
	refused(profile("\"root\":\"/abs\"", NULL), WX_BAD_INPUT, "/root", "absolute", "an absolute root");
	refused(profile("\"root\":\"sub/.git\"", NULL), WX_BAD_INPUT, "/root", ".git", "a root under .git");
	loads(profile("\"root\":\"sub/dir\"", NULL), "a relative root");
	refused(profile(NULL, "{\"test\":{\"argv\":[\"tool\"],\"flags\":{\"-x\":\"string\"}}}"), WX_BAD_INPUT,
	        "/commands/test/flags/-x", "must be", "an unknown flag class");
	refused(profile(NULL, "{\"test\":{\"argv\":[\"tool\"],\"flags\":{\"-x\":\"regex:(\"}}}"), WX_BAD_INPUT,
	        "/commands/test/flags/-x", "POSIX", "a regex: that does not compile");
	refused(profile(NULL, "{\"test\":{\"argv\":[\"tool\"],\"flags\":{\"-m\":\"enum:[a,b c]\"}}}"), WX_BAD_INPUT,
	        "/commands/test/flags/-m", "holds a space", "an enum value with a space");
	refused(profile(NULL, "{\"test\":{\"argv\":[\"tool\"],\"flags\":{\"-m\":\"enum:[a,,b]\"}}}"), WX_BAD_INPUT,
	        "/commands/test/flags/-m", "empty value", "an enum with an empty value");
	refused(profile(NULL, "{\"test\":{\"argv\":[\"tool\"],\"positional\":\"anything\"}}"), WX_BAD_INPUT,
	        "/commands/test/positional", "relpath", "an unknown positional class");
	refused(profile(NULL, "{\"test\":{\"argv\":[\"tool\"],\"passthrough\":\"-\"}}"), WX_BAD_INPUT,
	        "/commands/test/passthrough", "--", "a passthrough other than --");
	refused(profile(NULL, "{\"test\":{\"argv\":[\"tool\"],\"max_args\":17}}"), WX_BAD_INPUT,
	        "/commands/test/max_args", "0..16", "max_args over 16");
	refused(profile("\"timeout_ms\":0", NULL), WX_BAD_INPUT, "/timeout_ms", "integer", "timeout_ms 0");
	/* the daemon's cap (serve --exec-max-ms, default 600000): above it refused, never clamped */
	refused(profile("\"timeout_ms\":600001", NULL), WX_BAD_INPUT, "/timeout_ms",
	        "600001 ms is above this daemon's cap on one exec run, 600000 ms (serve --exec-max-ms)",
	        "timeout_ms above the default cap");
	loads(profile("\"timeout_ms\":600000", NULL), "timeout_ms at the default cap");
	penv.max_ms = 5000;
	refused(profile("\"timeout_ms\":5001", NULL), WX_BAD_INPUT, "/timeout_ms", "5000 ms (serve --exec-max-ms)",
	        "timeout_ms above --exec-max-ms 5000");
	{
		struct exec_profile *c = load_text(PFILE, profile(NULL, NULL));
		ok(c && c->timeout_ms == 5000, "an absent timeout_ms under --exec-max-ms 5000 is the cap (%u)", c ? c->timeout_ms : 0);
		exec_profile_free(c);
	}
	penv.max_ms = 0;
	refused(profile(NULL, "{}"), WX_BAD_INPUT, "/commands", "at least one", "no command");

	/* argv[0] */
	refused(profile(NULL, "{\"test\":{\"argv\":[\"nosuchtool-xyz\"]}}"), WX_BAD_INPUT, "/commands/test/argv/0",
	        "does not resolve on /path", "an argv[0] not on path");
	refused(profile(NULL, "{\"test\":{\"argv\":[\"notexec\"]}}"), WX_BAD_INPUT, "/commands/test/argv/0",
	        "does not resolve", "an argv[0] that is not executable");
	refused(profile(NULL, "{\"test\":{\"argv\":[\"bin/tool\"]}}"), WX_BAD_INPUT, "/commands/test/argv/0",
	        "not an absolute path", "a relative argv[0] with a slash");
	loads(profile(NULL, fmt("{\"test\":{\"argv\":[\"%s/tool\"]}}", BIN)), "an absolute argv[0]");
	loads(profile(NULL, "{\"test\":{\"argv\":[\"sh\",\"-c\",\"true\"]}}"), "an argv[0] found later on path (/usr/bin)");
	/* a binary inside the workspace root, by its literal path and through a symlink */
	mk(fmt("%s/tools", WS));
	put(fmt("%s/tools/evil", WS), "#!/bin/sh\n", 0755);
	refused(fmt("{\"profile\":\"world/exec-profile/v1\",\"project\":\"demo\",\"path\":[\"%s/tools\"],"
	            "\"commands\":{\"test\":{\"argv\":[\"evil\"]}}}", WS),
	        WX_BAD_INPUT, "/commands/test/argv/0", "inside the workspace root", "a binary inside the workspace root");
	if (symlink(fmt("%s/tools/evil", WS), fmt("%s/evil-link", BIN)) < 0) bail("symlink: %s", strerror(errno));
	refused(profile(NULL, "{\"test\":{\"argv\":[\"evil-link\"]}}"), WX_BAD_INPUT, "/commands/test/argv/0",
	        "inside the workspace root", "a binary that is a symlink into the workspace root");
	put(fmt("%s/evil2", STORE), "#!/bin/sh\n", 0755);
	refused(profile(NULL, fmt("{\"test\":{\"argv\":[\"%s/evil2\"]}}", STORE)), WX_BAD_INPUT, "/commands/test/argv/0",
	        "inside the store's folder", "a binary inside the store's folder");
	refused(profile("\"probe\":[\"nosuchtool-xyz\",\"--version\"]", NULL), WX_BAD_INPUT, "/probe/0", "does not resolve",
	        "a probe argv[0] not on path");
	loads(profile("\"probe\":[\"tool\",\"version\"]", NULL), "a probe argv");
}

static void test_env(void)
{
	static const char *const owned[] = { "HOME", "TMPDIR", "PATH", "LANG", "LC_ALL", "CI", "PYTHONPYCACHEPREFIX",
		                             "npm_config_cache", "NPM_CONFIG_CACHE", "http_proxy", "HTTPS_PROXY",
		                             "No_Proxy", "ALL_PROXY", "GIT_DIR", "GIT_CONFIG_PARAMETERS", NULL };
	for (const char *const *n = owned; *n; n++)
		refused(profile(fmt("\"env\":{\"%s\":\"x\"}", *n), NULL), WX_BAD_INPUT, fmt("/env/%s", *n), "World's to set",
		        fmt("env naming %s", *n));
	loads(profile("\"env\":{\"GOPROXY\":\"off\",\"git_lowercase_is_not_git\":\"1\"}", NULL), "env naming the profile's own variables");
	refused(profile("\"env\":{\"A-B\":\"x\"}", NULL), WX_BAD_INPUT, "/env/A-B", "^[A-Za-z_]", "a malformed env name");
	refused(profile(fmt("\"env\":{\"GOCACHE\":\"/x\"},\"caches\":{\"GOCACHE\":{\"seed\":\"%s\"}}", SEED), NULL),
	        WX_BAD_INPUT, "/caches/GOCACHE", "also set in /env", "env naming a cache's variable");
	refused(profile("\"caches\":{\"HOME\":{}}", NULL), WX_BAD_INPUT, "/caches/HOME", "World's to set", "a cache named HOME");
	loads(profile("\"caches\":{\"GOCACHE\":{}}", NULL), "a cache without a seed");
	ok(exec_env_owned("HOME") && exec_env_owned("Https_Proxy") && exec_env_owned("GIT_SSH") && !exec_env_owned("GOCACHE") &&
	       !exec_env_owned("HOMEBREW"),
	   "exec_env_owned: exact names, proxies in any case, the GIT_ prefix; not a longer name");
}

static void test_read_roots(void)
{
	char lnk[PATH_MAX + 64];
	snprintf(lnk, sizeof lnk, "%s/opt/home-link", T);
	if (symlink(HOMED, lnk) < 0) bail("symlink: %s", strerror(errno));
	char lnkws[PATH_MAX + 64];
	snprintf(lnkws, sizeof lnkws, "%s/opt/ws-link", T);
	if (symlink(WS, lnkws) < 0) bail("symlink: %s", strerror(errno));
	struct {
		const char *root, *phrase, *what;
	} bad[] = {
		{ "/", "the whole host", "/" },
		{ WS, "is or contains", "the workspace root" },
		{ fmt("%s/ep1", WS), "inside the workspace root", "an episode's worktree" },
		{ STORE, "is or contains", "the store's folder" },
		{ HOMED, "is or contains", "the daemon's $HOME" },
		{ fmt("%s/alice", HOMES), "is or contains", "an operator home under /home" },
		{ "/root", "is or contains", "/root" },
		{ T, "is or contains", "an ancestor of the workspace root" },
		{ fmt("%s/opt/../home-op", T), "'..'", "a literal path with .." },
		{ lnk, "is or contains", "a symlink to $HOME (by realpath)" },
		{ lnkws, "is or contains", "a symlink to the workspace root (by realpath)" },
		{ "relative/dir", "not an absolute path", "a relative root" },
		{ fmt("%s/nonexistent", T), "No such file", "a root that does not exist" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		refused(profile(fmt("\"read_roots\":[\"%s\",\"%s\"]", MOD, bad[i].root), NULL), WX_BAD_INPUT, "/read_roots/1",
		        bad[i].phrase, fmt("read root %s", bad[i].what));
	/* however many operator homes there are, each one counts */
	for (int i = 0; i < 100; i++) mk(fmt("%s/user%03d", HOMES, i));
	refused(profile(fmt("\"read_roots\":[\"%s\",\"%s/user099\"]", MOD, HOMES), NULL), WX_BAD_INPUT, "/read_roots/1",
	        "is or contains", "the 101st operator home under /home");
	loads(profile(fmt("\"read_roots\":[\"%s\",\"%s/\",\"%s\"]", MOD, MOD, BIN), NULL), "read roots outside every denied place");
	refused(profile(fmt("\"read_roots\":[\"%s\"]", MOD), NULL), WX_BAD_INPUT, "/commands/test/argv/0",
	        "neither under /usr, /bin, /sbin, /lib* nor under a read root", "a binary the capsule would not show");
	struct exec_profile *p = load_text(PFILE, profile(fmt("\"read_roots\":[\"%s/opt/../opt/mod\"]", T), NULL));
	ok(!p, "a read root spelled with .. is refused, even when it lands outside (%s)", err.msg);
	exec_profile_free(p);
}

static void test_placement(void)
{
	/* the profile file inside the workspace root, and inside the store's folder */
	char inws[4096];
	snprintf(inws, sizeof inws, "%s/ep1/p.json", WS);
	struct exec_profile *p = load_text(inws, profile(NULL, NULL));
	ok(!p && err.code == WX_BAD_INPUT && strstr(err.msg, inws) && strstr(err.msg, "inside the workspace root"),
	   "a profile file inside the workspace root is refused (%s)", err.msg);
	exec_profile_free(p);
	p = load_text(fmt("%s/p.json", STORE), profile(NULL, NULL));
	ok(!p && strstr(err.msg, "inside the store's folder"), "a profile file inside the store's folder is refused (%s)", err.msg);
	exec_profile_free(p);
	p = load_text(PFILE, profile(NULL, NULL));
	ok(p != NULL, "control: the same profile outside loads");
	exec_profile_free(p);
	/* a seed inside the workspace root */
	mk(fmt("%s/ep1/seed", WS));
	refused(profile(fmt("\"caches\":{\"GOCACHE\":{\"seed\":\"%s/ep1/seed\"}}", WS), NULL), WX_BAD_INPUT,
	        "/caches/GOCACHE/seed", "inside the workspace root", "a seed inside the workspace root");
	refused(profile(fmt("\"caches\":{\"GOCACHE\":{\"seed\":\"%s\"}}", STORE), NULL), WX_BAD_INPUT,
	        "/caches/GOCACHE/seed", "inside the store's folder", "a seed that is the store's folder");
	/* a missing file, and one that is not JSON */
	p = NULL;
	ok(exec_profile_load(fmt("%s/absent.json", T), &penv, &p, &err) < 0 && err.code == WX_NOT_FOUND &&
	       strstr(err.msg, "absent.json"),
	   "a missing profile file is WX_NOT_FOUND naming it (%s)", err.msg);
	p = load_text(PFILE, "{\"profile\":");
	ok(!p && err.code == WX_BAD_INPUT && strstr(err.msg, "line 1"), "a file that is not JSON names the line (%s)", err.msg);
	p = load_text(PFILE, fmt("{\"profile\":\"world/exec-profile/v1\",\"profile\":\"x\"}"));
	ok(!p && err.code == WX_BAD_INPUT, "duplicate keys are refused (%s)", err.msg);
}

/* ---- the grammar ---- */

static struct exec_profile *G;

static char last_why[1024];
static char **last_argv;
static size_t last_argc;

static int match(const char *cmd, ...)
{
	const char *args[32];
	size_t n = 0;
	va_list ap;
	va_start(ap, cmd);
	const char *a;
	while ((a = va_arg(ap, const char *))) args[n++] = a;
	va_end(ap);
	exec_argv_free(last_argv);
	last_argv = NULL;
	last_why[0] = '\0';
	const struct exec_command *c = exec_profile_command(G, cmd);
	if (!c) bail("no command %s", cmd);
	return exec_args_match(c, args, n, &last_argv, &last_argc, last_why, sizeof last_why, &err);
}

/* the agent's part of the argv as run, joined by '|' */
static const char *tail(size_t prefix)
{
	static char b[2048];
	size_t o = 0;
	b[0] = '\0';
	for (size_t i = prefix; last_argv && i < last_argc && o < sizeof b; i++)
		o += (size_t)snprintf(b + o, sizeof b - o, "%s%s", i > prefix ? "|" : "", last_argv[i]);
	return b;
}

#define RUNS(want, cmd, ...)                                                                   \
	do {                                                                                   \
		int r_ = match(cmd, __VA_ARGS__, (const char *)NULL);                          \
		ok(r_ == 0, "%s %s: matches (%s)", cmd, want, last_why);                       \
		if (r_ == 0) is_str(tail(3), want, "  argv as run");                           \
	} while (0)
#define REFUSED(frag, cmd, ...)                                                                \
	do {                                                                                   \
		int r_ = match(cmd, __VA_ARGS__, (const char *)NULL);                          \
		ok(r_ == 1 && strstr(last_why, frag), "%s refused naming %s: %s", cmd, frag, last_why); \
	} while (0)

static void test_grammar(void)
{
	G = load_text(PFILE, profile(NULL,
	                             "{\"test\":{\"argv\":[\"tool\",\"test\",\"-count=1\"],"
	                             "\"flags\":{\"-run\":\"regex\",\"-v\":\"bool\",\"-n\":\"int\",\"--out\":\"relpath\","
	                             "\"--mode\":\"enum:[fast,slow]\",\"-k\":\"regex:[a-z_]+\"},"
	                             "\"positional\":\"pkgpattern\",\"max_args\":4},"
	                             "\"pyfile\":{\"argv\":[\"tool\",\"-m\",\"pytest\"],\"positional\":\"testfile\"},"
	                             "\"build\":{\"argv\":[\"tool\",\"build\"]},"
	                             "\"cat\":{\"argv\":[\"tool\",\"cat\",\"-u\"],\"positional\":\"relpath\",\"max_args\":2},"
	                             "\"npm\":{\"argv\":[\"tool\",\"run\",\"test\"],\"flags\":{\"--silent\":\"bool\"},"
	                             "\"positional\":\"relpath\",\"passthrough\":\"--\"}}"));
	if (!G) bail("grammar profile: %s", err.msg);
	ok(exec_profile_command(G, "test") && !exec_profile_command(G, "deploy"), "a command id not in the profile is not found");
	int r = match("test", (const char *)NULL);
	ok(r == 0 && last_argc == 3 && strcmp(last_argv[0], fmt("%s/tool", BIN)) == 0 && strcmp(last_argv[2], "-count=1") == 0,
	   "no args: the prefix, argv[0] the resolved absolute path (%s)", last_argv ? last_argv[0] : last_why);

	/* normalisation: one canonical form */
	RUNS("-run|TestX", "test", "-run", "TestX");
	RUNS("-run|TestX", "test", "-run=TestX");
	RUNS("--mode=fast", "test", "--mode", "fast");
	RUNS("--mode=fast", "test", "--mode=fast");
	RUNS("-run|a=b", "test", "-run=a=b");
	RUNS("-v|-n|42|./...", "test", "-v", "-n=42", "./...");
	RUNS("-k|abc_d", "test", "-k", "abc_d");
	RUNS("--out=a/b.txt", "test", "--out", "a/b.txt");
	/* flags */
	REFUSED("args[1] \"-x\": flag -x is not one of command test's flags", "test", "-v", "-x", "-y");
	REFUSED("args[0] \"-exec=sh\": flag -exec", "test", "-exec=sh");
	REFUSED("args[0] \"-v=1\": -v is a bool flag", "test", "-v=1");
	REFUSED("args[0] \"-run\": -run needs a value", "test", "-run");
	REFUSED("args[1] \"abc\": the value of -n: not an integer", "test", "-n", "abc");
	REFUSED("args[0] \"-n=1000001\"", "test", "-n=1000001");
	REFUSED("leading zero", "test", "-n=007");
	RUNS("-n|1000000", "test", "-n=1000000");
	REFUSED("args[0] \"--out=../x\": the value of --out: path has a '..'", "test", "--out=../x");
	REFUSED("absolute", "test", "--out=/etc/passwd");
	REFUSED("may not begin with '-'", "test", "--out=-rf");
	REFUSED("args[0] \"--mode=medium\": the value of --mode: not one of fast, slow", "test", "--mode=medium");
	REFUSED("does not match the profile's pattern", "test", "-k=Abc");
	REFUSED("control character", "test", "-run=a\nb");
	RUNS("-run|^Test(A|B)$", "test", "-run=^Test(A|B)$");
	/* positional classes */
	RUNS("./pkg/...", "test", "./pkg/...");
	RUNS("pkg/sub", "test", "pkg/sub");
	RUNS("./pkg/", "test", "./pkg/");
	REFUSED("args[0] \"../...\"", "test", "../...");
	REFUSED("absolute", "test", "/abs/...");
	REFUSED("'...' only", "test", "a/.../b");
	RUNS("tests/test_x.py", "pyfile", "tests/test_x.py");
	RUNS("x_test.go", "pyfile", "x_test.go");
	RUNS("src/a.test.ts", "pyfile", "src/a.test.ts");
	RUNS("pkg.test", "pyfile", "pkg.test");
	REFUSED("args[0] \"tests/helper.py\": not a test file", "pyfile", "tests/helper.py");
	REFUSED("'..'", "pyfile", "../test_x.py");
	REFUSED("takes no positional args", "build", "all");
	RUNS("", "build", (const char *)NULL);
	RUNS("src/main.c", "cat", "src/main.c");
	REFUSED("control character", "cat", "a\tb");
	REFUSED("args[0] \"-\"", "cat", "-");
	/* max_args names the first arg past the bound */
	REFUSED("args[4] \"d\": command test takes at most 4 args, got 5", "test", "a", "b", "c", "-v", "d");
	RUNS("a|b|c|-v", "test", "a", "b", "c", "-v");
	REFUSED("args[2] \"c\": command cat takes at most 2", "cat", "a", "b", "c");
	/* -- */
	REFUSED("args[1] \"--\": '--' is refused: command test declares no passthrough", "test", "-v", "--", "x");
	RUNS("--silent|--|-c|$(id)|--settings", "npm", "--silent", "--", "-c", "$(id)", "--settings");
	REFUSED("flag -c", "npm", "-c");
	REFUSED("empty arg", "test", "");
	exec_argv_free(last_argv);
	last_argv = NULL;
}

static void test_binary(void)
{
	const struct exec_command *c = exec_profile_command(G, "test");
	int fd = -1;
	ok(exec_binary_open(&c->bin, &fd, &err) == 0 && fd >= 0, "control: the unchanged binary opens (%s)", err.msg);
	char b[8] = "";
	ok(fd >= 0 && read(fd, b, 2) == 2 && memcmp(b, "#!", 2) == 0, "the fd is rewound to its first byte");
	if (fd >= 0) close(fd);
	put(fmt("%s/tool", BIN), "#!/bin/sh\necho swapped\n", 0755);
	fd = -1;
	ok(exec_binary_open(&c->bin, &fd, &err) < 0 && fd == -1 && err.code == WX_HASH_MISMATCH && strstr(err.msg, c->bin.path) &&
	       strstr(err.msg, c->bin.sha256),
	   "a swapped binary is refused naming it and the recorded digest (%s)", err.msg);
	if (unlink(fmt("%s/tool", BIN)) < 0) bail("unlink");
	ok(exec_binary_open(&c->bin, &fd, &err) < 0 && err.code == WX_NOT_FOUND, "a removed binary: WX_NOT_FOUND (%s)", err.msg);
	put(fmt("%s/tool", BIN), "#!/bin/sh\necho tool\n", 0755);
	ok(exec_binary_open(&c->bin, &fd, &err) == 0, "the original bytes back: opens again (%s)", err.msg);
	if (fd >= 0) close(fd);
}

static void test_set(void)
{
	struct exec_profiles s = { 0 };
	const struct exec_profile *got;
	char why[512];
	ok(exec_profiles_for(&s, "ep1", &got, why, sizeof why) == 1 && strstr(why, "no exec profile: start worldd serve with --exec-profile FILE"),
	   "no profile: the refusal names the flag (%s)", why);
	struct exec_profile *a = load_text(PFILE, profile(NULL, NULL));
	char f2[PATH_MAX + 64];
	snprintf(f2, sizeof f2, "%s/etc/q.json", T);
	char *t2 = strdup(profile(NULL, NULL));
	char *at = strstr(t2, "\"demo\"");
	memcpy(at, "\"demp\"", 6);
	struct exec_profile *b = load_text(f2, t2);
	struct exec_profile *a2 = load_text(f2, profile(NULL, NULL));
	free(t2);
	if (!a || !b || !a2) bail("set profiles: %s", err.msg);
	ok(exec_profiles_add(&s, a, &err) == 0, "one profile added");
	ok(exec_profiles_for(&s, "ep9", &got, why, sizeof why) == 0 && got == a, "one profile: every episode gets it");
	ok(exec_profiles_add(&s, a2, &err) < 0 && err.code == WX_USAGE && strstr(err.msg, "already loaded"),
	   "a second profile of the same project is refused (%s)", err.msg);
	exec_profile_free(a2);
	ok(exec_profiles_add(&s, b, &err) == 0, "a second project added");
	ok(exec_profiles_for(&s, "ep9", &got, why, sizeof why) == 1 && strstr(why, "--exec-episode-project ep9=PROJECT"),
	   "two profiles, no mapping: the refusal names the flag (%s)", why);
	ok(exec_profiles_map(&s, "ep9=demp", &err) == 0, "a mapping");
	ok(exec_profiles_for(&s, "ep9", &got, why, sizeof why) == 0 && got == b, "the mapped episode gets its project");
	ok(exec_profiles_map(&s, "ep9=demo", &err) < 0 && strstr(err.msg, "mapped twice"), "an episode mapped twice (%s)", err.msg);
	ok(exec_profiles_map(&s, "ep8=nope", &err) < 0 && strstr(err.msg, "no --exec-profile has project nope"),
	   "a mapping to a project not loaded (%s)", err.msg);
	ok(exec_profiles_map(&s, "EP=demo", &err) < 0 && err.code == WX_USAGE, "a malformed episode (%s)", err.msg);
	ok(exec_profiles_map(&s, "ep8", &err) < 0 && strstr(err.msg, "EPISODE=PROJECT"), "no '=' (%s)", err.msg);
	exec_profiles_free(&s);
}

int main(void)
{
	setup();
	test_load();
	test_env();
	test_read_roots();
	test_placement();
	test_grammar();
	test_binary();
	test_set();
	exec_profile_free(G);
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", T);
	if (system(cmd) != 0) diag("could not remove %s", T);
	return done_testing();
}
