/* cli/store_uri.c: see store_uri.h. */
#include "cli/store_uri.h"
#include "cli/serve_exec.h"
#include "cli/verbs.h"
#include "store/db.h"
#include "store/open_opts.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *password_file;
/* the private copy of a URI whose password is masked in argv's memory
 * (kept for the process's life; reachable from here) */
static char *store_copy;

const char *worldd_store_password_file(void) { return password_file; }

/* argv[i] is --NAME VALUE or --NAME=VALUE: the index of the value's
 * argument, *val its text; -1 otherwise. */
static int flag_at(int argc, char **argv, int i, const char *name, const char **val)
{
	size_t n = strlen(name);
	if (strncmp(argv[i], name, n) != 0) return -1;
	if (argv[i][n] == '=') {
		*val = argv[i] + n + 1;
		return i;
	}
	if (argv[i][n] || i + 1 >= argc) return -1;
	*val = argv[i + 1];
	return i + 1;
}

const char *worldd_store_arg(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) break;
		const char *v;
		if (flag_at(argc, argv, i, "--store", &v) >= 0) return v;
	}
	return NULL;
}

/* Overwrites every form of a password in the URI at s (the userinfo's
 * after ':', any password=... value) with '*', in place. */
static void mask_uri(char *s)
{
	char *a = strstr(s, "://");
	if (!a) return;
	a += 3;
	size_t auth = strcspn(a, "/?#");
	char *at = NULL;
	for (size_t i = 0; i < auth; i++)
		if (a[i] == '@') at = a + i;
	if (at)
		for (char *c = memchr(a, ':', (size_t)(at - a)); c && ++c < at;) *c = '*';
	for (char *p = s; (p = strstr(p, "password=")); p += 9)
		for (char *v = p + 9; *v && *v != '&' && *v != '#'; v++) *v = '*';
}

static int has_password(const char *s)
{
	const char *a = strstr(s, "://");
	if (!a) return 0;
	a += 3;
	size_t auth = strcspn(a, "/?#");
	const char *at = NULL;
	for (size_t i = 0; i < auth; i++)
		if (a[i] == '@') at = a + i;
	return (at && memchr(a, ':', (size_t)(at - a))) || strstr(s, "password=");
}

/* Makes the process's argument area -- what /proc/PID/cmdline and ps show,
 * here and in every forked child -- one line: the program's name and the
 * arguments (the store URI masked, its password one '*' whatever its
 * length) joined by spaces, then NULs, and the area's last byte a space:
 * the kernel then shows the area up to its first NUL (setproctitle's
 * rule), so neither the password nor its length is shown. The
 * verb's arguments are first copied out of the area (argv points at the
 * copies). Returns -1 when out of memory (nothing changed). */
static char *area_end; /* one past the last byte of the arguments' strings, as given */
static int cmdline_mask(int argc, char **argv, int store_at)
{
	extern char *program_invocation_name;
	char *lo = program_invocation_name, *hi = area_end;
	if (!lo || !hi || hi <= lo) return 0;
	char **copies = calloc((size_t)argc + 1, sizeof *copies);
	char *name = strdup(lo);
	if (!copies || !name) { free(copies); free(name); return -1; }
	for (int i = 0; i < argc; i++)
		if (!(copies[i] = i == store_at ? store_copy : strdup(argv[i]))) {
			for (int k = 0; k < i; k++)
				if (copies[k] != store_copy) free(copies[k]);
			free(copies);
			free(name);
			return -1;
		}
	/* the masked URI: USER:*@... and password=* */
	char *m = malloc(strlen(store_copy) + 16), *w = m;
	if (!m) {
		for (int k = 0; k < argc; k++)
			if (copies[k] != store_copy) free(copies[k]);
		free(copies);
		free(name);
		return -1;
	}
	for (const char *r = store_copy; *r;) {
		const char *a = strstr(store_copy, "://");
		size_t auth = a ? strcspn(a + 3, "/?#") : 0;
		const char *at = NULL;
		for (size_t i = 0; a && i < auth; i++)
			if (a[3 + i] == '@') at = a + 3 + i;
		const char *colon = at ? memchr(a + 3, ':', (size_t)(at - a - 3)) : NULL;
		if (colon && r == colon + 1) {
			*w++ = '*';
			r = at;
			continue;
		}
		if (strncmp(r, "password=", 9) == 0) {
			memcpy(w, "password=*", 10);
			w += 10;
			r += 9;
			while (*r && *r != '&' && *r != '#') r++;
			continue;
		}
		*w++ = *r++;
	}
	*w = 0;
	/* what comes before the verb's arguments (the program's name, the
	 * verb's words) stays, its NULs made spaces */
	char *first = hi;
	for (int i = 0; i < argc; i++)
		if (i != store_at && argv[i] > lo && argv[i] < first) first = argv[i];
	if (store_at > 0 && first == hi) first = argv[0];
	size_t cap = (size_t)(hi - lo), k = (size_t)(first - lo);
	for (size_t i = 0; i + 1 < k; i++)
		if (!lo[i]) lo[i] = ' ';
	if (k) lo[k - 1] = ' ';
	memset(lo + k, 0, cap - k);
	for (int i = 0; i < argc && cap > 1; i++) {
		const char *t = i == store_at ? m : copies[i];
		if (i > 0 && k + 1 < cap - 1) lo[k++] = ' ';
		for (; *t && k + 1 < cap - 1; t++) lo[k++] = *t;
	}
	lo[cap - 1] = ' ';
	free(m);
	program_invocation_name = name;
	for (int i = 0; i < argc; i++) argv[i] = copies[i];
	free(copies); /* the strings stay: argv holds them for the process's life */
	return 0;
}

