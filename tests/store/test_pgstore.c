/* tests/store/test_pgstore.c: the store itself (store.h) on PostgreSQL,
 * through the driver seam (store/db.h, docs/store.md "The driver seam"):
 * the same history written to a fresh SQLite store and to a throwaway
 * cluster's database (WORLD_TEST_PG_URI, started by tests/store/pgstore.sh)
 * -- objects put and read back, log appends with the chain verified, the
 * head compare-and-swap refusing a stale append, a registry head CAS,
 * sessions, the journal (an invocation committed once), episode membership
 * and usage -- and every ref, entry hash, world ref and entry's JSON bytes
 * compared between the two. Without WORLD_TEST_PG_URI the SQLite half runs
 * and the PostgreSQL half is skipped with the reason. */
#include "store/store.h"
#include "store/db.h"
#include "common/ref.h"
#include "tests/tap.h"
#include "tests/store/sfix.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#define N 5

struct history {
	int ok;
	char src[WORLD_REF_SIZE], blob[WORLD_REF_SIZE];
	char rec[N][WORLD_REF_SIZE], hash[N][WORLD_REF_SIZE], world[N][WORLD_REF_SIZE];
	char *json[N];
	size_t json_len[N];
	int chain_ok, stale_code, stale_head_kept, reg_ok, reg_stale_code;
	int sess_ok, sess_list, revoke_ok, sess_gone_code;
	int intent_ok, commit_ok, second_commit_code, find_ok;
	int member_ok, usage_ok, blob_ok;
	/* the same refusals inside the caller's transaction, where
	 * PostgreSQL's pipeline answers the INSERT at the COMMIT: the code and
	 * message the caller got, and the message SQLite's own check words */
	int txn_commit_code, txn_sess_code, txn_usage_code, usage_over_code, usage_kept;
	char txn_commit_msg[1100], txn_commit_want[400], txn_sess_msg[1100], txn_usage_msg[1100], usage_over_msg[1100];
};

/* Ends the caller's world_store_begin transaction: commits it when its
 * writes returned rc 0, else rolls it back; the failure's code (0: none)
 * and its message in msg. */
static int in_txn(struct world_store *st, int rc, struct world_err *e, char *msg, size_t n)
{
	if (rc == 0) rc = world_store_commit(st, e);
	else world_store_rollback(st);
	snprintf(msg, n, "%s", rc < 0 ? e->msg : "");
	return rc < 0 ? e->code : 0;
}

static int count_session(void *ctx, const struct world_session *s)
{
	(void)s;
	(*(int *)ctx)++;
	return 0;
}

