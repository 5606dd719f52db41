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

int worldd_store_take(const char *who, int *argc, char **argv)
{
	const char *file = NULL, *store = NULL;
	int store_at = -1;
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
