/* tests/store/test_db.c: the store's SQL driver (store/db.h) on both
 * databases, the same statements on each: a fresh SQLite store made by
 * store.c, and the PostgreSQL schema (store/schema_pg.h) on the throwaway
 * cluster tests/store/pg.sh starts. Blob bytes (every byte value, NUL
 * inside, empty) and int64 extremes round-trip; `?N` parameters; a
 * constraint is WDB_CONFLICT; the triggers keep the same derived rows; the
 * head compare-and-swap's second concurrent attempt never moves the head
 * (busy / serialization failure = WDB_RETRY, then 0 rows); a write skew
 * between two SERIALIZABLE transactions is WDB_RETRY and its retry
 * commits; a stopped server is WDB_UNAVAILABLE, and the same handle
 * reconnects by itself once it runs again; the PostgreSQL schema has every
 * table, column and index of the SQLite one; and no password -- in the
 * URI, percent-encoded, as a query parameter, in a password file, from
 * PGPASSFILE -- ever appears in an error text, a name or on stderr
 * (controls: it is in the URI given; libpq's own message quotes it).
 *
 * PostgreSQL comes from the environment pg.sh sets: WORLD_TEST_PG_URI (a
 * superuser over the unix socket, database "world"), WORLD_TEST_PG_TCP
 * (HOST:PORT, password authentication), WORLD_TEST_PG_STOP and
 * WORLD_TEST_PG_START (shell commands); WORLD_TEST_PG_SKIP gives the reason
 * when there is none (its half is then skipped). */
#include "store/db.h"
#include "store/open_opts.h"
#include "store/schema_pg.h"
#include "store/store.h"
#include "tests/tap.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef WORLD_HAVE_PG
#include <libpq-fe.h>
#endif

static char dir[256];
static int stderr_fd = -1;
static char stderr_path[300];

static struct wdb *open_or_bail(const char *name, const struct wdb_opts *o)
{
	struct wdb *db = NULL;
	struct world_err err = { 0 };
	if (wdb_open(name, o, &db, &err) < 0) bail("open %s: %s", name, err.msg);
	return db;
}

static void exec_or_bail(struct wdb *db, const char *sql)
{
	struct world_err err = { 0 };
	if (wdb_exec(db, sql, &err) < 0) bail("exec on %s: %s", wdb_name(db), err.msg);
}

/* one statement, parameters "i:5", "t:text", "n", run to its end; the
 * first column of the first row (int) into *first when non-NULL */
static int run(struct wdb *db, const char *sql, int64_t *first, struct world_err *err, int n, ...)
{
	struct wdb_stmt *st;
	err->msg[0] = 0;
	int rc = wdb_prepare(db, sql, &st, err);
	if (rc < 0) return rc;
	va_list ap;
	va_start(ap, n);
	for (int i = 1; i <= n && rc >= 0; i++) {
		const char *a = va_arg(ap, const char *);
		if (a[0] == 'i') rc = wdb_bind_int64(st, i, strtoll(a + 2, NULL, 10), err);
		else if (a[0] == 't') rc = wdb_bind_text(st, i, a + 2, -1, err);
		else rc = wdb_bind_null(st, i, err);
	}
	va_end(ap);
	int got = 0;
	while (rc >= 0 && (rc = wdb_step(st, err)) == WDB_ROW)
		if (first && !got++) *first = wdb_column_int64(st, 0, NULL);
	wdb_finalize(st);
	return rc < 0 ? rc : 0;
}

static int64_t q1(struct wdb *db, const char *sql)
{
	int64_t v = -999;
	struct world_err err = { 0 };
	if (run(db, sql, &v, &err, 0) < 0) diag("q1 %s: %s", sql, err.msg);
	return v;
}

/* ---- what both drivers must do alike ---- */

