/* cli/worldd.c: the operator command line. Dispatches to the verb tables
 * of every component (see verbs.h); owns --help, --version, dispatch, and
 * the one check that standard output really reached its file (every verb
 * returns through it, so output lost to a full disk is exit 9 everywhere). */
#include "cli/output.h"
#include "cli/store_uri.h"
#include "cli/verbs.h"
#include "store/db.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef WORLD_AILANG_LITE_DEFAULT
#define WORLD_AILANG_LITE_DEFAULT "/usr/local/libexec/world/ailang-lite"
#endif

static const struct worldd_verb *const verb_tables[] = {
	store_verbs, log_verbs, capsule_verbs, broker_verbs, epoch_verbs, prov_verbs, daemon_verbs, ops_verbs, copy_verbs,
	audit_verbs,
};

static void print_help(void)
{
	printf("usage: worldd VERB [FLAGS]   (worldd VERB --help for its flags and exit codes)\n"
	       "       worldd --version\n\n"
	       "Flags take --flag VALUE or --flag=VALUE; a flag given twice is refused; - names\n"
	       "standard input wherever a file is read. Without --ailang-bin, verbs run the\n"
	       "installed interpreter " WORLD_AILANG_LITE_DEFAULT ".\n\nverbs:\n");
	for (size_t t = 0; t < sizeof verb_tables / sizeof verb_tables[0]; t++)
		for (const struct worldd_verb *v = verb_tables[t]; v->name; v++)
			printf("  %-16s %s\n", v->name, v->summary);
	printf("\nexit codes (shared by every verb):\n"
	       "  0 ok            1 failure        2 usage         3 bad input\n"
	       "  4 not found     5 store busy     6 schema        7 integrity\n"
	       "  8 conflict      9 I/O           10 capsule setup 11 deadline\n"
	       " 12 output cap   13 not an object 14 interpreter  15 hash mismatch\n"
	       " 16 capacity     17 syscall denied 18 protocol    19 check refused\n"
	       " 20 attended step refused       21 call refused before execution\n"
	       " 22 session unknown or expired   23 plan broke a plan law (docs/design.md §5.2)\n"
	       " 24 not a SQLite store (a file of another kind; nothing created beside it)\n"
	       " 25 the episode's call or byte quota is spent (refused before running)\n"
	       " 26 cancelled by its caller (capsule killed; nothing committed as succeeded)\n"
	       " 27 committed, but an effect failed (the reason is in the record and the output)\n"
	       " 28 worldd audit: an attempt escaped, a control failed, or the posture differs\n"
	       " 29 the store's PostgreSQL server unreachable or the connection lost (retry:\n"
	       "    a call with its task id runs at most once)\n");
}

/* Match "a b" against argv[1], argv[2]; returns words consumed or 0. */
static int verb_matches(const char *name, int argc, char **argv)
{
	const char *space = strchr(name, ' ');
	if (!space) return (argc > 1 && strcmp(argv[1], name) == 0) ? 1 : 0;
	size_t first = (size_t)(space - name);
	if (argc > 2 && strlen(argv[1]) == first && strncmp(argv[1], name, first) == 0 &&
	    strcmp(argv[2], space + 1) == 0)
		return 2;
	return 0;
}

/* Standard output must have reached its file: a verb that printed into a
 * full disk or a closed pipe failed, whatever it returned. */
static int finish(const char *verb, int rc)
{
	char who[96];
	snprintf(who, sizeof who, "worldd%s%s", verb ? " " : "", verb ? verb : "");
	return cli_close_stdout(who, rc);
}

static int dispatch(int argc, char **argv, const char **verb)
{
	*verb = NULL;
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		print_help();
		return argc < 2 ? WX_USAGE : WX_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		if (argc > 2) {
			fprintf(stderr, "worldd: usage: --version takes no arguments\n");
			return WX_USAGE;
		}
		printf("worldd (World) " PACKAGE_VERSION "\n");
		return WX_OK;
	}
	const struct worldd_verb *best = NULL;
	int best_words = 0;
	for (size_t t = 0; t < sizeof verb_tables / sizeof verb_tables[0]; t++)
		for (const struct worldd_verb *v = verb_tables[t]; v->name; v++) {
			int w = verb_matches(v->name, argc, argv);
			if (w > best_words) { best = v; best_words = w; }
		}
	if (!best) {
		fprintf(stderr, "worldd: unknown verb '%s' (see worldd --help)\n", argv[1]);
		return WX_USAGE;
	}
	*verb = best->name;
	int vargc = argc - 1 - best_words;
	char **vargv = argv + 1 + best_words;
	/* backup and store copy name their own password files and run a URI
	 * in world-store-copy (cli/copy_exec.h); every other verb's store is
	 * handled here, once (cli/store_uri.h) */
	int own_uri = strcmp(best->name, "backup") == 0 || strcmp(best->name, "store copy") == 0;
	if (worldd_wants_help(vargc, vargv)) {
		fputs(best->help, stdout);
		if (!own_uri && strstr(best->help, "--store ")) fputs(WORLDD_STORE_URI_HELP, stdout);
		return WX_OK;
	}
	if (!own_uri) {
#ifdef WORLDD_SERVE_EXEC
		/* the static worldd: a postgresql:// store runs in worldd-serve */
		int handled, rc = worldd_store_route(best->name, (const char *const *)(argv + 1), best_words, vargc, vargv,
		                                     &handled);
		if (handled) return rc;
#else
		char who[96];
		snprintf(who, sizeof who, "worldd %s", best->name);
		int rc = worldd_store_take(who, &vargc, vargv);
		if (rc) return rc;
#endif
	}
	return best->run(vargc, vargv);
}

int main(int argc, char **argv)
{
#if defined(WORLD_HAVE_PG) && !defined(WORLDD_SERVE_EXEC)
	/* worldd-serve: dynamically linked, with the store's PostgreSQL driver */
	wdb_pg_enable();
#endif
	const char *verb;
	int rc = dispatch(argc, argv, &verb);
	return finish(verb, rc);
}
