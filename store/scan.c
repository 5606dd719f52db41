/* store/scan.c: see scan.h. */
#include "store/scan.h"
#include "store/store_internal.h"
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct budget {
	long long max_rows, rows;
	double max_seconds, t0;
};

static int spent(struct budget *b)
{
	if (b->max_rows > 0 && b->rows >= b->max_rows) return 1;
	if (b->max_seconds > 0 && now_s() - b->t0 >= b->max_seconds) return 1;
	return 0;
}

int world_scan(struct world_store *st, const struct world_scan_opts *opts, FILE *out, struct world_scan_result *res,
               struct world_err *err)
{
	memset(res, 0, sizeof *res);
	struct budget b = { opts->max_rows, 0, opts->max_seconds, now_s() };
	long long from = opts->resume_log_index > 1 ? opts->resume_log_index : 1;
	const char *wfrom = opts->resume_world_ref && *opts->resume_world_ref ? opts->resume_world_ref : WORLD_SCAN_ZERO_REF;
	if (opts->resume_log_index < 0)
		return werr(err, WX_BAD_INPUT, "scan: resume log index %lld is negative", opts->resume_log_index);
	if (world_ref_parse(wfrom, "resume world ref", NULL, err) < 0) return -1;
	if (opts->max_rows < 0 || opts->max_seconds < 0) return werr(err, WX_BAD_INPUT, "scan: negative budget");

	sqlite3_stmt *logs = NULL, *worlds = NULL, *obj = NULL, *entry = NULL;
	int rc = -1;
	/* One read transaction: the scan sees one consistent snapshot (inside a
	 * caller's group it sees that group's view). */
	int own_txn = !st->in_txn;
	if (own_txn && ws_exec(st, "BEGIN", err) < 0) return -1;
	if (ws_prep(st, "SELECT " WS_LOG_COLS " FROM log_entries WHERE entry_index >= ? ORDER BY entry_index", &logs, err) < 0 ||
	    ws_prep(st, "SELECT " WS_WORLD_COLS " FROM worlds WHERE ref >= ? ORDER BY ref", &worlds, err) < 0 ||
	    ws_prep(st, "SELECT payload FROM objects WHERE ref = ?", &obj, err) < 0 ||
	    ws_prep(st, "SELECT entry_hash FROM log_entries WHERE entry_index = ?", &entry, err) < 0)
		goto done;

	/* the previous entry's hash, for the chain check at the resume point */
	char prev_hash[WORLD_REF_SIZE] = "";
	if (from > 1) {
		sqlite3_bind_int64(entry, 1, from - 1);
		if (sqlite3_step(entry) == SQLITE_ROW) ws_col_ref(entry, 0, prev_hash);
		sqlite3_reset(entry);
	}
	long long expect = from;
	int log_done = 0;
	sqlite3_bind_int64(logs, 1, from);
	for (;;) {
		int s = sqlite3_step(logs);
		if (s == SQLITE_DONE) { log_done = 1; break; }
		if (s != SQLITE_ROW) { ws_sqlerr(st, 0, "scan log_entries", err); goto done; }
		struct ws_log_row r;
		ws_log_row_read(logs, &r);
		if (spent(&b)) { expect = r.index; break; }
		b.rows++;
		res->log_rows++;
		res->bytes_hashed += r.json_len;
		const char *bad = ws_log_row_check(&r);
		if (!bad && r.index != expect) bad = "entryIndex";
		if (!bad && r.index == 1 && r.prev) bad = "prevEntryHash";
		if (!bad && r.index > 1 && (!r.prev || strcmp(r.prev, prev_hash) != 0)) bad = "prevEntryHash";
		if (!bad && ws_object_check(st, obj, r.tref, &res->bytes_hashed)) bad = "transitionRef";
		if (bad) {
			res->holes++;
			if (out) fprintf(out, "integrity_hole table=log_entries index=%lld field=%s\n", r.index, bad);
		}
		snprintf(prev_hash, sizeof prev_hash, "%s", r.hash ? r.hash : "");
		expect = r.index + 1;
	}
	res->resume_log_index = expect;
	snprintf(res->resume_world_ref, sizeof res->resume_world_ref, "%s", wfrom);
	int worlds_done = 0;
	if (log_done) {
		sqlite3_bind_text(worlds, 1, wfrom, -1, SQLITE_STATIC);
		for (;;) {
			int s = sqlite3_step(worlds);
			if (s == SQLITE_DONE) { worlds_done = 1; break; }
			if (s != SQLITE_ROW) { ws_sqlerr(st, 0, "scan worlds", err); goto done; }
			struct ws_world_row r;
			ws_world_row_read(worlds, &r);
			if (spent(&b)) {
				snprintf(res->resume_world_ref, sizeof res->resume_world_ref, "%s", r.ref ? r.ref : "");
				break;
			}
			b.rows++;
			res->world_rows++;
			res->bytes_hashed += r.json_len;
			const char *bad = ws_world_row_check(&r);
			if (!bad) {
				char h[WORLD_REF_SIZE] = "";
				sqlite3_reset(entry);
				sqlite3_bind_int64(entry, 1, r.revision);
				if (sqlite3_step(entry) == SQLITE_ROW) ws_col_ref(entry, 0, h);
				sqlite3_reset(entry);
				if (strcmp(h, r.log_head) != 0) bad = "logHead";
			}
			if (!bad && ws_object_check(st, obj, r.state_root, &res->bytes_hashed)) bad = "stateRoot";
			if (bad) {
				res->holes++;
				if (out) fprintf(out, "integrity_hole table=worlds ref=%s field=%s\n", r.ref ? r.ref : "", bad);
			}
		}
	}
	res->complete = log_done && worlds_done;
	if (!res->complete && out)
		fprintf(out, "integrity_scan_incomplete log_rows=%lld world_rows=%lld holes=%lld resume_log_index=%lld "
		             "resume_world_ref=%s\n",
		        res->log_rows, res->world_rows, res->holes, res->resume_log_index, res->resume_world_ref);
	rc = 0;
done:
	sqlite3_finalize(logs);
	sqlite3_finalize(worlds);
	sqlite3_finalize(obj);
	sqlite3_finalize(entry);
	struct world_err ig;
	if (own_txn) ws_exec(st, "COMMIT", &ig);
	return rc;
}