/* The same writes, in the same order, on whichever store st is. */
static void history(struct world_store *st, struct history *h, const char *what)
{
	struct world_err err = { 0, "" };
	memset(h, 0, sizeof *h);
	struct sfix f = { .n = 0 };
	/* the interpreter is not archived (the archive is SQLite's alone so
	 * far): the entries name a fixed ref, as an archived one would be */
	static const char ibytes[] = "an interpreter's bytes";
	static const char src[] = "module sfix\nexport func main(input: string) -> string {\n  input\n}\n";
	if (world_hash_ref(ibytes, strlen(ibytes), f.interp, &err) < 0 ||
	    world_object_put(st, "world/transition-source/v1", "sfix", src, strlen(src), f.src, NULL, &err) < 0) {
		diag("%s: set-up: %s", what, err.msg);
		return;
	}
	memcpy(h->src, f.src, WORLD_REF_SIZE);
	/* every byte value, NUL included */
	unsigned char bytes[256];
	for (int i = 0; i < 256; i++) bytes[i] = (unsigned char)i;
	int created = 0;
	if (world_object_put(st, "x-test/bytes", "test", bytes, sizeof bytes, h->blob, &created, &err) < 0) {
		diag("%s: blob put: %s", what, err.msg);
		return;
	}
	struct world_object o;
	h->blob_ok = created == 1 && world_object_get(st, h->blob, &o, &err) == 0 && o.len == sizeof bytes &&
	             memcmp(o.payload, bytes, sizeof bytes) == 0 && strcmp(o.semantic_id, "x-test/bytes") == 0;
	if (h->blob_ok) world_object_free(&o);
	for (int i = 0; i < N; i++) {
		char out[WORLD_REF_SIZE], body[64];
		int bl = snprintf(body, sizeof body, "{\"out\":%d}", i);
		long long idx;
		char prev[WORLD_REF_SIZE], world[WORLD_REF_SIZE];
		struct world_log_result r;
		if (world_object_put(st, "world/invocation-output/v1", "sfix", body, (size_t)bl, out, NULL, &err) < 0 ||
		    sfix_record(st, &f, out, 1, "pg", h->rec[i], &err) < 0 || world_log_next(st, &idx, prev, world, &err) < 0) {
			diag("%s: entry %d: %s", what, i + 1, err.msg);
			return;
		}
		struct world_log_append a = { .entry_index = idx, .semantics_epoch = 1, .transition_fn = f.src,
		                              .interpreter = f.interp, .prev_entry_hash = *prev ? prev : NULL,
		                              .written_by = "test_pgstore", .transition_ref = h->rec[i],
		                              .state_root = out, .expected_world = world };
		if (world_log_append(st, &a, &r, &err) < 0) {
			diag("%s: append %d: %s", what, i + 1, err.msg);
			return;
		}
		memcpy(h->hash[i], r.entry_hash, WORLD_REF_SIZE);
		memcpy(h->world[i], r.world_ref, WORLD_REF_SIZE);
	}
	/* the chain, read back: each entry re-verified by the store, its
	 * prevEntryHash the entry before's hash */
	h->chain_ok = 1;
	for (int i = 0; i < N; i++) {
		struct world_log_entry e;
		if (world_log_get(st, i + 1, &e, &err) < 0) {
			diag("%s: log get %d: %s", what, i + 1, err.msg);
			h->chain_ok = 0;
			continue;
		}
		if (strcmp(e.entry_hash, h->hash[i]) != 0 || strcmp(e.prev_entry_hash, i ? h->hash[i - 1] : "") != 0)
			h->chain_ok = 0;
		h->json[i] = e.json;
		h->json_len[i] = e.json_len;
		e.json = NULL;
		world_log_entry_free(&e);
	}
	/* a stale append: the head moved since this writer looked (it names
	 * the world before the last entry's) */
	{
		char out[WORLD_REF_SIZE], rec[WORLD_REF_SIZE];
		struct world_log_result r;
		if (world_object_put(st, "world/invocation-output/v1", "sfix", "{\"out\":99}", 10, out, NULL, &err) == 0 &&
		    sfix_record(st, &f, out, 1, "pg", rec, &err) == 0) {
			struct world_log_append a = { .entry_index = N + 1, .semantics_epoch = 1, .transition_fn = f.src,
			                              .interpreter = f.interp, .prev_entry_hash = h->hash[N - 1],
			                              .written_by = "test_pgstore", .transition_ref = rec,
			                              .state_root = out, .expected_world = h->world[N - 2] };
			struct world_err e2 = { 0, "" };
			h->stale_code = world_log_append(st, &a, &r, &e2) < 0 ? e2.code : 0;
			long long last;
			char lh[WORLD_REF_SIZE];
			h->stale_head_kept = world_log_last(st, &last, lh, &err) == 0 && last == N && !strcmp(lh, h->hash[N - 1]);
		}
	}
	/* a registry head: set from none, then a second writer that saw none is refused */
	{
		long long rev = 0;
		struct world_err e2 = { 0, "" };
		h->reg_ok = world_registry_head_cas(st, "test-registry", NULL, f.src, &rev, &err) == 0 && rev == 1;
		h->reg_stale_code = world_registry_head_cas(st, "test-registry", NULL, h->blob, &rev, &e2) < 0 ? e2.code : 0;
	}
	/* sessions: only the credential's hash is stored */
	{
		struct world_session s;
		char ch[WORLD_REF_SIZE];
		int n = 0, count = 0;
		struct world_err e2 = { 0, "" };
		h->sess_ok = world_session_put(st, "credential-one-0123456789", "ep1", "{\"g\":1}", 4102444800LL, &err) == 0 &&
		             world_session_put(st, "credential-two-0123456789", "ep2", "{\"g\":2}", 4102444800LL, &err) == 0 &&
		             world_session_get(st, "credential-one-0123456789", &s, &err) == 0;
		if (h->sess_ok) {
			h->sess_ok = !strcmp(s.episode, "ep1") && !strcmp(s.grants_json, "{\"g\":1}") && s.expires_at == 4102444800LL;
			world_session_free(&s);
		}
		if (world_session_list(st, count_session, &n, &err) == 0) h->sess_list = n;
		h->revoke_ok = world_hash_ref("credential-one-0123456789", 25, ch, &err) == 0 &&
		               world_session_revoke(st, ch, NULL, &count, &err) == 0 && count == 1;
		h->sess_gone_code = world_session_get(st, "credential-one-0123456789", &s, &e2) < 0 ? e2.code : 0;
	}
	/* the journal: an invocation committed once, a second commit of the
	 * same task id refused */
	{
		struct world_journal_intent in = { .kind = "invocation", .subject = "mcp:ep1:task-1", .episode = "ep1",
		                                   .ref = h->rec[0] };
		long long id1 = 0, id2 = 0;
		struct world_journal_row row;
		struct world_err e2 = { 0, "" };
		h->intent_ok = world_journal_intent(st, &in, &id1, &err) == 0 && world_journal_intent(st, &in, &id2, &err) == 0 &&
		               id1 > 0 && id2 > id1;
		h->commit_ok = h->intent_ok && world_journal_outcome(st, id1, "committed", h->rec[0], &err) == 0;
		h->second_commit_code = world_journal_outcome(st, id2, "committed", h->rec[0], &e2) < 0 ? e2.code : 0;
		h->find_ok = world_journal_find(st, "invocation", "mcp:ep1:task-1", &row, &err) == 0 && row.intent_id == id1 &&
		             !strcmp(row.status, "committed") && !strcmp(row.outcome_ref, h->rec[0]);
	}
	/* inside one transaction: a task id committed a second time, and a
	 * credential registered twice: refused in the store's own words on
	 * both engines (on PostgreSQL at the COMMIT, the pipeline's answer) */
	{
		struct world_journal_intent in = { .kind = "invocation", .subject = "mcp:ep1:task-2", .episode = "ep1",
		                                   .ref = h->rec[0] };
		long long id1 = 0, id2 = 0;
		struct world_err e2 = { 0, "" };
		int rc = world_store_begin(st, &e2);
		/* run flat, as the group commit's first run is (no savepoint of
		 * its own: on PostgreSQL the outcome's INSERT is not waited for) */
		if (rc == 0) world_store_flat_begin(st);
		if (rc == 0) rc = world_journal_intent(st, &in, &id1, &e2);
		if (rc == 0) rc = world_journal_outcome(st, id1, "committed", h->rec[0], &e2);
		if (rc == 0) rc = world_journal_intent(st, &in, &id2, &e2);
		snprintf(h->txn_commit_want, sizeof h->txn_commit_want,
		         "journal outcome: invocation mcp:ep1:task-2 already committed (intent %lld not committed)", id2);
		if (rc == 0) rc = world_journal_outcome(st, id2, "committed", h->rec[0], &e2);
		world_store_flat_end(st);
		h->txn_commit_code = in_txn(st, rc, &e2, h->txn_commit_msg, sizeof h->txn_commit_msg);
		struct world_err e3 = { 0, "" };
		rc = world_store_begin(st, &e3);
		if (rc == 0) rc = world_session_put(st, "credential-three-0123456789", "ep3", "[]", 4102444800LL, &e3);
		if (rc == 0) rc = world_session_put(st, "credential-three-0123456789", "ep3", "[]", 4102444800LL, &e3);
		h->txn_sess_code = in_txn(st, rc, &e3, h->txn_sess_msg, sizeof h->txn_sess_msg);
	}
	/* episodes: membership (the entry of a member record is the episode's) and usage */
	{
		const char *refs[] = { h->rec[1], h->rec[1], NULL, h->blob };
		int m1 = 0, m2 = 0, e = 0;
		long long calls = 0, bytes = 0;
		h->member_ok = world_episode_objects_add(st, "ep1", refs, 4, &err) == 0 &&
		               world_episode_has_object(st, "ep1", h->blob, &m1, &err) == 0 && m1 == 1 &&
		               world_episode_has_object(st, "ep2", h->blob, &m2, &err) == 0 && m2 == 0 &&
		               world_episode_has_entry(st, "ep1", 2, &e, &err) == 0 && e == 1;
		h->usage_ok = world_episode_usage_add(st, "ep1", 2, 300, &err) == 0 &&
		              world_episode_usage_add(st, "ep1", 1, 20, &err) == 0 &&
		              world_episode_usage_get(st, "ep1", &calls, &bytes, &err) == 0 && calls == 3 && bytes == 320;
		/* an overflowing sum: alone, and inside the caller's transaction
		 * (a pipeline answers the write at the COMMIT) */
		struct world_err e4 = { 0, "" };
		h->usage_over_code = world_episode_usage_add(st, "ep1", 0, 9223372036854775807LL, &e4) < 0 ? e4.code : 0;
		snprintf(h->usage_over_msg, sizeof h->usage_over_msg, "%s", e4.msg);
		struct world_err e5 = { 0, "" };
		int rc = world_store_begin(st, &e5);
		if (rc == 0) rc = world_episode_usage_add(st, "ep1", 9223372036854775807LL, 0, &e5);
		h->txn_usage_code = in_txn(st, rc, &e5, h->txn_usage_msg, sizeof h->txn_usage_msg);
		h->usage_kept = world_episode_usage_get(st, "ep1", &calls, &bytes, &err) == 0 && calls == 3 && bytes == 320;
	}
	if (err.msg[0] && !(h->chain_ok && h->sess_ok && h->commit_ok && h->member_ok && h->usage_ok))
		diag("%s: last error: %s", what, err.msg);
	h->ok = 1;
}

