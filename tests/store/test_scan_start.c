/* tests/store/test_scan_start.c: the daemon's start-up scan covers its
 * budget (issue 39, item 3). The store of the issue, built through the
 * store's API (tests/store/seff.h): 150 effectful calls (invocation records
 * v2: plan, request, result, effect record, journal rows), then three
 * publishes of 300 transition sources of 40 KB each, then 4 more calls --
 * a log of 154 entries sitting among 36 MB of sources. Before, the
 * start-up scan verified a window of objects again for every entry (the
 * sources among them, ~110 ms an entry) and covered 15 to 18 of the 154
 * entries in its 2 s.
 *
 * world_scan_start (what `worldd serve` calls, with the broker's record
 * law) is complete: every entry and world, no hole, nothing printed -- and
 * it verified each object at most once (objects_verified is no more than
 * the objects stored; the full scan's is exactly that). Control (test
 * builds: WORLD_TEST_SCAN_FORGET=1, the verdicts forgotten before every
 * entry, the per-entry cost of before): a scan of the first 40 entries (a
 * budget in rows only, nothing timed) verifies more than ten times the
 * objects the same scan verifies with its verdicts kept, and prints the
 * same. `--make DIR` only builds the store, for tests/store/scan_start.sh
 * (the daemon's own start-up line on it). A second control: damage one source the
 * entries do not name and one input they do: the budgeted scan names the
 * input and not the orphan source (what a lookup would answer), the full
 * scan the same. Counts, not time: nothing here is timed. */
#include "store/scan.h"
#include "store/store.h"
#include "store/copy.h"
#include "store/db.h"
#include "broker/effect.h"
#include "tests/store/seff.h"
#include "tests/tap.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long long count(struct world_store *st, const char *sql)
{
	sqlite3_stmt *s;
	long long n = -1;
	if (sqlite3_prepare_v2(world_store_db(st), sql, -1, &s, NULL) != SQLITE_OK) bail("%s", sql);
	if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

static void q(struct world_store *st, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(world_store_db(st), sql, NULL, NULL, &msg) != SQLITE_OK) bail("%s: %s", sql, msg ? msg : "?");
}

/* how: 0 the start-up scan, 1 a budgeted scan of CONTROL_ROWS rows (no
 * time limit), 2 the full scan; its lines into *lines */
#define CONTROL_ROWS 40
static void scan(struct world_store *st, int how, struct world_scan_result *r, char **lines)
{
	size_t len = 0;
	FILE *f = open_memstream(lines, &len);
	if (!f) bail("open_memstream");
	struct world_err e = { 0 };
	struct world_scan_opts o = { .max_rows = how == 1 ? CONTROL_ROWS : 0, .effect_record_check = broker_record_check };
	int rc = how == 0 ? world_scan_start(st, broker_record_check, f, r, &e) : world_scan(st, &o, f, r, &e);
	fclose(f);
	if (rc < 0) bail("scan: %s", e.msg);
}

/* The issue's store at DIR/world.db, open */
static struct world_store *issue_store(const char *dir)
{
	char db[4096];
	snprintf(db, sizeof db, "%s/world.db", dir);
	struct world_store *st;
	struct world_err e = { 0 };
	if (world_store_open(db, WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, &st, &e) < 0) bail("open: %s", e.msg);
	struct sbulk b = { .episode = "start" };
	if (sbulk_init(st, dir, &b, &e) < 0) bail("fixture: %s", e.msg);
	if (world_store_begin(st, &e) < 0) bail("begin: %s", e.msg);
	for (int i = 0; i < 150; i++)
		if (seff_one(st, &b, 300, &e) < 0) bail("call: %s", e.msg);
	if (world_store_commit(st, &e) < 0) bail("commit: %s", e.msg);
	static const char *const tags[] = { "pa", "pb", "pc" };
	for (int p = 0; p < 3; p++)
		if (seff_publish(st, tags[p], 300, 40000, &e) < 0) bail("publish: %s", e.msg);
	if (world_store_begin(st, &e) < 0) bail("begin: %s", e.msg);
	for (int i = 0; i < 4; i++)
		if (seff_one(st, &b, 300, &e) < 0) bail("call: %s", e.msg);
	if (world_store_commit(st, &e) < 0) bail("commit: %s", e.msg);
	return st;
}

