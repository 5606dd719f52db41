/* tests/store/test_scan_pg.c: the integrity scan (store/scan.c) on
 * PostgreSQL, against the same history on SQLite. A SQLite store of
 * committed calls (tests/store/sbulk.h: journal rows, worlds, the archived
 * interpreter; a few through the operator path, without journal rows) is
 * copied into a throwaway cluster's database (WORLD_TEST_PG_URI, started by
 * tests/store/scanpg.sh) with world_store_copy, which also fills
 * PostgreSQL's archive table. Then, on both backends:
 * - the three ways of scanning (the full scan's streaming path, the indexed
 *   path, a budgeted scan with its objects window) and --objects are clean,
 *   with the same row counts on both;
 * - the daemon's start-up scan: a row budget smaller than the store, resumed
 *   from the printed cursors until complete: the same incomplete lines
 *   (cursors and counts) in the same order on both, every run within its
 *   budget, and the start-up budget itself (WORLD_SCAN_START_ROWS) completes;
 * - the same damage made with plain SQL on each backend (a flipped payload
 *   byte of an input, a broken chain link, a missing output object; on
 *   PostgreSQL also a damaged interpreter manifest in the archive table)
 *   gives the same lines on both, each way of scanning, and a resumed
 *   budgeted scan finds them too.
 * Controls: the damage is found (the scans are not vacuous), and with it
 * undone both backends are clean again. scanpg.sh runs this twice, the
 * second time with pages of 13 rows (WORLD_TEST_SCAN_PAGE), so every
 * cursor crosses page boundaries. Without WORLD_TEST_PG_URI the SQLite
 * half runs and the PostgreSQL half is skipped with the reason. Nothing is
 * timed. */
#include "store/scan.h"
#include "store/store.h"
#include "store/copy.h"
#include "store/db.h"
#include "common/pause.h"
#include "tests/store/sbulk.h"
#include "tests/tap.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENTRIES 300
#define ZERO WORLD_SCAN_ZERO_REF

/* how: 0 the full scan (streaming), 1 the indexed path (every dependency
 * by ref), 2 a budgeted scan whose budget covers the store (its objects
 * window), 3 the full scan with --objects */
static char *scan_out(struct world_store *st, int how, struct world_scan_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) bail("open_memstream");
	struct world_scan_opts o = { .indexed = how == 1, .max_rows = how == 2 ? 1LL << 40 : 0, .objects = how == 3 };
	struct world_err e = { 0 };
	if (world_scan(st, &o, f, r, &e) < 0) bail("scan: %s", e.msg);
	fclose(f);
	if (!r->complete) bail("scan incomplete");
	return buf;
}

/* The start-up scan's way: budgets of `rows` rows, each run resumed from
 * the cursors the last printed, until one completes. Returns every line
 * printed (the incomplete lines included) and the number of runs;
 * *over = a run that counted more rows than its budget. */
static char *resumed(struct world_store *st, long long rows, int objects, int *runs, int *over)
{
	char *all = NULL;
	size_t alen = 0;
	FILE *acc = open_memstream(&all, &alen);
	if (!acc) bail("open_memstream");
	char wref[WORLD_REF_SIZE] = "", oref[WORLD_REF_SIZE] = "";
	long long from = 1;
	*runs = 0;
	*over = 0;
	for (;;) {
		struct world_scan_opts o = { .max_rows = rows, .resume_log_index = from, .resume_world_ref = wref,
		                             .objects = objects, .resume_object_ref = oref };
		struct world_scan_result r;
		struct world_err e = { 0 };
		if (world_scan(st, &o, acc, &r, &e) < 0) bail("budgeted scan: %s", e.msg);
		(*runs)++;
		if (r.log_rows + r.world_rows + r.object_rows > rows) *over = 1;
		if (r.complete) break;
		if (*runs > 1000) bail("budgeted scan: no end after 1000 runs");
		from = r.resume_log_index;
		snprintf(wref, sizeof wref, "%s", r.resume_world_ref);
		snprintf(oref, sizeof oref, "%s", r.resume_object_ref);
	}
	fclose(acc);
	return all;
}

