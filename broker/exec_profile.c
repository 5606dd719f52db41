/* broker/exec_profile.c: world/exec-profile/v1 files and the args grammar
 * (broker/exec_profile.h, docs/exec.md). */
#include "broker/exec_profile.h"
#include "broker/workspace.h"
#include "common/canon.h"
#include "common/file.h"
#include "supervisor/exec.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- small helpers ---- */

/* A JSON pointer token: '~' -> "~0", '/' -> "~1" (RFC 6901). */
static void ptr_token(char *out, size_t outlen, const char *key)
{
	size_t o = 0;
	for (const char *k = key; *k && o + 3 < outlen; k++) {
		if (*k == '~') { out[o++] = '~'; out[o++] = '0'; }
		else if (*k == '/') { out[o++] = '~'; out[o++] = '1'; }
		else out[o++] = *k;
	}
	out[o] = '\0';
}

struct lctx {
	const char *file;
	const struct exec_profile_env *env;
	struct world_err *err;
	/* the places no read root may equal, be an ancestor of (literal and
	 * realpath), and -- for the first two -- lie inside */
	char **deny;
	size_t ndeny, capdeny;
	int deny_oom;
};

static int lerr(struct lctx *l, int code, const char *ptr, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int lerr(struct lctx *l, int code, const char *ptr, const char *fmt, ...)
{
	char m[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	return werr(l->err, code, "exec profile %s: %s: %s", l->file, ptr, m);
}

static int re_full(const char *re_src, const char *s)
{
	regex_t re;
	if (regcomp(&re, re_src, REG_EXTENDED | REG_NOSUB) != 0) return 0;
	int m = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return m;
}

static int env_name_ok(const char *n) { return re_full("^[A-Za-z_][A-Za-z0-9_]*$", n); }
static int command_id_ok(const char *n) { return re_full("^[a-z][a-z0-9-]{0,31}$", n); }
static int project_ok(const char *n) { return re_full("^[a-z0-9][a-z0-9._-]{0,63}$", n); }

const char *exec_env_owned(const char *n)
{
	static const char *const exact[] = { "HOME", "TMPDIR", "PATH", "LANG", "LC_ALL", "CI", "PYTHONPYCACHEPREFIX", NULL };
	for (const char *const *e = exact; *e; e++)
		if (strcmp(n, *e) == 0) return "World sets it (docs/exec.md, The environment)";
	if (strcasecmp(n, "npm_config_cache") == 0) return "World sets it (npm's cache is in the exec cache)";
	static const char *const proxies[] = { "http_proxy", "https_proxy", "no_proxy", "all_proxy", "ftp_proxy", NULL };
	for (const char *const *e = proxies; *e; e++)
		if (strcasecmp(n, *e) == 0) return "a proxy variable (exec runs with no network; World owns the proxies)";
	if (strncmp(n, "GIT_", 4) == 0) return "a GIT_* variable (git's configuration is World's)";
	return NULL;
}

/* An absolute path without ".", ".." or empty components, trailing '/'
 * dropped, "/" kept: 0 with out, else a reason. */
static const char *abs_norm(const char *in, char *out, size_t outlen)
{
	if (!in || in[0] != '/') return "not an absolute path";
	size_t n = strlen(in);
	if (n >= outlen) return "path too long";
	if (strchr(in, ':')) return "contains ':' (the PATH separator)";
	for (const char *p = in; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) return "contains a control character";
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		while (i < n && in[i] == '/') i++;
		size_t j = i;
		while (j < n && in[j] != '/') j++;
		if (j == i) break;
		if ((j - i == 1 && in[i] == '.') || (j - i == 2 && in[i] == '.' && in[i + 1] == '.'))
			return "has a '.' or '..' component";
		out[o++] = '/';
		memcpy(out + o, in + i, j - i);
		o += j - i;
		i = j;
	}
	if (o == 0) out[o++] = '/';
	out[o] = '\0';
	return NULL;
}

/* a equals b, or a is an ancestor of b (both normalised, absolute) */
static int is_or_ancestor(const char *a, const char *b)
{
	if (strcmp(a, "/") == 0) return 1;
	size_t n = strlen(a);
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

static void deny_push(struct lctx *l, const char *p)
{
	if (l->ndeny == l->capdeny) {
		size_t cap = l->capdeny ? 2 * l->capdeny : 16;
		char **d = realloc(l->deny, cap * sizeof *d);
		if (!d) { l->deny_oom = 1; return; }
		l->deny = d;
		l->capdeny = cap;
	}
	if (!(l->deny[l->ndeny] = strdup(p))) { l->deny_oom = 1; return; }
	l->ndeny++;
}

/* p (literal, normalised) and its realpath join the places no read root may
 * reach; a failure to remember one is a refusal of the load (deny_oom). */
static void deny_add(struct lctx *l, const char *p)
{
	if (!p || !*p) return;
	char norm[PATH_MAX];
	norm[0] = '\0';
	if (!abs_norm(p, norm, sizeof norm)) deny_push(l, norm);
	char rp[PATH_MAX];
	if (realpath(p, rp) && strcmp(rp, norm) != 0) deny_push(l, rp);
}

/* Inside the workspace root or the store's folder (literal or real): the
 * reason, else NULL. */
static const char *inside_world(struct lctx *l, const char *lit, const char *real)
{
	const char *const places[2] = { l->env->workspace_root, l->env->store_dir };
	const char *const names[2] = { "the workspace root", "the store's folder" };
	for (int i = 0; i < 2; i++) {
		if (!places[i]) continue;
		char norm[PATH_MAX], rp[PATH_MAX];
		const char *cand[2] = { NULL, NULL };
		if (!abs_norm(places[i], norm, sizeof norm)) cand[0] = norm;
		if (realpath(places[i], rp)) cand[1] = rp;
		for (int c = 0; c < 2; c++) {
			if (!cand[c]) continue;
			if ((lit && is_or_ancestor(cand[c], lit)) || (real && is_or_ancestor(cand[c], real))) return names[i];
		}
	}
	return NULL;
}

static char *xstrdup(struct lctx *l, const char *s)
{
	char *d = strdup(s);
	if (!d) werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
	return d;
}

/* ---- binaries ---- */

static int hash_path(const char *path, char hex[65], struct world_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return werr(err, errno == ENOENT ? WX_NOT_FOUND : WX_IO, "open %s: %s", path, strerror(errno));
	unsigned char d[WORLD_DIGEST_LEN];
	int rc = world_sha256_fd(fd, path, d, NULL, err);
	close(fd);
	if (rc < 0) return -1;
	for (int i = 0; i < WORLD_DIGEST_LEN; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return 0;
}

static int executable_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) && access(p, X_OK) == 0;
}

/* Resolve name on the profile's path into b. */
static int resolve_bin(struct lctx *l, const struct exec_profile *p, const char *name, const char *ptr,
                       struct exec_binary *b)
{
	if (!*name) return lerr(l, WX_BAD_INPUT, ptr, "empty argv[0]");
	char cand[PATH_MAX] = "";
	if (strchr(name, '/')) {
		const char *why = abs_norm(name, cand, sizeof cand);
		if (why) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\": %s (a name on path, or an absolute path)", name, why);
		if (!executable_file(cand)) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\" is not an executable regular file", name);
	} else {
		int found = 0;
		for (size_t i = 0; i < p->npath && !found; i++) {
			int n = snprintf(cand, sizeof cand, "%s%s%s", p->path[i], strcmp(p->path[i], "/") ? "/" : "", name);
			if (n > 0 && (size_t)n < sizeof cand && executable_file(cand)) found = 1;
		}
		if (!found) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\" does not resolve on /path to an executable", name);
	}
	char rp[PATH_MAX];
	if (!realpath(cand, rp)) return lerr(l, WX_IO, ptr, "realpath %s: %s", cand, strerror(errno));
	const char *in = inside_world(l, cand, rp);
	if (in) return lerr(l, WX_BAD_INPUT, ptr, "the binary %s is inside %s", cand, in);
	/* It must be where the capsule shows files and lets them run (docs/exec.md
	 * "What the command sees"): the host's system directories, or a read root
	 * (the binary's realpath against the read roots' realpaths). */
	static const char *const sysdirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", NULL };
	int shown = 0;
	for (const char *const *d = sysdirs; *d && !shown; d++) shown = is_or_ancestor(*d, rp);
	for (size_t i = 0; i < p->nread_roots && !shown; i++) shown = is_or_ancestor(p->read_roots[i], rp);
	if (!shown)
		return lerr(l, WX_BAD_INPUT, ptr,
		            "the binary %s (%s) is neither under /usr, /bin, /sbin, /lib* nor under a read root: it could not run in "
		            "the exec capsule (add its directory to /read_roots)", cand, rp);
	snprintf(b->path, sizeof b->path, "%s", cand);
	if (hash_path(cand, b->sha256, l->err) < 0) return werr_prefix(l->err, "exec profile %s: %s", l->file, ptr);
	return 0;
}

