/* cli/verbs_ops.c: the worldd verbs of running a live store (see
 * cli/verbs.h): `token rotate` and `token path` (the operator token the
 * store keeps as a hash: store/sessions.c) and `backup` (an online copy:
 * store/backup.c), `episode move` and `episode homes` (an episode's home:
 * store/home.h). Argument parsing and the attended fence live here. */
#include "cli/store_uri.h"
#include "cli/attended.h"
#include "cli/copy_exec.h"
#include "cli/flags.h"
#include "cli/verbs.h"
#include "broker/effect.h"
#include "store/backup.h"
#include "store/db.h"
#include "store/home.h"
#include "store/open_opts.h"
#include "store/store.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---- token rotate / token path ---- */

static const char rotate_help[] =
    "usage: worldd token rotate --store DB [--wait-lock SECONDS]\n"
    "\n"
    "Replaces the operator token of store DB: a new random token (64 lowercase hex)\n"
    "whose sha256 the store keeps, written to <DB>.operator-token (mode 0600; temp\n"
    "file, fsync, rename; for a postgresql:// store this host's file, `worldd token\n"
    "path --help`) and printed once on stdout. Daemons serving DB may keep\n"
    "running: every one of them refuses the old token from its next request and\n"
    "accepts the new one. Attended: refused with CI or GITHUB_ACTIONS set, without a\n"
    "controlling terminal, or when standard input is not that terminal; asks\n"
    "  Confirm rotate of the operator token of DB (the old one stops working on every daemon)? [y/N]\n"
    "and proceeds only on y or yes. A refused attended step prints\n"
    "`STOP fence=NAME[ reason=R]` and one detail line.\n"
    "\n"
    WORLDD_WAIT_LOCK_HELP
    "\n"
    "exit codes: 0 rotated, 2 usage, 4 no store at DB, 5 store busy, 6 not a store of a known schema,\n"
    "  9 I/O (the token file), 20 attended step refused (nothing written)\n";

static int verb_token_rotate(int argc, char **argv)
{
	const char *verb = "token rotate";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--wait-lock", .has_value = 1 },
		                   { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 0, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	double wait = 0;
	if ((rc = worldd_wait_lock(verb, f[1].value, &wait))) return rc;
	struct world_err e = { 0, "" };
	struct world_store *st;
	if (worldd_store_open(f[0].value, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, wait, &st, &e) < 0) return worldd_fail(verb, &e);
	char question[4400];
	snprintf(question, sizeof question,
	         "Confirm rotate of the operator token of %s (the old one stops working on every daemon)? [y/N] ",
	         world_store_path(st));
	struct attended_stop stop;
	if (attended_confirm_yes(question, &stop) < 0) {
		world_store_close(st);
		return attended_report(stderr, &stop);
	}
	char tok[65], path[4200];
	int installed = 0;
	rc = world_operator_token_new(st, 1, tok, path, sizeof path, &installed, &e);
	world_store_close(st);
	if (rc < 0) return worldd_fail(verb, &e);
	printf("%s\n", tok);
	explicit_bzero(tok, sizeof tok);
	fprintf(stderr,
	        "worldd token rotate: new operator token written to %s; every daemon of the store refuses the old one "
	        "from its next request\n",
	        path);
	return WX_OK;
}

static const char path_help[] =
    "usage: worldd token path --store DB\n"
    "\n"
    "Prints the path of the operator token file of store DB, <DB>.operator-token\n"
    "(what a service reads its token from: written by the first daemon of a store\n"
    "and by `worldd token rotate`, mode 0600). Reads nothing. For a postgresql://\n"
    "store the file is this host's, CACHE/operator-tokens/NAME.operator-token\n"
    "(CACHE: $XDG_CACHE_HOME/world, else ~/.cache/world; NAME the store's name,\n"
    "USER@HOST:PORT/DB, with bytes other than letters, digits and .@- as _); the verb\n"
    "connects to learn that name. A daemon on another host has no file until it\n"
    "is copied there or the token is rotated (the store keeps only its hash).\n"
    "\n"
    "exit codes: 0 printed, 2 usage, 9 the server not reachable (a URI)\n";

static int verb_token_path(int argc, char **argv)
{
	const char *verb = "token path";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 0, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	if (wdb_kind_of(f[0].value) != WDB_PG) {
		printf("%s.operator-token\n", f[0].value);
		return WX_OK;
	}
	/* the file's name is the store's as the server gives it: connect */
	struct world_err e = { 0, "" };
	struct world_store *st;
	if (worldd_store_open(f[0].value, WORLD_STORE_READER, 0, &st, &e) < 0) return worldd_fail(verb, &e);
	char path[4400];
	rc = world_operator_token_path(st, path, sizeof path, &e);
	world_store_close(st);
	if (rc < 0) return worldd_fail(verb, &e);
	printf("%s\n", path);
	return WX_OK;
}

/* ---- backup ---- */

static const char backup_help[] =
    "usage: worldd backup --store DB [--store-password-file FILE] DEST\n"
    "\n"
    "An online copy of store DB at DEST, with the interpreter archive at\n"
    "DEST.artifacts: the layout of a store, which every verb opens as one (why,\n"
    "replay, scan, serve). Daemons and other writers may keep writing DB: the\n"
    "database is copied with SQLite's online backup API inside one read\n"
    "transaction, so the copy holds every commit acknowledged before the backup\n"
    "began (and none begun after), and no writer waits for it. Every interpreter\n"
    "the copy names is copied from DB.artifacts with its manifest.json, its bytes\n"
    "re-hashed. Everything is written into a staging directory DIR/.NAME.backup-XXXXXX\n"
    "beside DEST, scanned there (the whole copy, objects included), then renamed:\n"
    "DEST.artifacts first, DEST last, so DEST exists only complete and scanned. A\n"
    "failure removes what it wrote; a killed backup leaves only the staging\n"
    "directory (remove it). Prints one line on stdout:\n"
    "  backup DEST entries=N pages=N interpreters=N objects=N\n"
    "\n"
    "A postgresql:// DB is backed up through worldd store copy (run in\n"
    "world-store-copy, linked with libpq): read in one REPEATABLE READ snapshot,\n"
    "written as a new SQLite store at DEST the same staged way, read back and\n"
    "compared table by table, scanned; it prints\n"
    "  backup DEST entries=N rows=N interpreters=N objects=N\n"
    "  --store-password-file FILE  the password of a postgresql:// DB (first line; else\n"
    "                     the URI's or PGPASSFILE's); never printed\n"
    "\n"
    "exit codes: 0 copied and scanned clean, 2 usage, 4 DB absent or DEST's directory\n"
    "  absent, 6 DB not a store of a known schema, 7 the copy has an integrity hole or an\n"
    "  archived interpreter does not hash to its ref (nothing left at DEST), 8 DEST or\n"
    "  DEST.artifacts exists (nothing written), 9 I/O, 24 DB is not a SQLite store\n";

static int verb_backup(int argc, char **argv)
{
	const char *verb = "backup";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--store-password-file", .has_value = 1 },
		                   { .name = NULL } };
	const char *pos[2];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 2, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	if (npos != 1) return worldd_usage(verb, "one DEST is required");
	if (wdb_kind_of(f[0].value) == WDB_PG) return worldd_backup_via_copy(argc, argv);
	if (f[1].value) return worldd_usage(verb, "--store-password-file is for a postgresql:// store");
	struct world_scan_opts so = { .effect_record_check = broker_record_check };
	struct world_backup_result r;
	struct world_err e = { 0, "" };
	if (world_backup(f[0].value, pos[0], &so, stdout, &r, &e) < 0) return worldd_fail(verb, &e);
	printf("backup %s entries=%lld pages=%lld interpreters=%d objects=%lld\n", pos[0], r.log_entries, r.pages,
	       r.interpreters, r.scan.object_rows);
	return WX_OK;
}