static void values(struct wdb *db, const char *L)
{
	struct world_err err = { 0 };
	unsigned char blob[600];
	for (int i = 0; i < 512; i++) blob[i] = (unsigned char)i; /* every byte value twice, NUL at 0 and 256 */
	memcpy(blob + 512, "a\0b\0\0c", 6);
	size_t bn = 518;
	const int64_t ints[][2] = { { INT64_MIN, INT64_MAX }, { -1, 0 }, { INT64_MAX - 1, INT64_MIN + 1 } };
	const char *refs[] = { "ref-min-max", "ref-m1-0", "ref-near" };
	struct wdb_stmt *ins, *get;
	ok(wdb_prepare(db, "INSERT INTO objects(ref, semantic_id, provenance, payload, size, created_at) VALUES (?,?,?,?,?,?)",
	               &ins, &err) == 0, "%s: prepare an insert with six ? parameters (%s)", L, err.msg);
	int fine = 1;
	for (int r = 0; r < 3; r++) {
		wdb_reset(ins);
		fine &= wdb_bind_text(ins, 1, refs[r], -1, &err) == 0 && wdb_bind_text(ins, 2, "x/v1", -1, &err) == 0 &&
		        wdb_bind_text(ins, 3, "caf\xc3\xa9 \xe2\x9c\x93", -1, &err) == 0 &&
		        wdb_bind_blob(ins, 4, blob, bn, &err) == 0 && wdb_bind_int64(ins, 5, ints[r][0], &err) == 0 &&
		        wdb_bind_int64(ins, 6, ints[r][1], &err) == 0 && wdb_step(ins, &err) == WDB_DONE && wdb_changes(db) == 1;
	}
	ok(fine, "%s: three rows inserted through one prepared statement, reset between (%s)", L, err.msg);
	/* the empty blob is a blob, not NULL (payload is NOT NULL) */
	wdb_reset(ins);
	ok(wdb_bind_text(ins, 1, "ref-empty", -1, &err) == 0 && wdb_bind_blob(ins, 4, NULL, 0, &err) == 0 &&
	       wdb_bind_int64(ins, 6, 0, &err) == 0 && wdb_step(ins, &err) == WDB_DONE,
	   "%s: an empty blob is stored (not NULL) (%s)", L, err.msg);
	wdb_finalize(ins);

	ok(wdb_prepare(db, "SELECT payload, size, created_at, provenance FROM objects WHERE created_at = ?2 AND ref = ?1", &get,
	               &err) == 0,
	   "%s: prepare a select with ?2 before ?1 (%s)", L, err.msg);
	for (int r = 0; r < 3; r++) {
		wdb_reset(get);
		int rc = wdb_bind_text(get, 1, refs[r], -1, &err);
		if (rc == 0) rc = wdb_bind_int64(get, 2, ints[r][1], &err);
		if (rc == 0) rc = wdb_step(get, &err);
		size_t n = 0;
		const void *p = rc == WDB_ROW ? wdb_column_blob(get, 0, &n) : NULL;
		ok(rc == WDB_ROW && n == bn && memcmp(p, blob, bn) == 0,
		   "%s: %s: the %zu blob bytes back byte for byte (every value 0..255, NUL inside)", L, refs[r], bn);
		int bad = 0;
		ok(rc == WDB_ROW && wdb_column_int64(get, 1, &bad) == ints[r][0] && wdb_column_int64(get, 2, &bad) == ints[r][1] &&
		       !bad,
		   "%s: %s: int64 %lld and %lld back exactly", L, refs[r], (long long)ints[r][0], (long long)ints[r][1]);
		if (r == 0)
			is_str(rc == WDB_ROW ? wdb_column_text(get, 3) : "", "caf\xc3\xa9 \xe2\x9c\x93", "%s: UTF-8 text back", L);
		ok(rc == WDB_ROW && wdb_step(get, &err) == WDB_DONE, "%s: %s: one row, then done", L, refs[r]);
	}
	wdb_reset(get);
	ok(wdb_bind_text(get, 1, "ref-empty", -1, &err) == 0 && wdb_bind_int64(get, 2, 0, &err) == 0 &&
	       wdb_step(get, &err) == WDB_ROW && !wdb_column_is_null(get, 0),
	   "%s: the empty blob reads back as a blob, not NULL", L);
	size_t en = 99;
	wdb_column_blob(get, 0, &en);
	is_int(en, 0, "%s: of 0 bytes", L);
	wdb_finalize(get);

	/* one statement bound with text, then with a blob, where the blob goes (PostgreSQL prepares it anew) */
	struct wdb_stmt *mix;
	int mixed = wdb_prepare(db, "INSERT INTO objects(ref, semantic_id, provenance, payload, size, created_at) "
	                            "VALUES (?, 'k', 'p', ?, 1, 7)", &mix, &err) == 0 &&
	            wdb_bind_text(mix, 1, "mix-text", -1, &err) == 0 && wdb_bind_text(mix, 2, "plain", -1, &err) == 0 &&
	            wdb_step(mix, &err) == WDB_DONE;
	if (mixed) {
		wdb_reset(mix);
		mixed = wdb_bind_text(mix, 1, "mix-blob", -1, &err) == 0 && wdb_bind_blob(mix, 2, blob, bn, &err) == 0 &&
		        wdb_step(mix, &err) == WDB_DONE;
		wdb_finalize(mix);
	}
	ok(mixed, "%s: one statement run with text, then with a blob in the same place (%s)", L, err.msg);
	if (wdb_prepare(db, "SELECT payload FROM objects WHERE ref = 'mix-blob'", &get, &err) == 0) {
		size_t n = 0;
		const void *p = wdb_step(get, &err) == WDB_ROW ? wdb_column_blob(get, 0, &n) : NULL;
		ok(p && n == bn && memcmp(p, blob, bn) == 0, "%s: the blob of the second run back byte for byte", L);
		wdb_finalize(get);
	} else {
		ok(0, "%s: the blob of the second run back byte for byte (%s)", L, err.msg);
	}

	/* a constraint is a conflict, with its exit code; the control: ON CONFLICT DO NOTHING */
	int rc = run(db, "INSERT INTO objects(ref, semantic_id, provenance, payload, size, created_at) VALUES (?,'k','p','',0,0)",
	             NULL, &err, 1, "t:ref-m1-0");
	ok(rc == WDB_CONFLICT && err.code == WX_CONFLICT && wdb_last_fail(db) == WDB_CONFLICT,
	   "%s: a second row of one primary key is WDB_CONFLICT, exit %d (%s)", L, WX_CONFLICT, err.msg);
	rc = run(db,
	         "INSERT INTO objects(ref, semantic_id, provenance, payload, size, created_at) VALUES (?,'k','p','',0,0) "
	         "ON CONFLICT(ref) DO NOTHING",
	         NULL, &err, 1, "t:ref-m1-0");
	ok(rc == 0 && wdb_changes(db) == 0 && wdb_last_fail(db) == 0, "%s: control: ON CONFLICT DO NOTHING changes 0 rows", L);

	/* NULL in and out; sum() of bigints (numeric on PostgreSQL) */
	ok(run(db, "INSERT INTO journal(phase, kind, subject, cost, at) VALUES ('intent', ?, ?, ?, 1)", NULL, &err, 3, "n", "t:s1",
	       "i:123456789012") == 0 &&
	       run(db, "INSERT INTO journal(phase, kind, subject, cost, at) VALUES ('intent', 'k', 's2', ?, 2)", NULL, &err, 1,
	           "i:-5") == 0,
	   "%s: journal rows with a NULL kind (%s)", L, err.msg);
	is_int(q1(db, "SELECT count(*) FROM journal WHERE kind IS NULL"), 1, "%s: the NULL is NULL", L);
	is_int(q1(db, "SELECT sum(cost) FROM journal"), 123456789007LL, "%s: sum() of bigints reads as int64", L);
	ok(run(db, "INSERT INTO journal(phase, at) VALUES ('neither', 1)", NULL, &err, 0) == WDB_CONFLICT,
	   "%s: a CHECK constraint refused is WDB_CONFLICT (%s)", L, err.msg);
	int64_t cnt = -1;
	ok(run(db, "SELECT count(*) FROM objects WHERE provenance <> 'why? -- not a parameter' /* nor ? */ AND ref = ?", &cnt,
	       &err, 1, "t:ref-near") == 0 && cnt == 1,
	   "%s: a ? inside a string literal or a comment is not a parameter (%s)", L, err.msg);
	ok(run(db, "SELEKT 1", NULL, &err, 0) == WDB_FAIL && err.code == WX_IO && strstr(err.msg, wdb_name(db)),
	   "%s: a bad statement is WDB_FAIL, naming the store (%s)", L, err.msg);
}

/* a read-only handle reads and never writes */
static void readonly(const char *name, const struct wdb_opts *base, const char *L)
{
	struct world_err err = { 0 };
	struct wdb_opts o = *base;
	o.flags = WDB_READONLY;
	struct wdb *r = open_or_bail(name, &o);
	is_int(q1(r, "SELECT count(*) FROM objects WHERE ref = 'ref-near'"), 1, "%s: a read-only handle reads", L);
	int rc = run(r, "DELETE FROM objects WHERE ref = 'ref-near'", NULL, &err, 0);
	ok(rc == WDB_FAIL && err.code == WX_IO, "%s: and its write is refused, WDB_FAIL (%s)", L, err.msg);
	wdb_close(r);
}

