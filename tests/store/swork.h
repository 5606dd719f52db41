/* tests/store/swork.h: the work a store connection does, counted rather
 * than timed: every statement that finishes a run (step to the end, reset
 * or finalize) adds its SQLite virtual-machine steps and full-scan steps
 * (sqlite3_stmt_status VM_STEP and FULLSCAN_STEP, read and zeroed by an
 * SQLITE_TRACE_PROFILE callback) to a counter. Deterministic for a given
 * store and operation: the growth test compares them across store sizes. */
#ifndef WORLD_TESTS_SWORK_H
#define WORLD_TESTS_SWORK_H
#include <sqlite3.h>

struct swork {
	long long vm, fullscan, runs;
};

static inline int swork_profile(unsigned mask, void *ctx, void *p, void *x)
{
	(void)x;
	struct swork *w = ctx;
	if (mask == SQLITE_TRACE_PROFILE && p) {
		sqlite3_stmt *s = p;
		w->vm += sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, 1);
		w->fullscan += sqlite3_stmt_status(s, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1);
		w->runs++;
	}
	return 0;
}

/* Count db's statements into w from now on (w zeroed; the counters of
 * statements the connection keeps prepared are zeroed too, so work done
 * before is not counted). 0 or an SQLite code. */
static inline int swork_attach(sqlite3 *db, struct swork *w)
{
	w->vm = w->fullscan = w->runs = 0;
	for (sqlite3_stmt *s = sqlite3_next_stmt(db, NULL); s; s = sqlite3_next_stmt(db, s)) {
		sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, 1);
		sqlite3_stmt_status(s, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1);
	}
	return sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, swork_profile, w);
}
#endif
