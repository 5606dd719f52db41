/* cli/flags.c: see flags.h. */
#include "cli/flags.h"
#include "cli/verbs.h"
#include "common/file.h"
#include "store/store.h"
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int worldd_parse_flags(const char *verb, int argc, char **argv, struct worldd_flag *flags, const char **pos,
                       int maxpos, int *npos)
{
	*npos = 0;
	int rest = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!rest && strcmp(a, "--") == 0) { rest = 1; continue; }
		if (rest || strncmp(a, "--", 2) != 0 || strcmp(a, "-") == 0) {
			if (*npos >= maxpos) return worldd_usage(verb, "unexpected argument '%s'", a);
			pos[(*npos)++] = a;
			continue;
		}
		const char *eq = strchr(a, '=');
		size_t nl = eq ? (size_t)(eq - a) : strlen(a);
		struct worldd_flag *f = NULL;
		for (struct worldd_flag *g = flags; g->name; g++)
			if (strlen(g->name) == nl && strncmp(g->name, a, nl) == 0) f = g;
		if (!f) return worldd_usage(verb, "unknown flag '%.*s'", (int)nl, a);
		if (f->value && !f->multi) return worldd_usage(verb, "flag %s given twice", f->name);
		const char *v;
		if (!f->has_value) {
			if (eq) return worldd_usage(verb, "flag %s takes no value", f->name);
			v = "";
		} else if (eq) {
			v = eq + 1;
		} else {
			if (i + 1 >= argc) return worldd_usage(verb, "flag %s needs a value", f->name);
			v = argv[++i];
		}
		if (f->nvalues >= WORLDD_FLAG_MAX_VALUES) return worldd_usage(verb, "flag %s given too often", f->name);
		f->values[f->nvalues++] = v;
		f->value = v;
	}
	return 0;
}

struct worldd_flag *worldd_flag(struct worldd_flag *flags, const char *name)
{
	for (struct worldd_flag *g = flags; g->name; g++)
		if (strcmp(g->name, name) == 0) return g;
	return NULL;
}

static int read_fd(int fd, size_t max, char **out, size_t *len, struct world_err *err)
{
	size_t cap = 1 << 14, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) return werr(err, WX_FAIL, "out of memory");
	for (;;) {
		if (n == cap) {
			if (n > max) break;
			size_t nc = cap * 2;
			char *nb = realloc(buf, nc + 1);
			if (!nb) {
				free(buf);
				return werr(err, WX_FAIL, "out of memory");
			}
			buf = nb;
			cap = nc;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR) continue;
			int e = errno;
			free(buf);
			return werr(err, WX_IO, "read: %s", strerror(e));
		}
		if (r == 0) break;
		n += (size_t)r;
	}
	if (n > max) {
		free(buf);
		return werr(err, WX_BAD_INPUT, "more than %zu bytes", max);
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

int worldd_read_input(const char *verb, const char *what, const char *path, size_t max, char **out, size_t *len)
{
	struct world_err err = { 0, "" };
	*out = NULL;
	*len = 0;
	if (strcmp(path, "-") == 0) {
		if (read_fd(0, max, out, len, &err) == 0) return 0;
		fprintf(stderr, "worldd %s: %s (standard input): %s\n", verb, what, err.msg);
		return err.code;
	}
	if (world_read_file(path, max, out, len, &err) == 0) return 0;
	fprintf(stderr, "worldd %s: %s: %s\n", verb, what, err.msg);
	return err.code ? err.code : WX_FAIL;
}

int worldd_flag_ll(const char *verb, const char *flag, const char *s, long long min, long long max, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || errno || v < min || v > max)
		return worldd_usage(verb, "%s '%s' is not an integer in %lld..%lld", flag, s, min, max);
	*out = v;
	return 0;
}

int worldd_wait_lock(const char *verb, const char *s, double *out)
{
	*out = 0;
	if (!s) return 0;
	if (world_wait_lock_parse(s, out) < 0)
		return worldd_usage(verb, "--wait-lock '%s' is not a number of seconds in 0..86400", s);
	return 0;
}

/* The verbs' failure and usage lines (cli/verbs.h): here, not in worldd.c,
 * because every program of the verbs (worldd, worldd-serve,
 * world-store-copy) links this file. */
int worldd_fail(const char *verb, const struct world_err *err)
{
	fprintf(stderr, "worldd %s: %s\n", verb, err->msg[0] ? err->msg : "failed");
	return err->code ? err->code : WX_FAIL;
}

int worldd_usage(const char *verb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "worldd %s: usage: ", verb);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see worldd %s --help)\n", verb);
	va_end(ap);
	return WX_USAGE;
}

int worldd_wants_help(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
	return 0;
}