int exec_binary_open(const struct exec_binary *b, int *fd, struct world_err *err)
{
	*fd = -1;
	int f = open(b->path, O_RDONLY | O_CLOEXEC);
	if (f < 0) return werr(err, errno == ENOENT ? WX_NOT_FOUND : WX_IO, "exec binary %s: open: %s", b->path, strerror(errno));
	unsigned char d[WORLD_DIGEST_LEN];
	if (world_sha256_fd(f, b->path, d, NULL, err) < 0) {
		close(f);
		return werr_prefix(err, "exec binary %s", b->path);
	}
	char hex[65];
	for (int i = 0; i < WORLD_DIGEST_LEN; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
	if (strcmp(hex, b->sha256) != 0) {
		close(f);
		return werr(err, WX_HASH_MISMATCH, "exec binary %s: sha256 %s, the profile recorded %s at load: not run",
		            b->path, hex, b->sha256);
	}
	if (lseek(f, 0, SEEK_SET) < 0) {
		int e = errno;
		close(f);
		return werr(err, WX_IO, "exec binary %s: lseek: %s", b->path, strerror(e));
	}
	*fd = f;
	return 0;
}

/* ---- the parts of a profile ---- */

static int check_keys(struct lctx *l, const json_t *o, const char *base, const char *const *allowed)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v) {
		int ok = 0;
		for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(k, *a) == 0;
		if (!ok) {
			char t[300];
			ptr_token(t, sizeof t, k);
			char ptr[400];
			snprintf(ptr, sizeof ptr, "%s/%s", base, t);
			return lerr(l, WX_BAD_INPUT, ptr, "unknown key");
		}
	}
	return 0;
}

static int string_array(struct lctx *l, const json_t *a, const char *ptr, int nonempty, char ***out, size_t *n)
{
	if (!json_is_array(a)) return lerr(l, WX_BAD_INPUT, ptr, "must be an array of strings");
	if (nonempty && json_array_size(a) == 0) return lerr(l, WX_BAD_INPUT, ptr, "must not be empty");
	*out = calloc(json_array_size(a) + 1, sizeof **out);
	if (!*out) return werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
	*n = 0;
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v)) return lerr(l, WX_BAD_INPUT, ptr, "item %zu (%s/%zu) is not a string", i, ptr, i);
		(*out)[i] = xstrdup(l, json_string_value(v));
		if (!(*out)[i]) return -1;
		(*n)++;
	}
	return 0;
}