/* One append on st of a new call on top of whatever the head is. */
static int append_next(struct world_store *st, const char *tag, long long *idx_out, char hash[WORLD_REF_SIZE],
                       struct world_err *err)
{
	struct world_log_result r;
	if (sfix_append_unarchived(st, "race", tag, "test_pgstore", &r, err) < 0) return -1;
	*idx_out = r.entry_index;
	memcpy(hash, r.entry_hash, WORLD_REF_SIZE);
	return 0;
}

/* Two writers on one database: A's transaction reads the head, B appends
 * and commits meanwhile, A's append on what it read must not move the
 * head (SERIALIZABLE: a serialization failure, or the CAS's conflict);
 * run again from the head as it now is, it commits after B's. */
static void race(struct world_store *a, const char *uri)
{
	struct world_store *b = NULL;
	struct world_err err = { 0, "" }, ea = { 0, "" };
	if (world_store_open(uri, WORLD_STORE_WRITER, &b, &err) < 0) {
		for (int i = 0; i < 4; i++) ok(0, "second writer: %s", err.msg);
		return;
	}
	long long idx0 = 0, ib = 0, ia = 0;
	char h0[WORLD_REF_SIZE], hb[WORLD_REF_SIZE], ha[WORLD_REF_SIZE], last[WORLD_REF_SIZE];
	int began = world_store_begin(a, &ea) == 0 && world_log_last(a, &idx0, h0, &ea) == 0;
	int bok = append_next(b, "b", &ib, hb, &err) == 0;
	ok(began && bok && ib == idx0 + 1, "B appended entry %lld while A's transaction was open: %s%s", ib, err.msg, ea.msg);
	/* A goes on from the head it read, in its transaction */
	int arc = append_next(a, "a", &ia, ha, &ea);
	int acode = ea.code;
	if (arc == 0) arc = world_store_commit(a, &ea);
	else world_store_rollback(a);
	ok(arc < 0 && (acode == WX_LOCKED || acode == WX_CONFLICT),
	   "A's append on the head it read is refused (exit %d: %s)", acode, ea.msg);
	long long li = 0;
	int lok = world_log_last(b, &li, last, &err) == 0;
	ok(lok && li == ib && !strcmp(last, hb), "... and the head is B's entry %lld (read: %lld)", ib, li);
	int again = append_next(a, "a2", &ia, ha, &err) == 0;
	ok(again && ia == ib + 1, "A run again from the head as it is: entry %lld: %s", ia, err.msg);
	world_store_close(b);
}