/* ---- episode move / episode homes (store/home.h) ---- */

static const char move_help[] =
    "usage: worldd episode move EPISODE --to HOST --url URL --store DB [--force] [--wait-lock SECONDS]\n"
    "\n"
    "Moves the home of EPISODE to host HOST, whose daemons advertise URL\n"
    "(docs/operations.md, \"Past one machine\"): from then on the daemons of HOST\n"
    "run the episode's effectful calls and every other host answers them HTTP 307\n"
    "NotHome naming URL. The verb moves the record only, NOT the files: the\n"
    "episode's worktree is WORKSPACE_ROOT/EPISODE under the old home's\n"
    "--workspace-root; copy it to the same place under HOST's before the episode's\n"
    "next effectful call (rsync -a OLD:ROOT/EPISODE/ ROOT/EPISODE/). Refused while\n"
    "the old home's lease is live (a daemon of it ran an effectful call of the\n"
    "episode within the lease, --home-lease, default 120 s: stop sending it the\n"
    "episode's calls and wait, or give --force when its host is gone). Attended:\n"
    "refused with CI or GITHUB_ACTIONS set, without a controlling terminal, or when\n"
    "standard input is not that terminal; asks\n"
    "  Confirm move of the home of episode EPISODE from host OLD to host HOST (URL)?\n"
    "  Its worktree is not moved by this verb. [y/N]\n"
    "and proceeds only on y or yes. Prints one line on stdout:\n"
    "  episode EPISODE home=HOST url=URL was=OLD worktree=move ROOT/EPISODE from OLD to HOST\n"
    "\n"
    WORLDD_WAIT_LOCK_HELP
    "\n"
    "exit codes: 0 moved, 2 usage (a HOST or URL malformed), 4 no store at DB, 5 store busy,\n"
    "  8 the old home's lease is live (nothing written; --force), 9 I/O, 20 attended step refused\n"
    "  (nothing written), 29 the store's PostgreSQL server unreachable\n";

static void fmt_time(long long t, char *out, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) snprintf(out, n, "%lld", t);
}