/* the lines of s that are holes (the incomplete lines dropped) */
static char *holes_of(const char *s)
{
	char *out = malloc(strlen(s) + 1);
	if (!out) bail("out of memory");
	size_t k = 0;
	for (const char *l = s; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) + 1 : strlen(l);
		if (strncmp(l, "integrity_hole ", 15) == 0) {
			memcpy(out + k, l, n);
			k += n;
		}
		l += n;
	}
	out[k] = 0;
	return out;
}

struct backend {
	const char *name;
	struct world_store *st;
	struct wdb *raw; /* PostgreSQL: a connection of its own for the damage; NULL on SQLite */
};

static void exec_sql(struct backend *b, const char *sql)
{
	if (!b->raw) {
		char *msg = NULL;
		if (sqlite3_exec(world_store_db(b->st), sql, NULL, NULL, &msg) != SQLITE_OK)
			bail("%s: %s: %s", b->name, sql, msg ? msg : "?");
		return;
	}
	struct world_err e = { 0 };
	if (wdb_exec(b->raw, sql, &e) < 0) bail("%s: %s: %s", b->name, sql, e.msg);
}

/* one text column of one row (the store's own reads: the scan's statements
 * are the ones under test, so the ref is read back through the C API) */
static void record_field(struct world_store *st, long long index, const char *field, char out[WORLD_REF_SIZE])
{
	struct world_log_entry le;
	struct world_err e = { 0 };
	if (world_log_get(st, index, &le, &e) < 0) bail("log get %lld: %s", index, e.msg);
	struct world_object o;
	if (world_object_get(st, le.transition_ref, &o, &e) < 0) bail("record of %lld: %s", index, e.msg);
	json_t *j = json_loadb((const char *)o.payload, o.len, 0, NULL);
	const char *v = json_string_value(json_object_get(j, field));
	snprintf(out, WORLD_REF_SIZE, "%s", v ? v : "");
	json_decref(j);
	world_object_free(&o);
	world_log_entry_free(&le);
}

/* every way of scanning on both backends: the same lines, the same counts */
static void compare(struct backend *b, int nb, const char *what, const char *want1, const char *want2)
{
	static const char *const hows[] = { "the full scan", "the indexed path", "a budgeted scan", "--objects" };
	char *first[4] = { 0 };
	struct world_scan_result r0[4];
	for (int k = 0; k < nb; k++) {
		for (int how = 0; how < 4; how++) {
			struct world_scan_result r;
			char *s = scan_out(b[k].st, how, &r);
			if (how == 1 && k == 0 && !*want1) is_str(s, "", "%s: %s: %s prints nothing", what, b[k].name, hows[how]);
			if (*want1 && how < 3) {
				ok(strstr(s, want1) != NULL, "%s: %s, %s: finds %.*s", what, b[k].name, hows[how],
				   (int)strcspn(want1, "\n"), want1);
				if (!strstr(s, want1)) diag("printed: %s", s);
			}
			if (*want2 && how < 3)
				ok(strstr(s, want2) != NULL, "%s: %s, %s: finds %.*s", what, b[k].name, hows[how],
				   (int)strcspn(want2, "\n"), want2);
			if (k == 0) {
				first[how] = s;
				r0[how] = r;
				continue;
			}
			is_str(s, first[how], "%s: %s prints on %s what it prints on %s", what, hows[how], b[k].name, b[0].name);
			ok(r.log_rows == r0[how].log_rows && r.world_rows == r0[how].world_rows &&
			   r.object_rows == r0[how].object_rows && r.holes == r0[how].holes,
			   "%s: %s counts on %s what it counts on %s (log %lld/%lld, worlds %lld/%lld, objects %lld/%lld, holes "
			   "%lld/%lld)", what, hows[how], b[k].name, b[0].name, r.log_rows, r0[how].log_rows, r.world_rows,
			   r0[how].world_rows, r.object_rows, r0[how].object_rows, r.holes, r0[how].holes);
			free(s);
		}
	}
	is_str(first[1], first[0], "%s: %s: the indexed path prints what the full scan does", what, b[0].name);
	is_str(first[2], first[0], "%s: %s: a budgeted scan prints what the full scan does", what, b[0].name);
	/* the start-up scan's way: a budget of 97 rows, resumed */
	char *ref_lines = NULL;
	for (int k = 0; k < nb; k++) {
		int runs, over;
		char *all = resumed(b[k].st, 97, 1, &runs, &over);
		char *h = holes_of(all), *full = holes_of(first[3]);
		ok(runs > 3 && !over, "%s: %s: a start-up scan of 97 rows a run: %d runs, none over its budget", what,
		   b[k].name, runs);
		/* the world and object lines of one run are in ref order, the runs in cursor order: the same set
		 * as the full scan's, here in the same order too (one page of each table's lines) */
		is_str(h, full, "%s: %s: the resumed runs' holes are the full --objects scan's", what, b[k].name);
		if (k == 0) ref_lines = all;
		else {
			is_str(all, ref_lines, "%s: the resumed runs print on %s what they print on %s (cursors and counts)", what,
			       b[k].name, b[0].name);
			free(all);
		}
		free(h);
		free(full);
	}
	free(ref_lines);
	for (int how = 0; how < 4; how++) free(first[how]);
}