static int parse_flag(struct lctx *l, const char *name, const json_t *v, const char *ptr, struct exec_flag *f)
{
	if (!re_full("^--?[A-Za-z0-9][A-Za-z0-9_.-]*$", name))
		return lerr(l, WX_BAD_INPUT, ptr, "a flag name is '-' or '--' then a letter or digit, then letters, digits, '_', '.', '-'");
	f->name = xstrdup(l, name);
	if (!f->name) return -1;
	if (!json_is_string(v))
		return lerr(l, WX_BAD_INPUT, ptr, "must be \"bool\", \"int\", \"relpath\", \"regex\", \"regex:PATTERN\" or \"enum:[A,B,...]\"");
	const char *s = json_string_value(v);
	if (strcmp(s, "bool") == 0) f->kind = EXEC_FLAG_BOOL;
	else if (strcmp(s, "int") == 0) f->kind = EXEC_FLAG_INT;
	else if (strcmp(s, "relpath") == 0) f->kind = EXEC_FLAG_RELPATH;
	else if (strcmp(s, "regex") == 0) f->kind = EXEC_FLAG_REGEX;
	else if (strncmp(s, "regex:", 6) == 0) {
		f->kind = EXEC_FLAG_REGEX;
		if (!s[6]) return lerr(l, WX_BAD_INPUT, ptr, "regex: with an empty pattern");
		size_t n = strlen(s + 6);
		f->pattern = malloc(n + 5);
		if (!f->pattern) return werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
		snprintf(f->pattern, n + 5, "^(%s)$", s + 6);
		regex_t *re = malloc(sizeof *re);
		if (!re) return werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
		int rc = regcomp(re, f->pattern, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			char m[200];
			regerror(rc, re, m, sizeof m);
			free(re);
			return lerr(l, WX_BAD_INPUT, ptr, "pattern \"%.200s\" is not a POSIX extended regex: %s", s + 6, m);
		}
		f->re = re;
	} else if (strncmp(s, "enum:[", 6) == 0 && s[strlen(s) - 1] == ']') {
		f->kind = EXEC_FLAG_ENUM;
		const char *b = s + 6, *end = s + strlen(s) - 1;
		size_t cap = 1;
		for (const char *q = b; q < end; q++) cap += *q == ',';
		f->values = calloc(cap, sizeof *f->values);
		if (!f->values) return werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
		while (b <= end) {
			const char *c = memchr(b, ',', (size_t)(end - b));
			if (!c) c = end;
			if (c == b) return lerr(l, WX_BAD_INPUT, ptr, "enum with an empty value");
			char *val = strndup(b, (size_t)(c - b));
			if (!val) return werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
			f->values[f->nvalues++] = val; /* owned by f from here, also on a refusal */
			for (const char *q = val; *q; q++)
				if ((unsigned char)*q <= 0x20 || *q == 0x7f || *q == '[' || *q == ']')
					return lerr(l, WX_BAD_INPUT, ptr, "enum value \"%.100s\" holds a space, control character or bracket", val);
			b = c + 1;
			if (c == end) break;
		}
	} else
		return lerr(l, WX_BAD_INPUT, ptr, "\"%.100s\": must be \"bool\", \"int\", \"relpath\", \"regex\", \"regex:PATTERN\" or \"enum:[A,B,...]\"", s);
	return 0;
}

static int cmp_cmd(const void *a, const void *b)
{
	return strcmp(((const struct exec_command *)a)->id, ((const struct exec_command *)b)->id);
}

static int parse_command(struct lctx *l, struct exec_profile *p, const char *id, const json_t *o, struct exec_command *c)
{
	char t[200], ptr[300], sub[1024];
	ptr_token(t, sizeof t, id);
	snprintf(ptr, sizeof ptr, "/commands/%s", t);
	if (!command_id_ok(id)) return lerr(l, WX_BAD_INPUT, ptr, "a command id matches ^[a-z][a-z0-9-]{0,31}$");
	c->id = xstrdup(l, id);
	if (!c->id) return -1;
	c->max_args = EXEC_ARGS_MAX;
	if (!json_is_object(o)) return lerr(l, WX_BAD_INPUT, ptr, "must be an object");
	static const char *const keys[] = { "argv", "flags", "positional", "max_args", "passthrough", NULL };
	if (check_keys(l, o, ptr, keys) < 0) return -1;
	snprintf(sub, sizeof sub, "%s/argv", ptr);
	const json_t *argv = json_object_get(o, "argv");
	if (!argv) return lerr(l, WX_BAD_INPUT, sub, "missing");
	if (string_array(l, argv, sub, 1, &c->argv, &c->argc) < 0) return -1;
	for (size_t i = 0; i < c->argc; i++)
		if (!c->argv[i][0] || strlen(c->argv[i]) > 4096) {
			snprintf(sub, sizeof sub, "%s/argv/%zu", ptr, i);
			return lerr(l, WX_BAD_INPUT, sub, "an argv item is 1..4096 bytes");
		}
	snprintf(sub, sizeof sub, "%s/argv/0", ptr);
	if (resolve_bin(l, p, c->argv[0], sub, &c->bin) < 0) return -1;
	const json_t *flags = json_object_get(o, "flags");
	if (flags && !json_is_null(flags)) {
		snprintf(sub, sizeof sub, "%s/flags", ptr);
		if (!json_is_object(flags)) return lerr(l, WX_BAD_INPUT, sub, "must be an object {NAME: CLASS}");
		c->flags = calloc(json_object_size(flags) + 1, sizeof *c->flags);
		if (!c->flags) return werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)flags, k, v) {
			char ft[300];
			ptr_token(ft, sizeof ft, k);
			snprintf(sub, sizeof sub, "%s/flags/%s", ptr, ft);
			if (parse_flag(l, k, v, sub, &c->flags[c->nflags]) < 0) { c->nflags++; return -1; }
			c->nflags++;
		}
	}
	const json_t *pos = json_object_get(o, "positional");
	snprintf(sub, sizeof sub, "%s/positional", ptr);
	if (!pos || json_is_null(pos)) c->positional = EXEC_POS_NONE;
	else if (!json_is_string(pos)) return lerr(l, WX_BAD_INPUT, sub, "must be \"relpath\", \"pkgpattern\", \"testfile\" or null");
	else if (strcmp(json_string_value(pos), "relpath") == 0) c->positional = EXEC_POS_RELPATH;
	else if (strcmp(json_string_value(pos), "pkgpattern") == 0) c->positional = EXEC_POS_PKGPATTERN;
	else if (strcmp(json_string_value(pos), "testfile") == 0) c->positional = EXEC_POS_TESTFILE;
	else return lerr(l, WX_BAD_INPUT, sub, "\"%.100s\": must be \"relpath\", \"pkgpattern\", \"testfile\" or null",
	                 json_string_value(pos));
	const json_t *ma = json_object_get(o, "max_args");
	if (ma) {
		snprintf(sub, sizeof sub, "%s/max_args", ptr);
		if (!json_is_integer(ma) || json_integer_value(ma) < 0 || json_integer_value(ma) > EXEC_ARGS_MAX)
			return lerr(l, WX_BAD_INPUT, sub, "must be an integer 0..%u", EXEC_ARGS_MAX);
		c->max_args = (unsigned)json_integer_value(ma);
	}
	const json_t *pt = json_object_get(o, "passthrough");
	if (pt && !json_is_null(pt)) {
		snprintf(sub, sizeof sub, "%s/passthrough", ptr);
		if (!json_is_string(pt) || strcmp(json_string_value(pt), "--") != 0)
			return lerr(l, WX_BAD_INPUT, sub, "must be \"--\" (or absent)");
		c->passthrough = true;
	}
	return 0;
}

