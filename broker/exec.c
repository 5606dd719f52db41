/* broker/exec.c: the Workspace.Exec handler (broker/exec.h, docs/exec.md). */
#include "broker/exec.h"
#include "broker/exec_probe.h"
#include "broker/workspace.h"
#include "common/canon.h"
#include "supervisor/exec.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- the environment ---- */

int exec_build_env(const struct exec_profile *p, char ***envp, struct world_err *err)
{
	*envp = NULL;
	size_t cap = 8 + p->ncaches + p->nenv + 1, n = 0;
	char **e = calloc(cap, sizeof *e);
	if (!e) return werr(err, WX_FAIL, "exec env: out of memory");
	size_t plen = 6;
	for (size_t i = 0; i < p->npath; i++) plen += strlen(p->path[i]) + 1;
	char *path = malloc(plen);
	if (!path) goto oom;
	strcpy(path, "PATH=");
	for (size_t i = 0; i < p->npath; i++) {
		if (i) strcat(path, ":");
		strcat(path, p->path[i]);
	}
	e[n++] = path;
	static const char *const fixed[] = { "HOME=" SUP_EXEC_CACHE "/home", "TMPDIR=" SUP_EXEC_CACHE "/tmp",
		                             "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "CI=1",
		                             "PYTHONPYCACHEPREFIX=" SUP_EXEC_CACHE "/pycache",
		                             "npm_config_cache=" SUP_EXEC_CACHE "/npm", NULL };
	for (const char *const *f = fixed; *f; f++)
		if (!(e[n++] = strdup(*f))) goto oom;
	for (size_t i = 0; i < p->ncaches; i++)
		if (asprintf(&e[n++], "%s=" SUP_EXEC_CACHE "/var-%s", p->caches[i].var, p->caches[i].var) < 0) {
			e[--n] = NULL;
			goto oom;
		}
	for (size_t i = 0; i < p->nenv; i++)
		if (!(e[n++] = strdup(p->env[i]))) goto oom;
	*envp = e;
	return 0;
oom:
	exec_argv_free(e);
	return werr(err, WX_FAIL, "exec env: out of memory");
}

/* ---- the exec cache ---- */

/* mkdirat + open, never through a symlink; the directory kept 0700. */
static int subdir(int dfd, const char *name, const char *what, struct world_err *err)
{
	if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
		return werr(err, WX_IO, "exec cache %s/%s: mkdir: %s", what, name, strerror(errno));
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) return werr(err, WX_IO, "exec cache %s/%s: open: %s (a symlink or not a directory?)", what, name, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || ((st.st_mode & 07077) && fchmod(fd, 0700) < 0)) {
		int e = errno;
		close(fd);
		return werr(err, WX_IO, "exec cache %s/%s: make 0700: %s", what, name, strerror(e));
	}
	return fd;
}

static int copy_fd(int in, int out)
{
	char buf[1 << 16];
	for (;;) {
		ssize_t r = read(in, buf, sizeof buf);
		if (r < 0 && errno == EINTR) continue;
		if (r < 0) return -1;
		if (r == 0) return 0;
		for (ssize_t o = 0; o < r;) {
			ssize_t w = write(out, buf + o, (size_t)(r - o));
			if (w < 0 && errno == EINTR) continue;
			if (w < 0) return -1;
			o += w;
		}
	}
}

/* Copy the tree under src into dst (both directory fds): directories,
 * regular files and symlinks (as symlinks, never followed); anything else
 * is skipped. */