struct usage_job {
	struct world_store *st;
	int rc, code;
	char msg[1024];
};

static void *usage_thread(void *arg)
{
	struct usage_job *j = arg;
	struct world_err err = { 0, "" };
	j->rc = world_episode_usage_add(j->st, "ep-retry", 10, 10, &err);
	j->code = err.code;
	snprintf(j->msg, sizeof j->msg, "%s", err.msg);
	return NULL;
}

/* A serialization failure forced inside one write: A's transaction has
 * updated the usage row and holds it; B's usage add (its own
 * transaction) read the row and waits on A's lock (seen in
 * pg_stat_activity, not guessed by a sleep); A commits, so B's update
 * fails with 40001 and, run again whole, adds to A's value. The control
 * (retries < 0: WORLD_TEST_PG_RETRIES=0 in the environment): B fails
 * with exit 5 and A's value stands. Returns B's result. */
static void forced_retry(const char *uri, int retries_off, long long *calls, struct usage_job *job)
{
	struct world_store *a = NULL, *b = NULL;
	struct world_err err = { 0, "" };
	struct wdb *watch = NULL;
	static const struct wdb_opts wo = { 0 };
	*calls = -1;
	memset(job, 0, sizeof *job);
	job->rc = -2;
	if (retries_off) setenv("WORLD_TEST_PG_RETRIES", "0", 1);
	else unsetenv("WORLD_TEST_PG_RETRIES");
	if (world_store_open(uri, WORLD_STORE_WRITER, &a, &err) < 0 || world_store_open(uri, WORLD_STORE_WRITER, &b, &err) < 0 ||
	    wdb_open(uri, &wo, &watch, &err) < 0 || wdb_exec(watch, "DELETE FROM episode_usage WHERE episode = 'ep-retry'", &err) < 0 ||
	    world_episode_usage_add(a, "ep-retry", 1, 1, &err) < 0 || world_store_begin(a, &err) < 0 ||
	    world_episode_usage_add(a, "ep-retry", 1, 1, &err) < 0) {
		diag("forced retry: set-up: %s", err.msg);
		goto out;
	}
	job->st = b;
	pthread_t t;
	if (pthread_create(&t, NULL, usage_thread, job) != 0) {
		diag("forced retry: pthread_create failed");
		world_store_rollback(a);
		goto out;
	}
	/* until B waits on A's row lock (bounded: 3000 looks 10 ms apart) */
	int waiting = 0;
	for (int i = 0; i < 3000 && !waiting; i++) {
		struct wdb_stmt *q = NULL;
		if (wdb_prepare(watch, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'", &q, &err) == 0 &&
		    wdb_step(q, &err) == WDB_ROW)
			waiting = wdb_column_int64(q, 0, NULL) > 0;
		wdb_finalize(q);
		if (!waiting) usleep(10000);
	}
	if (!waiting) diag("forced retry: B was never seen waiting on A's lock");
	if (world_store_commit(a, &err) < 0) diag("forced retry: A's commit: %s", err.msg);
	pthread_join(t, NULL);
	long long c = 0, by = 0;
	if (world_episode_usage_get(a, "ep-retry", &c, &by, &err) == 0) *calls = c;
out:
	unsetenv("WORLD_TEST_PG_RETRIES");
	wdb_close(watch);
	world_store_close(a);
	world_store_close(b);
}

static void free_history(struct history *h)
{
	for (int i = 0; i < N; i++) free(h->json[i]);
}

static void check_history(const struct history *h, const char *what)
{
	ok(h->ok, "%s: the history was written", what);
	ok(h->blob_ok, "%s: an object of every byte value reads back byte for byte", what);
	ok(h->chain_ok, "%s: %d appends read back, each re-verified, each prevEntryHash the hash before it", what, N);
	is_int(h->stale_code, WX_CONFLICT, "%s: an append on a stale head is WX_CONFLICT", what);
	ok(h->stale_head_kept, "%s: ... and the head is still entry %d", what, N);
	ok(h->reg_ok, "%s: a registry head set from none (revision 1)", what);
	is_int(h->reg_stale_code, WX_CONFLICT, "%s: a second writer that saw no head is WX_CONFLICT", what);
	ok(h->sess_ok, "%s: sessions put and read back by credential", what);
	is_int(h->sess_list, 2, "%s: the session list has both", what);
	ok(h->revoke_ok, "%s: a session revoked by its hash (one row)", what);
	is_int(h->sess_gone_code, WX_NOT_FOUND, "%s: ... and is gone", what);
	ok(h->intent_ok, "%s: two intents for one task id, ids ascending", what);
	ok(h->commit_ok, "%s: the first committed", what);
	is_int(h->second_commit_code, WX_CONFLICT, "%s: a second commit of the task id is WX_CONFLICT", what);
	ok(h->find_ok, "%s: the journal finds the committed intent and its outcome", what);
	is_int(h->txn_commit_code, WX_CONFLICT, "%s: in one transaction, a second commit of a task id is WX_CONFLICT", what);
	ok(!strcmp(h->txn_commit_msg, h->txn_commit_want), "%s: ... in the store's words: %s", what, h->txn_commit_msg);
	is_int(h->txn_sess_code, WX_CONFLICT, "%s: in one transaction, a credential put twice is WX_CONFLICT", what);
	ok(!strcmp(h->txn_sess_msg, "session put: credential already registered"), "%s: ... in the store's words: %s",
	   what, h->txn_sess_msg);
	ok(h->member_ok, "%s: episode membership (idempotent, NULL skipped) and the member record's entry", what);
	ok(h->usage_ok, "%s: episode usage adds up", what);
	is_int(h->usage_over_code, WX_BAD_INPUT, "%s: an overflowing usage sum is WX_BAD_INPUT", what);
	ok(!strcmp(h->usage_over_msg, "episode usage ep1: adding 0 calls, 9223372036854775807 bytes overflows; nothing changed"),
	   "%s: ... in the store's words: %s", what, h->usage_over_msg);
	is_int(h->txn_usage_code, WX_BAD_INPUT, "%s: in one transaction, an overflowing usage sum is WX_BAD_INPUT", what);
	ok(!strcmp(h->txn_usage_msg, "episode usage ep1: adding 9223372036854775807 calls, 0 bytes overflows; nothing changed"),
	   "%s: ... in the store's words: %s", what, h->txn_usage_msg);
	ok(h->usage_kept, "%s: ... and the usage is unchanged", what);
}

int main(void)
{
	char dir[] = "/tmp/test_pgstore.XXXXXX";
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: failed\n");
		return 1;
	}
	char path[256];
	snprintf(path, sizeof path, "%s/s.db", dir);
	struct world_err err = { 0, "" };
	struct world_store *lite = NULL;
	ok(world_store_open(path, WORLD_STORE_WRITER, &lite, &err) == 0, "SQLite store opened: %s", err.msg);
	struct history hl, hp;
	memset(&hp, 0, sizeof hp);
	if (lite) history(lite, &hl, "SQLite");
	check_history(&hl, "SQLite");
	/* the control of the comparison below: distinct calls, distinct hashes */
	ok(strcmp(hl.hash[0], hl.hash[1]) != 0 && strcmp(hl.world[0], hl.world[1]) != 0,
	   "control: two entries of one history have distinct hashes and worlds");
	world_store_close(lite);

	const char *uri = getenv("WORLD_TEST_PG_URI");
	/* a URI without the driver: one line naming the reason */
	{
		struct world_store *st = NULL;
		struct world_err e2 = { 0, "" };
		int rc = world_store_open("postgresql://nobody@127.0.0.1:1/none", WORLD_STORE_WRITER, &st, &e2);
		ok(rc < 0 && strstr(e2.msg, "without the PostgreSQL driver"),
		   "a postgresql:// store in a program without the driver is refused: %s", e2.msg);
	}
#ifdef WORLD_HAVE_PG
	wdb_pg_enable();
#else
	uri = NULL; /* built --without-postgresql */
#endif
	if (!uri || !*uri) {
		const char *why = getenv("WORLD_TEST_PG_SKIP") ? getenv("WORLD_TEST_PG_SKIP") : "WORLD_TEST_PG_URI is not set";
		/* the PostgreSQL half's assertions: open, name, the history's 17, three comparisons, the reopen */
		for (int i = 0; i < 2 + 17 + 3 + 4 + 4 + 1; i++) skip(why, "the PostgreSQL half");
	} else {
		struct world_store *pg = NULL;
		ok(world_store_open(uri, WORLD_STORE_WRITER, &pg, &err) == 0, "PostgreSQL store opened (schema created): %s",
		   err.msg);
		ok(pg && !strstr(world_store_path(pg), "?"), "it is named without its URI's query: %s",
		   pg ? world_store_path(pg) : "");
		if (pg) history(pg, &hp, "PostgreSQL");
		check_history(&hp, "PostgreSQL");
		int same_refs = !strcmp(hl.src, hp.src) && !strcmp(hl.blob, hp.blob);
		int same_hash = 1, same_json = 1;
		for (int i = 0; i < N; i++) {
			same_refs &= !strcmp(hl.rec[i], hp.rec[i]) && !strcmp(hl.world[i], hp.world[i]);
			same_hash &= !strcmp(hl.hash[i], hp.hash[i]);
			same_json &= hl.json[i] && hp.json[i] && hl.json_len[i] == hp.json_len[i] &&
			             !memcmp(hl.json[i], hp.json[i], hl.json_len[i]);
		}
		ok(same_refs, "the same objects' refs and worlds on both backends");
		ok(same_hash, "the same %d entry hashes on both backends (the last: %s)", N, hp.hash[N - 1]);
		ok(same_json, "every entry's canonical JSON byte-identical on both backends");
		/* these two make transactions collide on purpose: without the
		 * store's write queue (queue.c), which would make B wait for A */
		setenv("WORLD_TEST_PG_NO_QUEUE", "1", 1);
		race(pg, uri);
		world_store_close(pg);
		long long calls;
		struct usage_job job;
#ifdef WORLD_TEST_HOOKS
		forced_retry(uri, 1, &calls, &job);
		ok(job.rc < 0 && job.code == WX_LOCKED && strstr(job.msg, "could not serialize"),
		   "control: with the retry off, B's write behind A's fails with exit 5 (%s)", job.msg);
		is_int(calls, 2, "control: ... and the usage is A's (2 calls)");
#else
		skip("the retry is turned off only in test builds (configure --enable-test-hooks)", "control: retry off");
		skip("the retry is turned off only in test builds (configure --enable-test-hooks)", "control: A's usage");
#endif
		forced_retry(uri, 0, &calls, &job);
		ok(job.rc == 0, "a serialization failure inside B's write: run again whole, it commits (%s)", job.msg);
		is_int(calls, 12, "... on top of A's: 12 calls");
		unsetenv("WORLD_TEST_PG_NO_QUEUE");
		/* opened again: the schema is found, not made twice, and the history is there */
		pg = NULL;
		long long last = 0;
		char lh[WORLD_REF_SIZE] = "";
		ok(world_store_open(uri, WORLD_STORE_READER, &pg, &err) == 0 && world_log_last(pg, &last, lh, &err) == 0 &&
		       last == N + 2,
		   "reopened read-only: the schema found, the head is entry %d: %s", N + 2, err.msg);
		world_store_close(pg);
	}
	free_history(&hl);
	free_history(&hp);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("could not remove %s", dir);
	done_testing();
}