static int verb_episode_move(int argc, char **argv)
{
	const char *verb = "episode move";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--to", .has_value = 1 },
		                   { .name = "--url", .has_value = 1 }, { .name = "--force" },
		                   { .name = "--wait-lock", .has_value = 1 }, { .name = NULL } };
	const char *pos[2];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 2, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	if (npos != 1) return worldd_usage(verb, "one EPISODE is required");
	if (!f[1].value || !f[2].value) return worldd_usage(verb, "--to HOST and --url URL are required");
	struct world_err e = { 0, "" };
	if (world_home_host_check(f[1].value, &e) < 0 || world_home_url_check(f[2].value, &e) < 0)
		return worldd_usage(verb, "%s", e.msg);
	double wait = 0;
	if ((rc = worldd_wait_lock(verb, f[4].value, &wait))) return rc;
	const char *ep = pos[0];
	struct world_store *st;
	if (worldd_store_open(f[0].value, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, wait, &st, &e) < 0)
		return worldd_fail(verb, &e);
	struct world_home cur;
	int had = world_home_get(st, ep, &cur, &e);
	if (had < 0) {
		world_store_close(st);
		return worldd_fail(verb, &e);
	}
	long long now = (long long)time(NULL);
	char until[64];
	fmt_time(cur.lease_until, until, sizeof until);
	if (had && cur.lease_until > now && strcmp(cur.host, f[1].value) != 0 && !f[3].value) {
		world_store_close(st);
		werr(&e, WX_CONFLICT,
		     "episode %s: its home, host %s (%s), holds a live lease until %s (%lld s): a daemon there ran an "
		     "effectful call of it; stop sending it the episode's calls and wait, or give --force when that host "
		     "is gone; nothing written",
		     ep, cur.host, cur.url, until, cur.lease_until - now);
		return worldd_fail(verb, &e);
	}
	char question[2400];
	snprintf(question, sizeof question,
	         "Confirm move of the home of episode %s from host %s to host %s (%s)?\n"
	         "Its worktree is not moved by this verb: copy WORKSPACE_ROOT/%s from %s to %s first. [y/N] ",
	         ep, had ? cur.host : "(none)", f[1].value, f[2].value, ep, had ? cur.host : "(none)", f[1].value);
	struct attended_stop stop;
	if (attended_confirm_yes(question, &stop) < 0) {
		world_store_close(st);
		return attended_report(stderr, &stop);
	}
	struct world_home prev;
	int was = 0;
	/* leased until now: the new home's first effectful call renews it */
	rc = world_home_move(st, ep, f[1].value, f[2].value, now, &prev, &was, &e);
	world_store_close(st);
	if (rc < 0) return worldd_fail(verb, &e);
	printf("episode %s home=%s url=%s was=%s worktree=move ROOT/%s from %s to %s\n", ep, f[1].value, f[2].value,
	       was ? prev.host : "-", ep, was ? prev.host : "-", f[1].value);
	return WX_OK;
}

static const char homes_help[] =
    "usage: worldd episode homes --store DB\n"
    "\n"
    "Lists every episode's home, one line each, in episode order:\n"
    "  episode EPISODE home=HOST url=URL lease_until=TIME live|expired\n"
    "(docs/operations.md, \"Past one machine\"). Reads only.\n"
    "\n"
    "exit codes: 0 listed, 2 usage, 4 no store at DB, 6 not a store of a known schema,\n"
    "  9 I/O, 29 the store's PostgreSQL server unreachable\n";

static int print_home(void *ctx, const char *episode, const struct world_home *h)
{
	long long now = *(long long *)ctx;
	char until[64];
	fmt_time(h->lease_until, until, sizeof until);
	printf("episode %s home=%s url=%s lease_until=%s %s\n", episode, h->host, h->url, until,
	       h->lease_until > now ? "live" : "expired");
	return 0;
}

static int verb_episode_homes(int argc, char **argv)
{
	const char *verb = "episode homes";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 0, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	struct world_err e = { 0, "" };
	struct world_store *st;
	/* a writer: the table is made by a writer's open when absent */
	if (worldd_store_open(f[0].value, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, 0, &st, &e) < 0)
		return worldd_fail(verb, &e);
	long long now = (long long)time(NULL);
	rc = world_home_list(st, print_home, &now, &e);
	world_store_close(st);
	if (rc < 0) return worldd_fail(verb, &e);
	return WX_OK;
}

const struct worldd_verb ops_verbs[] = {
	{ "backup", "an online copy of a store and its interpreter archive, scanned", backup_help, verb_backup },
	{ "token rotate", "replace the operator token every daemon of a store accepts (attended)", rotate_help,
	  verb_token_rotate },
	{ "token path", "print the path of a store's operator token file", path_help, verb_token_path },
	{ "episode move", "move an episode's home to another host (attended)", move_help, verb_episode_move },
	{ "episode homes", "list every episode's home and its lease", homes_help, verb_episode_homes },
	{ NULL, NULL, NULL, NULL },
};
