/* tests/store/test_growth.c: costs that grow with the work, counted, not
 * timed. Two stores are built the same way, of N and 8N committed calls
 * (tests/store/sbulk.h: journal, membership and usage rows as the
 * coordinator writes them) with N/10 and 8N/10 sessions; on each, the
 * SQLite work of an operation is the sum of its statements' virtual-machine
 * steps (tests/store/swork.h). Whole-store operations (the full integrity
 * scan, session list) may grow at most 10x for 8x the rows (linear is 8x, a
 * quadratic path 64x); per-entry operations (a pure call's commit through
 * the coordinator, `why` of its output -- resolve and provenance walk --
 * and `replay` of it) at most 2x. The full scan is counted twice: as it
 * runs (streaming each table once, scan.c stream_scan) and by the indexed
 * path (opts.indexed: what a budgeted or resumed scan does). The control:
 * with worlds_by_revision dropped from both stores, the indexed path grows
 * more than 10x (what it did before the index: each entry read the whole
 * worlds table). The budget check of an effect (world_journal_spent) in an
 * episode of N and 8N effects is per entry too (the running totals,
 * store/db_sqlite_schema.c); its control, a store without them read by a reader,
 * sums the journal and grows with the episode. */
#include "coordinator/provenance.h"
#include "coordinator/replay.h"
#include "store/scan.h"
#include "tests/coordinator/ctest.h"
#include "tests/store/sbulk.h"
#include "tests/store/swork.h"
#include "tests/tap.h"
#include <sqlite3.h>

#define N 500

enum { SCAN, SCAN_INDEXED, SCAN_BUDGETED, SESSIONS, COMMIT, WHY, REPLAY, BUDGET, NOPS };
static const char *const op_name[NOPS] = { "full scan (streaming)", "full scan (indexed path)",
	                                   "a budgeted scan over the whole store (indexed path, objects window)",
	                                   "session list", "a pure call's commit", "why (resolve + walk)", "replay",
	                                   "an effect's budget check in an episode of N effects (world_journal_spent)" };
static const int whole_store[NOPS] = { 1, 1, 1, 1, 0, 0, 0, 0 };

struct run {
	struct ctest t;
	long long entries;
	char out_ref[WORLD_REF_SIZE];
	struct swork work[NOPS], scan_noindex, budget_sum;
};

/* n effect intents of one episode, effect and scope, cost 1 each (what an
 * episode of n effectful calls leaves in the journal) */
static void add_effects(struct world_store *st, long long n)
{
	struct world_err e;
	if (world_store_begin(st, &e) < 0) bail("begin: %s", e.msg);
	for (long long i = 0; i < n; i++) {
		char subject[64];
		snprintf(subject, sizeof subject, "cli:spender:c%lld/e1", i);
		struct world_journal_intent ji = { .kind = "effect", .subject = subject, .episode = "spender",
			                           .effect = "Workspace.Read", .scope = "worktree", .cost = 1 };
		long long id;
		if (world_journal_intent(st, &ji, &id, &e) < 0) bail("intent: %s", e.msg);
	}
	if (world_store_commit(st, &e) < 0) bail("commit: %s", e.msg);
}

static long long spent_of(struct world_store *st, struct swork *w)
{
	struct world_err e;
	long long spent = -1;
	swork_attach(world_store_db(st), w);
	int rc = world_journal_spent(st, "spender", "Workspace.Read", "worktree", &spent, &e);
	sqlite3_trace_v2(world_store_db(st), 0, NULL, NULL);
	if (rc < 0) bail("journal spent: %s", e.msg);
	return spent;
}

static int count_session(void *ctx, const struct world_session *s)
{
	(void)s;
	(*(long long *)ctx)++;
	return 0;
}