/* the triggers: the same derived rows on both */
static void triggers(struct wdb *db, const char *L)
{
	struct world_err err = { 0 };
	int64_t s0 = q1(db, "SELECT sessions FROM store_changes WHERE id = 1");
	int64_t r0 = q1(db, "SELECT registries FROM store_changes WHERE id = 1");
	ok(run(db, "INSERT INTO sessions(credential_hash, episode, grants, expires_at, created_at) VALUES ('c1','e1','[]',9,1)",
	       NULL, &err, 0) == 0 &&
	       run(db, "DELETE FROM sessions WHERE credential_hash = 'c1'", NULL, &err, 0) == 0,
	   "%s: a session added and deleted (%s)", L, err.msg);
	is_int(q1(db, "SELECT sessions FROM store_changes WHERE id = 1") - s0, 2, "%s: the sessions counter moved twice", L);
	ok(run(db, "INSERT INTO heads(name, ref, revision, updated_at) VALUES ('@world','w1',1,1)", NULL, &err, 0) == 0,
	   "%s: @world head (%s)", L, err.msg);
	is_int(q1(db, "SELECT registries FROM store_changes WHERE id = 1"), r0, "%s: @world moves no registry counter", L);
	ok(run(db, "INSERT INTO heads(name, ref, revision, updated_at) VALUES ('world/reg/v1','r1',1,1)", NULL, &err, 0) == 0,
	   "%s: a registry head (%s)", L, err.msg);
	is_int(q1(db, "SELECT registries FROM store_changes WHERE id = 1") - r0, 1, "%s: a registry head moves it", L);
	ok(run(db, "INSERT INTO episode_objects(episode, ref) VALUES ('ep', 'rec1')", NULL, &err, 0) == 0 &&
	       run(db,
	           "INSERT INTO log_entries(entry_index, semantics_epoch, entry_hash, prev_entry_hash, transition_fn, interpreter,"
	           " written_by, transition_ref, entry_json, committed_at) VALUES (1, 1, 'h1', NULL, 'f', 'i', 'w', 'rec1', ?, 1)",
	           NULL, &err, 1, "t:{}") == 0 &&
	       run(db,
	           "INSERT INTO log_entries(entry_index, semantics_epoch, entry_hash, prev_entry_hash, transition_fn, interpreter,"
	           " written_by, transition_ref, entry_json, committed_at) VALUES (2, 1, 'h2', 'h1', 'f', 'i', 'w', 'rec2', ?, 1)",
	           NULL, &err, 1, "t:{}") == 0 &&
	       run(db, "INSERT INTO episode_objects(episode, ref) VALUES ('ep', 'rec2')", NULL, &err, 0) == 0,
	   "%s: membership before one entry and after the other (%s)", L, err.msg);
	is_int(q1(db, "SELECT count(*) FROM episode_entries WHERE episode = 'ep'"), 2,
	       "%s: episode_entries has both, whichever came first", L);
}

/* The head compare-and-swap from two handles at once. */
static const char *const CAS = "UPDATE heads SET ref = ?1, revision = revision + 1, updated_at = 2 "
                               "WHERE name = '@world' AND revision = ?2 AND ref = ?3";

static int cas(struct wdb *db, const char *to, const char *rev, const char *from, struct world_err *err)
{
	int rc = run(db, CAS, NULL, err, 3, to, rev, from);
	return rc < 0 ? rc : (int)wdb_changes(db);
}

static void cas_race(struct wdb *a, struct wdb *b, const char *L, int pg)
{
	struct world_err err = { 0 }, eb = { 0 };
	ok(wdb_begin(a, &err) == 0, "%s: A begins (%s)", L, err.msg);
	is_int(cas(a, "t:w2", "i:1", "t:w1", &err), 1, "%s: A's compare-and-swap 1 -> 2 moves the head", L);
	int rb = wdb_begin(b, &eb);
	int64_t seen = -1;
	if (pg) {
		ok(rb == 0, "%s: B begins beside A (%s)", L, eb.msg);
		ok(run(b, "SELECT revision FROM heads WHERE name = '@world'", &seen, &eb, 0) == 0 && seen == 1,
		   "%s: B sees revision 1 (its snapshot, before A commits)", L);
	} else {
		ok(rb == WDB_RETRY && eb.code == WX_LOCKED, "%s: B's BEGIN IMMEDIATE behind A's write lock is WDB_RETRY (%s)", L,
		   eb.msg);
	}
	ok(wdb_commit(a, &err) == 0, "%s: A commits (%s)", L, err.msg);
	if (pg) {
		int r = cas(b, "t:w3", "i:1", "t:w1", &eb);
		ok(r == WDB_RETRY && eb.code == WX_LOCKED && strstr(eb.msg, "40001"),
		   "%s: B's concurrent compare-and-swap on the head A moved is a serialization failure, WDB_RETRY (%s)", L, eb.msg);
		ok(wdb_commit(b, &eb) == WDB_RETRY, "%s: and B's COMMIT of it is WDB_RETRY too (rolled back)", L);
	}
	ok(wdb_rollback(b, &eb) == 0, "%s: B rolls back", L);
	is_int(q1(a, "SELECT revision FROM heads WHERE name = '@world'"), 2, "%s: the head is A's (revision 2)", L);
	/* B's retry: its expected head is stale now, so 0 rows; the control: the current head moves */
	eb.msg[0] = 0;
	ok(wdb_begin(b, &eb) == 0, "%s: B begins again (%s)", L, eb.msg);
	is_int(cas(b, "t:w3", "i:1", "t:w1", &eb), 0, "%s: B's retried compare-and-swap from the stale head changes 0 rows", L);
	is_int(cas(b, "t:w3", "i:2", "t:w2", &eb), 1, "%s: control: from the current head it moves it", L);
	ok(wdb_commit(b, &eb) == 0, "%s: B commits (%s)", L, eb.msg);
	is_int(q1(a, "SELECT revision FROM heads WHERE name = '@world'"), 3, "%s: revision 3, one move each", L);
}

/* ---- PostgreSQL only ---- */

#ifdef WORLD_HAVE_PG
static const char *const SECRET = "Zq8-s3cret-Pw";     /* worldpw's password */
static const char *const WRONG = "Wr0ng-Pw-9x7";       /* never valid */
static const char *const WRONG_ENC = "Wr0ng%2DPw%2D9y8"; /* percent-encoded: Wr0ng-Pw-9y8 */

static int clean_of(const char *text, const char *const *pw)
{
	for (; *pw; pw++)
		if (strstr(text, *pw)) return 0;
	return 1;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fchmod(fd, mode) != 0 || close(fd) != 0)
		bail("write %s: %s", path, strerror(errno));
}

