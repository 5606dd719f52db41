/* store/journal.c: the journal and the budgets (store.h; docs/store.md,
 * Journal and sessions).
 *
 * Owns: an intent and its one outcome, the running total an effect's
 * budget check reads (the totals table each engine's schema keeps by
 * trigger), the intents left without an outcome, and the lookup of an
 * intent by kind and subject. */
#include "store/store_internal.h"
#include "common/canon.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void bind_opt(struct wdb_stmt *s, int i, const char *v)
{
	if (v) ws_bind_text(s, i, v);
	else ws_bind_null(s, i);
}

/* Keep intent id as this transaction knows it (struct ws_memo). */
static void memo_intent(struct world_store *st, long long id, const char *kind, const char *subject, int have)
{
	struct ws_memo *m = &st->memo;
	const size_t n = sizeof m->intents / sizeof *m->intents;
	if (!ws_memo_on(st) || id <= 0 || !kind || !subject || strlen(kind) >= sizeof m->intents[0].kind ||
	    strlen(subject) >= sizeof m->intents[0].subject)
		return;
	struct ws_memo_intent *e = &m->intents[m->nintent++ % n];
	for (size_t i = 0; i < n; i++)
		if (m->intents[i].id == id) e = &m->intents[i];
	e->id = id;
	e->have = have;
	snprintf(e->kind, sizeof e->kind, "%s", kind);
	snprintf(e->subject, sizeof e->subject, "%s", subject);
}

static struct ws_memo_intent *memo_intent_find(struct world_store *st, long long id)
{
	struct ws_memo *m = &st->memo;
	if (!ws_memo_on(st) || id <= 0) return NULL;
	for (size_t i = 0; i < sizeof m->intents / sizeof *m->intents; i++)
		if (m->intents[i].id == id) return &m->intents[i];
	return NULL;
}

int world_journal_expect(struct world_store *st, const long long *ids, size_t n, struct world_err *err)
{
	if (!ws_memo_on(st) || n == 0) return 0;
	if (n > 4) return werr(err, WX_USAGE, "journal expect: %zu intents, at most 4", n);
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(JOURNAL_INTENTS_GET4), &s, err) < 0) return -1;
	for (size_t i = 0; i < 4; i++) ws_bind_int(s, (int)i + 1, i < n ? ids[i] : 0);
	int rc;
	while ((rc = wdb_step(s, NULL)) == WDB_ROW)
		memo_intent(st, wdb_column_int64(s, 0, NULL), (const char *)wdb_column_text(s, 1),
		            (const char *)wdb_column_text(s, 2), wdb_column_int64(s, 3, NULL) != 0);
	ws_done(st, s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "journal read", err);
	return 0;
}

int world_journal_intent(struct world_store *st, const struct world_journal_intent *in, long long *id,
                         struct world_err *err)
{
	if (ws_need_writer(st, "journal intent", err) < 0) return -1;
	if (!in->kind || (strcmp(in->kind, "invocation") != 0 && strcmp(in->kind, "effect") != 0))
		return werr(err, WX_BAD_INPUT, "journal intent: kind \"%s\": want invocation or effect",
		            in->kind ? in->kind : "");
	if (ws_check_label("journal intent subject", in->subject, 1024, 1, err) < 0) return -1;
	if (in->cost < 0) return werr(err, WX_BAD_INPUT, "journal intent %s: cost %lld is negative", in->subject, in->cost);
	if (in->ref && world_ref_parse(in->ref, "journal intent ref", NULL, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(JOURNAL_INTENT), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, in->kind);
	ws_bind_text(s, 2, in->subject);
	bind_opt(s, 3, in->episode);
	bind_opt(s, 4, in->effect);
	bind_opt(s, 5, in->scope);
	ws_bind_int(s, 6, in->cost);
	bind_opt(s, 7, in->ref);
	ws_bind_int(s, 8, (int64_t)time(NULL));
	int rc = wdb_step(s, NULL);
	long long rid = 0;
	/* PostgreSQL's text says RETURNING id (sql.c); SQLite's counts it */
	if (rc == WDB_ROW) {
		rid = wdb_column_int64(s, 0, NULL);
		rc = WDB_DONE;
	} else if (rc == WDB_DONE) {
		rid = ws_last_insert_id(st);
	}
	ws_done(st, s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "journal intent insert", err);
	/* its outcome in this transaction need not read it back (struct ws_memo) */
	memo_intent(st, rid, in->kind, in->subject, 0);
	if (id) *id = rid;
	return 0;
}

static int outcome_body(struct world_store *st, long long intent_id, const char *status, const char *ref,
                        struct world_err *err)
{
	struct wdb_stmt *s;
	char kind[32], subject[1100];
	int rc, have;
	struct ws_memo_intent *m = memo_intent_find(st, intent_id);
	if (m) {
		/* inserted or read by this transaction, under its write lock */
		snprintf(kind, sizeof kind, "%s", m->kind);
		snprintf(subject, sizeof subject, "%s", m->subject);
		have = m->have;
		m->id = 0; /* it has an outcome now, or the outcome fails */
	} else {
		if (ws_stmt(st, WORLD_SQL(JOURNAL_INTENT_GET), &s, err) < 0)
			return -1;
		ws_bind_int(s, 1, intent_id);
		rc = wdb_step(s, NULL);
		if (rc != WDB_ROW) {
			ws_done(st, s);
			if (rc == WDB_DONE) return werr(err, WX_NOT_FOUND, "journal outcome: intent %lld not found", intent_id);
			return ws_sqlerr(st, 0, "journal read", err);
		}
		snprintf(kind, sizeof kind, "%s", (const char *)wdb_column_text(s, 0));
		snprintf(subject, sizeof subject, "%s", (const char *)wdb_column_text(s, 1));
		have = (int)wdb_column_int64(s, 2, NULL);
		ws_done(st, s);
	}
	if (have) return werr(err, WX_CONFLICT, "journal outcome: intent %lld (%s) already has an outcome", intent_id, subject);
	if (ws_stmt(st, WORLD_SQL(JOURNAL_OUTCOME), &s, err) < 0)
		return -1;
	ws_bind_int(s, 1, intent_id);
	ws_bind_text(s, 2, kind);
	ws_bind_text(s, 3, subject);
	ws_bind_text(s, 4, status);
	bind_opt(s, 5, ref);
	ws_bind_int(s, 6, (int64_t)time(NULL));
	/* an engine that answers the insert later (a pipeline) says this
	 * when journal_one_commit fails then */
	if (strcmp(status, "committed") == 0)
		ws_expect_conflict(st, "journal_one_commit", WX_CONFLICT,
		                   "journal outcome: %s %s already committed (intent %lld not committed)", kind, subject,
		                   intent_id);
	rc = wdb_step(s, NULL);
	ws_done(st, s);
	/* the only constraint left to fail is journal_one_commit */
	if (rc == WDB_CONFLICT && strcmp(status, "committed") == 0)
		return werr(err, WX_CONFLICT, "journal outcome: %s %s already committed (intent %lld not committed)", kind,
		            subject, intent_id);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "journal outcome insert", err);
	return 0;
}