int main(int argc, char **argv)
{
	/* --make DIR: only the store, for tests/store/scan_start.sh (the daemon's own line) */
	if (argc == 3 && strcmp(argv[1], "--make") == 0) {
		world_store_close(issue_store(argv[2]));
		return 0;
	}
	char dir[] = "/tmp/world-test-scan-start.XXXXXX";
	if (!mkdtemp(dir)) bail("mkdtemp");
	struct world_err e = { 0 };
	struct world_store *st = issue_store(dir);
	long long objects = count(st, "SELECT count(*) FROM objects");
	long long sources = count(st, "SELECT count(*) FROM objects WHERE semantic_id = 'world/transition-source/v1'");
	long long mb = count(st, "SELECT sum(length(payload)) FROM objects") >> 20;
	diag("the store: 154 entries, %lld objects (%lld sources), %lld MB of payload", objects, sources, mb);
	ok(count(st, "SELECT count(*) FROM log_entries") == 154 && sources == 901, "the issue's store: 154 entries, 900 sources published");

	struct world_scan_result r;
	char *lines = NULL;
	scan(st, 0, &r, &lines);
	char line[200];
	snprintf(line, sizeof line, "scan log_rows=%lld world_rows=%lld holes=%lld complete=%d", r.log_rows, r.world_rows,
	         r.holes, r.complete);
	diag("start-up scan: %s (%lld objects verified, %.1f MB hashed)", line, r.objects_verified, r.bytes_hashed / 1048576.0);
	is_str(line, "scan log_rows=154 world_rows=154 holes=0 complete=1",
	       "the start-up scan (world_scan_start, serve's) covers the whole store within its budget");
	is_str(lines, "", "it prints nothing: clean and complete");
	ok(r.objects_verified > 154 * 7 && r.objects_verified <= objects,
	   "each object verified at most once (%lld verifications, %lld objects stored)", r.objects_verified, objects);
	free(lines);

	struct world_scan_result full;
	scan(st, 2, &full, &lines);
	ok(full.complete && full.holes == 0 && full.objects_verified == objects && !*lines,
	   "the full scan: clean, each of the %lld objects verified once (%lld)", objects, full.objects_verified);
	free(lines);

#ifdef WORLD_TEST_HOOKS
	/* the first 40 entries, with and without the verdicts kept */
	struct world_scan_result k, c;
	char *klines = NULL;
	scan(st, 1, &k, &klines);
	setenv("WORLD_TEST_SCAN_FORGET", "1", 1);
	scan(st, 1, &c, &lines);
	unsetenv("WORLD_TEST_SCAN_FORGET");
	diag("the first %d entries: %lld objects verified (%.1f MB hashed); control, the verdicts forgotten before every "
	     "entry: %lld (%.1f MB)",
	     CONTROL_ROWS, k.objects_verified, k.bytes_hashed / 1048576.0, c.objects_verified, c.bytes_hashed / 1048576.0);
	is_str(lines, klines, "control: the same scan with its verdicts forgotten every entry prints the same lines");
	ok(c.log_rows == CONTROL_ROWS && k.log_rows == CONTROL_ROWS && c.objects_verified > 10 * k.objects_verified,
	   "control: forgotten, each of the %d entries verifies its window again: %lld verifications, more than ten times "
	   "the %lld with the verdicts kept",
	   CONTROL_ROWS, c.objects_verified, k.objects_verified);
	free(lines);
	free(klines);
#else
	skip("the control needs test hooks (configure --enable-test-hooks: WORLD_TEST_SCAN_FORGET)",
	     "control: the verdicts forgotten every entry");
#endif

	/* PostgreSQL (tests/store/scanstart.sh starts a cluster): the same
	 * store copied there, the same start-up scan and control */
	const char *uri = getenv("WORLD_TEST_PG_URI");
#ifdef WORLD_HAVE_PG
	wdb_pg_enable();
#else
	uri = NULL; /* built --without-postgresql */
#endif
	if (uri && *uri) {
		struct wdb *raw;
		if (wdb_open(uri, NULL, &raw, &e) < 0) bail("connect: %s", e.msg);
		if (wdb_exec(raw, "DROP SCHEMA public CASCADE; CREATE SCHEMA public", &e) < 0) bail("empty: %s", e.msg);
		wdb_close(raw);
		char db[4200];
		snprintf(db, sizeof db, "%s/world.db", dir);
		struct world_copy_opts co = { 0 };
		struct world_copy_result cr;
		if (world_store_copy(db, uri, &co, &cr, &e) < 0) bail("copy into PostgreSQL: %s", e.msg);
		struct world_store *pg;
		if (world_store_open(uri, WORLD_STORE_WRITER, &pg, &e) < 0) bail("open %s: %s", uri, e.msg);
		struct world_scan_result pr;
		scan(pg, 0, &pr, &lines);
		snprintf(line, sizeof line, "scan log_rows=%lld world_rows=%lld holes=%lld complete=%d", pr.log_rows,
		         pr.world_rows, pr.holes, pr.complete);
		is_str(line, "scan log_rows=154 world_rows=154 holes=0 complete=1",
		       "PostgreSQL: the start-up scan covers the whole store within its budget");
		is_str(lines, "", "PostgreSQL: it prints nothing");
		ok(pr.objects_verified > 154 * 7 && pr.objects_verified <= objects,
		   "PostgreSQL: each object verified at most once (%lld verifications, %lld objects stored)",
		   pr.objects_verified, objects);
		free(lines);
#ifdef WORLD_TEST_HOOKS
		struct world_scan_result pk, pc;
		char *pkl = NULL;
		scan(pg, 1, &pk, &pkl);
		setenv("WORLD_TEST_SCAN_FORGET", "1", 1);
		scan(pg, 1, &pc, &lines);
		unsetenv("WORLD_TEST_SCAN_FORGET");
		is_str(lines, pkl, "PostgreSQL control: forgotten, the same lines");
		ok(pc.log_rows == CONTROL_ROWS && pc.objects_verified > 10 * pk.objects_verified,
		   "PostgreSQL control: forgotten, %lld verifications for the first %d entries, more than ten times the %lld "
		   "with the verdicts kept",
		   pc.objects_verified, CONTROL_ROWS, pk.objects_verified);
		free(lines);
		free(pkl);
#else
		skip("the control needs test hooks (configure --enable-test-hooks: WORLD_TEST_SCAN_FORGET)",
	     "control: the verdicts forgotten every entry");
#endif
		world_store_close(pg);
	} else {
		const char *why = getenv("WORLD_TEST_PG_SKIP") ? getenv("WORLD_TEST_PG_SKIP") : "WORLD_TEST_PG_URI is not set";
		skip(why, "the PostgreSQL half (the same store copied there, the same scans)");
	}

	/* damage: a source nothing names (an orphan) and the input of entry 77 */
	char sql[512];
	if (world_store_begin(st, &e) < 0) bail("begin: %s", e.msg);
	q(st, "UPDATE objects SET payload = CAST('module broken\n' AS BLOB) WHERE ref = (SELECT ref FROM objects WHERE "
	      "semantic_id = 'world/transition-source/v1' AND provenance = 'pb' LIMIT 1)");
	snprintf(sql, sizeof sql,
	         "UPDATE objects SET payload = CAST('{\"n\":0}' AS BLOB) WHERE ref = (SELECT json_extract(o.payload, "
	         "'$.input') FROM log_entries l JOIN objects o ON o.ref = l.transition_ref WHERE l.entry_index = 77)");
	q(st, sql);
	char *bl = NULL, *fl = NULL;
	struct world_scan_result br, fr;
	scan(st, 0, &br, &bl);
	scan(st, 2, &fr, &fl);
	world_store_rollback(st);
	ok(br.complete && br.holes == 1 && strstr(bl, "integrity_hole table=objects index=77 field=input ref=") == bl,
	   "damage: the start-up scan names the damaged input of entry 77 and nothing else (%lld holes)", br.holes);
	is_str(bl, fl, "damage: the full scan prints the same line");
	free(bl);
	free(fl);

	world_store_close(st);
	snprintf(sql, sizeof sql, "rm -rf '%s'", dir);
	if (system(sql) != 0) diag("could not remove %s", dir);
	return done_testing();
}
