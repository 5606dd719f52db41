/* tests/coordinator/test_changes.c: change detection before each call
 * (issue 20 item 2; store.h world_store_changed, docs/store.md "Change
 * detection"), counted rather than timed.
 *
 * The work is the statements the coordinator's store connection runs,
 * counted by an SQLITE_TRACE_PROFILE callback on it: the session reads
 * (SESSION_GET), the registry head reads (HEAD_GET) and the lookups of the
 * change counters row (CHANGES_GET), each by its text in store/sql.h.
 *   - calls on a store where nothing but the calls themselves changed
 *     re-read neither their session nor the registry head; reads with
 *     nothing committed at all read no row;
 *   - controls: a session minted, a transition published, a session
 *     revoked through ANOTHER connection (as another process would) cost
 *     exactly the re-read of what changed, once, and the change is seen
 *     (the new tool is listed; the revoked credential is refused);
 *   - expiry is judged from the cached expiry on every call (no re-read);
 *   - the race: a revoke landing after a call's session check, while the
 *     call is held just before its commit (pause point
 *     coord.before_commit), is refused inside the commit transaction;
 *     control: held the same way without a revoke, the call commits;
 *   - a group commit's batch runs flat (no savepoint) first: three calls
 *     in one batch commit in one transaction with no savepoint; when one
 *     of them is refused inside it (revoked while the batch waited), the
 *     other two still commit, each in a savepoint of a second
 *     transaction, the refused one not run again (its session read once).
 *     The batch is made deterministic by holding its leader at
 *     coord.batch until the others are queued (coord.queued). */
#include "tests/coordinator/ctest.h"
#include "common/pause.h"
#include "store/sql.h"
#include "tests/tap.h"
#include <pthread.h>
#include <sqlite3.h>
#include <time.h>

static struct ctest T;
static struct world_store *other; /* a second connection: "another process" */

static struct { long long session, head, changes, begins, savepoints; } W;

static int profile(unsigned mask, void *ctx, void *p, void *x)
{
	(void)ctx; (void)x;
	if (mask != SQLITE_TRACE_PROFILE || !p) return 0;
	const char *sql = sqlite3_sql(p);
	if (!sql) return 0;
	if (strcmp(sql, WORLD_SQL(SESSION_GET)) == 0) W.session++;
	else if (strcmp(sql, WORLD_SQL(HEAD_GET)) == 0) {
		/* a registry's head, not the selected world head every commit reads */
		char *x = sqlite3_expanded_sql(p);
		if (x && strstr(x, "-registry/")) W.head++;
		sqlite3_free(x);
	}
	else if (strcmp(sql, WORLD_SQL(CHANGES_GET)) == 0) W.changes++;
	else if (strcmp(sql, "BEGIN IMMEDIATE") == 0) W.begins++;
	else if (strcmp(sql, "SAVEPOINT wc") == 0) W.savepoints++;
	return 0;
}

static void count_reset(void) { memset(&W, 0, sizeof W); }

static int call(struct coordinator *c, const struct coord_session *s, const char *task, struct world_err *e)
{
	struct coord_call cl = { .session = s, .channel = "cli", .skill_id = "t.seen", .task_id = task,
		                 .args = "{\"k\":1}", .args_len = 7 };
	struct coord_result r;
	int rc = coord_call(c, &cl, &r, e);
	coord_result_free(&r);
	return rc;
}

static int listed(struct coordinator *c, const struct coord_session *s, const char *id)
{
	json_t *v;
	struct world_err e;
	if (coord_visible(c, s, &v, &e) < 0) ctest_die("visible", &e);
	size_t i;
	json_t *d;
	int yes = 0;
	json_array_foreach(v, i, d) yes |= strcmp(json_string_value(json_object_get(d, "id")), id) == 0;
	json_decref(v);
	return yes;
}

static void mint_other(const char *episode, char cred[65])
{
	struct ctest o = T;
	o.st = other;
	const char *const grants[] = { "Test.None=x:1", NULL };
	ctest_session(&o, episode, grants, 3600, cred);
}

static void revoke_other(const char *cred)
{
	char ref[WORLD_REF_SIZE];
	struct world_err e;
	if (world_hash_ref(cred, strlen(cred), ref, &e) < 0) ctest_die("hash", &e);
	int n;
	if (world_session_revoke(other, ref, NULL, &n, &e) < 0) ctest_die("revoke", &e);
}

static long long log_len(void)
{
	long long idx;
	char h[WORLD_REF_SIZE];
	struct world_err e;
	if (world_log_last(other, &idx, h, &e) < 0) ctest_die("log last", &e);
	return idx;
}

