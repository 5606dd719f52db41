/* tests/store/test_members.c: schema 2 -- episode membership and usage
 * (world_episode_*), one committed outcome per (kind, subject), the
 * migration of a schema-1 store (built from a copy of the schema-1 SQL
 * below) with its backfill and its refusal, and the modes of a new store's
 * files (0600, directories 0700) under umask 022. */
#include "common/canon.h"
#include "store/scan.h"
#include "store/store.h"
#include "tests/store/sfix.h"
#include "tests/tap.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The schema of version 1 exactly as the first builds created it (and the index a
 * version-1 writer added on open), kept here so the migration is tested
 * against the real old layout, not against a downgraded new one. */
static const char v1_schema[] =
    "CREATE TABLE objects("
    " ref TEXT PRIMARY KEY, semantic_id TEXT NOT NULL, provenance TEXT NOT NULL,"
    " payload BLOB NOT NULL, size INTEGER NOT NULL, created_at INTEGER NOT NULL);"
    "CREATE TABLE log_entries("
    " entry_index INTEGER PRIMARY KEY, semantics_epoch INTEGER NOT NULL,"
    " entry_hash TEXT NOT NULL UNIQUE, prev_entry_hash TEXT, transition_fn TEXT NOT NULL,"
    " interpreter TEXT NOT NULL, written_by TEXT NOT NULL, transition_ref TEXT NOT NULL,"
    " entry_json BLOB NOT NULL, committed_at INTEGER NOT NULL);"
    "CREATE INDEX log_by_record ON log_entries(transition_ref);"
    "CREATE TABLE worlds("
    " ref TEXT PRIMARY KEY, revision INTEGER NOT NULL, state_root TEXT NOT NULL,"
    " log_head TEXT NOT NULL, payload BLOB NOT NULL);"
    "CREATE TABLE heads("
    " name TEXT PRIMARY KEY, ref TEXT NOT NULL, revision INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
    "CREATE TABLE journal("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " phase TEXT NOT NULL CHECK (phase IN ('intent','outcome')),"
    " intent_id INTEGER, kind TEXT, subject TEXT, episode TEXT, effect TEXT, scope TEXT,"
    " cost INTEGER NOT NULL DEFAULT 0, status TEXT, ref TEXT, at INTEGER NOT NULL);"
    "CREATE UNIQUE INDEX journal_one_outcome ON journal(intent_id) WHERE phase = 'outcome';"
    "CREATE INDEX journal_spent ON journal(episode, effect, scope) WHERE phase = 'intent';"
    "CREATE TABLE sessions("
    " credential_hash TEXT PRIMARY KEY, episode TEXT NOT NULL, grants TEXT NOT NULL,"
    " expires_at INTEGER NOT NULL, created_at INTEGER NOT NULL);"
    "CREATE TABLE interpreters("
    " ref TEXT PRIMARY KEY, version TEXT NOT NULL, size INTEGER NOT NULL, archived_at INTEGER NOT NULL);"
    "CREATE INDEX journal_by_subject ON journal(kind, subject) WHERE phase = 'intent';"
    "PRAGMA user_version=1;";

static char dir[256];

static void mkpath(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

static struct world_store *open_mode(const char *db, int mode)
{
	struct world_store *st = NULL;
	struct world_err err = {0};
	if (world_store_open(db, mode, &st, &err) < 0) bail("open %s: %s", db, err.msg);
	return st;
}

static long long q1(struct world_store *st, const char *sql)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(world_store_db(st), sql, -1, &s, NULL) != SQLITE_OK) return -1;
	long long n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_finalize(s);
	return n;
}

static long long raw_q1(const char *db, const char *sql)
{
	sqlite3 *h;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return -1;
	sqlite3_stmt *s;
	long long n = -1;
	if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(h);
	return n;
}