int worldd_store_take(const char *who, int *argc, char **argv)
{
	const char *file = NULL, *store = NULL;
	int store_at = -1;
	{
		/* the end of the argument area (the strings main's argv points
		 * into, within 1 MiB of the program's name), before any is dropped */
		extern char *program_invocation_name;
		char *lo = program_invocation_name;
		for (int i = 0; lo && i < *argc; i++) {
			char *e = argv[i] + strlen(argv[i]) + 1;
			if (argv[i] > lo && argv[i] < lo + (1 << 20) && e > area_end) area_end = e;
		}
	}
	for (int i = 0; i < *argc; i++) {
		if (strcmp(argv[i], "--") == 0) break;
		const char *v;
		int j = flag_at(*argc, argv, i, "--store-password-file", &v);
		if (j >= 0) {
			if (file) {
				fprintf(stderr, "%s: usage: flag --store-password-file given twice\n", who);
				return WX_USAGE;
			}
			if (!*v) {
				fprintf(stderr, "%s: usage: --store-password-file needs a FILE\n", who);
				return WX_USAGE;
			}
			file = v;
			/* out of argv: the verb never sees it */
			int drop = j - i + 1;
			memmove(argv + i, argv + i + drop, (size_t)(*argc - i - drop + 1) * sizeof *argv);
			*argc -= drop;
			i--;
			continue;
		}
		if (!store && (j = flag_at(*argc, argv, i, "--store", &v)) >= 0) {
			store = v;
			store_at = j;
			i = j;
		}
	}
	int pg = store && wdb_kind_of(store) == WDB_PG;
	if (file && !pg) {
		fprintf(stderr, "%s: usage: --store-password-file is for a postgresql:// --store only\n", who);
		return WX_USAGE;
	}
	/* a copy: the argument area may be rewritten below (cmdline_mask) */
	if (file && !(file = strdup(file))) {
		fprintf(stderr, "%s: out of memory\n", who);
		return WX_FAIL;
	}
	password_file = file;
	if (pg && has_password(store)) {
		/* the verb reads a private copy; the argument area -- what
		 * /proc/PID/cmdline shows, here and in every forked child --
		 * keeps the URI with its password masked */
		if (!(store_copy = strdup(argv[store_at]))) {
			fprintf(stderr, "%s: out of memory\n", who);
			return WX_FAIL;
		}
		mask_uri(argv[store_at]);
		argv[store_at] = store_copy;
		if (cmdline_mask(*argc, argv, store_at) < 0) {
			fprintf(stderr, "%s: out of memory\n", who);
			return WX_FAIL;
		}
	}
	return 0;
}

int worldd_store_route(const char *verb, const char *const *words, int nwords, int argc, char **argv, int *handled)
{
	*handled = 0;
	const char *store = worldd_store_arg(argc, argv);
	if (!store || wdb_kind_of(store) != WDB_PG) {
		for (int i = 0; i < argc && strcmp(argv[i], "--"); i++) {
			const char *v;
			if (flag_at(argc, argv, i, "--store-password-file", &v) >= 0) {
				*handled = 1;
				return worldd_usage(verb, "--store-password-file is for a postgresql:// --store only");
			}
		}
		return 0;
	}
	*handled = 1;
#ifdef WORLD_HAVE_PG
	return worldd_exec_sibling(verb, "worldd-serve", "worldd", words, nwords, argc, argv);
#else
	(void)words;
	(void)nwords;
	char shown[600];
	world_store_name_redact(store, shown, sizeof shown);
	fprintf(stderr, "worldd %s: store %s: this build has no PostgreSQL driver (configured --without-postgresql); "
	                "a postgresql:// store needs World built with libpq\n", verb, shown);
	return WX_USAGE;
#endif
}

int worldd_store_open(const char *name, int mode, double wait_lock_s, struct world_store **out,
                      struct world_err *err)
{
	struct world_store_open_opts o = { .password_file = password_file, .wait_lock_s = wait_lock_s };
	return world_store_open_opts(name, mode, &o, out, err);
}

int worldd_store_sqlite_only(const char *verb, struct world_store *st, const char *what)
{
	if (world_store_db(st)) return 0;
	fprintf(stderr, "worldd %s: store %s: %s runs on SQLite stores only (not yet on PostgreSQL)\n", verb,
	        world_store_path(st), what);
	return WX_USAGE;
}
