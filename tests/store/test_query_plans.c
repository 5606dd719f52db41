/* tests/store/test_query_plans.c: every statement of store/sql.h's table
 * on an indexed path. On a store of a few thousand committed calls (journal,
 * membership, sessions included) each statement is prepared as EXPLAIN
 * QUERY PLAN, with SQLite's default planner and again after ANALYZE (the
 * planner with the real row counts). A plan may not SCAN objects,
 * log_entries, worlds, journal or the episode tables, nor search one of
 * them by a bare range (a range with no equality: a scan from the cursor
 * on), unless the statement's entry names why it does so by design (the
 * integrity scan's cursors, recovery, the migration). Deterministic:
 * nothing is timed. Controls: with each of the new indexes dropped, the
 * statement it serves is flagged. And a store of the previous schema
 * version opens read-only, is scanned clean and left byte-identical; its
 * plans show the scan it will do until a writer migrates it, after which
 * every plan is clean again. */
#include "store/scan.h"
#include "store/sql.h"
#include "store/store.h"
#include "tests/store/sbulk.h"
#include "tests/tap.h"
#include <ctype.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define ENTRIES 2000

static const char *const watched[] = { "objects", "log_entries", "worlds", "journal", "episode_objects",
	                               "episode_usage", "episode_entries" };

static int is_watched(const char *t)
{
	for (size_t i = 0; i < sizeof watched / sizeof *watched; i++)
		if (strcmp(t, watched[i]) == 0) return 1;
	return 0;
}

/* The table a name in a plan line stands for: itself, or the table an
 * alias of sql (FROM/JOIN table [AS] alias) names. */
static void table_of(const char *sql, const char *name, char *out, size_t n)
{
	static const char *const kw[] = { "WHERE", "ON", "JOIN", "LEFT", "CROSS", "INNER", "ORDER", "GROUP", "LIMIT",
		                          "SET", "USING", "NATURAL", "HAVING", "UNION", NULL };
	snprintf(out, n, "%s", name);
	char tok[3][64] = { "", "", "" };
	const char *p = sql;
	while (*p) {
		if (!(isalnum((unsigned char)*p) || *p == '_')) { p++; continue; }
		char w[64];
		size_t k = 0;
		while ((isalnum((unsigned char)*p) || *p == '_') && k + 1 < sizeof w) w[k++] = *p++;
		w[k] = 0;
		while (isalnum((unsigned char)*p) || *p == '_') p++;
		if (strcasecmp(w, "AS") == 0) continue;
		memmove(tok[0], tok[1], sizeof tok[0] * 2);
		snprintf(tok[2], sizeof tok[2], "%s", w);
		/* tok[0] = FROM|JOIN, tok[1] = table, tok[2] = alias (not a keyword) */
		if ((strcasecmp(tok[0], "FROM") == 0 || strcasecmp(tok[0], "JOIN") == 0) && strcmp(tok[2], name) == 0) {
			int keyword = 0;
			for (size_t i = 0; kw[i]; i++) keyword |= strcasecmp(tok[2], kw[i]) == 0;
			if (!keyword) snprintf(out, n, "%s", tok[1]);
		}
	}
}

/* The plan of sql, one line per step, into plan; the steps that read a
 * watched table whole (or by a bare range) into flagged. Returns how many
 * steps are flagged, -1 when it does not prepare. */
static int plan_of(sqlite3 *db, const char *sql, char *plan, size_t pn, char *flagged, size_t fn)
{
	plan[0] = flagged[0] = 0;
	char *q = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sql);
	sqlite3_stmt *s;
	int rc = q ? sqlite3_prepare_v2(db, q, -1, &s, NULL) : SQLITE_NOMEM;
	sqlite3_free(q);
	if (rc != SQLITE_OK) {
		snprintf(plan, pn, "prepare: %s", sqlite3_errmsg(db));
		return -1;
	}
	int nflag = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(s, 3);
		if (!d) continue;
		size_t pl = strlen(plan);
		snprintf(plan + pl, pn - pl, "%s%s", pl ? " | " : "", d);
		int scan = strncmp(d, "SCAN ", 5) == 0, search = strncmp(d, "SEARCH ", 7) == 0;
		if (!scan && !search) continue;
		char name[64];
		if (sscanf(d + (scan ? 5 : 7), "%63[A-Za-z0-9_]", name) != 1) continue;
		char table[64];
		table_of(sql, name, table, sizeof table);
		if (!is_watched(table)) continue;
		/* an automatic index is built from the whole table at each run */
		int bad = scan || strstr(d, " AUTOMATIC ");
		if (search && !bad) {
			/* a bare range: the constraint list has no equality */
			const char *c = strrchr(d, '(');
			int eq = 0;
			for (const char *e = c; e && *e; e++)
				if (*e == '=' && e[-1] != '<' && e[-1] != '>') eq = 1;
			bad = c && !eq;
		}
		if (bad) {
			nflag++;
			size_t fl = strlen(flagged);
			snprintf(flagged + fl, fn - fl, "%s%s (%s)", fl ? "; " : "", d, table);
		}
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? nflag : -1;
}