static void raw_exec(const char *db, const char *sql)
{
	sqlite3 *h;
	char *msg = NULL;
	if (sqlite3_open(db, &h) != SQLITE_OK || sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
		bail("sqlite3 %s: %s: %s", db, sql, msg ? msg : sqlite3_errmsg(h));
	sqlite3_close(h);
}

static char *file_sha(const char *path, char out[WORLD_REF_SIZE])
{
	int fd = open(path, O_RDONLY);
	unsigned char d[32];
	out[0] = 0;
	if (fd >= 0 && world_sha256_fd(fd, path, d, NULL, NULL) == 0) world_ref_format(d, out);
	if (fd >= 0) close(fd);
	return out;
}

static void put(struct world_store *st, const char *sid, const char *prov, const char *payload,
                char ref[WORLD_REF_SIZE])
{
	struct world_err err = {0};
	if (world_object_put(st, sid, prov, payload, strlen(payload), ref, NULL, &err) < 0) bail("put: %s", err.msg);
}

/* What one effectful committed call of episode ep leaves: input, plan,
 * effect request/result/record, output, invocation record v2 (episodeId,
 * input, output, plan, effects[]), the log entry and its world, the
 * journal intent and committed outcome. */
struct call {
	char in[WORLD_REF_SIZE], plan[WORLD_REF_SIZE], req[WORLD_REF_SIZE], res[WORLD_REF_SIZE], erec[WORLD_REF_SIZE];
	char out[WORLD_REF_SIZE], rec[WORLD_REF_SIZE], hash[WORLD_REF_SIZE], world[WORLD_REF_SIZE];
};

/* members: 0 none, 1 recorded before the log append, 2 after it (in the
 * same transaction, as the coordinator does) */
static void add_members(struct world_store *st, const char *ep, const struct call *c, int with_entry)
{
	struct world_err err = {0};
	const char *refs[] = { c->in, c->plan, c->req, c->res, c->erec, c->out, c->rec,
	                       with_entry ? c->hash : NULL, with_entry ? c->world : NULL };
	if (world_episode_objects_add(st, ep, refs, 9, &err) < 0) bail("members: %s", err.msg);
}

static void commit_call_m(struct world_store *st, struct sfix *f, const char *ep, int n, struct call *c, int members)
{
	struct world_err err = {0};
	char buf[2048], inv[128];
	snprintf(inv, sizeof inv, "mcp:%s:t%d", ep, n);
	snprintf(buf, sizeof buf, "{\"n\":%d,\"ep\":\"%s\"}", n, ep);
	put(st, "world/invocation-input/v1", inv, buf, c->in);
	snprintf(buf, sizeof buf, "{\"effects\":[{\"id\":\"w\",\"n\":%d}],\"ep\":\"%s\"}", n, ep);
	put(st, "world/effect-plan/v1", inv, buf, c->plan);
	snprintf(buf, sizeof buf, "{\"content\":\"secret of %s %d\",\"path\":\"notes.txt\"}", ep, n);
	put(st, "world/effect-request/v1", inv, buf, c->req);
	snprintf(buf, sizeof buf, "{\"bytes\":%d,\"ep\":\"%s\"}", 100 + n, ep);
	put(st, "world/effect-result/v1", "broker", buf, c->res);
	snprintf(buf, sizeof buf, "{\"requestRef\":\"%s\",\"resultRef\":\"%s\",\"status\":\"succeeded\"}", c->req, c->res);
	put(st, "world/effect-record/v1", "broker", buf, c->erec);
	snprintf(buf, sizeof buf, "{\"out\":%d,\"ep\":\"%s\"}", n, ep);
	put(st, "world/invocation-output/v1", inv, buf, c->out);
	snprintf(buf, sizeof buf,
	         "{\"effects\":[\"%s\"],\"episodeId\":\"%s\",\"input\":\"%s\",\"interpreter\":\"%s\",\"invocationId\":\"%s\","
	         "\"output\":\"%s\",\"plan\":\"%s\",\"semanticsEpoch\":1,\"skillId\":\"t\",\"transitionFn\":\"%s\"}",
	         c->erec, ep, c->in, f->interp, inv, c->out, c->plan, f->src);
	put(st, "world/invocation-record/v2", inv, buf, c->rec);
	if (world_store_begin(st, &err) < 0) bail("begin: %s", err.msg);
	if (members == 1) add_members(st, ep, c, 0);
	struct world_journal_intent ji = { .kind = "invocation", .subject = inv, .episode = ep, .ref = c->in };
	long long id;
	if (world_journal_intent(st, &ji, &id, &err) < 0 || world_journal_outcome(st, id, "committed", c->rec, &err) < 0)
		bail("journal: %s", err.msg);
	long long idx;
	char prev[WORLD_REF_SIZE], world[WORLD_REF_SIZE];
	if (world_log_next(st, &idx, prev, world, &err) < 0) bail("log next: %s", err.msg);
	struct world_log_append a = { idx, 1, f->src, f->interp, prev, "test", c->rec, c->out, world };
	struct world_log_result r;
	if (world_log_append(st, &a, &r, &err) < 0) bail("append: %s", err.msg);
	snprintf(c->hash, sizeof c->hash, "%s", r.entry_hash);
	snprintf(c->world, sizeof c->world, "%s", r.world_ref);
	if (members == 2) add_members(st, ep, c, 1);
	if (world_store_commit(st, &err) < 0) bail("commit: %s", err.msg);
}

static void commit_call(struct world_store *st, struct sfix *f, const char *ep, int n, struct call *c)
{
	commit_call_m(st, f, ep, n, c, 0);
}

static int entries_are(struct world_store *st, const char *ep, long long from, const char *want)
{
	long long idx[16];
	size_t n = 0;
	struct world_err err = {0};
	if (world_episode_entries(st, ep, from, 16, idx, &n, &err) < 0) return 0;
	char got[200] = "";
	for (size_t i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "", idx[i]);
	if (strcmp(got, want) != 0) diag("entries of %s from %lld: %s, want %s", ep, from, got, want);
	return strcmp(got, want) == 0;
}

static int member(struct world_store *st, const char *ep, const char *ref)
{
	int m = -1;
	struct world_err err = {0};
	if (world_episode_has_object(st, ep, ref, &m, &err) < 0) return -1;
	return m;
}

static int all_members(struct world_store *st, const char *ep, const struct call *c)
{
	const char *refs[] = { c->in, c->plan, c->req, c->res, c->erec, c->out, c->rec, c->hash, c->world };
	for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
		if (member(st, ep, refs[i]) != 1) return 0;
	return 1;
}

static int none_members(struct world_store *st, const char *ep, const struct call *c)
{
	const char *refs[] = { c->in, c->plan, c->req, c->res, c->erec, c->out, c->rec, c->hash, c->world };
	for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
		if (member(st, ep, refs[i]) != 0) return 0;
	return 1;
}

/* ---- the API on a new store ---- */
static void api(void)
{
	char db[300];
	mkpath(db, sizeof db, "api.db");
	struct world_err err = {0};
	struct world_store *st = open_mode(db, WORLD_STORE_WRITER);
	is_int(q1(st, "PRAGMA user_version"), WORLD_STORE_SCHEMA_VERSION, "a new store is schema version %d", WORLD_STORE_SCHEMA_VERSION);
	is_int(q1(st, "SELECT count(*) FROM sqlite_master WHERE name IN ('episode_objects','episode_usage',"
	              "'episode_objects_by_ref','journal_one_commit')"), 4, "it has the schema-2 tables and indexes");
	char a[WORLD_REF_SIZE], b[WORLD_REF_SIZE], c[WORLD_REF_SIZE];
	put(st, "world/invocation-input/v1", "t", "{\"a\":1}", a);
	put(st, "world/invocation-input/v1", "t", "{\"b\":1}", b);
	put(st, "world/invocation-input/v1", "t", "{\"c\":1}", c);
	const char *refs[] = { a, NULL, "", b };
	ok(world_episode_objects_add(st, "ep1", refs, 4, &err) == 0, "objects_add: two refs, a NULL and a \"\" (%s)", err.msg);
	is_int(member(st, "ep1", a), 1, "a belongs to ep1");
	is_int(member(st, "ep1", b), 1, "b belongs to ep1");
	is_int(member(st, "ep1", c), 0, "c does not");
	is_int(member(st, "ep2", a), 0, "a does not belong to ep2");
	is_int(q1(st, "SELECT count(*) FROM episode_objects"), 2, "NULL and \"\" entries skipped");
	ok(world_episode_objects_add(st, "ep1", refs, 4, &err) == 0, "adding again is fine (idempotent)");
	const char *shared[] = { a };
	ok(world_episode_objects_add(st, "ep2", shared, 1, &err) == 0 && member(st, "ep2", a) == 1 && member(st, "ep1", a) == 1,
	   "one object can belong to two episodes");
	is_int(q1(st, "SELECT count(*) FROM episode_objects"), 3, "three rows");
	ok(world_episode_objects_add(st, "ep3", NULL, 0, &err) == 0, "no refs at all is a no-op");
	const char *bad[] = { c, "sha256:nothex" };
	ok(world_episode_objects_add(st, "ep1", bad, 2, &err) < 0 && err.code == WX_BAD_INPUT &&
	   strstr(err.msg, "episode objects ep1") && !strchr(err.msg, '\n'), "a malformed ref refused, one line (%s)", err.msg);
	is_int(member(st, "ep1", c), 0, "... and nothing of the call written (not even the good ref before it)");
	ok(world_episode_objects_add(st, "", shared, 1, &err) < 0 && err.code == WX_BAD_INPUT, "empty episode refused (%s)",
	   err.msg);
	ok(world_episode_objects_add(st, "e\x01p", shared, 1, &err) < 0 && err.code == WX_BAD_INPUT,
	   "control character in the episode refused");
	int m = 7;
	ok(world_episode_has_object(st, "ep1", "nope", &m, &err) < 0 && err.code == WX_BAD_INPUT && m == 0,
	   "has_object: malformed ref refused (%s)", err.msg);
	/* inside a group: rolled back with it */
	const char *cc[] = { c };
	ok(world_store_begin(st, &err) == 0 && world_episode_objects_add(st, "ep1", cc, 1, &err) == 0 &&
	   member(st, "ep1", c) == 1, "inside a transaction the row is visible");
	world_store_rollback(st);
	is_int(member(st, "ep1", c), 0, "... and gone after the rollback");

	/* usage */
	long long calls = -1, bytes = -1;
	ok(world_episode_usage_get(st, "ep1", &calls, &bytes, &err) == 0 && calls == 0 && bytes == 0, "no usage yet: 0, 0");
	ok(world_episode_usage_add(st, "ep1", 1, 100, &err) == 0 && world_episode_usage_add(st, "ep1", 2, 50, &err) == 0,
	   "usage added twice");
	ok(world_episode_usage_get(st, "ep1", &calls, &bytes, &err) == 0 && calls == 3 && bytes == 150,
	   "usage sums: %lld calls, %lld bytes", calls, bytes);
	ok(world_episode_usage_get(st, "ep2", &calls, &bytes, &err) == 0 && calls == 0 && bytes == 0,
	   "another episode's usage is its own");
	ok(world_episode_usage_add(st, "ep1", -1, 0, &err) < 0 && err.code == WX_BAD_INPUT, "negative calls refused (%s)",
	   err.msg);
	ok(world_episode_usage_add(st, "ep1", 0, 9223372036854775807LL, &err) < 0 && err.code == WX_BAD_INPUT &&
	   strstr(err.msg, "overflows"), "an overflowing sum refused (%s)", err.msg);
	ok(world_episode_usage_get(st, "ep1", &calls, &bytes, &err) == 0 && calls == 3 && bytes == 150,
	   "... and nothing changed");
	ok(world_episode_usage_add(st, "", 1, 1, &err) < 0 && err.code == WX_BAD_INPUT, "empty episode refused");

	/* a reader handle reads membership and usage, writes neither */
	struct world_store *rd = open_mode(db, WORLD_STORE_READER);
	is_int(member(rd, "ep1", a), 1, "reader: membership");
	ok(world_episode_usage_get(rd, "ep1", &calls, &bytes, &err) == 0 && calls == 3, "reader: usage");
	ok(world_episode_objects_add(rd, "ep1", cc, 1, &err) < 0 && err.code == WX_USAGE, "reader: objects_add refused (%s)",
	   err.msg);
	ok(world_episode_usage_add(rd, "ep1", 1, 1, &err) < 0 && err.code == WX_USAGE, "reader: usage_add refused");
	world_store_close(rd);

	/* one committed outcome per (kind, subject) */
	long long i1, i2, i3, i4;
	struct world_journal_intent in = { .kind = "invocation", .subject = "mcp:ep1:task", .episode = "ep1", .ref = a };
	ok(world_journal_intent(st, &in, &i1, &err) == 0 && world_journal_outcome(st, i1, "committed", b, &err) == 0,
	   "first committed outcome for mcp:ep1:task");
	is_int(q1(st, "SELECT count(*) FROM journal WHERE phase = 'outcome' AND kind = 'invocation' AND "
	              "subject = 'mcp:ep1:task'"), 1, "the outcome row carries its intent's kind and subject");
	ok(world_journal_intent(st, &in, &i2, &err) == 0, "a second intent for the same subject");
	ok(world_journal_outcome(st, i2, "committed", b, &err) < 0 && err.code == WX_CONFLICT &&
	   strstr(err.msg, "already committed") && strstr(err.msg, "mcp:ep1:task"),
	   "a second committed outcome: WX_CONFLICT (%s)", err.msg);
	is_int(q1(st, "SELECT count(*) FROM journal WHERE phase = 'outcome'"), 1, "... nothing written");
	ok(world_journal_outcome(st, i2, "failed", NULL, &err) == 0, "the second intent may still fail");
	struct world_journal_intent ie = { .kind = "effect", .subject = "mcp:ep1:task", .episode = "ep1" };
	ok(world_journal_intent(st, &ie, &i3, &err) == 0 && world_journal_outcome(st, i3, "committed", NULL, &err) == 0,
	   "another kind with the same subject commits");
	/* across processes: the index is in the file */
	world_store_close(st);
	st = open_mode(db, WORLD_STORE_WRITER);
	ok(world_journal_intent(st, &in, &i4, &err) == 0 && world_journal_outcome(st, i4, "committed", b, &err) < 0 &&
	   err.code == WX_CONFLICT, "after a reopen too (%s)", err.msg);
	/* even a raw insert past the API is refused by the index */
	int rc = sqlite3_exec(world_store_db(st), "INSERT INTO journal(phase, intent_id, kind, subject, status, at) "
	                      "VALUES ('outcome', 999, 'invocation', 'mcp:ep1:task', 'committed', 0)", NULL, NULL, NULL);
	is_int(rc, SQLITE_CONSTRAINT, "a raw second committed row violates journal_one_commit");
	/* the control: the same raw insert for a fresh subject goes in */
	rc = sqlite3_exec(world_store_db(st), "INSERT INTO journal(phase, intent_id, kind, subject, status, at) "
	                  "VALUES ('outcome', 998, 'invocation', 'mcp:ep1:other', 'committed', 0)", NULL, NULL, NULL);
	is_int(rc, SQLITE_OK, "control: the raw insert for another subject is accepted");
	world_store_close(st);
}

/* ---- schema 1 -> 2 ---- */
static void migration(void)
{
	char db[300];
	mkpath(db, sizeof db, "v1.db");
	struct world_err err = {0};
	raw_exec(db, v1_schema);
	is_int(raw_q1(db, "PRAGMA user_version"), 1, "a schema-1 store built from the old SQL");
	/* a v1 writer's data: a schema-2 writer of today cannot write a
	 * schema-1 file, so the rows are written by this build into the v1
	 * file's tables through a store opened on a copy and copied back. */
	char work[300];
	mkpath(work, sizeof work, "v1work.db");
	struct world_store *st = open_mode(work, WORLD_STORE_WRITER);
	struct sfix f = {0};
	if (sfix_init(st, dir, &f, &err) < 0) bail("sfix: %s", err.msg);
	struct call a1, a2, b1;
	commit_call(st, &f, "epA", 1, &a1);
	commit_call(st, &f, "epB", 1, &b1);
	commit_call(st, &f, "epA", 2, &a2);
	world_store_close(st);
	char sql[1400];
	snprintf(sql, sizeof sql,
	         "ATTACH '%s' AS n; INSERT INTO objects SELECT * FROM n.objects; INSERT INTO log_entries SELECT * FROM "
	         "n.log_entries; INSERT INTO worlds SELECT * FROM n.worlds; INSERT INTO heads SELECT * FROM n.heads; "
	         "INSERT INTO journal SELECT * FROM n.journal; INSERT INTO interpreters SELECT * FROM n.interpreters; "
	         "UPDATE journal SET kind = NULL, subject = NULL WHERE phase = 'outcome'; DETACH n;", work);
	raw_exec(db, sql);
	/* the archive files belong to the store path: copy the directory */
	char cmd[1400];
	snprintf(cmd, sizeof cmd, "cp -a '%s.artifacts' '%s.artifacts'", work, db);
	if (system(cmd) != 0) bail("%s", cmd);
	is_int(raw_q1(db, "SELECT count(*) FROM log_entries"), 3, "the schema-1 store holds three entries");
	is_int(raw_q1(db, "SELECT count(*) FROM journal WHERE phase = 'outcome' AND subject IS NULL"), 3,
	       "its outcome rows have no kind or subject (an older writer's)");
	is_int(raw_q1(db, "PRAGMA user_version"), 1, "still version 1");

	/* a reader keeps reading what it holds; the schema-2 calls say why not */
	struct world_store *rd = open_mode(db, WORLD_STORE_READER);
	struct world_object o;
	ok(world_object_get(rd, a1.req, &o, &err) == 0, "reader of a schema-1 store: objects readable");
	world_object_free(&o);
	struct world_log_entry e;
	ok(world_log_get(rd, 3, &e, &err) == 0, "reader of a schema-1 store: log readable");
	world_log_entry_free(&e);
	int m = 5;
	ok(world_episode_has_object(rd, "epA", a1.req, &m, &err) < 0 && err.code == WX_SCHEMA &&
	   strstr(err.msg, "schema version 1") && strstr(err.msg, "writer") && m == 0,
	   "... membership: WX_SCHEMA, open it with a writer (%s)", err.msg);
	long long calls, bytes;
	ok(world_episode_usage_get(rd, "epA", &calls, &bytes, &err) < 0 && err.code == WX_SCHEMA, "... usage: WX_SCHEMA");
	world_store_close(rd);
	is_int(raw_q1(db, "PRAGMA user_version"), 1, "the reader migrated nothing");

	/* three writers opening a copy of it at once: one migrates, the others
	 * find it migrated under the write lock; each gets the same store */
	{
		char race[300];
		mkpath(race, sizeof race, "v1race.db");
		snprintf(cmd, sizeof cmd, "cp '%s' '%s' && cp -a '%s.artifacts' '%s.artifacts'", db, race, db, race);
		if (system(cmd) != 0) bail("%s", cmd);
		int bar[2];
		if (pipe(bar) < 0) bail("pipe");
		pid_t kid[3];
		for (int k = 0; k < 3; k++) {
			kid[k] = fork();
			if (kid[k] == 0) {
				close(bar[1]);
				char x;
				if (read(bar[0], &x, 1) < 0) _exit(4);
				struct world_store *w = NULL;
				struct world_err e = {0};
				if (world_store_open(race, WORLD_STORE_WRITER, &w, &e) < 0) {
					fprintf(stderr, "migrating writer %d: %s\n", k, e.msg);
					_exit(3);
				}
				world_store_close(w);
				_exit(0);
			}
		}
		close(bar[0]);
		close(bar[1]);
		int bad = 0;
		for (int k = 0; k < 3; k++) {
			int status;
			waitpid(kid[k], &status, 0);
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) bad++;
		}
		is_int(bad, 0, "three writers opening a schema-1 store at once all open it");
		is_int(raw_q1(race, "PRAGMA user_version"), WORLD_STORE_SCHEMA_VERSION, "... it is migrated to version 2 (and on to %d)", WORLD_STORE_SCHEMA_VERSION);
		is_int(raw_q1(race, "SELECT count(*) FROM episode_objects"), 27, "... the backfill done once (27 refs)");
		is_int(raw_q1(race, "SELECT count(*) FROM journal WHERE phase = 'outcome' AND subject IS NULL"), 0,
		       "... every outcome row got its subject");
	}

	/* the writer migrates */
	st = open_mode(db, WORLD_STORE_WRITER);
	is_int(q1(st, "PRAGMA user_version"), WORLD_STORE_SCHEMA_VERSION, "a writer migrated it to version 2 (and on to %d)", WORLD_STORE_SCHEMA_VERSION);
	is_int(q1(st, "SELECT count(*) FROM journal WHERE phase = 'outcome' AND (kind IS NULL OR subject IS NULL)"), 0,
	       "outcome rows got kind and subject from their intents");
	is_int(q1(st, "SELECT count(*) FROM journal o JOIN journal i ON i.id = o.intent_id WHERE o.phase = 'outcome' AND "
	              "o.kind = i.kind AND o.subject = i.subject"), 3, "... the intents' own");
	ok(all_members(st, "epA", &a1) && all_members(st, "epA", &a2),
	   "backfill: epA's inputs, plans, requests, results, effect records, outputs, records, entry hashes and worlds");
	ok(all_members(st, "epB", &b1), "backfill: epB's the same");
	ok(none_members(st, "epB", &a1) && none_members(st, "epB", &a2) && none_members(st, "epA", &b1),
	   "no episode got another's");
	is_int(member(st, "epA", f.src), 0, "the transition source belongs to no episode (public by its semanticId)");
	is_int(q1(st, "SELECT count(*) FROM episode_objects"), 27, "nine refs for each of the three calls");
	ok(entries_are(st, "epA", 1, "1,3") && entries_are(st, "epB", 1, "2"), "the backfill gave each episode its entries");
	ok(entries_are(st, "epA", 2, "3") && entries_are(st, "epA", 4, "") && entries_are(st, "epC", 1, ""),
	   "... from a cursor; none for an unknown episode");
	long long last = -1;
	int has = -1;
	ok(world_episode_last_entry(st, "epA", &last, &err) == 0 && last == 3, "epA's newest entry is 3");
	ok(world_episode_last_entry(st, "epC", &last, &err) == 0 && last == 0, "an episode without entries: 0");
	ok(world_episode_has_entry(st, "epB", 2, &has, &err) == 0 && has == 1, "epB has entry 2");
	ok(world_episode_has_entry(st, "epB", 1, &has, &err) == 0 && has == 0, "... not entry 1");
	struct world_world w;
	ok(world_world_at(st, 2, &w, &err) == 0 && strcmp(w.ref, b1.world) == 0, "world_world_at(2) is entry 2's world");
	ok(world_world_at(st, 99, &w, &err) < 0 && err.code == WX_NOT_FOUND, "world_world_at(99): WX_NOT_FOUND");
	/* new calls: membership written before or after the log append (in the
	 * transaction), or not at all */
	struct call b2, b3, a3;
	commit_call_m(st, &f, "epB", 2, &b2, 1);
	commit_call_m(st, &f, "epB", 3, &b3, 2);
	commit_call_m(st, &f, "epA", 3, &a3, 0);
	ok(entries_are(st, "epB", 1, "2,4,5"), "membership before the append or after it: the entry is the episode's");
	ok(entries_are(st, "epA", 1, "1,3"), "a call without membership rows is no episode's entry (operator only)");
	ok(member(st, "epB", b3.world) == 1 && member(st, "epB", b2.world) == 0, "what was added is what is there");
	world_store_close(st);
	/* reopening a version-2 store changes nothing */
	char s1[WORLD_REF_SIZE], s2[WORLD_REF_SIZE];
	st = open_mode(db, WORLD_STORE_WRITER);
	world_store_close(st);
	file_sha(db, s1);
	st = open_mode(db, WORLD_STORE_WRITER);
	world_store_close(st);
	is_str(file_sha(db, s2), s1, "reopening the migrated store rewrites nothing");
}