static void serialization(struct wdb *a, struct wdb *b)
{
	struct world_err err = { 0 }, eb = { 0 };
	/* episode_usage: no trigger, so the two writers share no row lock (a
	 * session insert bumps store_changes: B would wait for A) */
	const char *ins = "INSERT INTO episode_usage(episode, calls, bytes) VALUES (?, 1, 0)";
	int64_t n = -1;
	ok(wdb_begin(a, &err) == 0 && wdb_begin(b, &eb) == 0, "pg: two SERIALIZABLE transactions (%s%s)", err.msg, eb.msg);
	ok(run(a, "SELECT count(*) FROM episode_usage WHERE episode = 'skew-b'", &n, &err, 0) == 0 && n == 0 &&
	       run(b, "SELECT count(*) FROM episode_usage WHERE episode = 'skew-a'", &n, &eb, 0) == 0 && n == 0,
	   "pg: each reads what the other will write");
	ok(run(a, ins, NULL, &err, 1, "t:skew-a") == 0, "pg: A writes (%s)", err.msg);
	int rb = run(b, ins, NULL, &eb, 1, "t:skew-b");
	ok(wdb_commit(a, &err) == 0, "pg: A commits (%s)", err.msg);
	if (rb == 0) rb = wdb_commit(b, &eb);
	else wdb_rollback(b, NULL);
	ok(rb == WDB_RETRY && eb.code == WX_LOCKED && strstr(eb.msg, "40001"),
	   "pg: the write skew fails B with a serialization failure, WDB_RETRY, exit %d (%s)", WX_LOCKED, eb.msg);
	wdb_rollback(b, NULL);
	is_int(q1(a, "SELECT count(*) FROM episode_usage WHERE episode = 'skew-b'"), 0, "pg: nothing of B is committed");
	eb.msg[0] = 0;
	ok(wdb_begin(b, &eb) == 0 && run(b, "SELECT count(*) FROM episode_usage WHERE episode = 'skew-a'", &n, &eb, 0) == 0 &&
	       run(b, ins, NULL, &eb, 1, "t:skew-b") == 0 && wdb_commit(b, &eb) == 0,
	   "pg: control: B's retry, alone, commits (%s)", eb.msg);
	is_int(q1(a, "SELECT count(*) FROM episode_usage WHERE episode LIKE 'skew-%'"), 2, "pg: both rows now");
}

/* The transaction's pipeline (store/db.h): counted in round trips, which
 * are deterministic. PB is a second handle opened with the pipeline off
 * (WORLD_TEST_PG_NO_PIPELINE=1): the control. */
static int step_kept(struct wdb_stmt *st, const char *v, struct world_err *err)
{
	wdb_reset(st);
	if (v && wdb_bind_text(st, 1, v, -1, err) < 0) return -1;
	int rc;
	while ((rc = wdb_step(st, err)) == WDB_ROW) {}
	return rc;
}