/* scan.page: the scan's connection terminated by the server once, while
 * the scan is between two pages */
static int kill_armed;
static void kill_scan(void *ctx, const char *name)
{
	if (!kill_armed || strcmp(name, "scan.page") != 0) return;
	kill_armed = 0;
	struct world_err e = { 0 };
	if (wdb_exec((struct wdb *)ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> "
	                                "pg_backend_pid() AND datname = current_database() AND backend_type = "
	                                "'client backend'", &e) < 0)
		diag("terminate: %s", e.msg);
}

/* A lost connection mid-scan is an error, not holes nor a clean answer:
 * the page after it runs on a new connection (the driver reconnects
 * outside its own transactions), which is not the scan's snapshot. */
static void lost_connection(struct backend *pg, int paged)
{
	if (!paged || !WORLD_PAUSE_COMPILED) {
		skip(paged ? "built without --enable-test-hooks" : "one page (run with WORLD_TEST_SCAN_PAGE)",
		     "a connection lost between two pages fails the scan");
		return;
	}
	for (int how = 0; how < 3; how++) {
		world_pause_set_hook(kill_scan, pg->raw);
		kill_armed = 1;
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		if (!f) bail("open_memstream");
		struct world_scan_opts o = { .indexed = how == 1, .max_rows = how == 2 ? 1LL << 40 : 0, .objects = 1 };
		struct world_scan_result r;
		struct world_err e = { 0 };
		int rc = world_scan(pg->st, &o, f, &r, &e);
		fclose(f);
		world_pause_set_hook(NULL, NULL);
		ok(!kill_armed, "lost connection (way %d): the connection was terminated between two pages", how);
		ok(rc < 0 && e.code == WX_UNAVAILABLE && !strstr(buf, "integrity_hole"),
		   "lost connection (way %d): the scan fails, exit 29 (the server unavailable), no hole printed: %s", how, e.msg);
		free(buf);
		struct world_scan_result r2;
		char *s2 = scan_out(pg->st, how, &r2);
		is_str(s2, "", "lost connection (way %d): the next scan on the same handle is clean (the control)", how);
		free(s2);
	}
}