static int parse_read_root(struct lctx *l, const char *s, const char *ptr, char **out)
{
	char norm[PATH_MAX], rp[PATH_MAX];
	const char *why = abs_norm(s, norm, sizeof norm);
	if (why) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\": %s", s, why);
	if (!realpath(norm, rp)) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\": %s", s, strerror(errno));
	struct stat st;
	if (stat(rp, &st) < 0 || !S_ISDIR(st.st_mode)) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\" is not a directory", s);
	if (strcmp(norm, "/") == 0 || strcmp(rp, "/") == 0) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\" is / (the whole host)", s);
	for (size_t i = 0; i < l->ndeny; i++) {
		if (is_or_ancestor(norm, l->deny[i]) || is_or_ancestor(rp, l->deny[i]))
			return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\"%s%s%s is or contains %s, which the exec capsule never shows", s,
			            strcmp(norm, rp) ? " (really " : "", strcmp(norm, rp) ? rp : "", strcmp(norm, rp) ? ")" : "",
			            l->deny[i]);
	}
	const char *in = inside_world(l, norm, rp);
	if (in) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\" is inside %s", s, in);
	*out = xstrdup(l, rp);
	return *out ? 0 : -1;
}

static int parse_seed(struct lctx *l, const char *s, const char *ptr, char **out)
{
	char norm[PATH_MAX], rp[PATH_MAX];
	const char *why = abs_norm(s, norm, sizeof norm);
	if (why) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\": %s", s, why);
	if (!realpath(norm, rp)) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\": %s", s, strerror(errno));
	struct stat st;
	if (stat(rp, &st) < 0 || !S_ISDIR(st.st_mode)) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\" is not a directory", s);
	const char *in = inside_world(l, norm, rp);
	if (in) return lerr(l, WX_BAD_INPUT, ptr, "the seed \"%.200s\" is inside %s", s, in);
	*out = xstrdup(l, rp);
	return *out ? 0 : -1;
}

static int parse_uint(struct lctx *l, const json_t *v, const char *ptr, long long lo, long long hi, long long *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return lerr(l, WX_BAD_INPUT, ptr, "must be an integer %lld..%lld", lo, hi);
	*out = json_integer_value(v);
	return 0;
}