int world_journal_outcome(struct world_store *st, long long intent_id, const char *status, const char *ref,
                          struct world_err *err)
{
	if (ws_need_writer(st, "journal outcome", err) < 0) return -1;
	if (!status || (strcmp(status, "succeeded") != 0 && strcmp(status, "failed") != 0 &&
	                strcmp(status, "committed") != 0 && strcmp(status, "cancelled") != 0))
		return werr(err, WX_BAD_INPUT, "journal outcome: status \"%s\": want succeeded, failed, committed or cancelled",
		            status ? status : "");
	if (ref && world_ref_parse(ref, "journal outcome ref", NULL, err) < 0) return -1;
	WS_WRITE(st, err, outcome_body(st, intent_id, status, ref, err));
}

int world_journal_spent(struct world_store *st, const char *episode, const char *effect, const char *scope,
                        long long *spent, struct world_err *err)
{
	struct wdb_stmt *s;
	/* a store no writer of this build opened has no running totals
	 * (store/db_sqlite_schema.c): its readers sum the journal */
	if (ws_stmt(st, WORLD_SQL(JOURNAL_SPENT), &s, NULL) < 0 && ws_stmt(st, WORLD_SQL(JOURNAL_SPENT_SUM), &s, err) < 0)
		return -1;
	bind_opt(s, 1, episode);
	bind_opt(s, 2, effect);
	bind_opt(s, 3, scope);
	int rc = wdb_step(s, NULL);
	if (rc != WDB_ROW) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "journal sum", err);
	}
	*spent = wdb_column_int64(s, 0, NULL);
	ws_done(st, s);
	return 0;
}

int world_journal_indeterminate(struct world_store *st,
                                int (*fn)(void *ctx, long long id, const char *kind, const char *subject,
                                          const char *ref),
                                void *ctx, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_prep(st, WORLD_SQL(JOURNAL_INDETERMINATE),
	            &s, err) < 0)
		return -1;
	int rc;
	while ((rc = wdb_step(s, NULL)) == WDB_ROW) {
		if (fn(ctx, wdb_column_int64(s, 0, NULL), (const char *)wdb_column_text(s, 1),
		       (const char *)wdb_column_text(s, 2), (const char *)wdb_column_text(s, 3)) != 0)
			break;
	}
	wdb_finalize(s);
	if (rc != WDB_ROW && rc != WDB_DONE) return ws_sqlerr(st, 0, "journal scan", err);
	return 0;
}

int world_journal_find(struct world_store *st, const char *kind, const char *subject, struct world_journal_row *out,
                       struct world_err *err)
{
	memset(out, 0, sizeof *out);
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(JOURNAL_FIND), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, kind);
	ws_bind_text(s, 2, subject);
	int rc = wdb_step(s, NULL);
	if (rc != WDB_ROW) {
		ws_done(st, s);
		if (rc == WDB_DONE) return werr(err, WX_NOT_FOUND, "journal: no %s intent for %s", kind, subject);
		return ws_sqlerr(st, 0, "journal find", err);
	}
	out->intent_id = wdb_column_int64(s, 0, NULL);
	ws_col_ref(s, 1, out->intent_ref);
	const char *status = wdb_column_text(s, 2);
	snprintf(out->status, sizeof out->status, "%s", status ? status : "");
	ws_col_ref(s, 3, out->outcome_ref);
	ws_done(st, s);
	return 0;
}