static void pipeline(struct wdb *pa, struct wdb *off)
{
	struct world_err err = { 0 };
	exec_or_bail(pa, "CREATE TABLE pipe_t(k TEXT PRIMARY KEY)");
	struct wdb *hs[2] = { pa, off };
	const char *ks[2][5] = { { "a1", "a2", "a3", "a4", "a5" }, { "b1", "b2", "b3", "b4", "b5" } };
	uint64_t n[2][3];
	for (int h = 0; h < 2; h++) {
		struct wdb *db = hs[h];
		struct wdb_stmt *ins, *sel;
		if (wdb_prepare_kept(db, "INSERT INTO pipe_t(k) VALUES (?)", &ins, &err) < 0 ||
		    wdb_prepare_kept(db, "SELECT count(*) FROM pipe_t WHERE k LIKE ?", &sel, &err) < 0)
			bail("prepare: %s", err.msg);
		/* warm: each statement prepared on the connection */
		int rc = wdb_begin(db, &err) == 0 && step_kept(ins, h ? "bw" : "aw", &err) == WDB_DONE &&
		         step_kept(sel, "x", &err) == WDB_DONE && wdb_rollback(db, &err) == 0;
		if (!rc) bail("warm-up: %s", err.msg);
		/* five inserts and the commit */
		uint64_t r0 = wdb_pg_round_trips(db);
		rc = wdb_begin(db, &err) == 0;
		for (int i = 0; rc && i < 5; i++) rc = step_kept(ins, ks[h][i], &err) == WDB_DONE;
		rc = rc && wdb_commit(db, &err) == 0;
		ok(rc, "pg pipeline %s: BEGIN, five inserts, COMMIT (%s)", h ? "off" : "on", err.msg);
		n[h][0] = wdb_pg_round_trips(db) - r0;
		/* a read in the middle sees the writes before it (read-your-writes) */
		r0 = wdb_pg_round_trips(db);
		int64_t seen = -1;
		rc = wdb_begin(db, &err) == 0 && step_kept(ins, h ? "bx1" : "ax1", &err) == WDB_DONE;
		wdb_reset(sel);
		rc = rc && wdb_bind_text(sel, 1, h ? "b%" : "a%", -1, &err) == 0 && wdb_step(sel, &err) == WDB_ROW;
		if (rc) seen = wdb_column_int64(sel, 0, NULL);
		rc = rc && step_kept(ins, h ? "bx2" : "ax2", &err) == WDB_DONE && wdb_commit(db, &err) == 0;
		n[h][1] = wdb_pg_round_trips(db) - r0;
		ok(rc && seen == 6, "pg pipeline %s: a read after a write in one transaction sees it (%lld rows of 6) (%s)",
		   h ? "off" : "on", (long long)seen, err.msg);
		/* wdb_changes of a deferred insert: its answer is read for it */
		r0 = wdb_pg_round_trips(db);
		struct wdb_stmt *ign;
		if (wdb_prepare_kept(db, "INSERT INTO pipe_t(k) VALUES (?) ON CONFLICT DO NOTHING", &ign, &err) < 0)
			bail("prepare: %s", err.msg);
		rc = wdb_begin(db, &err) == 0 && step_kept(ign, ks[h][0], &err) == WDB_DONE;
		int64_t c0 = rc ? wdb_changes(db) : -9;
		rc = rc && step_kept(ign, h ? "by" : "ay", &err) == WDB_DONE;
		int64_t c1 = rc ? wdb_changes(db) : -9;
		rc = rc && wdb_commit(db, &err) == 0;
		ok(rc && c0 == 0 && c1 == 1, "pg pipeline %s: wdb_changes of an insert ignored 0, of one made 1 (%lld, %lld) (%s)",
		   h ? "off" : "on", (long long)c0, (long long)c1, err.msg);
		n[h][2] = wdb_pg_round_trips(db) - r0;
		wdb_finalize(ign);
		/* a deferred insert's failure fails the transaction as a whole */
		err.msg[0] = 0;
		rc = wdb_begin(db, &err) == 0 && step_kept(ins, h ? "bz" : "az", &err) == WDB_DONE;
		int dup = rc ? step_kept(ins, ks[h][1], &err) : -9; /* the primary key refuses it */
		int cm = wdb_commit(db, &err);
		ok(rc && (h ? dup == WDB_CONFLICT : dup == WDB_DONE) && cm == WDB_CONFLICT,
		   "pg pipeline %s: a duplicate key refused %s (step %d, commit %d: %s)", h ? "off" : "on",
		   h ? "at its step" : "at the commit, the transaction whole (the step answered at once)", dup, cm, err.msg);
		is_int(q1(db, h ? "SELECT count(*) FROM pipe_t WHERE k = 'bz'" : "SELECT count(*) FROM pipe_t WHERE k = 'az'"), 0,
		       "pg pipeline %s: ... nothing of that transaction committed; the handle serves the next statement",
		       h ? "off" : "on");
		wdb_finalize(ins);
		wdb_finalize(sel);
	}
	ok(n[0][0] == 1 && n[1][0] == 7, "pg pipeline: BEGIN + 5 inserts + COMMIT in %llu round trip (control, pipeline off: %llu)",
	   (unsigned long long)n[0][0], (unsigned long long)n[1][0]);
	ok(n[0][1] == 2 && n[1][1] == 5, "pg pipeline: insert, read, insert, COMMIT in %llu (control: %llu)",
	   (unsigned long long)n[0][1], (unsigned long long)n[1][1]);
	ok(n[0][2] == 3 && n[1][2] == 5, "pg pipeline: two inserts each with wdb_changes, COMMIT in %llu (control: %llu)",
	   (unsigned long long)n[0][2], (unsigned long long)n[1][2]);
	/* inside a savepoint nothing is deferred: its failure is its own */
	struct wdb_stmt *ins;
	if (wdb_prepare_kept(pa, "INSERT INTO pipe_t(k) VALUES (?)", &ins, &err) < 0) bail("prepare: %s", err.msg);
	int rc = wdb_begin(pa, &err) == 0 && step_kept(ins, "sp1", &err) == WDB_DONE && wdb_exec(pa, "SAVEPOINT s", &err) == 0;
	int dup = rc ? step_kept(ins, "a1", &err) : -9;
	int back = wdb_exec(pa, "ROLLBACK TO s", &err);
	rc = rc && dup == WDB_CONFLICT && back == 0 && wdb_exec(pa, "RELEASE s", &err) == 0 &&
	     step_kept(ins, "sp2", &err) == WDB_DONE && wdb_commit(pa, &err) == 0;
	ok(rc, "pg pipeline: in a savepoint a duplicate is refused at its step (%d), undone alone, the rest commits (%s)", dup,
	   err.msg);
	is_int(q1(pa, "SELECT count(*) FROM pipe_t WHERE k IN ('sp1', 'sp2')"), 2, "pg pipeline: ... both rows around it are there");
	/* a write queue taken by LOCK TABLE rides with BEGIN and the first read */
	struct wdb_stmt *sel;
	if (wdb_prepare_kept(pa, "SELECT count(*) FROM pipe_t WHERE k LIKE ?", &sel, &err) < 0) bail("prepare: %s", err.msg);
	uint64_t r0 = wdb_pg_round_trips(pa);
	rc = wdb_begin(pa, &err) == 0 && wdb_exec(pa, "LOCK TABLE pipe_t IN EXCLUSIVE MODE", &err) == 0 &&
	     step_kept(sel, "a%", &err) == WDB_DONE && step_kept(ins, "lk", &err) == WDB_DONE && wdb_commit(pa, &err) == 0;
	ok(rc && wdb_pg_round_trips(pa) - r0 == 2,
	   "pg pipeline: BEGIN, LOCK TABLE, a read, an insert, COMMIT in %llu round trips (%s)",
	   (unsigned long long)(wdb_pg_round_trips(pa) - r0), err.msg);
	/* the write queue (wdb_lock_next): its LOCK rides with BEGIN; a wait
	 * past the busy timeout (100 ms here) fails the transaction, final */
	r0 = wdb_pg_round_trips(pa);
	rc = wdb_lock_next(pa, "LOCK TABLE pipe_t IN EXCLUSIVE MODE") == 0 && wdb_begin(pa, &err) == 0 &&
	     step_kept(sel, "a%", &err) == WDB_DONE && step_kept(ins, "q1", &err) == WDB_DONE && wdb_commit(pa, &err) == 0;
	ok(rc && wdb_pg_round_trips(pa) - r0 == 2, "pg queue: BEGIN, the queue's LOCK, a read, an insert, COMMIT in %llu round trips (%s)",
	   (unsigned long long)(wdb_pg_round_trips(pa) - r0), err.msg);
	ok(wdb_begin(off, &err) == 0 && wdb_exec(off, "LOCK TABLE pipe_t IN EXCLUSIVE MODE", &err) == 0,
	   "pg queue: another handle holds the queue (%s)", err.msg);
	err = (struct world_err){ 0 };
	rc = wdb_lock_next(pa, "LOCK TABLE pipe_t IN EXCLUSIVE MODE") == 0 && wdb_begin(pa, &err) == 0 ? step_kept(sel, "a%", &err) : -9;
	ok(rc == WDB_FAIL && err.code == WX_LOCKED && strstr(err.msg, "past the busy timeout") && wdb_last_fail(pa) == WDB_FAIL,
	   "pg queue: waiting past the busy timeout fails the transaction, WX_LOCKED, not a race to retry (%d: %s)", rc, err.msg);
	wdb_rollback(pa, &err);
	wdb_rollback(off, &err);
	rc = wdb_begin(pa, &err) == 0 ? step_kept(sel, "a%", &err) : -9;
	ok(rc == WDB_DONE && wdb_commit(pa, &err) == 0, "pg queue: control: the queue free, the next transaction runs (%s)", err.msg);
	ok(wdb_lock_next(pa, "SELECT 1") == -1 && wdb_lock_next(pa, "LOCK TABLE a; DROP TABLE b") == -1,
	   "pg queue: anything but one LOCK statement is refused");
	/* an empty transaction costs nothing */
	r0 = wdb_pg_round_trips(pa);
	ok(wdb_begin(pa, &err) == 0 && wdb_commit(pa, &err) == 0 && wdb_begin(pa, &err) == 0 && wdb_rollback(pa, &err) == 0 &&
	       wdb_pg_round_trips(pa) == r0,
	   "pg pipeline: a transaction that sent nothing commits or rolls back without a round trip (%s)", err.msg);
	wdb_finalize(ins);
	wdb_finalize(sel);
	exec_or_bail(pa, "DROP TABLE pipe_t");
}