static int parse_profile(struct lctx *l, const json_t *o, struct exec_profile *p)
{
	if (!json_is_object(o)) return lerr(l, WX_BAD_INPUT, "(root)", "must be a JSON object");
	static const char *const keys[] = { "profile", "project", "root", "path", "env", "read_roots", "caches",
		                            "timeout_ms", "commands", "limits", "probe", NULL };
	if (check_keys(l, o, "", keys) < 0) return -1;
	const json_t *v = json_object_get(o, "profile");
	if (!json_is_string(v) || strcmp(json_string_value(v), EXEC_PROFILE_FORMAT) != 0)
		return lerr(l, WX_BAD_INPUT, "/profile", "must be \"" EXEC_PROFILE_FORMAT "\"");
	v = json_object_get(o, "project");
	if (!json_is_string(v) || !project_ok(json_string_value(v)))
		return lerr(l, WX_BAD_INPUT, "/project", "a string matching ^[a-z0-9][a-z0-9._-]{0,63}$ is required");
	if (!(p->project = xstrdup(l, json_string_value(v)))) return -1;
	v = json_object_get(o, "root");
	const char *root = v ? json_string_value(v) : ".";
	if (!root) return lerr(l, WX_BAD_INPUT, "/root", "must be a string (a directory relative to the worktree)");
	if (strcmp(root, ".") != 0) {
		const char *why = workspace_path_refusal(root);
		if (!why && root[0] == '-') why = "begins with '-'";
		if (!why) why = workspace_write_refusal(root);
		if (why) return lerr(l, WX_BAD_INPUT, "/root", "\"%.200s\": %s", root, why);
	}
	if (!(p->root = xstrdup(l, root))) return -1;
	v = json_object_get(o, "path");
	if (!v) return lerr(l, WX_BAD_INPUT, "/path", "missing (the directories argv[0] is resolved on)");
	if (string_array(l, v, "/path", 1, &p->path, &p->npath) < 0) return -1;
	for (size_t i = 0; i < p->npath; i++) {
		char norm[PATH_MAX], ptr[64];
		snprintf(ptr, sizeof ptr, "/path/%zu", i);
		const char *why = abs_norm(p->path[i], norm, sizeof norm);
		if (why) return lerr(l, WX_BAD_INPUT, ptr, "\"%.200s\": %s", p->path[i], why);
		free(p->path[i]);
		if (!(p->path[i] = xstrdup(l, norm))) return -1;
	}
	v = json_object_get(o, "env");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v)) return lerr(l, WX_BAD_INPUT, "/env", "must be an object {NAME: VALUE}");
		p->env = calloc(json_object_size(v) + 1, sizeof *p->env);
		if (!p->env) return werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x) {
			char t[300], ptr[320];
			ptr_token(t, sizeof t, k);
			snprintf(ptr, sizeof ptr, "/env/%s", t);
			if (!env_name_ok(k)) return lerr(l, WX_BAD_INPUT, ptr, "a variable name matches ^[A-Za-z_][A-Za-z0-9_]*$");
			const char *why = exec_env_owned(k);
			if (why) return lerr(l, WX_BAD_INPUT, ptr, "%s is World's to set: %s", k, why);
			if (!json_is_string(x)) return lerr(l, WX_BAD_INPUT, ptr, "must be a string");
			if (asprintf(&p->env[p->nenv], "%s=%s", k, json_string_value(x)) < 0) {
				p->env[p->nenv] = NULL;
				return werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
			}
			p->nenv++;
		}
	}
	v = json_object_get(o, "read_roots");
	if (v && !json_is_null(v)) {
		char **lits = NULL;
		size_t n = 0;
		int rc = string_array(l, v, "/read_roots", 0, &lits, &n);
		if (rc == 0) {
			p->read_roots = calloc(n + 1, sizeof *p->read_roots);
			if (!p->read_roots) rc = werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
		}
		for (size_t i = 0; rc == 0 && i < n; i++) {
			char ptr[64];
			snprintf(ptr, sizeof ptr, "/read_roots/%zu", i);
			rc = parse_read_root(l, lits[i], ptr, &p->read_roots[i]);
			if (rc == 0) p->nread_roots++;
		}
		for (size_t i = 0; lits && lits[i]; i++) free(lits[i]);
		free(lits);
		if (rc < 0) return -1;
	}
	v = json_object_get(o, "caches");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v)) return lerr(l, WX_BAD_INPUT, "/caches", "must be an object {VAR: {\"seed\": DIR}}");
		p->caches = calloc(json_object_size(v) + 1, sizeof *p->caches);
		if (!p->caches) return werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x) {
			char t[300], ptr[320], sub[340];
			ptr_token(t, sizeof t, k);
			snprintf(ptr, sizeof ptr, "/caches/%s", t);
			if (!env_name_ok(k)) return lerr(l, WX_BAD_INPUT, ptr, "a variable name matches ^[A-Za-z_][A-Za-z0-9_]*$");
			const char *why = exec_env_owned(k);
			if (why) return lerr(l, WX_BAD_INPUT, ptr, "%s is World's to set: %s", k, why);
			for (size_t i = 0; i < p->nenv; i++) {
				size_t kn = strlen(k);
				if (strncmp(p->env[i], k, kn) == 0 && p->env[i][kn] == '=')
					return lerr(l, WX_BAD_INPUT, ptr, "%s is also set in /env (a cache's variable is World's to set)", k);
			}
			struct exec_cache *c = &p->caches[p->ncaches++];
			if (!(c->var = xstrdup(l, k))) return -1;
			if (!json_is_object(x)) return lerr(l, WX_BAD_INPUT, ptr, "must be an object {\"seed\": DIR} or {}");
			static const char *const ckeys[] = { "seed", NULL };
			if (check_keys(l, x, ptr, ckeys) < 0) return -1;
			const json_t *seed = json_object_get(x, "seed");
			snprintf(sub, sizeof sub, "%s/seed", ptr);
			if (seed && !json_is_null(seed)) {
				if (!json_is_string(seed)) return lerr(l, WX_BAD_INPUT, sub, "must be an absolute directory");
				if (parse_seed(l, json_string_value(seed), sub, &c->seed) < 0) return -1;
			}
		}
	}
	long long n;
	v = json_object_get(o, "timeout_ms");
	/* the daemon's cap (serve --exec-max-ms): above it is refused, never clamped */
	unsigned cap = l->env && l->env->max_ms ? l->env->max_ms : EXEC_MAX_MS_DEFAULT;
	p->timeout_ms = SUP_EXEC_WALL_MS < cap ? SUP_EXEC_WALL_MS : cap;
	if (v) {
		if (parse_uint(l, v, "/timeout_ms", 1, EXEC_TIMEOUT_MS_MAX, &n) < 0) return -1;
		if (n > cap)
			return lerr(l, WX_BAD_INPUT, "/timeout_ms", "%lld ms is above this daemon's cap on one exec run, %u ms "
			            "(serve --exec-max-ms)", n, cap);
		p->timeout_ms = (unsigned)n;
	}
	v = json_object_get(o, "limits");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v)) return lerr(l, WX_BAD_INPUT, "/limits", "must be an object {memory_bytes, pids, cpu_ms}");
		static const char *const lkeys[] = { "memory_bytes", "pids", "cpu_ms", NULL };
		if (check_keys(l, v, "/limits", lkeys) < 0) return -1;
		const json_t *x;
		if ((x = json_object_get(v, "memory_bytes"))) {
			if (parse_uint(l, x, "/limits/memory_bytes", 16LL << 20, 1LL << 40, &n) < 0) return -1;
			p->memory_max = (uint64_t)n;
		}
		if ((x = json_object_get(v, "pids"))) {
			if (parse_uint(l, x, "/limits/pids", 1, 65536, &n) < 0) return -1;
			p->pids_max = (unsigned)n;
		}
		if ((x = json_object_get(v, "cpu_ms"))) {
			if (parse_uint(l, x, "/limits/cpu_ms", 1, EXEC_TIMEOUT_MS_MAX * 16LL, &n) < 0) return -1;
			p->cpu_ms = (unsigned)n;
		}
	}
	v = json_object_get(o, "commands");
	if (!json_is_object(v) || json_object_size(v) == 0)
		return lerr(l, WX_BAD_INPUT, "/commands", "an object of at least one command {ID: {argv, ...}} is required");
	p->commands = calloc(json_object_size(v), sizeof *p->commands);
	if (!p->commands) return werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)v, k, x) {
		if (parse_command(l, p, k, x, &p->commands[p->ncommands]) < 0) { p->ncommands++; return -1; }
		p->ncommands++;
	}
	qsort(p->commands, p->ncommands, sizeof *p->commands, cmp_cmd);
	v = json_object_get(o, "probe");
	if (v && !json_is_null(v)) {
		if (string_array(l, v, "/probe", 1, &p->probe_argv, &p->probe_argc) < 0) return -1;
		if (resolve_bin(l, p, p->probe_argv[0], "/probe/0", &p->probe_bin) < 0) return -1;
	} else {
		/* the first command's program, --version */
		p->probe_argv = calloc(3, sizeof *p->probe_argv);
		if (!p->probe_argv || !(p->probe_argv[0] = xstrdup(l, p->commands[0].argv[0])) ||
		    !(p->probe_argv[1] = xstrdup(l, "--version")))
			return werr(l->err, WX_FAIL, "exec profile %s: out of memory", l->file);
		p->probe_argc = 2;
		p->probe_bin = p->commands[0].bin;
	}
	return 0;
}