/* A store of n bulk calls, n/10 sessions and the transition t.seen. */
static void build(struct run *r, long long n)
{
	struct ctest *t = &r->t;
	const char *tmp = getenv("TMPDIR");
	snprintf(t->dir, sizeof t->dir, "%s/world-growth.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(t->dir)) bail("mkdtemp");
	snprintf(t->db, sizeof t->db, "%s/world.db", t->dir);
	struct world_err e;
	/* built without fsync (the bulk load); the counts do not depend on it */
	if (world_store_open(t->db, WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, &t->st, &e) < 0) bail("open: %s", e.msg);
	const char *bin = getenv("AILANG_LITE");
	if (!bin) bail("AILANG_LITE is not set (run from make check)");
	long long epoch;
	int created;
	if (world_archive_interpreter(t->st, bin, &t->interp, &e) < 0 ||
	    registry_epoch_bootstrap(t->st, &t->interp, &epoch, &created, &e) < 0)
		bail("archive/epoch: %s", e.msg);
	ctest_register(t, "t.seen", ctest_seen_source, "[]", "null", NULL);
	struct sbulk b = { .episode = "bulk" };
	if (sbulk_init(t->st, t->dir, &b, &e) < 0 || sbulk_fill(t->st, &b, n, 500, &e) < 0) bail("fill: %s", e.msg);
	const char *const none[] = { "Test.Echo=s:1", NULL };
	for (long long i = 0; i < n / 10; i++) {
		char cred[65], ep[32];
		snprintf(ep, sizeof ep, "ep%lld", i);
		ctest_session(t, ep, none, 3600, cred);
	}
	add_effects(t->st, n);
	r->entries = b.last;
}

static void measure(struct run *r)
{
	struct ctest *t = &r->t;
	struct world_err e;
	sqlite3 *db = world_store_db(t->st);
	const char *const none[] = { "Test.Echo=s:1", NULL };
	char cred[65];
	ctest_session(t, "growth", none, 3600, cred);
	struct coord_config cfg = { .store = t->st, .written_by = "test/growth" };
	sup_limits_default(&cfg.limits);
	struct coordinator *c = coord_new(&cfg, &e);
	if (!c) bail("coord_new: %s", e.msg);
	struct coord_session *s;
	if (coord_session_open(c, cred, &s, &e) < 0) bail("session: %s", e.msg);
	struct coord_result res;
	/* one call first, so the measured one finds nothing to set up */
	struct coord_call call = { .session = s, .channel = "cli", .skill_id = "t.seen", .task_id = "warm",
		                   .args = "{\"a\":1}", .args_len = 7 };
	if (coord_call(c, &call, &res, &e) < 0) bail("warm-up call: %s", e.msg);
	coord_result_free(&res);
	call.task_id = "measured";
	call.args = "{\"a\":2}";
	swork_attach(db, &r->work[COMMIT]);
	int crc = coord_call(c, &call, &res, &e);
	sqlite3_trace_v2(db, 0, NULL, NULL);
	if (crc < 0) bail("call: %s", e.msg);
	if (world_hash_ref(res.output, res.output_len, r->out_ref, &e) < 0) bail("hash: %s", e.msg);
	long long entry = res.entry_index;
	coord_result_free(&res);
	coord_session_free(s);
	coord_free(c);

	/* why OUTPUT: the output's entry (by worlds_by_state_root), then the walk */
	swork_attach(db, &r->work[WHY]);
	long long idx = 0;
	struct prov_walk w;
	int wrc = prov_resolve(t->st, r->out_ref, &idx, &e) == 0 ? prov_walk(t->st, idx, NULL, 0, &w, &e) : -1;
	sqlite3_trace_v2(db, 0, NULL, NULL);
	ok(wrc == 0 && idx == entry && w.broken == 0, "%lld entries: why of the call's output walks entry %lld clean",
	   r->entries, entry);
	if (wrc == 0) prov_walk_free(&w);

	struct sup_limits lim;
	sup_limits_default(&lim);
	struct replayer *rp = replay_new(t->st, &lim, &e);
	if (!rp) bail("replay_new: %s", e.msg);
	struct replay_report rep;
	swork_attach(db, &r->work[REPLAY]);
	int rrc = replay_entry(rp, entry, &rep, &e);
	sqlite3_trace_v2(db, 0, NULL, NULL);
	ok(rrc == 0 && !rep.diverged, "%lld entries: replay of entry %lld identical", r->entries, entry);
	replay_free(rp);

	struct world_scan_opts so = { .max_rows = 0 };
	struct world_scan_result sr;
	swork_attach(db, &r->work[SCAN]);
	int src = world_scan(t->st, &so, NULL, &sr, &e);
	sqlite3_trace_v2(db, 0, NULL, NULL);
	ok(src == 0 && sr.complete && sr.holes == 0 && sr.log_rows == entry, "%lld entries: the full scan is complete and clean",
	   r->entries);
	/* the indexed path (a budgeted or resumed scan's, the daemon's start-up scan's), over the whole store */
	struct world_scan_opts io = { .max_rows = 0, .indexed = 1 };
	struct world_scan_result ir;
	swork_attach(db, &r->work[SCAN_INDEXED]);
	src = world_scan(t->st, &io, NULL, &ir, &e);
	sqlite3_trace_v2(db, 0, NULL, NULL);
	ok(src == 0 && ir.complete && ir.holes == 0 && ir.log_rows == sr.log_rows && ir.world_rows == sr.world_rows,
	   "%lld entries: the indexed path's full scan is complete and clean, the same rows", r->entries);
	/* a budget the store fits in: the indexed path with its objects window (the daemon's start-up scan) */
	struct world_scan_opts bo = { .max_rows = 1LL << 40 };
	swork_attach(db, &r->work[SCAN_BUDGETED]);
	src = world_scan(t->st, &bo, NULL, &ir, &e);
	sqlite3_trace_v2(db, 0, NULL, NULL);
	ok(src == 0 && ir.complete && ir.holes == 0 && ir.log_rows == sr.log_rows && ir.world_rows == sr.world_rows,
	   "%lld entries: a budgeted scan over the whole store is complete and clean, the same rows", r->entries);

	long long listed = 0;
	swork_attach(db, &r->work[SESSIONS]);
	int lrc = world_session_list(t->st, count_session, &listed, &e);
	sqlite3_trace_v2(db, 0, NULL, NULL);
	ok(lrc == 0 && listed == r->entries / 10 + 1, "%lld entries: session list lists %lld sessions", r->entries, listed);

	long long spent = spent_of(t->st, &r->work[BUDGET]);
	is_int(spent, r->entries, "%lld entries: the episode's %lld effects spent %lld (the running total)", r->entries,
	       r->entries, spent);

	/* the control: the indexed path without the index on worlds(revision) */
	char *m = NULL;
	if (sqlite3_exec(db, "DROP INDEX worlds_by_revision", NULL, NULL, &m) != SQLITE_OK) bail("drop index: %s", m);
	swork_attach(db, &r->scan_noindex);
	src = world_scan(t->st, &io, NULL, &sr, &e);
	sqlite3_trace_v2(db, 0, NULL, NULL);
	ok(src == 0 && sr.complete && sr.holes == 0, "%lld entries, no worlds_by_revision: the scan still complete and clean",
	   r->entries);

	/* the budget's control: a store without the running totals (as no
	 * writer of this build left it), read by a fresh reader: the sum */
	if (sqlite3_exec(db, "DROP TRIGGER journal_spent_add; DROP TABLE journal_spent_total", NULL, NULL, &m) != SQLITE_OK)
		bail("drop totals: %s", m);
	struct world_store *rd;
	if (world_store_open(t->db, WORLD_STORE_READER, &rd, &e) < 0) bail("reader: %s", e.msg);
	spent = spent_of(rd, &r->budget_sum);
	world_store_close(rd);
	is_int(spent, r->entries, "%lld entries, no running totals: a reader sums the journal to the same %lld", r->entries,
	       spent);
}

int main(void)
{
	static struct run small, big;
	build(&small, N);
	build(&big, 8 * N);
	measure(&small);
	measure(&big);
	is_int(big.entries, 8 * small.entries, "the stores hold %lld and %lld bulk calls", small.entries, big.entries);
	for (int i = 0; i < NOPS; i++) {
		double ratio = (double)big.work[i].vm / (double)(small.work[i].vm ? small.work[i].vm : 1);
		double limit = whole_store[i] ? 10.0 : 2.0;
		ok(small.work[i].vm > 0 && ratio <= limit,
		   "%s: %lld -> %lld VM steps (full-scan steps %lld -> %lld) for 8x the entries: %.2fx (%s: at most %.0fx)",
		   op_name[i], small.work[i].vm, big.work[i].vm, small.work[i].fullscan, big.work[i].fullscan, ratio,
		   whole_store[i] ? "whole store" : "one entry", limit);
	}
	double cr = (double)big.scan_noindex.vm / (double)(small.scan_noindex.vm ? small.scan_noindex.vm : 1);
	ok(cr > 10.0, "control: without worlds_by_revision the indexed path's full scan grows %.1fx (%lld -> %lld VM steps): over 10x",
	   cr, small.scan_noindex.vm, big.scan_noindex.vm);
	double br = (double)big.budget_sum.vm / (double)(small.budget_sum.vm ? small.budget_sum.vm : 1);
	ok(br > 4.0, "control: summed from the journal, the budget check grows %.1fx (%lld -> %lld VM steps): with the episode",
	   br, small.budget_sum.vm, big.budget_sum.vm);
	ctest_fini(&small.t);
	ctest_fini(&big.t);
	return done_testing();
}