static int copy_tree(int src, int dst, const char *where, int depth, struct world_err *err)
{
	if (depth > 128) return werr(err, WX_IO, "exec cache seed %s: deeper than 128 directories", where);
	int sd = dup(src);
	if (sd < 0) return werr(err, WX_IO, "exec cache seed %s: dup: %s", where, strerror(errno));
	DIR *d = fdopendir(sd);
	if (!d) {
		close(sd);
		return werr(err, WX_IO, "exec cache seed %s: opendir: %s", where, strerror(errno));
	}
	int rc = 0;
	struct dirent *de;
	errno = 0;
	while (rc == 0 && (de = readdir(d))) {
		const char *n = de->d_name;
		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0) continue;
		struct stat st;
		if (fstatat(src, n, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = werr(err, WX_IO, "exec cache seed %s/%s: stat: %s", where, n, strerror(errno));
			break;
		}
		char sub[PATH_MAX];
		snprintf(sub, sizeof sub, "%s/%s", where, n);
		if (S_ISDIR(st.st_mode)) {
			if (mkdirat(dst, n, 0700) < 0) { rc = werr(err, WX_IO, "exec cache copy %s: mkdir: %s", sub, strerror(errno)); break; }
			int s2 = openat(src, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int d2 = s2 < 0 ? -1 : openat(dst, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (s2 < 0 || d2 < 0) rc = werr(err, WX_IO, "exec cache copy %s: open: %s", sub, strerror(errno));
			else rc = copy_tree(s2, d2, sub, depth + 1, err);
			if (s2 >= 0) close(s2);
			if (d2 >= 0) close(d2);
		} else if (S_ISREG(st.st_mode)) {
			int in = openat(src, n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			int out = in < 0 ? -1 : openat(dst, n, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 0700);
			if (in < 0 || out < 0) rc = werr(err, WX_IO, "exec cache copy %s: open: %s", sub, strerror(errno));
			else if (copy_fd(in, out) < 0) rc = werr(err, WX_IO, "exec cache copy %s: %s", sub, strerror(errno));
			if (in >= 0) close(in);
			if (out >= 0 && close(out) < 0 && rc == 0) rc = werr(err, WX_IO, "exec cache copy %s: close: %s", sub, strerror(errno));
		} else if (S_ISLNK(st.st_mode)) {
			char t[PATH_MAX];
			ssize_t k = readlinkat(src, n, t, sizeof t - 1);
			if (k < 0) { rc = werr(err, WX_IO, "exec cache seed %s: readlink: %s", sub, strerror(errno)); break; }
			t[k] = '\0';
			if (symlinkat(t, dst, n) < 0) rc = werr(err, WX_IO, "exec cache copy %s: symlink: %s", sub, strerror(errno));
		}
		errno = 0;
	}
	if (rc == 0 && errno) rc = werr(err, WX_IO, "exec cache seed %s: readdir: %s", where, strerror(errno));
	closedir(d);
	return rc;
}

static int rm_tree_at(int dfd, const char *name, int depth)
{
	if (depth > 130) return -1;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		DIR *d = fdopendir(fd);
		if (!d) { close(fd); return -1; }
		struct dirent *de;
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				if (unlinkat(dirfd(d), de->d_name, 0) < 0) rm_tree_at(dirfd(d), de->d_name, depth + 1);
		closedir(d);
		return unlinkat(dfd, name, AT_REMOVEDIR);
	}
	return unlinkat(dfd, name, 0);
}

void exec_rm_tree(const char *path)
{
	rm_tree_at(AT_FDCWD, path, 0);
}

int exec_cache_prepare(const char *cache_root, const char *episode, const struct exec_profile *p, char *out,
                       size_t outlen, struct world_err *err)
{
	if (mkdir(cache_root, 0700) < 0 && errno != EEXIST)
		return werr(err, WX_IO, "exec cache %s: mkdir: %s", cache_root, strerror(errno));
	int root = open(cache_root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0) return werr(err, WX_IO, "exec cache %s: open: %s", cache_root, strerror(errno));
	struct stat st;
	if (fstat(root, &st) < 0 || ((st.st_mode & 07077) && fchmod(root, 0700) < 0)) {
		int e = errno;
		close(root);
		return werr(err, WX_IO, "exec cache %s: make 0700: %s", cache_root, strerror(e));
	}
	int ep = subdir(root, episode, cache_root, err);
	close(root);
	if (ep < 0) return -1;
	char what[PATH_MAX];
	snprintf(what, sizeof what, "%s/%s", cache_root, episode);
	int pr = subdir(ep, p->project, what, err);
	close(ep);
	if (pr < 0) return -1;
	snprintf(what, sizeof what, "%s/%s/%s", cache_root, episode, p->project);
	static const char *const fixed[] = { "home", "tmp", "pycache", "npm", NULL };
	for (const char *const *f = fixed; *f; f++) {
		int fd = subdir(pr, *f, what, err);
		if (fd < 0) { close(pr); return -1; }
		close(fd);
	}
	for (size_t i = 0; i < p->ncaches; i++) {
		char name[300], tmp[320];
		snprintf(name, sizeof name, "var-%s", p->caches[i].var);
		int fd = openat(pr, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) { close(fd); continue; }   /* seeded already */
		if (errno != ENOENT) {
			int e = errno;
			close(pr);
			return werr(err, WX_IO, "exec cache %s/%s: open: %s", what, name, strerror(e));
		}
		/* first use: copy the seed under a temporary name, then rename */
		snprintf(tmp, sizeof tmp, ".tmp-%s.%ld", name, (long)getpid());
		rm_tree_at(pr, tmp, 0);
		int t = subdir(pr, tmp, what, err);
		if (t < 0) { close(pr); return -1; }
		int rc = 0;
		if (p->caches[i].seed) {
			int s = open(p->caches[i].seed, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (s < 0) rc = werr(err, WX_IO, "exec cache seed %s: open: %s", p->caches[i].seed, strerror(errno));
			else {
				rc = copy_tree(s, t, p->caches[i].seed, 0, err);
				close(s);
			}
		}
		close(t);
		if (rc == 0 && renameat(pr, tmp, pr, name) < 0) {
			int e = errno;
			rm_tree_at(pr, tmp, 0);
			/* EEXIST/ENOTEMPTY: seeded meanwhile (another daemon of the root) */
			if (e != EEXIST && e != ENOTEMPTY) rc = werr(err, WX_IO, "exec cache %s/%s: rename: %s", what, name, strerror(e));
		} else if (rc < 0)
			rm_tree_at(pr, tmp, 0);
		if (rc < 0) { close(pr); return -1; }
	}
	close(pr);
	int n = snprintf(out, outlen, "%s", what);
	if (n < 0 || (size_t)n >= outlen) return werr(err, WX_IO, "exec cache %s: path too long", what);
	return 0;
}

/* ---- the result ---- */

/* The kept bytes of a stream as JSON text: invalid UTF-8 and NUL become
 * U+FFFD (the record holds text; *_sha256 is of the raw stream). */
static json_t *stream_text(const char *s, size_t n)
{
	char *b = malloc(n * 3 + 1);
	if (!b) return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k = s[i] ? world_utf8_seq((const unsigned char *)s + i, n - i) : 0;
		if (k == 0) {
			memcpy(b + o, "\xEF\xBF\xBD", 3);
			o += 3;
			i++;
		} else {
			memcpy(b + o, s + i, k);
			o += k;
			i += k;
		}
	}
	json_t *j = json_stringn(b, o);
	free(b);
	return j;
}

static int set(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

/* Protected names the command created where none was (the capsule cannot
 * bind an absent name read-only: supervisor/exec.h protected_created) are
 * removed from the worktree -- never through a symlink, beneath wt -- so
 * that no .git, .github, .envrc, ... an operator's tool would trust is
 * left by project code. The names removed go into *removed. -1 with err
 * when one cannot be removed. */
static int remove_created(int wt, const char *list, json_t *removed, struct world_err *err)
{
	char buf[sizeof ((struct sup_exec_result *)0)->protected_created];
	snprintf(buf, sizeof buf, "%s", list);
	char *save = NULL;
	for (char *n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		int known = 0;
		for (const char *const *pn = workspace_protected_names(); *pn && !known; pn++) known = strcmp(*pn, n) == 0;
		if (!known) return werr(err, WX_PROTOCOL, "exec: the capsule reported \"%.64s\" created, not a protected name", n);
		if (rm_tree_at(wt, n, 0) < 0 && errno != ENOENT)
			return werr(err, WX_IO, "exec: the command created the protected name %s in the worktree and it cannot be removed: %s",
			            n, strerror(errno));
		if (json_array_append_new(removed, json_string(n)) < 0) return werr(err, WX_FAIL, "exec result: out of memory");
	}
	return 0;
}

static json_t *result_json(const struct exec_profile *p, const struct exec_command *c, char **argv, size_t argc,
                           const struct sup_exec_result *r, json_t *removed)
{
	json_t *o = json_object(), *av = json_array(), *prof = json_object(), *sb = json_object();
	int bad = !o || !av || !prof || !sb;
	for (size_t i = 0; !bad && i < argc; i++) bad |= json_array_append_new(av, json_string(argv[i])) < 0;
	bad = bad || set(o, "denied", r->denied[0] ? json_string(r->denied) : json_null()) ||
	      json_object_set(o, "protected_removed", removed);
	bad = bad || set(o, "ok", json_true()) || set(o, "exit_code", json_integer(r->exit_code)) ||
	      set(o, "timed_out", json_boolean(r->timed_out)) ||
	      set(o, "limit", r->limit[0] ? json_string(r->limit) : json_null()) ||
	      set(o, "duration_ms", json_integer(r->duration_ms)) || set(o, "stdout", stream_text(r->out.text, r->out.len)) ||
	      set(o, "stderr", stream_text(r->err.text, r->err.len)) ||
	      set(o, "stdout_bytes", json_integer((json_int_t)r->out.bytes)) ||
	      set(o, "stderr_bytes", json_integer((json_int_t)r->err.bytes)) ||
	      set(o, "stdout_truncated", json_boolean(r->out.truncated)) ||
	      set(o, "stderr_truncated", json_boolean(r->err.truncated)) ||
	      set(o, "stdout_sha256", json_string(r->out.sha256)) || set(o, "stderr_sha256", json_string(r->err.sha256)) ||
	      set(prof, "project", json_string(p->project)) || set(prof, "digest", json_string(p->digest)) ||
	      set(prof, "command", json_string(c ? c->id : "probe")) ||
	      set(prof, "argv0_sha256", json_string(c ? c->bin.sha256 : p->probe_bin.sha256)) ||
	      set(sb, "profile", json_string(r->profile_name)) || set(sb, "digest", json_string(r->profile_digest)) ||
	      set(sb, "network", json_string("none"));
	if (!bad) {
		bad = json_object_set(o, "argv", av) || json_object_set(o, "profile", prof) || json_object_set(o, "sandbox", sb);
	}
	json_decref(av);
	json_decref(prof);
	json_decref(sb);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ---- the handler ---- */

static int command_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 32 || s[0] < 'a' || s[0] > 'z') return 0;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) return 0;
	return 1;
}

static void command_list(const struct exec_profile *p, char *out, size_t outlen)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < p->ncommands && o < outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%s%s", i ? ", " : "", p->commands[i].id);
}