int exec_profile_load(const char *file, const struct exec_profile_env *env, struct exec_profile **out,
                      struct world_err *err)
{
	*out = NULL;
	struct lctx l = { .file = file, .env = env, .err = err };
	struct exec_profile *p = calloc(1, sizeof *p);
	char *buf = NULL;
	json_t *o = NULL;
	int rc = -1;
	if (!p) return werr(err, WX_FAIL, "exec profile %s: out of memory", file);
	if (!env || !env->workspace_root) {
		werr(err, WX_USAGE, "exec profile %s: needs --workspace-root (the worktrees it runs in)", file);
		goto out;
	}
	if (!(p->file = strdup(file))) { werr(err, WX_FAIL, "exec profile %s: out of memory", file); goto out; }
	/* where no read root may reach */
	deny_add(&l, env->workspace_root);
	deny_add(&l, env->store_dir);
	deny_add(&l, env->home);
	deny_add(&l, "/root");
	if (env->homes_dir) {
		DIR *d = opendir(env->homes_dir);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d))) {
				if (de->d_name[0] == '.') continue;
				char hp[PATH_MAX];
				snprintf(hp, sizeof hp, "%s/%s", env->homes_dir, de->d_name);
				deny_add(&l, hp);
			}
			closedir(d);
		}
	}
	if (l.deny_oom) {
		werr(err, WX_FAIL, "exec profile %s: out of memory", file);
		goto out;
	}
	/* the file itself: outside the workspace root and the store's folder */
	char rp[PATH_MAX];
	if (!realpath(file, rp)) {
		werr(err, errno == ENOENT ? WX_NOT_FOUND : WX_IO, "exec profile %s: %s", file, strerror(errno));
		goto out;
	}
	char lit[PATH_MAX];
	const char *lp = NULL;
	if (file[0] == '/' && !abs_norm(file, lit, sizeof lit)) lp = lit;
	const char *in = inside_world(&l, lp, rp);
	if (in) {
		werr(err, WX_BAD_INPUT, "exec profile %s: the file is inside %s (an agent could rewrite it)", file, in);
		goto out;
	}
	size_t len;
	if (world_read_file(rp, EXEC_PROFILE_FILE_MAX, &buf, &len, err) < 0) {
		werr_prefix(err, "exec profile %s", file);
		goto out;
	}
	json_error_t je;
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!o) {
		werr(err, WX_BAD_INPUT, "exec profile %s: line %d column %d: %s", file, je.line, je.column, je.text);
		goto out;
	}
	if (parse_profile(&l, o, p) < 0) goto out;
	size_t cl;
	char *canon = world_canon_json(o, &cl, err);
	if (!canon) { werr_prefix(err, "exec profile %s", file); goto out; }
	int hr = world_hash_ref(canon, cl, p->digest, err);
	free(canon);
	if (hr < 0) goto out;
	*out = p;
	p = NULL;
	rc = 0;
out:
	for (size_t i = 0; i < l.ndeny; i++) free(l.deny[i]);
	free(l.deny);
	json_decref(o);
	free(buf);
	exec_profile_free(p);
	return rc;
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++) free(v[i]);
	free(v);
}

void exec_profile_free(struct exec_profile *p)
{
	if (!p) return;
	free(p->file);
	free(p->project);
	free(p->root);
	strv_free(p->path);
	strv_free(p->env);
	strv_free(p->read_roots);
	for (size_t i = 0; i < p->ncaches; i++) {
		free(p->caches[i].var);
		free(p->caches[i].seed);
	}
	free(p->caches);
	strv_free(p->probe_argv);
	for (size_t i = 0; i < p->ncommands; i++) {
		struct exec_command *c = &p->commands[i];
		free(c->id);
		strv_free(c->argv);
		for (size_t j = 0; j < c->nflags; j++) {
			free(c->flags[j].name);
			free(c->flags[j].pattern);
			if (c->flags[j].re) {
				regfree(c->flags[j].re);
				free(c->flags[j].re);
			}
			for (size_t k = 0; k < c->flags[j].nvalues; k++) free(c->flags[j].values[k]);
			free(c->flags[j].values);
		}
		free(c->flags);
	}
	free(p->commands);
	free(p);
}

const struct exec_command *exec_profile_command(const struct exec_profile *p, const char *id)
{
	for (size_t i = 0; p && id && i < p->ncommands; i++)
		if (strcmp(p->commands[i].id, id) == 0) return &p->commands[i];
	return NULL;
}

/* ---- the args grammar ---- */

static const char *relpath_refusal(const char *s)
{
	if (s[0] == '-') return "a path may not begin with '-'";
	const char *why = workspace_path_refusal(s);
	return why;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n > m && strcmp(s + n - m, suf) == 0;
}