/* an old store with two committed outcomes for one subject is refused */
static void migration_refused(void)
{
	char db[300], lock[400];
	mkpath(db, sizeof db, "dup.db");
	snprintf(lock, sizeof lock, "%s.writer.lock", db);
	raw_exec(db, v1_schema);
	raw_exec(db, "PRAGMA journal_mode=DELETE;"
	             "INSERT INTO journal(phase, kind, subject, at) VALUES ('intent', 'invocation', 'mcp:e:dup', 1);"
	             "INSERT INTO journal(phase, kind, subject, at) VALUES ('intent', 'invocation', 'mcp:e:dup', 2);"
	             "INSERT INTO journal(phase, intent_id, status, at) VALUES ('outcome', 1, 'committed', 3);"
	             "INSERT INTO journal(phase, intent_id, status, at) VALUES ('outcome', 2, 'committed', 4);");
	char before[WORLD_REF_SIZE], after[WORLD_REF_SIZE];
	file_sha(db, before);
	struct world_store *st = NULL;
	struct world_err err = {0};
	ok(world_store_open(db, WORLD_STORE_WRITER, &st, &err) < 0 && err.code == WX_SCHEMA &&
	   strstr(err.msg, "mcp:e:dup") && strstr(err.msg, "2 committed outcomes") && !strchr(err.msg, '\n'),
	   "two committed outcomes for one subject: migration refused, one line naming it (%s)", err.msg);
	is_str(file_sha(db, after), before, "the store file is byte-identical");
	is_int(raw_q1(db, "PRAGMA user_version"), 1, "still version 1");
	is_int(raw_q1(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'episode_%'"), 0, "no schema-2 table left");
	is_int(raw_q1(db, "SELECT count(*) FROM journal WHERE phase = 'outcome' AND subject IS NOT NULL"), 0,
	       "the outcome rows' update rolled back too");
	ok(access(lock, F_OK) < 0, "no lock file left beside it");
	/* the control: with one of them failed instead, it migrates */
	raw_exec(db, "UPDATE journal SET status = 'failed' WHERE id = 4");
	ok(world_store_open(db, WORLD_STORE_WRITER, &st, &err) == 0, "control: one committed outcome migrates (%s)",
	   err.msg);
	if (st) is_int(q1(st, "PRAGMA user_version"), WORLD_STORE_SCHEMA_VERSION, "... to version 2 (and on)");
	world_store_close(st);
	/* an unknown version is still refused untouched */
	char fut[300];
	mkpath(fut, sizeof fut, "v4.db");
	raw_exec(fut, "PRAGMA journal_mode=DELETE; CREATE TABLE t(x); PRAGMA user_version=4;");
	file_sha(fut, before);
	ok(world_store_open(fut, WORLD_STORE_WRITER, &st, &err) < 0 && err.code == WX_SCHEMA &&
	   strstr(err.msg, "schema version 4 is unknown"), "version 4 refused (%s)", err.msg);
	ok(world_store_open(fut, WORLD_STORE_READER, &st, &err) < 0 && err.code == WX_SCHEMA, "... by readers too");
	is_str(file_sha(fut, after), before, "... left byte-identical");
}

/* ---- file modes ---- */
static int bad_modes, files_seen, dirs_seen;
static char bad_what[600];

static int walk(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)ftw;
	mode_t m = sb->st_mode & 07777;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	int good;
	if (type == FTW_D) { dirs_seen++; good = m == 0700; }
	else if (strcmp(base, "ailang") == 0) { files_seen++; good = m == 0555; }
	else { files_seen++; good = (m & 077) == 0 && m != 0; }
	if (!good) {
		bad_modes++;
		snprintf(bad_what, sizeof bad_what, "%s has mode %04o", path, (unsigned)m);
	}
	return 0;
}

static unsigned mode_of(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 ? (unsigned)(sb.st_mode & 07777) : 01;
}

static void modes(void)
{
	mode_t old = umask(022);
	char sub[300], db[400], p[500];
	mkpath(sub, sizeof sub, "modes");
	if (mkdir(sub, 0755) < 0) bail("mkdir %s: %s", sub, strerror(errno));
	snprintf(db, sizeof db, "%s/world.db", sub);
	struct world_err err = {0};
	struct world_store *st = open_mode(db, WORLD_STORE_WRITER);
	struct sfix f = {0};
	if (sfix_init(st, sub, &f, &err) < 0) bail("sfix: %s", err.msg);
	struct call c;
	commit_call(st, &f, "epM", 1, &c);
	/* a reader beside the writer, as the daemon has */
	struct world_store *rd = open_mode(db, WORLD_STORE_READER);
	int mm;
	if (world_episode_has_object(rd, "epM", c.in, &mm, &err) < 0) bail("reader: %s", err.msg);
	is_int(mode_of(db), 0600, "umask 022: the database is 0600");
	snprintf(p, sizeof p, "%s-wal", db);
	is_int(mode_of(p), 0600, "... its -wal 0600");
	snprintf(p, sizeof p, "%s-shm", db);
	is_int(mode_of(p), 0600, "... its -shm 0600");
	snprintf(p, sizeof p, "%s.writer.lock", db);
	is_int(mode_of(p), 01, "... and no writer lock file (writers share the store)");
	snprintf(p, sizeof p, "%s.artifacts", db);
	is_int(mode_of(p), 0700, "... the artifacts directory 0700");
	bad_modes = files_seen = dirs_seen = 0;
	bad_what[0] = 0;
	ok(nftw(sub, walk, 16, FTW_PHYS) == 0, "walked the store directory");
	/* the store directory itself is the test's (0755): only what the store made is judged */
	ok(bad_modes == 1 && strstr(bad_what, "/modes has mode 0755"),
	   "every file the store made is its owner's only (%d files, %d dirs; %s)", files_seen, dirs_seen, bad_what);
	ok(files_seen >= 5 && dirs_seen >= 5, "db, -wal, -shm, manifest, interpreter; five archive directories");
	world_store_close(rd);
	world_store_close(st);
	/* umask 0 (the loosest): still 0600 */
	umask(0);
	snprintf(db, sizeof db, "%s/loose.db", sub);
	st = open_mode(db, WORLD_STORE_WRITER);
	char r[WORLD_REF_SIZE];
	put(st, "world/invocation-input/v1", "t", "{}", r);
	is_int(mode_of(db), 0600, "umask 0: the database is still 0600");
	snprintf(p, sizeof p, "%s-wal", db);
	is_int(mode_of(p), 0600, "... and its -wal");
	world_store_close(st);
	/* the control: SQLite on its own makes a 0644 file under umask 022 */
	umask(022);
	snprintf(db, sizeof db, "%s/plain.db", sub);
	raw_exec(db, "CREATE TABLE t(x)");
	is_int(mode_of(db), 0644, "control: a database SQLite creates by itself is 0644 under umask 022");
	umask(old);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/world-test-members.XXXXXX");
	if (!mkdtemp(dir)) bail("mkdtemp");
	api();
	migration();
	migration_refused();
	modes();
	char cmd[700];
	snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' && rm -rf '%s'", dir, dir);
	if (system(cmd) != 0) diag("could not remove %s", dir);
	return done_testing();
}