/* ---- the race: hold the call at coord.before_commit ---- */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int arm, arrived, released;
} H = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };

/* the batch: hold its leader at coord.batch (B.arm), count the calls queued behind it */
static struct { int arm, held, released, queued; } B;

static void hook(void *ctx, const char *name)
{
	(void)ctx;
	pthread_mutex_lock(&H.mu);
	if (strcmp(name, "coord.queued") == 0) {
		B.queued++;
		pthread_cond_broadcast(&H.cv);
	}
	if (B.arm && strcmp(name, "coord.batch") == 0) {
		B.arm = 0;
		B.held = 1;
		pthread_cond_broadcast(&H.cv);
		while (!B.released) pthread_cond_wait(&H.cv, &H.mu);
	}
	if (H.arm && strcmp(name, "coord.before_commit") == 0) {
		H.arm = 0;
		H.arrived = 1;
		pthread_cond_broadcast(&H.cv);
		while (!H.released) pthread_cond_wait(&H.cv, &H.mu);
	}
	pthread_mutex_unlock(&H.mu);
}

struct job {
	struct coordinator *c;
	const struct coord_session *s;
	const char *task;
	int rc;
	struct world_err err;
	pthread_t th;
};

static void *job_main(void *arg)
{
	struct job *j = arg;
	j->rc = call(j->c, j->s, j->task, &j->err);
	return NULL;
}

/* Three calls in one group-commit batch: the first (s1, task t1) is held
 * as the batch's leader until the other two (s2 t2, s3 t3) are queued
 * behind it; then revoke (if any) is revoked and the batch released.
 * The counters W are those of the batch alone. */
static void batch_of_three(struct coordinator *c, struct job j[3], const struct coord_session *s1, const char *t1,
                           const struct coord_session *s2, const char *t2, const struct coord_session *s3,
                           const char *t3, const char *revoke)
{
	pthread_mutex_lock(&H.mu);
	B.arm = 1;
	B.held = B.released = B.queued = 0;
	pthread_mutex_unlock(&H.mu);
	j[0] = (struct job){ .c = c, .s = s1, .task = t1 };
	j[1] = (struct job){ .c = c, .s = s2, .task = t2 };
	j[2] = (struct job){ .c = c, .s = s3, .task = t3 };
	if (pthread_create(&j[0].th, NULL, job_main, &j[0]) != 0) bail("pthread_create");
	pthread_mutex_lock(&H.mu);
	while (!B.held) pthread_cond_wait(&H.cv, &H.mu);
	pthread_mutex_unlock(&H.mu);
	for (int i = 1; i < 3; i++)
		if (pthread_create(&j[i].th, NULL, job_main, &j[i]) != 0) bail("pthread_create");
	pthread_mutex_lock(&H.mu);
	while (B.queued < 2) pthread_cond_wait(&H.cv, &H.mu);
	pthread_mutex_unlock(&H.mu);
	if (revoke) revoke_other(revoke);
	count_reset();
	pthread_mutex_lock(&H.mu);
	B.released = 1;
	pthread_cond_broadcast(&H.cv);
	pthread_mutex_unlock(&H.mu);
	for (int i = 0; i < 3; i++) pthread_join(j[i].th, NULL);
}

/* Runs a call held at coord.before_commit; while held, revokes cred when
 * asked. Returns the call's rc (err in j). */
static int held_call(struct coordinator *c, const struct coord_session *s, const char *task, const char *revoke,
                     struct job *j)
{
	pthread_mutex_lock(&H.mu);
	H.arm = 1;
	H.arrived = H.released = 0;
	pthread_mutex_unlock(&H.mu);
	*j = (struct job){ .c = c, .s = s, .task = task };
	if (pthread_create(&j->th, NULL, job_main, j) != 0) bail("pthread_create");
	pthread_mutex_lock(&H.mu);
	while (!H.arrived) pthread_cond_wait(&H.cv, &H.mu);
	pthread_mutex_unlock(&H.mu);
	/* the call passed its session check (coord.session comes first) and ran */
	if (revoke) revoke_other(revoke);
	count_reset();
	pthread_mutex_lock(&H.mu);
	H.released = 1;
	pthread_cond_broadcast(&H.cv);
	pthread_mutex_unlock(&H.mu);
	pthread_join(j->th, NULL);
	return j->rc;
}