/* Every statement of the table: index lookups only, or a scan by design
 * that is one pass (one flagged step: its cursor; a second would be a
 * scan inside the scan, as the integrity scan's worlds lookup was). */
static void check_all(sqlite3 *db, const char *when)
{
	for (int i = 0; i < WSQ_COUNT; i++) {
		const struct world_sql *q = &world_sql[i];
		if (!q->name || !q->sql) {
			ok(0, "%s: statement %d has a name and a text", when, i);
			continue;
		}
		char plan[4096], flagged[2048];
		int n = plan_of(db, q->sql, plan, sizeof plan, flagged, sizeof flagged);
		if (n < 0) {
			ok(0, "%s: %s prepares (%s)", when, q->name, plan);
			continue;
		}
		if (q->scan) {
			if (!ok(n <= 1, "%s: %s: a scan by design, one pass: %s", when, q->name, q->scan))
				diag("  %d steps read a whole table: %s\n  plan: %s", n, flagged, plan);
		} else if (!ok(!flagged[0], "%s: %s: index lookups only", when, q->name))
			diag("  reads a whole table: %s\n  plan: %s\n  sql: %s", flagged, plan, q->sql);
	}
}

static int flagged_now(sqlite3 *db, int id, char *flagged, size_t n)
{
	char plan[4096];
	return plan_of(db, world_sql[id].sql, plan, sizeof plan, flagged, n);
}

static void exec(sqlite3 *db, const char *sql)
{
	char *m = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &m) != SQLITE_OK) bail("%s: %s", sql, m ? m : sqlite3_errmsg(db));
}

static void file_sha(const char *path, char out[WORLD_REF_SIZE])
{
	int fd = open(path, O_RDONLY);
	unsigned char d[32];
	out[0] = 0;
	if (fd >= 0 && world_sha256_fd(fd, path, d, NULL, NULL) == 0) world_ref_format(d, out);
	if (fd >= 0) close(fd);
}

static struct world_store *open_or_bail(const char *db, int mode)
{
	struct world_store *st;
	struct world_err e;
	if (world_store_open(db, mode, &st, &e) < 0) bail("open %s: %s", db, e.msg);
	return st;
}