static const char *testfile_refusal(const char *s)
{
	const char *why = relpath_refusal(s);
	if (why) return why;
	const char *base = strrchr(s, '/');
	base = base ? base + 1 : s;
	if (strncmp(base, "test_", 5) == 0 && ends_with(base, ".py")) return NULL;
	if (ends_with(base, "_test.py") || ends_with(base, "_test.go") || ends_with(base, ".test")) return NULL;
	static const char *const js[] = { ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts", NULL };
	for (const char *const *e = js; *e; e++) {
		char a[16], b[16];
		snprintf(a, sizeof a, ".test%s", *e);
		snprintf(b, sizeof b, ".spec%s", *e);
		if (ends_with(base, a) || ends_with(base, b)) return NULL;
	}
	return "not a test file (test_*.py, *_test.py, *_test.go, *.test, *.test.js/ts/..., *.spec.js/ts/...)";
}

static const char *pkgpattern_refusal(const char *s)
{
	if (strcmp(s, "./...") == 0 || strcmp(s, ".") == 0) return NULL;
	size_t n = strlen(s);
	char buf[EXEC_ARG_BYTES_MAX + 1];
	if (n > EXEC_ARG_BYTES_MAX) return "too long";
	memcpy(buf, s, n + 1);
	if (n > 4 && strcmp(buf + n - 4, "/...") == 0) buf[n - 4] = '\0';
	/* a trailing '/' names the package directory too (go test ./pkg/) */
	size_t m = strlen(buf);
	if (m > 1 && buf[m - 1] == '/') buf[m - 1] = '\0';
	if (strstr(buf, "...")) return "'...' only as the whole pattern's last component (./... or DIR/...)";
	return relpath_refusal(buf);
}

static const char *value_refusal(const struct exec_flag *f, const char *v, char *tmp, size_t tmplen)
{
	switch (f->kind) {
	case EXEC_FLAG_BOOL: return "a bool flag takes no value";
	case EXEC_FLAG_INT: {
		size_t n = strlen(v);
		if (n == 0 || n > 7) return "not an integer 0..1000000";
		for (size_t i = 0; i < n; i++)
			if (v[i] < '0' || v[i] > '9') return "not an integer 0..1000000";
		if (n > 1 && v[0] == '0') return "an integer has no leading zero";
		if (atol(v) > EXEC_VALUE_INT_MAX) return "not an integer 0..1000000";
		return NULL;
	}
	case EXEC_FLAG_RELPATH: return relpath_refusal(v);
	case EXEC_FLAG_REGEX: {
		size_t n = strlen(v);
		if (n == 0 || n > EXEC_VALUE_REGEX_MAX) return "a regex value is 1..256 bytes";
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) return "a regex value holds no control character";
		if (f->re && regexec((const regex_t *)f->re, v, 0, NULL, 0) != 0) {
			snprintf(tmp, tmplen, "does not match the profile's pattern %s", f->pattern);
			return tmp;
		}
		return NULL;
	}
	case EXEC_FLAG_ENUM:
		for (size_t i = 0; i < f->nvalues; i++)
			if (strcmp(v, f->values[i]) == 0) return NULL;
		{
			size_t o = (size_t)snprintf(tmp, tmplen, "not one of");
			for (size_t i = 0; i < f->nvalues && o < tmplen; i++)
				o += (size_t)snprintf(tmp + o, tmplen - o, "%s %s", i ? "," : "", f->values[i]);
		}
		return tmp;
	}
	return "unknown flag class";
}

static void allowed_flags(const struct exec_command *c, char *out, size_t outlen)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < c->nflags && o < outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%s%s", i ? ", " : "", c->flags[i].name);
	if (!c->nflags) snprintf(out, outlen, "none");
}

void exec_argv_free(char **argv) { strv_free(argv); }

int exec_args_match(const struct exec_command *c, const char *const *args, size_t nargs, char ***argv_out,
                    size_t *argc_out, char *why, size_t whylen, struct world_err *err)
{
	*argv_out = NULL;
	*argc_out = 0;
	/* prefix + at most two argv items per agent arg */
	size_t cap = c->argc + 2 * nargs + 1, n = 0;
	char **av = calloc(cap, sizeof *av);
	if (!av) return werr(err, WX_FAIL, "exec args: out of memory");
#define PUSH(s)                                                                 \
	do {                                                                    \
		if (!(av[n] = strdup(s))) {                                     \
			strv_free(av);                                          \
			return werr(err, WX_FAIL, "exec args: out of memory"); \
		}                                                               \
		n++;                                                            \
	} while (0)
#define REFUSE(i, ...)                                                                   \
	do {                                                                             \
		int o_ = snprintf(why, whylen, "args[%zu] \"%.100s\": ", (size_t)(i), args[i]); \
		if (o_ > 0 && (size_t)o_ < whylen) snprintf(why + o_, whylen - (size_t)o_, __VA_ARGS__); \
		strv_free(av);                                                           \
		return 1;                                                                \
	} while (0)
	PUSH(c->bin.path);
	for (size_t i = 1; i < c->argc; i++) PUSH(c->argv[i]);
	if (nargs > c->max_args) {
		size_t i = c->max_args;
		REFUSE(i, "command %s takes at most %u args, got %zu", c->id, c->max_args, nargs);
	}
	char tmp[600], names[600];
	for (size_t i = 0; i < nargs; i++) {
		const char *a = args[i];
		if (!a[0]) REFUSE(i, "an empty arg");
		if (strcmp(a, "--") == 0) {
			if (!c->passthrough) REFUSE(i, "'--' is refused: command %s declares no passthrough", c->id);
			PUSH("--");
			for (size_t j = i + 1; j < nargs; j++) PUSH(args[j]);
			break;
		}
		if (a[0] == '-' && a[1]) {
			size_t nl = strcspn(a, "=");
			const struct exec_flag *f = NULL;
			for (size_t k = 0; k < c->nflags; k++)
				if (strlen(c->flags[k].name) == nl && strncmp(c->flags[k].name, a, nl) == 0) f = &c->flags[k];
			if (!f) {
				allowed_flags(c, names, sizeof names);
				REFUSE(i, "flag %.*s is not one of command %s's flags (%s)", (int)(nl < 100 ? nl : 100), a, c->id, names);
			}
			const char *val = a[nl] == '=' ? a + nl + 1 : NULL;
			if (f->kind == EXEC_FLAG_BOOL) {
				if (val) REFUSE(i, "%s is a bool flag: it takes no value", f->name);
				PUSH(f->name);
				continue;
			}
			size_t vi = i;
			if (!val) {
				if (i + 1 >= nargs) REFUSE(i, "%s needs a value", f->name);
				val = args[++i];
				vi = i;
			}
			const char *vw = value_refusal(f, val, tmp, sizeof tmp);
			if (vw) REFUSE(vi, "the value of %s: %s", f->name, vw);
			/* the canonical form (docs/exec.md, The grammar): --long=V as one
			 * item; a single-dash flag as two items, -f V (getopt and argparse
			 * read -f=V as the value "=V") */
			if (f->name[1] == '-') {
				char *kv;
				if (asprintf(&kv, "%s=%s", f->name, val) < 0) {
					strv_free(av);
					return werr(err, WX_FAIL, "exec args: out of memory");
				}
				av[n++] = kv;
			} else {
				PUSH(f->name);
				PUSH(val);
			}
			continue;
		}
		const char *pw = NULL;
		switch (c->positional) {
		case EXEC_POS_NONE: REFUSE(i, "command %s takes no positional args", c->id);
		case EXEC_POS_RELPATH: pw = relpath_refusal(a); break;
		case EXEC_POS_PKGPATTERN: pw = pkgpattern_refusal(a); break;
		case EXEC_POS_TESTFILE: pw = testfile_refusal(a); break;
		}
		if (pw) REFUSE(i, "%s", pw);
		PUSH(a);
	}
#undef PUSH
#undef REFUSE
	av[n] = NULL;
	*argv_out = av;
	*argc_out = n;
	return 0;
}