int main(void)
{
	ctest_init(&T, "world-changes");
	struct world_err e;
	if (world_store_open(T.db, WORLD_STORE_WRITER, &other, &e) < 0) ctest_die("open other", &e);
	ctest_register(&T, "t.seen", ctest_seen_source, "[]", "null", NULL);
	char ca[65], cb[65];
	const char *const grants[] = { "Test.None=x:1", NULL };
	ctest_session(&T, "ep-a", grants, 3600, ca);
	ctest_session(&T, "ep-b", grants, 3600, cb);

	struct coord_config cfg = { .store = T.st, .written_by = "test/changes" };
	sup_limits_default(&cfg.limits);
	struct coordinator *c = coord_new(&cfg, &e);
	if (!c) ctest_die("coord_new", &e);
	struct coord_session *sa, *sb;
	if (coord_session_open(c, ca, &sa, &e) < 0) ctest_die("open a", &e);
	if (call(c, sa, "warm", &e) < 0) ctest_die("warm call", &e);
	if (sqlite3_trace_v2(world_store_db(T.st), SQLITE_TRACE_PROFILE, profile, NULL) != SQLITE_OK) bail("trace");

	/* ---- nothing changed but the calls themselves ---- */
	count_reset();
	int fails = 0;
	for (int i = 0; i < 5; i++) {
		char task[16];
		snprintf(task, sizeof task, "c%d", i);
		fails += call(c, sa, task, &e) < 0;
	}
	is_int(fails, 0, "5 calls on a store nothing else writes commit");
	is_int(W.session, 0, "... and re-read their session 0 times (the cached row is current)");
	is_int(W.head, 0, "... and the registry head 0 times (registry heads; the world head moves with each commit)");
	is_int(W.changes, 5, "... at one lookup of the change counters each (the previous call's own commit moved the "
	                     "store, so the counters are looked at, and show no session or registry change)");
	count_reset();
	ok(listed(c, sa, "t.seen") && W.changes == 1 && W.head == 0, "tools listed after the last call: one lookup of the "
	                                                             "counters (its commit moved the store), no head read");
	count_reset();
	int l1 = listed(c, sa, "t.seen"), l2 = listed(c, sa, "t.seen");
	ok(l1 && l2, "tools listed twice more");
	is_int(W.session + W.head + W.changes, 0, "... with nothing committed between: no row read at all (only PRAGMA "
	                                          "data_version)");
	count_reset();
	struct coord_session *sb2;
	if (coord_session_open(c, cb, &sb, &e) < 0 || coord_session_open(c, cb, &sb2, &e) < 0) ctest_die("open b", &e);
	is_int(W.session, 1, "opening session b twice reads its row once (the second open is served from the cache)");
	ok(strcmp(sb2->episode, "ep-b") == 0 && sb2->ngrants == 1, "... and the cached open is the same session (%s, %zu "
	                                                          "grant)", sb2->episode, sb2->ngrants);
	coord_session_free(sb2);

	/* ---- controls: a change costs exactly its re-read ---- */
	char cc[65];
	mint_other("ep-c", cc);
	count_reset();
	ok(call(c, sa, "m1", &e) == 0, "a session minted by another connection: the next call commits");
	is_int(W.session, 1, "... after exactly one re-read of its session (the sessions changed)");
	is_int(W.head, 0, "... and no read of the registry head (no registry moved)");
	count_reset();
	ok(call(c, sa, "m2", &e) == 0 && W.session == 0, "... and the call after it re-reads nothing (%lld)", W.session);

	ok(!listed(c, sa, "t.new"), "control: t.new is not listed before it is published");
	struct ctest o = T;
	o.st = other;
	ctest_register(&o, "t.new", ctest_seen_source, "[]", "null", NULL);
	count_reset();
	ok(listed(c, sa, "t.new"), "published through another connection: t.new is listed on the next request");
	is_int(W.head, 1, "... after exactly one read of the registry head");
	is_int(W.session, 0, "... and no session read");
	count_reset();
	ok(listed(c, sa, "t.new") && W.head == 0, "... and the next listing reads no head (%lld)", W.head);

	count_reset();
	ok(call(c, sb, "b1", &e) == 0, "control: session b works just before its revoke");
	revoke_other(cb);
	count_reset();
	int rc = call(c, sb, "b2", &e);
	ok(rc < 0 && e.code == WX_SESSION && strstr(e.msg, "revoked"), "revoked by another connection: the next call is "
	                                                               "refused (%s)", rc < 0 ? e.msg : "committed");
	is_int(W.session, 1, "... after exactly one re-read of its session");
	struct coord_session *sb3 = NULL;
	ok(coord_session_open(c, cb, &sb3, &e) < 0 && e.code == WX_NOT_FOUND, "... and opening it again is refused "
	                                                                      "(unknown credential)");
	coord_session_free(sb);

	/* ---- expiry is judged per call from the cached expiry ---- */
	char cx[65];
	{
		struct ctest t2 = T;
		t2.st = other;
		const char *const g[] = { "Test.None=x:1", NULL };
		ctest_session(&t2, "ep-x", g, 2, cx);
	}
	struct coord_session *sx;
	if (coord_session_open(c, cx, &sx, &e) < 0) ctest_die("open x", &e);
	long long exp = sx->expires_at;
	ok(call(c, sx, "x1", &e) == 0, "control: a session with 2 s to live works");
	struct timespec tenth = { 0, 100 * 1000 * 1000 };
	while ((long long)time(NULL) < exp) nanosleep(&tenth, NULL);
	count_reset();
	rc = call(c, sx, "x2", &e);
	ok(rc < 0 && e.code == WX_SESSION && strstr(e.msg, "expired"), "once its expiry passed, the next call is refused "
	                                                               "(%s)", rc < 0 ? e.msg : "committed");
	is_int(W.session, 0, "... judged from the cached expiry (no re-read: nothing changed)");
	coord_session_free(sx);

	/* ---- the race: a revoke lands between the check and the commit ---- */
	if (!WORLD_PAUSE_COMPILED) {
		skip("built without --enable-test-hooks", "the revoke-before-commit race");
	} else {
		world_pause_set_hook(hook, NULL);
		char cr[65];
		mint_other("ep-r", cr);
		struct coord_session *sr;
		if (coord_session_open(c, cr, &sr, &e) < 0) ctest_die("open r", &e);
		struct job j;
		long long before = log_len();
		rc = held_call(c, sr, "r1", NULL, &j);
		ok(rc == 0 && log_len() == before + 1, "control: a call held before its commit, nothing revoked, commits (%s)",
		   rc ? j.err.msg : "ok");
		is_int(W.session, 0, "... and its commit re-read no session (nothing changed)");
		before = log_len();
		rc = held_call(c, sr, "r2", cr, &j);
		ok(rc < 0 && j.err.code == WX_SESSION && strstr(j.err.msg, "revoked"),
		   "a revoke landing after the call's session check, before its commit: refused (%s)",
		   rc < 0 ? j.err.msg : "committed");
		is_int(log_len(), before, "... and nothing of it is committed to the log");
		is_int(W.session, 1, "... the commit transaction re-read the session once, and found it gone");
		struct world_journal_row jr;
		struct world_err fe;
		ok(world_journal_find(other, "invocation", "cli:ep-r:r2", &jr, &fe) < 0 || strcmp(jr.status, "committed") != 0,
		   "... no committed outcome in the journal for its task id");
		coord_session_free(sr);

		/* ---- a batch runs flat first; a refusal in it undoes only itself ---- */
		char cq[65];
		mint_other("ep-q", cq);
		struct coord_session *sq;
		if (coord_session_open(c, cq, &sq, &e) < 0) ctest_die("open q", &e);
		struct job b[3];
		before = log_len();
		batch_of_three(c, b, sa, "g1", sq, "g2", sa, "g3", NULL);
		ok(b[0].rc == 0 && b[1].rc == 0 && b[2].rc == 0 && log_len() == before + 3,
		   "control: three calls in one group-commit batch all commit (%s)",
		   b[0].rc ? b[0].err.msg : b[1].rc ? b[1].err.msg : b[2].rc ? b[2].err.msg : "ok");
		is_int(W.begins, 1, "... in one transaction");
		is_int(W.savepoints, 0, "... run flat: no savepoint");
		before = log_len();
		batch_of_three(c, b, sa, "h1", sq, "h2", sa, "h3", cq);
		ok(b[1].rc < 0 && b[1].err.code == WX_SESSION && strstr(b[1].err.msg, "revoked"),
		   "the batch's middle call, revoked while the batch waited, is refused inside it (%s)",
		   b[1].rc < 0 ? b[1].err.msg : "committed");
		ok(b[0].rc == 0 && b[2].rc == 0 && log_len() == before + 2, "... and the calls beside it still commit (%s)",
		   b[0].rc ? b[0].err.msg : b[2].rc ? b[2].err.msg : "ok");
		is_int(W.begins, 2, "... the flat run rolled back, the other two run again in a second transaction");
		is_int(W.savepoints, 2, "... each of them in a savepoint of its own, the refused call not run again");
		is_int(W.session, 2, "... the batch's two sessions read once each (the sessions changed), inside the first "
		                     "transaction, not again in the second");
		ok(world_journal_find(other, "invocation", "cli:ep-q:h2", &jr, &fe) < 0 || strcmp(jr.status, "committed") != 0,
		   "... and no committed outcome for the refused call's task id");
		coord_session_free(sq);
		world_pause_set_hook(NULL, NULL);
	}

	coord_session_free(sa);
	coord_free(c);
	world_store_close(other);
	ctest_fini(&T);
	return done_testing();
}