/* The profile's root is a directory inside the worktree (beneath, no
 * symlink out): 0, or 1 with why. */
static int root_ok(int wt, const char *root, char *why, size_t whylen, struct world_err *err)
{
	if (strcmp(root, ".") == 0) return 0;
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		                .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS };
	long fd = syscall(SYS_openat2, wt, root, &how, sizeof how);
	if (fd >= 0) {
		close((int)fd);
		return 0;
	}
	if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == EXDEV) {
		snprintf(why, whylen, "the profile's root \"%.200s\" is not a directory in the worktree (%s)", root, strerror(errno));
		return 1;
	}
	return werr(err, WX_IO, "exec: the profile's root %s in the worktree: %s", root, strerror(errno));
}

static double mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int workspace_exec(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output, struct world_err *err)
{
	/* WORLD_EXEC_TIMING (as supervisor/exec.c): where the handler's time goes */
	double tm[6] = { mono_ms(), 0, 0, 0, 0, 0 };
	*output = NULL;
	if (!json_is_object(payload)) return broker_refuse(output, "payload is not an object");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)payload, k, v)
		if (strcmp(k, "command") != 0 && strcmp(k, "args") != 0)
			return broker_refuse(output, "unknown key \"%.64s\" (the payload is {command, args?})", k);
	const json_t *jc = json_object_get(payload, "command");
	if (!json_is_string(jc) || strlen(json_string_value(jc)) != json_string_length(jc) || !command_ok(json_string_value(jc)))
		return broker_refuse(output, "command must be a string matching ^[a-z][a-z0-9-]{0,31}$");
	const char *cmd = json_string_value(jc);
	const json_t *ja = json_object_get(payload, "args");
	const char *args[EXEC_ARGS_MAX];
	size_t nargs = 0;
	if (ja) {
		if (!json_is_array(ja)) return broker_refuse(output, "args must be an array of strings");
		if (json_array_size(ja) > EXEC_ARGS_MAX)
			return broker_refuse(output, "args has %zu items, at most %u", json_array_size(ja), EXEC_ARGS_MAX);
		size_t i;
		json_array_foreach(ja, i, v) {
			if (!json_is_string(v)) return broker_refuse(output, "args[%zu] is not a string", i);
			size_t n = json_string_length(v);
			if (n < 1 || n > EXEC_ARG_BYTES_MAX) return broker_refuse(output, "args[%zu] is %zu bytes, 1..%u", i, n, EXEC_ARG_BYTES_MAX);
			if (strlen(json_string_value(v)) != n) return broker_refuse(output, "args[%zu] holds a NUL byte", i);
			args[nargs++] = json_string_value(v);
		}
	}
	const struct exec_profile *p;
	char why[1024];
	if (exec_profiles_for(ctx->exec_profiles, ctx->episode, &p, why, sizeof why)) return broker_refuse(output, "%s", why);
	if (p->probe_failure[0])
		return broker_refuse(output, "exec is not offered for project %s: the start-up probe failed: %s", p->project,
		                     p->probe_failure);
	const struct exec_command *c = exec_profile_command(p, cmd);
	if (!c) {
		char list[600];
		command_list(p, list, sizeof list);
		return broker_refuse(output, "command %s is not in project %s's profile (%s)", cmd, p->project, list);
	}
	char **argv = NULL, **envp = NULL;
	size_t argc = 0;
	int r = exec_args_match(c, args, nargs, &argv, &argc, why, sizeof why, err);
	if (r < 0) return -1;
	if (r > 0) return broker_refuse(output, "%s", why);
	int rc = -1, wt = -1, bfd = -1;
	r = workspace_open_worktree(ctx, 1, &wt, why, sizeof why, err);
	if (r < 0) goto out;
	if (r > 0) { rc = broker_refuse(output, "%s", why); goto out; }
	r = root_ok(wt, p->root, why, sizeof why, err);
	if (r < 0) goto out;
	if (r > 0) { rc = broker_refuse(output, "%s", why); goto out; }
	char croot[PATH_MAX], cdir[PATH_MAX], worktree[PATH_MAX];
	int n1 = ctx->exec_cache_root ? snprintf(croot, sizeof croot, "%s", ctx->exec_cache_root)
	                              : snprintf(croot, sizeof croot, "%s/%s", ctx->workspace_root, EXEC_CACHE_DIR);
	int n2 = snprintf(worktree, sizeof worktree, "%s/%s", ctx->workspace_root, ctx->episode);
	if (n1 < 0 || (size_t)n1 >= sizeof croot || n2 < 0 || (size_t)n2 >= sizeof worktree) {
		werr(err, WX_IO, "exec: the workspace root %.200s is too long a path", ctx->workspace_root);
		goto out;
	}
	tm[1] = mono_ms();
	if (exec_cache_prepare(croot, ctx->episode, p, cdir, sizeof cdir, err) < 0) goto out;
	if (exec_build_env(p, &envp, err) < 0) goto out;
	tm[2] = mono_ms();
	/* what runs is what was hashed: the capsule executes this fd */
	if (exec_binary_open(&c->bin, &bfd, err) < 0) goto out;
	tm[3] = mono_ms();
	static const char *const no_roots[] = { NULL };
	/* the profile's timeout up to the daemon's cap (checked at load too) */
	unsigned max_ms = ctx->exec_max_ms ? ctx->exec_max_ms : EXEC_MAX_MS_DEFAULT;
	struct sup_exec_req rq = {
		.argv = (const char *const *)argv, .argv0_fd = bfd, .envp = (const char *const *)envp,
		.worktree = worktree, .cwd_rel = p->root, .protected_names = workspace_protected_names(),
		.cache_dir = cdir, .read_roots = p->read_roots ? (const char *const *)p->read_roots : no_roots,
		.wall_ms = p->timeout_ms < max_ms ? p->timeout_ms : max_ms, .cancel = ctx->cancel,
		.memory_max = p->memory_max, .pids_max = p->pids_max, .cpu_ms = p->cpu_ms,
		.output_max = ctx->exec_output_max ? ctx->exec_output_max : SUP_EXEC_OUTPUT_MAX,
	};
	struct sup_exec_result res;
	memset(&res, 0, sizeof res);
	/* the capsule (supervisor/exec.h); none linked: a failed effect, never a run */
	exec_runner_fn run = exec_runner();
	if (!run) {
		werr(err, WX_SETUP, "exec %s %s: this worldd has no exec capsule (supervisor/exec.c): not run", p->project, c->id);
		goto out;
	}
	if (run(&rq, &res, err) < 0) {
		werr_prefix(err, "exec %s %s", p->project, c->id);
		goto out;
	}
	tm[4] = mono_ms();
	json_t *removed = json_array();
	if (!removed) {
		werr(err, WX_FAIL, "exec result: out of memory");
		sup_exec_result_free(&res);
		goto out;
	}
	if (res.protected_created[0] && remove_created(wt, res.protected_created, removed, err) < 0) {
		json_decref(removed);
		sup_exec_result_free(&res);
		goto out;
	}
	*output = result_json(p, c, argv, argc, &res, removed);
	json_decref(removed);
	sup_exec_result_free(&res);
	if (!*output) {
		werr(err, WX_FAIL, "exec result: out of memory");
		goto out;
	}
	rc = 0;
	tm[5] = mono_ms();
	if (getenv("WORLD_EXEC_TIMING"))
		fprintf(stderr, "exec handler ms: checks+worktree=%.2f cache+env=%.2f rehash=%.2f run=%.2f result=%.2f\n",
		        tm[1] - tm[0], tm[2] - tm[1], tm[3] - tm[2], tm[4] - tm[3], tm[5] - tm[4]);
out:
	if (bfd >= 0) close(bfd);
	if (wt >= 0) close(wt);
	exec_argv_free(argv);
	exec_argv_free(envp);
	return rc;
}