/* ---- the loaded set ---- */

int exec_profiles_add(struct exec_profiles *s, struct exec_profile *p, struct world_err *err)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->p[i]->project, p->project) == 0)
			return werr(err, WX_USAGE, "exec profile %s: project %s is already loaded from %s (one profile per project)",
			            p->file, p->project, s->p[i]->file);
	if (s->n == EXEC_PROFILES_MAX) return werr(err, WX_USAGE, "exec profile %s: more than %d profiles", p->file, EXEC_PROFILES_MAX);
	s->p[s->n++] = p;
	return 0;
}

int exec_profiles_map(struct exec_profiles *s, const char *m, struct world_err *err)
{
	const char *eq = strchr(m, '=');
	if (!eq || eq == m || !eq[1])
		return werr(err, WX_USAGE, "--exec-episode-project '%.200s': expected EPISODE=PROJECT", m);
	char *ep = strndup(m, (size_t)(eq - m));
	if (!ep) return werr(err, WX_FAIL, "--exec-episode-project: out of memory");
	if (!re_full("^[a-z0-9][a-z0-9-]{0,63}$", ep)) {
		werr(err, WX_USAGE, "--exec-episode-project '%.200s': the episode must match ^[a-z0-9][a-z0-9-]{0,63}$", m);
		free(ep);
		return -1;
	}
	for (size_t i = 0; i < s->nmap; i++)
		if (strcmp(s->map_episode[i], ep) == 0) {
			werr(err, WX_USAGE, "--exec-episode-project '%.200s': episode %s is mapped twice", m, ep);
			free(ep);
			return -1;
		}
	int found = 0;
	for (size_t i = 0; i < s->n; i++) found |= strcmp(s->p[i]->project, eq + 1) == 0;
	if (!found) {
		werr(err, WX_USAGE, "--exec-episode-project '%.200s': no --exec-profile has project %s", m, eq + 1);
		free(ep);
		return -1;
	}
	char **e2 = realloc(s->map_episode, (s->nmap + 1) * sizeof *e2);
	if (e2) s->map_episode = e2;
	char **p2 = e2 ? realloc(s->map_project, (s->nmap + 1) * sizeof *p2) : NULL;
	if (p2) s->map_project = p2;
	char *pr = p2 ? strdup(eq + 1) : NULL;
	if (!pr) {
		free(ep);
		return werr(err, WX_FAIL, "--exec-episode-project: out of memory");
	}
	s->map_episode[s->nmap] = ep;
	s->map_project[s->nmap] = pr;
	s->nmap++;
	return 0;
}

int exec_profiles_for(const struct exec_profiles *s, const char *episode, const struct exec_profile **out, char *why,
                      size_t whylen)
{
	*out = NULL;
	if (!s || s->n == 0) {
		snprintf(why, whylen, "no exec profile: start worldd serve with --exec-profile FILE");
		return 1;
	}
	for (size_t i = 0; i < s->nmap; i++)
		if (episode && strcmp(s->map_episode[i], episode) == 0)
			for (size_t j = 0; j < s->n; j++)
				if (strcmp(s->p[j]->project, s->map_project[i]) == 0) {
					*out = s->p[j];
					return 0;
				}
	if (s->n == 1) {
		*out = s->p[0];
		return 0;
	}
	snprintf(why, whylen,
	         "no exec profile for episode %.64s: %zu profiles are loaded; start worldd serve with "
	         "--exec-episode-project %.64s=PROJECT",
	         episode ? episode : "?", s->n, episode ? episode : "EP");
	return 1;
}

void exec_profiles_free(struct exec_profiles *s)
{
	if (!s) return;
	for (size_t i = 0; i < s->n; i++) exec_profile_free(s->p[i]);
	for (size_t i = 0; i < s->nmap; i++) {
		free(s->map_episode[i]);
		free(s->map_project[i]);
	}
	free(s->map_episode);
	free(s->map_project);
	memset(s, 0, sizeof *s);
}