static void build(const char *dir, const char *db, long long n)
{
	struct world_store *st = open_or_bail(db, WORLD_STORE_WRITER | WORLD_STORE_NOSYNC);
	struct world_err e;
	struct sbulk b = { .episode = "plans" };
	if (sbulk_init(st, dir, &b, &e) < 0 || sbulk_fill(st, &b, n, 500, &e) < 0) bail("fill: %s", e.msg);
	/* effect intents (the broker's budget), sessions, an indeterminate intent */
	for (int i = 0; i < 20; i++) {
		char subject[64], cred[64];
		snprintf(subject, sizeof subject, "cli:plans:b%d#e1", i + 1);
		struct world_journal_intent ji = { .kind = "effect", .subject = subject, .episode = "plans",
			                           .effect = "Test.Echo", .scope = "s", .cost = 1 };
		long long id;
		snprintf(cred, sizeof cred, "credential-%04d-0123456789abcdef", i);
		if (world_journal_intent(st, &ji, &id, &e) < 0 || world_session_put(st, cred, "plans", "[]", 4102444800LL, &e) < 0)
			bail("journal/session: %s", e.msg);
	}
	world_store_close(st);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[256], db[300], v1[300];
	snprintf(dir, sizeof dir, "%s/world-plans.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) bail("mkdtemp");
	snprintf(db, sizeof db, "%s/world.db", dir);
	snprintf(v1, sizeof v1, "%s/v1.db", dir);

	build(dir, db, ENTRIES);
	struct world_store *st = open_or_bail(db, WORLD_STORE_WRITER);
	sqlite3 *h = world_store_db(st);
	sqlite3_stmt *c;
	long long rows = -1;
	if (sqlite3_prepare_v2(h, "SELECT count(*) FROM log_entries", -1, &c, NULL) == SQLITE_OK &&
	    sqlite3_step(c) == SQLITE_ROW)
		rows = sqlite3_column_int64(c, 0);
	sqlite3_finalize(c);
	is_int(rows, ENTRIES, "the store holds %d committed calls", ENTRIES);

	/* the alias reading the check relies on */
	char t[64];
	table_of("SELECT 1 FROM journal i LEFT JOIN journal o ON o.id = i.id", "o", t, sizeof t);
	is_str(t, "journal", "an alias in a plan is read as its table");
	table_of("SELECT 1 FROM episode_objects m CROSS JOIN objects AS o ON o.ref = m.ref", "o", t, sizeof t);
	is_str(t, "objects", "... also after AS");

	check_all(h, "default planner");
	exec(h, "ANALYZE");
	check_all(h, "after ANALYZE");
	exec(h, "DROP TABLE sqlite_stat1");

	/* controls: without its index, each statement is flagged */
	/* (flagged steps with and without it: a by-design scan has its cursor) */
	static const struct { const char *index; int id, with, without; const char *create; } ctl[] = {
		{ "worlds_by_revision", WSQ_WORLD_ROOT_AT, 0, 1, "CREATE INDEX worlds_by_revision ON worlds(revision)" },
		{ "worlds_by_revision", WSQ_MIG_BACKFILL, 1, 2, "CREATE INDEX worlds_by_revision ON worlds(revision)" },
		{ "worlds_by_state_root", WSQ_WORLD_FIND_ROOT, 0, 1,
		  "CREATE INDEX worlds_by_state_root ON worlds(state_root, revision)" },
		/* (INDEXED BY: without its index it does not prepare, never a silent scan) */
		{ "objects_by_semantic", WSQ_OBJECTS_BY_SEMANTIC, 0, -1,
		  "CREATE INDEX objects_by_semantic ON objects(semantic_id)" },
		{ "log_by_record", WSQ_LOG_FIND_RECORD, 0, 1, "CREATE INDEX log_by_record ON log_entries(transition_ref)" },
		{ "journal_by_subject", WSQ_JOURNAL_FIND, 0, 1,
		  "CREATE INDEX journal_by_subject ON journal(kind, subject) WHERE phase = 'intent'" },
		{ "journal_one_outcome", WSQ_JOURNAL_INDETERMINATE, 1, 2,
		  "CREATE UNIQUE INDEX journal_one_outcome ON journal(intent_id) WHERE phase = 'outcome'" },
	};
	for (size_t i = 0; i < sizeof ctl / sizeof *ctl; i++) {
		char flagged[2048], sql[160];
		is_int(flagged_now(h, ctl[i].id, flagged, sizeof flagged), ctl[i].with,
		       "control: %s with %s: %d whole-table steps", world_sql[ctl[i].id].name, ctl[i].index, ctl[i].with);
		snprintf(sql, sizeof sql, "DROP INDEX %s", ctl[i].index);
		exec(h, sql);
		char plan[4096];
		is_int(plan_of(h, world_sql[ctl[i].id].sql, plan, sizeof plan, flagged, sizeof flagged), ctl[i].without,
		       "control: without %s, %s is flagged: %s", ctl[i].index, world_sql[ctl[i].id].name, plan);
		exec(h, ctl[i].create);
	}
	world_store_close(st);

	/* the previous schema version: a copy of a small store taken back to
	 * schema 1 (everything schema 2 added dropped) */
	build(dir, v1, 50);
	sqlite3 *raw;
	if (sqlite3_open(v1, &raw) != SQLITE_OK) bail("open %s", v1);
	static const char *const v1_names[] = { "objects", "log_entries", "worlds", "heads", "journal", "sessions",
		                                "interpreters", "log_by_record", "journal_one_outcome", "journal_spent",
		                                "journal_by_subject", "sqlite_sequence", NULL };
	char drops[4096] = "";
	if (sqlite3_prepare_v2(raw, "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%' "
	                            "ORDER BY type = 'table'", -1, &c, NULL) != SQLITE_OK)
		bail("schema: %s", sqlite3_errmsg(raw));
	while (sqlite3_step(c) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(c, 0), *name = (const char *)sqlite3_column_text(c, 1);
		int keep = 0;
		for (size_t i = 0; v1_names[i]; i++) keep |= strcmp(name, v1_names[i]) == 0;
		size_t l = strlen(drops);
		if (!keep) snprintf(drops + l, sizeof drops - l, "DROP %s IF EXISTS %s;", type, name);
	}
	sqlite3_finalize(c);
	exec(raw, drops);
	exec(raw, "PRAGMA user_version=1");
	sqlite3_close(raw);

	char before[WORLD_REF_SIZE], after[WORLD_REF_SIZE];
	file_sha(v1, before);
	struct world_store *rd = open_or_bail(v1, WORLD_STORE_READER);
	struct world_scan_opts so = { .max_rows = 0 };
	struct world_scan_result sr;
	struct world_err e;
	FILE *devnull = fopen("/dev/null", "w");
	int src = world_scan(rd, &so, devnull, &sr, &e);
	ok(src == 0 && sr.complete && sr.holes == 0 && sr.log_rows == 50 &&
	   sr.world_rows == 50, "schema 1, read-only: the full scan runs, complete and clean (%lld entries, %lld worlds)",
	   sr.log_rows, sr.world_rows);
	fclose(devnull);
	char flagged[2048];
	ok(flagged_now(world_store_db(rd), WSQ_WORLD_ROOT_AT, flagged, sizeof flagged) == 1,
	   "... its plan reads the worlds table for each entry until a writer migrates it: %s", flagged);
	world_store_close(rd);
	file_sha(v1, after);
	is_str(after, before, "... and the schema-1 file is byte-identical after the read-only open and scan");
	st = open_or_bail(v1, WORLD_STORE_WRITER);
	check_all(world_store_db(st), "migrated from schema 1");
	world_store_close(st);

	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("cleanup of %s failed", dir);
	return done_testing();
}
