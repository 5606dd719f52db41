/* tests/store/test_scan.c: the full scan's streaming path (store/scan.c,
 * stream_scan: objects, journal, worlds and the log each read once) finds
 * exactly what the indexed path (a budgeted scan's: every dependency looked
 * up by ref, the journal by JOURNAL_FIND) finds, and so does a budgeted
 * scan (the daemon's start-up scan: the indexed path, each object
 * verified once and answered from its verdict, verdicts made a window of
 * objects at a time in storage order, scan.c memo_fill). On stores of committed
 * calls with journal rows (tests/store/sbulk.h), each damage below is made
 * inside a transaction, both scans run on it and print the same lines, the
 * line expected is among them, and the damage is rolled back. The journal
 * cases follow JOURNAL_FIND's choice among several intents of one subject
 * (a committed outcome first, then a non-committed one, then none; the
 * latest within each). Controls: the clean store prints nothing either
 * way, and damage JOURNAL_FIND does not choose (a later intent without an
 * outcome beside a committed one, a subject stored as a blob, an entry with
 * no journal rows) is no hole either way. In a second store the invocation
 * ids hold a quote and a backslash, so its records' strings are escaped:
 * their fields come from jansson, not the plain reader. Nothing is timed. */
#include "store/scan.h"
#include "store/store.h"
#include "tests/store/sbulk.h"
#include "tests/tap.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ZERO "sha256:0000000000000000000000000000000000000000000000000000000000000000"

/* how: 0 the full scan (streaming), 1 the indexed path (indexed = 1, every
 * dependency by ref), 2 a budgeted scan whose budget covers the store (the
 * indexed path with its objects window) */
static char *scan_out(struct world_store *st, int how, long long *holes)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) bail("open_memstream");
	struct world_scan_opts o = { .indexed = how == 1, .max_rows = how == 2 ? 1LL << 40 : 0 };
	struct world_scan_result r;
	struct world_err e = { 0 };
	if (world_scan(st, &o, f, &r, &e) < 0) bail("scan: %s", e.msg);
	fclose(f);
	if (!r.complete) bail("scan incomplete");
	*holes = r.holes;
	return buf;
}

static void q(struct world_store *st, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(world_store_db(st), sql, NULL, NULL, &msg) != SQLITE_OK) bail("%s: %s", sql, msg ? msg : "?");
}