int main(void)
{
	char dir[] = "/tmp/world-test-scanpg.XXXXXX";
	if (!mkdtemp(dir)) bail("mkdtemp");
	char db[4200];
	snprintf(db, sizeof db, "%s/s.db", dir);
	struct world_err e = { 0 };
	struct world_store *lite;
	if (world_store_open(db, WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, &lite, &e) < 0) bail("open: %s", e.msg);
	struct sbulk sb = { .episode = "scanpg" };
	if (sbulk_init(lite, dir, &sb, &e) < 0 || sbulk_fill(lite, &sb, ENTRIES - 4, 50, &e) < 0) bail("fill: %s", e.msg);
	sb.no_journal = 1;
	if (sbulk_fill(lite, &sb, 4, 4, &e) < 0) bail("fill: %s", e.msg);
	/* an orphan: --objects reads it, no entry names it */
	char orphan[WORLD_REF_SIZE];
	if (world_object_put(lite, "x-test/orphan", "scanpg", "{\"orphan\":1}", 12, orphan, NULL, &e) < 0)
		bail("orphan: %s", e.msg);

	const char *uri = getenv("WORLD_TEST_PG_URI");
#ifdef WORLD_HAVE_PG
	wdb_pg_enable();
#else
	uri = NULL; /* built --without-postgresql */
#endif
	struct backend b[2] = { { "SQLite", lite, NULL }, { "PostgreSQL", NULL, NULL } };
	int nb = 1;
	if (uri && *uri) {
		/* the cluster's database, emptied (a run before this one's copy), then the copy */
		struct wdb *raw;
		if (wdb_open(uri, NULL, &raw, &e) < 0) bail("connect: %s", e.msg);
		if (wdb_exec(raw, "DROP SCHEMA public CASCADE; CREATE SCHEMA public", &e) < 0) bail("empty: %s", e.msg);
		struct world_copy_opts co = { 0 };
		struct world_copy_result cr;
		int rc = world_store_copy(db, uri, &co, &cr, &e);
		ok(rc == 0, "the SQLite store copied into PostgreSQL (%lld entries): %s", cr.log_entries, rc ? e.msg : "");
		if (rc < 0) bail("copy: %s", e.msg);
		if (world_store_open(uri, WORLD_STORE_WRITER, &b[1].st, &e) < 0) bail("open %s: %s", uri, e.msg);
		b[1].raw = raw;
		nb = 2;
	}

	struct world_scan_result r;
	char *s = scan_out(lite, 3, &r);
	is_str(s, "", "the clean SQLite store: --objects prints nothing");
	ok(r.log_rows == ENTRIES && r.world_rows == ENTRIES && r.object_rows == 3 * ENTRIES + 2,
	   "the clean SQLite store: %lld entries, %lld worlds, %lld objects", r.log_rows, r.world_rows, r.object_rows);
	free(s);
	if (nb == 2) {
		s = scan_out(b[1].st, 3, &r);
		is_str(s, "", "the clean PostgreSQL store: --objects prints nothing");
		ok(r.log_rows == ENTRIES && r.world_rows == ENTRIES && r.object_rows == 3 * ENTRIES + 2,
		   "the clean PostgreSQL store: %lld entries, %lld worlds, %lld objects", r.log_rows, r.world_rows,
		   r.object_rows);
		free(s);
		/* the start-up scan's own budget covers this store in one run */
		struct world_scan_opts o = { .max_rows = WORLD_SCAN_START_ROWS, .max_seconds = WORLD_SCAN_START_SECONDS };
		ok(world_scan(b[1].st, &o, NULL, &r, &e) == 0 && r.complete && r.holes == 0 && r.log_rows == ENTRIES,
		   "PostgreSQL: the start-up scan's budget (%d rows, %.0f s) completes, clean", WORLD_SCAN_START_ROWS,
		   WORLD_SCAN_START_SECONDS);
	} else {
		const char *why = getenv("WORLD_TEST_PG_SKIP") ? getenv("WORLD_TEST_PG_SKIP") : "WORLD_TEST_PG_URI is not set";
		skip(why, "the PostgreSQL half (every comparison with the SQLite store)");
	}
	compare(b, nb, "clean", "", "");

	/* the damage, the same SQL on both where the dialects agree */
	char in10[WORLD_REF_SIZE], out30[WORLD_REF_SIZE], sql[1024], want1[512], want2[512];
	record_field(lite, 10, "input", in10);
	record_field(lite, 30, "output", out30);
	/* a flipped byte: the input's first, '{' (0x7b) to 'z' (0x7a) */
	snprintf(sql, sizeof sql, "UPDATE objects SET payload = CAST(X'7a' || substr(payload, 2) AS BLOB) WHERE ref = '%s'",
	         in10);
	exec_sql(&b[0], sql);
	if (nb == 2) {
		snprintf(sql, sizeof sql, "UPDATE objects SET payload = set_byte(payload, 0, get_byte(payload, 0) # 1) "
		                          "WHERE ref = '%s'", in10);
		exec_sql(&b[1], sql);
	}
	snprintf(want1, sizeof want1, "integrity_hole table=objects index=10 field=input ref=%s\n", in10);
	snprintf(want2, sizeof want2, "integrity_hole table=objects ref=%s field=payload\n", in10);
	compare(b, nb, "a flipped payload byte", want1, "");
	{
		s = scan_out(lite, 3, &r);
		ok(strstr(s, want2) != NULL, "a flipped payload byte: SQLite --objects finds %.*s", (int)strcspn(want2, "\n"),
		   want2);
		free(s);
	}
	/* a broken chain link: entry 20's prevEntryHash */
	for (int k = 0; k < nb; k++)
		exec_sql(&b[k], "UPDATE log_entries SET prev_entry_hash = '" ZERO "' WHERE entry_index = 20");
	compare(b, nb, "and a broken chain link", "integrity_hole table=log_entries index=20 field=",
	        "integrity_hole table=objects index=10 field=input");
	/* a missing object: entry 30's output (also its world's stateRoot) */
	snprintf(sql, sizeof sql, "DELETE FROM objects WHERE ref = '%s'", out30);
	for (int k = 0; k < nb; k++) exec_sql(&b[k], sql);
	snprintf(want1, sizeof want1, "integrity_hole table=objects index=30 field=output ref=%s\n", out30);
	compare(b, nb, "and a missing object", want1, "field=stateRoot\n");
	if (nb == 2) {
		/* PostgreSQL's archive table: the interpreter's manifest no longer canonical */
		exec_sql(&b[1], "UPDATE archive SET manifest = manifest || '\\x20'::bytea");
		s = scan_out(b[1].st, 0, &r);
		struct world_scan_result ri;
		char *si = scan_out(b[1].st, 1, &ri);
		ok(strstr(s, "integrity_hole table=artifacts index=1 field=interpreter.manifest ref=sha256:") != NULL,
		   "PostgreSQL: a damaged manifest in the archive table is found");
		is_str(si, s, "PostgreSQL: a damaged manifest: the indexed path prints what the full scan does");
		free(s);
		free(si);
		exec_sql(&b[1], "UPDATE archive SET manifest = substr(manifest, 1, length(manifest) - 1)");
		exec_sql(&b[1], "UPDATE archive SET bytes = set_byte(bytes, 100, get_byte(bytes, 100) # 1)");
		s = scan_out(b[1].st, 0, &r);
		ok(strstr(s, "integrity_hole table=artifacts index=1 field=interpreter ref=sha256:") != NULL,
		   "PostgreSQL: a flipped byte of the interpreter in the archive table is found");
		free(s);
		exec_sql(&b[1], "UPDATE archive SET bytes = set_byte(bytes, 100, get_byte(bytes, 100) # 1)");
	}

	/* undone: clean again on both (the control: what was found was the damage) */
	for (int k = 0; k < nb; k++) {
		snprintf(sql, sizeof sql,
		         "UPDATE log_entries SET prev_entry_hash = (SELECT entry_hash FROM log_entries WHERE entry_index = 19) "
		         "WHERE entry_index = 20");
		exec_sql(&b[k], sql);
	}
	snprintf(sql, sizeof sql, "UPDATE objects SET payload = CAST(X'7b' || substr(payload, 2) AS BLOB) WHERE ref = '%s'",
	         in10);
	exec_sql(&b[0], sql);
	if (nb == 2) {
		snprintf(sql, sizeof sql, "UPDATE objects SET payload = set_byte(payload, 0, get_byte(payload, 0) # 1) "
		                          "WHERE ref = '%s'", in10);
		exec_sql(&b[1], sql);
	}
	{
		int n30 = 0;
		char body[160];
		/* the output of call 30 as sbulk wrote it (n = 30: the fixture's counter counts calls) */
		n30 = snprintf(body, sizeof body, "{\"answer\":%d,\"text\":\"benchmark output payload of a typical size\"}", 30);
		for (int k = 0; k < nb; k++) {
			char ref[WORLD_REF_SIZE];
			if (world_object_put(b[k].st, "world/invocation-output/v1", "cli:scanpg:b30", body, (size_t)n30, ref, NULL,
			                     &e) < 0)
				bail("%s: put back: %s", b[k].name, e.msg);
			ok(strcmp(ref, out30) == 0, "%s: the missing output is put back (%s)", b[k].name, ref);
		}
	}
	compare(b, nb, "the damage undone", "", "");
	if (nb == 2) lost_connection(&b[1], getenv("WORLD_TEST_SCAN_PAGE") != NULL);

	if (nb == 2) {
		world_store_close(b[1].st);
		wdb_close(b[1].raw);
	}
	world_store_close(lite);
	char cmd[4300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("could not remove %s", dir);
	return done_testing();
}