static void schema_matches(struct wdb *pg, struct wdb *lite)
{
	/* "table.column" lists, sorted in C (no collation differences) */
	char *pgc[256], *sqc[256];
	int np = 0, ns = 0;
	struct world_err err = { 0 };
	struct wdb_stmt *st;
	if (wdb_prepare(pg, "SELECT table_name::text || '.' || column_name::text FROM information_schema.columns "
	                    "WHERE table_schema = 'public'", &st, &err) < 0)
		bail("%s", err.msg);
	while (np < 256 && wdb_step(st, &err) == WDB_ROW) pgc[np++] = strdup(wdb_column_text(st, 0));
	wdb_finalize(st);
	if (wdb_prepare(lite, "SELECT m.name || '.' || p.name FROM sqlite_master m, pragma_table_info(m.name) p "
	                      "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'", &st, &err) < 0)
		bail("%s", err.msg);
	while (ns < 256 && wdb_step(st, &err) == WDB_ROW) sqc[ns++] = strdup(wdb_column_text(st, 0));
	wdb_finalize(st);
	int missing = 0, extra = 0;
	for (int i = 0; i < ns; i++) {
		int f = 0;
		for (int j = 0; j < np; j++) f |= !strcmp(sqc[i], pgc[j]);
		if (!f) diag("column %s of the SQLite store is not in the PostgreSQL schema", sqc[i]), missing++;
	}
	for (int j = 0; j < np; j++) {
		int f = 0;
		for (int i = 0; i < ns; i++) f |= !strcmp(sqc[i], pgc[j]);
		for (int k = 0; world_pg_schema_extra_columns[k]; k++) f |= !strcmp(pgc[j], world_pg_schema_extra_columns[k]);
		for (int k = 0; world_pg_schema_extra_tables[k]; k++)
			f |= !strncmp(pgc[j], world_pg_schema_extra_tables[k], strlen(world_pg_schema_extra_tables[k])) &&
			     pgc[j][strlen(world_pg_schema_extra_tables[k])] == '.';
		if (!f) diag("column %s of the PostgreSQL schema is not in the SQLite store", pgc[j]), extra++;
	}
	ok(ns > 40 && missing == 0, "pg: every one of the SQLite store's %d columns is in the PostgreSQL schema", ns);
	ok(extra == 0, "pg: the PostgreSQL schema has no column beyond them but the declared ones (%d columns)", np);
	for (int i = 0; i < np; i++) free(pgc[i]);
	for (int i = 0; i < ns; i++) free(sqc[i]);
	/* every index name */
	if (wdb_prepare(lite, "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'", &st, &err) < 0)
		bail("%s", err.msg);
	int idx = 0, absent = 0;
	struct wdb_stmt *q;
	if (wdb_prepare(pg, "SELECT count(*) FROM pg_indexes WHERE schemaname = 'public' AND indexname = ?", &q, &err) < 0)
		bail("%s", err.msg);
	while (wdb_step(st, &err) == WDB_ROW) {
		idx++;
		wdb_reset(q);
		if (wdb_bind_text(q, 1, wdb_column_text(st, 0), -1, &err) < 0 || wdb_step(q, &err) != WDB_ROW ||
		    wdb_column_int64(q, 0, NULL) != 1)
			diag("index %s is not in the PostgreSQL schema", wdb_column_text(st, 0)), absent++;
	}
	wdb_finalize(q);
	wdb_finalize(st);
	ok(idx >= 9 && absent == 0, "pg: every one of the SQLite store's %d named indexes is in the PostgreSQL schema", idx);
	is_int(q1(pg, "SELECT version FROM world_schema WHERE id = 1"), WORLD_PG_SCHEMA_VERSION, "pg: world_schema says 2");
}

static void pg_sh(const char *var)
{
	const char *cmd = getenv(var);
	if (!cmd) bail("%s is not set", var);
	int rc = system(cmd);
	if (rc != 0) bail("%s (%s) exited %d", var, cmd, rc);
}

static void unavailable(const char *uri, const char *tcp_uri_pw)
{
	struct world_err err = { 0 };
	struct wdb_opts o = { 0 };
	struct wdb *c = open_or_bail(uri, &o), *t = open_or_bail(uri, &o);
	struct wdb_stmt *keep;
	if (wdb_prepare(c, "SELECT count(*) FROM objects WHERE ref <> ?", &keep, &err) < 0) bail("%s", err.msg);
	wdb_bind_text(keep, 1, "none", -1, &err);
	ok(wdb_step(keep, &err) == WDB_ROW, "pg: a prepared statement runs (%s)", err.msg);
	wdb_reset(keep);
	ok(wdb_begin(t, &err) == 0 && run(t, "UPDATE heads SET updated_at = 5 WHERE name = '@world'", NULL, &err, 0) == 0 &&
	       run(t, "INSERT INTO episode_usage(episode, calls, bytes) VALUES ('lost-ep', 1, 0)", NULL, &err, 0) == 0,
	   "pg: a transaction is open when the server stops, an insert of it sent unanswered (%s)", err.msg);
	pg_sh("WORLD_TEST_PG_STOP");
	int rc = wdb_exec(c, "SELECT 1", &err);
	ok(rc == WDB_UNAVAILABLE && err.code == WX_UNAVAILABLE && wdb_last_fail(c) == WDB_UNAVAILABLE,
	   "pg: server stopped: a statement is WDB_UNAVAILABLE (%s)", err.msg);
	ok(strstr(err.msg, "/world") != NULL, "pg: the error names the database (%s)", err.msg);
	rc = wdb_exec(c, "SELECT 1", &err);
	ok(rc == WDB_UNAVAILABLE, "pg: and again while it is down, the reconnect failing (%s)", err.msg);
	rc = run(t, "SELECT 1", NULL, &err, 0);
	ok(rc == WDB_UNAVAILABLE, "pg: inside the open transaction: WDB_UNAVAILABLE (%s)", err.msg);
	ok(wdb_commit(t, &err) == WDB_UNAVAILABLE, "pg: its COMMIT too (%s)", err.msg);
	ok(wdb_rollback(t, &err) == 0, "pg: its rollback leaves the handle outside a transaction");
	struct wdb *n = NULL;
	rc = wdb_open(uri, &o, &n, &err);
	ok(rc == WDB_UNAVAILABLE && n == NULL && err.code == WX_UNAVAILABLE, "pg: a new open is WDB_UNAVAILABLE (%s)", err.msg);
	rc = wdb_open(tcp_uri_pw, &o, &n, &err);
	const char *pws[] = { SECRET, NULL };
	ok(rc == WDB_UNAVAILABLE && strstr(tcp_uri_pw, SECRET) && clean_of(err.msg, pws) && strstr(err.msg, "127.0.0.1"),
	   "pg: over TCP with the password in the URI: unavailable, naming the host, never the password (%s)", err.msg);
	pg_sh("WORLD_TEST_PG_START");
	err.msg[0] = 0;
	ok(wdb_exec(c, "SELECT 1", &err) == 0, "pg: server back: the same handle reconnects by itself (%s)", err.msg);
	ok(wdb_step(keep, &err) == WDB_ROW, "pg: the statement prepared before the stop runs again (prepared anew) (%s)", err.msg);
	wdb_finalize(keep);
	ok(run(t, "UPDATE heads SET updated_at = 6 WHERE name = '@world'", NULL, &err, 0) == 0,
	   "pg: the handle whose transaction was lost works again (%s)", err.msg);
	is_int(q1(c, "SELECT count(*) FROM heads WHERE updated_at = 5") + q1(c, "SELECT count(*) FROM episode_usage WHERE episode = 'lost-ep'"),
	       0, "pg: nothing of the lost transaction committed (its update, its unanswered insert)");
	err.msg[0] = 0;
	rc = wdb_open(uri, &o, &n, &err);
	ok(rc == 0 && n, "pg: control: a new open works (%s)", err.msg);
	wdb_close(n);
	wdb_close(c);
	wdb_close(t);
}