static void col(struct world_store *st, const char *sql, char *out, size_t cap)
{
	sqlite3_stmt *s;
	out[0] = 0;
	if (sqlite3_prepare_v2(world_store_db(st), sql, -1, &s, NULL) != SQLITE_OK) bail("%s", sql);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		snprintf(out, cap, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
}

/* damage (SQL, %1$s = the subject of entry n), then both scans: the same
 * lines, with want among them (want "" = no line at all) */
static void damage(struct world_store *st, const char *ep, const char *what, long long n, const char *sql_fmt,
                   const char *want_fmt)
{
	char subj[128], sql[2048], rec[WORLD_REF_SIZE + 8], want[512], qs[200];
	snprintf(subj, sizeof subj, "cli:%s:b%lld", ep, n);
	/* the subject as an SQL literal */
	size_t k = 0;
	qs[k++] = '\'';
	for (const char *c = subj; *c && k + 3 < sizeof qs; c++) {
		if (*c == '\'') qs[k++] = '\'';
		qs[k++] = *c;
	}
	qs[k++] = '\'';
	qs[k] = 0;
	snprintf(sql, sizeof sql, "SELECT transition_ref FROM log_entries WHERE entry_index = %lld", n);
	col(st, sql, rec, sizeof rec);
	struct world_err e = { 0 };
	if (world_store_begin(st, &e) < 0) bail("begin: %s", e.msg);
	snprintf(sql, sizeof sql, sql_fmt, qs);
	q(st, sql);
	long long hs, hi, hb;
	char *s = scan_out(st, 0, &hs), *i = scan_out(st, 1, &hi), *bw = scan_out(st, 2, &hb);
	world_store_rollback(st);
	is_str(s, i, "%s: %s: the streaming scan prints what the indexed one does", ep, what);
	is_str(bw, i, "%s: %s: a budgeted scan (its objects window) prints what the indexed one does", ep, what);
	ok(hs == hi && hb == hi, "%s: %s: the same number of holes (%lld, %lld, %lld)", ep, what, hs, hi, hb);
	free(bw);
	if (!*want_fmt) {
		is_str(s, "", "%s: %s: no hole (what JOURNAL_FIND answers is sound)", ep, what);
	} else {
		snprintf(want, sizeof want, want_fmt, n, rec);
		ok(strstr(s, want) != NULL, "%s: %s: found: %.*s", ep, what, (int)strcspn(want, "\n"), want);
		if (!strstr(s, want)) diag("scan printed: %s", s);
	}
	free(s);
	free(i);
}

#define JHOLE "integrity_hole table=journal index=%lld field=invocation ref=%s\n"
#define OUTCOME_OF "(SELECT id FROM journal WHERE phase = 'intent' AND kind = 'invocation' AND subject = %1$s)"

/* sbulk_one with an invocation id holding a quote and a backslash
 * (cli:q"e\p:bN): the record's JSON escapes them */
static int escaped_one(struct world_store *st, struct sbulk *b, struct world_err *err)
{
	long long idx = b->last + 1, n = ++b->f.n;
	char in[WORLD_REF_SIZE], out[WORLD_REF_SIZE], rec[WORLD_REF_SIZE], inv[96], jinv[96], body[1024], ip[96], op[160];
	int il = snprintf(ip, sizeof ip, "{\"n\":%lld}", n);
	int ol = snprintf(op, sizeof op, "{\"answer\":%lld,\"text\":\"escaped\"}", n);
	snprintf(inv, sizeof inv, "cli:q\"e\\p:b%lld", n);
	snprintf(jinv, sizeof jinv, "cli:q\\\"e\\\\p:b%lld", n);
	if (world_object_put(st, "world/invocation-input/v1", "esc", ip, (size_t)il, in, NULL, err) < 0 ||
	    world_object_put(st, "world/invocation-output/v1", "esc", op, (size_t)ol, out, NULL, err) < 0)
		return -1;
	int bl = snprintf(body, sizeof body,
	                  "{\"episodeId\":\"%s\",\"input\":\"%s\",\"interpreter\":\"%s\",\"invocationId\":\"%s\","
	                  "\"output\":\"%s\",\"semanticsEpoch\":1,\"skillId\":\"sbulk\",\"transitionFn\":\"%s\"}",
	                  b->episode, in, b->f.interp, jinv, out, b->f.src);
	if (world_object_put(st, "world/invocation-record/v1", "esc", body, (size_t)bl, rec, NULL, err) < 0) return -1;
	long long intent = 0;
	struct world_journal_intent ji = { .kind = "invocation", .subject = inv, .episode = b->episode, .ref = in };
	if (!b->no_journal && world_journal_intent(st, &ji, &intent, err) < 0) return -1;
	struct world_log_append a = { idx, 1, b->f.src, b->f.interp, b->prev, "sbulk", rec, out, b->head };
	struct world_log_result r;
	if (world_log_append(st, &a, &r, err) < 0) return -1;
	if (!b->no_journal && world_journal_outcome(st, intent, "committed", rec, err) < 0) return -1;
	b->last = idx;
	snprintf(b->prev, sizeof b->prev, "%s", r.entry_hash);
	snprintf(b->head, sizeof b->head, "%s", r.world_ref);
	return 0;
}

static void fill(struct world_store *st, struct sbulk *b, int escaped, long long n)
{
	struct world_err e = { 0 };
	if (!escaped) {
		if (sbulk_fill(st, b, n, 16, &e) < 0) bail("fill: %s", e.msg);
		return;
	}
	if (world_store_begin(st, &e) < 0) bail("begin: %s", e.msg);
	for (long long i = 0; i < n; i++)
		if (escaped_one(st, b, &e) < 0) bail("fill: %s", e.msg);
	if (world_store_commit(st, &e) < 0) bail("commit: %s", e.msg);
}

/* ep: the episode in the invocation ids (cli:EP:bN) */
static void one_store(const char *dir, const char *name, const char *ep)
{
	int escaped = strcmp(ep, "scan") != 0;
	char db[4096];
	snprintf(db, sizeof db, "%s/%s", dir, name);
	struct world_store *st;
	struct world_err e = { 0 };
	if (world_store_open(db, WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, &st, &e) < 0) bail("open: %s", e.msg);
	struct sbulk b = { .episode = escaped ? "esc" : ep };
	if (sbulk_init(st, dir, &b, &e) < 0) bail("fixture: %s", e.msg);
	fill(st, &b, escaped, 40);
	/* and a few through the operator path: no journal rows */
	b.no_journal = 1;
	fill(st, &b, escaped, 4);

	long long hs, hi, hb;
	char *s = scan_out(st, 0, &hs), *i = scan_out(st, 1, &hi), *bw = scan_out(st, 2, &hb);
	is_str(s, "", "%s: the clean store: the streaming scan prints nothing", ep);
	is_str(i, "", "%s: the clean store: the indexed scan prints nothing (control)", ep);
	is_str(bw, "", "%s: the clean store: a budgeted scan prints nothing", ep);
	free(s);
	free(i);
	free(bw);

	damage(st, ep, "the committed outcome names another record", 5,
	       "UPDATE journal SET ref = '" ZERO "' WHERE phase = 'outcome' AND intent_id = " OUTCOME_OF, JHOLE);
	damage(st, ep, "the outcome failed", 7,
	       "UPDATE journal SET status = 'failed' WHERE phase = 'outcome' AND intent_id = " OUTCOME_OF, JHOLE);
	damage(st, ep, "the intent names another input", 9,
	       "UPDATE journal SET ref = '" ZERO "' WHERE phase = 'intent' AND subject = %1$s", JHOLE);
	damage(st, ep, "the intent's ref is not a ref", 11,
	       "UPDATE journal SET ref = 'garbage' WHERE phase = 'intent' AND subject = %1$s", JHOLE);
	damage(st, ep, "the intent's ref is NULL", 12,
	       "UPDATE journal SET ref = NULL WHERE phase = 'intent' AND subject = %1$s", JHOLE);
	damage(st, ep, "the outcome's ref is not a ref", 13,
	       "UPDATE journal SET ref = 'garbage' WHERE phase = 'outcome' AND intent_id = " OUTCOME_OF, JHOLE);
	damage(st, ep, "the outcome is gone (indeterminate)", 14,
	       "DELETE FROM journal WHERE phase = 'outcome' AND intent_id = " OUTCOME_OF, JHOLE);
	damage(st, ep, "a later intent without an outcome (the committed one is chosen)", 15,
	       "INSERT INTO journal(phase, kind, subject, episode, ref, at) VALUES ('intent', 'invocation', %1$s, 'x', '"
	       ZERO "', 0)", "");
	/* (two committed outcomes of one subject: only past journal_one_commit, dropped in the damage's transaction) */
	damage(st, ep, "a later committed intent naming another record (the latest committed is chosen)", 17,
	       "DROP INDEX journal_one_commit; INSERT INTO journal(phase, kind, subject, episode, ref, at) SELECT 'intent', 'invocation', subject, "
	       "episode, ref, 0 FROM journal WHERE phase = 'intent' AND subject = %1$s; "
	       "INSERT INTO journal(phase, intent_id, kind, subject, status, ref, at) VALUES ('outcome', "
	       "last_insert_rowid(), 'invocation', %1$s, 'committed', '" ZERO "', 0)", JHOLE);
	damage(st, ep, "a later intent whose outcome failed (the committed one is chosen)", 19,
	       "INSERT INTO journal(phase, kind, subject, episode, ref, at) VALUES ('intent', 'invocation', %1$s, 'x', '"
	       ZERO "', 0); INSERT INTO journal(phase, intent_id, kind, subject, status, ref, at) VALUES ('outcome', "
	       "last_insert_rowid(), 'invocation', %1$s, 'failed', '" ZERO "', 0)", "");
	damage(st, ep, "a failed outcome beside a later intent without one (the failed one is chosen)", 21,
	       "UPDATE journal SET status = 'failed' WHERE phase = 'outcome' AND intent_id = " OUTCOME_OF "; "
	       "INSERT INTO journal(phase, kind, subject, episode, ref, at) SELECT 'intent', 'invocation', subject, "
	       "episode, ref, 0 FROM journal WHERE phase = 'intent' AND subject = %1$s", JHOLE);
	damage(st, ep, "the intent's subject stored as a blob (JOURNAL_FIND finds none)", 23,
	       "UPDATE journal SET subject = CAST(subject AS BLOB) WHERE phase = 'intent' AND subject = %1$s; "
	       "DELETE FROM journal WHERE phase = 'outcome' AND subject = %1$s", "");
	damage(st, ep, "no journal rows (the operator path)", 25,
	       "DELETE FROM journal WHERE phase = 'outcome' AND intent_id = " OUTCOME_OF "; "
	       "DELETE FROM journal WHERE subject = %1$s", "");
	damage(st, ep, "the input's payload", 27,
	       "UPDATE objects SET payload = CAST('{\"n\":0}' AS BLOB) WHERE ref = (SELECT ref FROM journal WHERE "
	       "phase = 'intent' AND subject = %1$s)",
	       "integrity_hole table=objects index=%lld field=input ref=");
	damage(st, ep, "the record's payload", 29,
	       "UPDATE objects SET payload = CAST('{}' AS BLOB) WHERE ref = (SELECT ref FROM journal WHERE "
	       "phase = 'outcome' AND intent_id = " OUTCOME_OF ")",
	       "integrity_hole table=log_entries index=%lld field=transitionRef\n");
	damage(st, ep, "an entry of the operator path whose input is damaged", 42,
	       "UPDATE objects SET payload = CAST('{\"n\":0}' AS BLOB) WHERE ref = (SELECT json_extract(o.payload, "
	       "'$.input') FROM log_entries l JOIN objects o ON o.ref = l.transition_ref WHERE l.entry_index = 42)",
	       "integrity_hole table=objects index=%lld field=input ref=");
	world_store_close(st);
}

/* A store of several windows (store/scan.c, WIN_OBJECTS: 8,192 objects,
 * some 2,700 entries): damage in the second and third, and at a window's
 * edge. */
static void windows_store(const char *dir)
{
	char db[4096];
	snprintf(db, sizeof db, "%s/windows.db", dir);
	struct world_store *st;
	struct world_err e = { 0 };
	if (world_store_open(db, WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, &st, &e) < 0) bail("open: %s", e.msg);
	struct sbulk b = { .episode = "win" };
	if (sbulk_init(st, dir, &b, &e) < 0 || sbulk_fill(st, &b, 6000, 1000, &e) < 0) bail("fill: %s", e.msg);
	long long hs, hi, hb;
	char *s = scan_out(st, 0, &hs), *i = scan_out(st, 1, &hi), *bw = scan_out(st, 2, &hb);
	ok(!*s && !*i && !*bw, "6000 entries: every scan clean");
	free(s);
	free(i);
	free(bw);
	damage(st, "win", "the input's payload, second window", 3001,
	       "UPDATE objects SET payload = CAST('{\"n\":0}' AS BLOB) WHERE ref = (SELECT ref FROM journal WHERE "
	       "phase = 'intent' AND subject = %1$s)",
	       "integrity_hole table=objects index=%lld field=input ref=");
	damage(st, "win", "the record's payload, third window", 5999,
	       "UPDATE objects SET payload = CAST('{}' AS BLOB) WHERE ref = (SELECT ref FROM journal WHERE "
	       "phase = 'outcome' AND intent_id = " OUTCOME_OF ")",
	       "integrity_hole table=log_entries index=%lld field=transitionRef\n");
	for (long long n = 2725; n <= 2740; n += 5)
		damage(st, "win", "the output's payload, near a window's edge", n,
		       "UPDATE objects SET payload = CAST('{}' AS BLOB) WHERE ref = (SELECT json_extract(o.payload, "
		       "'$.output') FROM journal j JOIN objects o ON o.ref = j.ref WHERE j.phase = 'outcome' AND "
		       "j.intent_id = " OUTCOME_OF ")",
		       "integrity_hole table=objects index=%lld field=output ref=");
	world_store_close(st);
}

int main(void)
{
	char dir[] = "/tmp/world-test-scan.XXXXXX";
	if (!mkdtemp(dir)) bail("mkdtemp");
	one_store(dir, "plain.db", "scan");
	one_store(dir, "escaped.db", "q\"e\\p");
	windows_store(dir);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("could not remove %s", dir);
	return done_testing();
}