static void credentials(const char *su_uri, const char *tcp)
{
	struct world_err err = { 0 };
	struct wdb_opts o = { 0 };
	char uri[512], path[400];
	struct wdb *su = open_or_bail(su_uri, &o), *h = NULL;
	char sql[256];
	snprintf(sql, sizeof sql,
	         "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'worldpw') THEN "
	         "CREATE ROLE worldpw LOGIN PASSWORD '%s'; END IF; END $$", SECRET);
	exec_or_bail(su, sql);
	exec_or_bail(su, "GRANT USAGE ON SCHEMA public TO worldpw; GRANT SELECT ON ALL TABLES IN SCHEMA public TO worldpw");
	wdb_close(su);
	const char *all[] = { SECRET, WRONG, WRONG_ENC, "Wr0ng-Pw-9y8", "Bad%zzPw", "zzPw", "Qp-9-query-pw", NULL };

	snprintf(uri, sizeof uri, "postgresql://worldpw:%s@%s/world", SECRET, tcp);
	err.msg[0] = 0;
	int rc = wdb_open(uri, &o, &h, &err);
	ok(rc == 0, "pg: the right password in the URI opens (%s)", err.msg);
	if (h) {
		ok(clean_of(wdb_name(h), all) && strstr(wdb_name(h), "postgresql://worldpw@127.0.0.1:") &&
		       strstr(wdb_name(h), "/world"),
		   "pg: its name is user@host:port/db, no password (%s)", wdb_name(h));
		is_int(q1(h, "SELECT count(*) FROM world_schema"), 1, "pg: and reads the store");
		ok(run(h, "INSERT INTO heads(name, ref, revision, updated_at) VALUES ('x','y',1,1)", NULL, &err, 0) < 0 &&
		       clean_of(err.msg, all),
		   "pg: a refused statement's error holds no password (%s)", err.msg);
		wdb_close(h);
	}
	snprintf(uri, sizeof uri, "postgresql://worldpw:%s@%s/world", WRONG, tcp);
	err.msg[0] = 0;
	rc = wdb_open(uri, &o, &h, &err);
	ok(rc == WDB_FAIL && h == NULL, "pg: a wrong password is WDB_FAIL, not unavailable (%s)", err.msg);
	ok(strstr(uri, WRONG) && clean_of(err.msg, all) && strstr(err.msg, "127.0.0.1") && strstr(err.msg, "world"),
	   "pg: its error names host and database, not the password given in the URI (control: it is in the URI) (%s)",
	   err.msg);
	snprintf(uri, sizeof uri, "postgresql://worldpw:%s@%s/world", WRONG_ENC, tcp);
	err.msg[0] = 0;
	rc = wdb_open(uri, &o, &h, &err);
	ok(rc == WDB_FAIL && clean_of(err.msg, all), "pg: a percent-encoded wrong password: neither form in the error (%s)",
	   err.msg);
	snprintf(uri, sizeof uri, "postgresql://worldpw@%s/world?password=Qp-9-query-pw&sslmode=disable", tcp);
	err.msg[0] = 0;
	rc = wdb_open(uri, &o, &h, &err);
	ok(rc == WDB_FAIL && clean_of(err.msg, all), "pg: a password=... query parameter: not in the error (%s)", err.msg);
	/* a URI libpq cannot parse: libpq's own message quotes the password (the control), ours does not */
	snprintf(uri, sizeof uri, "postgresql://worldpw:Bad%%zzPw@%s/world", tcp);
	char *perr = NULL;
	PQconninfoOption *ci = PQconninfoParse(uri, &perr);
	ok(!ci && perr && strstr(perr, "Bad%zzPw"), "pg: control: libpq's parse error quotes the password (%s)",
	   perr ? "it does" : "no message");
	if (ci) PQconninfoFree(ci);
	PQfreemem(perr);
	err.msg[0] = 0;
	rc = wdb_open(uri, &o, &h, &err);
	ok(rc == WDB_FAIL && err.code == WX_USAGE && clean_of(err.msg, all) && strstr(err.msg, "URI"),
	   "pg: the driver's error for it does not (%s)", err.msg);

	/* --store-password-file: owner-only; wins over the URI's password */
	snprintf(path, sizeof path, "%s/pw", dir);
	char line[64];
	snprintf(line, sizeof line, "%s\n", SECRET);
	write_file(path, line, 0600);
	o.password_file = path;
	snprintf(uri, sizeof uri, "postgresql://worldpw@%s/world", tcp);
	err.msg[0] = 0;
	rc = wdb_open(uri, &o, &h, &err);
	ok(rc == 0, "pg: the password from a 0600 password file opens (%s)", err.msg);
	wdb_close(h);
	snprintf(uri, sizeof uri, "postgresql://worldpw:%s@%s/world", WRONG, tcp);
	err.msg[0] = 0;
	rc = wdb_open(uri, &o, &h, &err);
	ok(rc == 0, "pg: the password file wins over a wrong password in the URI (%s)", err.msg);
	wdb_close(h);
	write_file(path, line, 0644);
	err.msg[0] = 0;
	rc = wdb_open(uri, &o, &h, &err);
	ok(rc == WDB_FAIL && err.code == WX_USAGE && strstr(err.msg, "chmod 600") && clean_of(err.msg, all),
	   "pg: a password file others can read is refused (%s)", err.msg);
	write_file(path, "Wr0ng-Pw-9x7\n", 0600);
	snprintf(uri, sizeof uri, "postgresql://worldpw@%s/world", tcp);
	err.msg[0] = 0;
	rc = wdb_open(uri, &o, &h, &err);
	ok(rc == WDB_FAIL && clean_of(err.msg, all), "pg: a wrong password from the file: not in the error (%s)", err.msg);
	/* one reader of password files (store/open_opts.h): the driver's
	 * refusals are world_store_open_opts's, word for word */
	{
		char sl[600], nul[600];
		snprintf(sl, sizeof sl, "%s/pw-link", dir);
		snprintf(nul, sizeof nul, "%s/pw-nul", dir);
		write_file(path, line, 0600);
		if (symlink(path, sl) != 0) bail("symlink %s: %s", sl, strerror(errno));
		int fd = open(nul, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, "ab\0cd\n", 6) != 6 || close(fd) != 0) bail("write %s: %s", nul, strerror(errno));
		const char *files[] = { sl, nul, "/nonexistent/world-pw" };
		const char *want[] = { "a symbolic link", "holds a NUL byte", "No such file" };
		const int codes[] = { WX_IO, WX_USAGE, WX_NOT_FOUND };
		for (int i = 0; i < 3; i++) {
			struct world_err e1 = { 0 }, e2 = { 0 };
			o.password_file = files[i];
			rc = wdb_open(uri, &o, &h, &e1);
			struct world_store_open_opts oo = { .password_file = files[i] };
			struct world_store *wst = NULL;
			int rc2 = world_store_open_opts(uri, WORLD_STORE_READER, &oo, &wst, &e2);
			const char *t1 = strstr(e1.msg, "password file"), *t2 = strstr(e2.msg, "password file");
			ok(rc == WDB_FAIL && e1.code == codes[i] && strstr(e1.msg, want[i]) && rc2 < 0 && e2.code == e1.code && t1 &&
			       t2 && !strcmp(t1, t2),
			   "pg: a password file refused alike by the driver and the store's open: %s (%s | %s)", want[i], e1.msg,
			   e2.msg);
			if (wst) world_store_close(wst);
		}
		o.password_file = path;
		rc = wdb_open(uri, &o, &h, &err);
		ok(rc == 0, "pg: control: the same URI with the plain 0600 file opens (%s)", err.msg);
		wdb_close(h);
		unlink(sl);
		unlink(nul);
	}
	o.password_file = NULL;

	/* PGPASSFILE, through libpq; the control without it */
	char host[128], port[16];
	snprintf(host, sizeof host, "%s", tcp);
	char *colon = strrchr(host, ':');
	if (!colon) bail("WORLD_TEST_PG_TCP %s: no port", tcp);
	*colon = 0;
	snprintf(port, sizeof port, "%s", colon + 1);
	snprintf(path, sizeof path, "%s/pgpass", dir);
	char pass[256];
	snprintf(pass, sizeof pass, "%s:%s:world:worldpw:%s\n", host, port, SECRET);
	write_file(path, pass, 0600);
	setenv("PGPASSFILE", path, 1);
	err.msg[0] = 0;
	rc = wdb_open(uri, &o, &h, &err);
	ok(rc == 0, "pg: the password from PGPASSFILE opens (%s)", err.msg);
	wdb_close(h);
	unsetenv("PGPASSFILE");
	err.msg[0] = 0;
	rc = wdb_open(uri, &o, &h, &err);
	ok(rc == WDB_FAIL && clean_of(err.msg, all), "pg: control: without it, no password: refused (%s)", err.msg);
}
#endif

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/world-test-db-XXXXXX");
	if (!mkdtemp(dir)) bail("mkdtemp: %s", strerror(errno));
	setenv("HOME", dir, 1); /* no ~/.pgpass of the user running the test */
	/* stderr into a file: at the end it must hold no password */
	snprintf(stderr_path, sizeof stderr_path, "%s/stderr", dir);
	fflush(stderr);
	stderr_fd = dup(2);
	int fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (stderr_fd < 0 || fd < 0 || dup2(fd, 2) < 0 || close(fd) != 0) bail("stderr: %s", strerror(errno));

	struct world_err err = { 0 };
	struct wdb_opts o = { .busy_timeout_ms = 100 };
	char path[320];
	snprintf(path, sizeof path, "%s/world.db", dir);
	struct world_store *ws = NULL;
	if (world_store_open(path, WORLD_STORE_WRITER, &ws, &err) < 0) bail("store %s: %s", path, err.msg);
	world_store_close(ws);

	/* SQLite */
	is_int(wdb_kind_of(path), WDB_SQLITE, "a path names SQLite");
	is_int(wdb_kind_of("postgresql://u@h/d"), WDB_PG, "postgresql:// names PostgreSQL");
	is_int(wdb_kind_of("postgres://u@h/d"), WDB_PG, "postgres:// too");
	struct wdb *a = open_or_bail(path, &o), *b = open_or_bail(path, &o);
	is_str(wdb_name(a), path, "sqlite: the name is the path");
	values(a, "sqlite");
	readonly(path, &o, "sqlite");
	triggers(a, "sqlite");
	cas_race(a, b, "sqlite", 0);
	wdb_close(a);
	wdb_close(b);
	struct wdb *n = NULL;
	snprintf(path, sizeof path, "%s/absent/x.db", dir);
	int rc = wdb_open(path, &o, &n, &err);
	ok(rc == WDB_FAIL && !n && strstr(err.msg, path), "sqlite: a missing file is WDB_FAIL naming it (%s)", err.msg);

	/* no driver enabled yet: a URI is refused by name, its password unprinted */
	rc = wdb_open("postgresql://u:pw-of-no-driver@h/d", &o, &n, &err);
	ok(rc == WDB_FAIL && !n && strstr(err.msg, "without the PostgreSQL driver") && !strstr(err.msg, "pw-of-no-driver"),
	   "without the PostgreSQL driver a URI is refused, without its password (%s)", err.msg);
#ifdef WORLD_HAVE_PG
	const char *uri = getenv("WORLD_TEST_PG_URI"), *tcp = getenv("WORLD_TEST_PG_TCP");
	const char *why = getenv("WORLD_TEST_PG_SKIP");
	if (uri && tcp) {
		wdb_pg_enable();
		struct wdb *pa = open_or_bail(uri, &o), *pb = open_or_bail(uri, &o);
		is_int(wdb_kind(pa), WDB_PG, "pg: the URI opened PostgreSQL (%s)", wdb_name(pa));
		exec_or_bail(pa, "DROP SCHEMA public CASCADE; CREATE SCHEMA public");
		ok(wdb_begin(pa, &err) == 0 && wdb_exec(pa, world_pg_schema, &err) == 0 && wdb_commit(pa, &err) == 0,
		   "pg: the store's schema created in one transaction (%s)", err.msg);
		snprintf(path, sizeof path, "%s/world.db", dir);
		struct wdb *lite = open_or_bail(path, &o);
		schema_matches(pa, lite);
		wdb_close(lite);
		values(pa, "pg");
		readonly(uri, &o, "pg");
		triggers(pa, "pg");
		cas_race(pa, pb, "pg", 1);
		serialization(pa, pb);
		setenv("WORLD_TEST_PG_NO_PIPELINE", "1", 1);
		struct wdb *poff = open_or_bail(uri, &o);
		unsetenv("WORLD_TEST_PG_NO_PIPELINE");
		pipeline(pa, poff);
		wdb_close(poff);
		wdb_close(pa);
		wdb_close(pb);
		credentials(uri, tcp);
		char tcp_uri[512];
		snprintf(tcp_uri, sizeof tcp_uri, "postgresql://worldpw:%s@%s/world", SECRET, tcp);
		unavailable(uri, tcp_uri);
	} else {
		skip(why ? why : "WORLD_TEST_PG_URI not set (tests/store/pg.sh sets it)", "PostgreSQL half of the driver test");
	}
#else
	skip("built --without-postgresql", "PostgreSQL half of the driver test");
#endif

	/* nothing went to stderr with a password in it */
	fflush(stderr);
	char buf[65536];
	size_t got = 0;
	int sfd = open(stderr_path, O_RDONLY | O_CLOEXEC);
	if (sfd >= 0) {
		ssize_t r;
		while (got < sizeof buf - 1 && (r = read(sfd, buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)r;
		close(sfd);
	}
	buf[got] = 0;
	dup2(stderr_fd, 2);
	close(stderr_fd);
#ifdef WORLD_HAVE_PG
	const char *pws[] = { SECRET, WRONG, "Wr0ng-Pw-9y8", "Qp-9-query-pw", "pw-of-no-driver", NULL };
	ok(sfd >= 0 && clean_of(buf, pws), "nothing printed on stderr holds a password (%zu bytes printed)", got);
#else
	ok(sfd >= 0 && !strstr(buf, "pw-of-no-driver"), "nothing printed on stderr holds a password (%zu bytes)", got);
#endif
	if (got) diag("stderr: %.500s", buf);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("could not remove %s", dir);
	return done_testing();
}
