/* broker/effect.h: one planned effect through the pipeline of docs/design.md §5.3.
 *
 * Owns: the order of durable writes for one effect, the effect record and
 * its law, and the table that maps effect names to handlers.
 *
 *   decide (broker/grants.h)
 *   denied:  the record only (allowed false, denial label, budgetAfter =
 *            budgetBefore, no request/result ref); no intent, costs nothing.
 *   allowed: ONE transaction, committed (fsync) BEFORE the handler runs:
 *            the request object (world/effect-request/v1), the invocation's
 *            input object and intent (first durable write of the call), and
 *            the effect intent (kind "effect", subject INVOCATION#ID, the
 *            cost: from now on the budget is spent, whatever happens);
 *            then the handler (broker/handler.h);
 *            then, in the caller's commit transaction (broker_effect_write):
 *            the result object (world/effect-result/v1, succeeded only), the
 *            record (world/effect-record/v1) and the outcome
 *            (succeeded|failed, ref = the record).
 * A crash between the intent and the outcome leaves the intent without an
 * outcome: reported as indeterminate at the next open, never re-run.
 *
 * Record law (checked when written and again when read, broker_record_check):
 * fields exactly effect, scope, cost, budgetBefore, budgetAfter, allowed,
 * failed, denial, requestRef, resultRef (canonical JSON sorts them);
 * success: allowed, !failed, denial null, budgetAfter = budgetBefore - cost,
 * requestRef and resultRef set; failed: allowed, resultRef null, budgetAfter
 * = budgetBefore - cost; denied: !allowed, !failed, denial a label,
 * budgetAfter = budgetBefore, both refs null. Never !allowed with failed. */
#ifndef WORLD_BROKER_EFFECT_H
#define WORLD_BROKER_EFFECT_H
#include <jansson.h>
#include <pthread.h>
#include "broker/handler.h"
#include "broker/session.h"
#include "common/ref.h"

struct world_store;

struct broker_handler_entry {
	const char *effect;
	broker_handler_fn fn;
};
/* The product's handlers (broker/handlers.c), terminated by effect NULL. */
extern const struct broker_handler_entry broker_handlers[];
broker_handler_fn broker_handler_find(const struct broker_handler_entry *table, const char *effect);

int broker_record_check(const json_t *record, struct world_err *err);

struct broker_effect_req {
	struct world_store *st;
	pthread_mutex_t *store_lock;          /* held around every store transaction */
	const struct broker_session *session;
	long long now;                        /* the decision's clock */
	const char *invocation_id;
	const char *input_ref;                /* the canonical input (stored with the intent) */
	const char *input;                    /* its bytes */
	size_t input_len;
	const json_t *effect;                 /* the plan's effect {id,effect,scope,cost,payload} */
	const struct broker_handler_entry *handlers;
	struct broker_handler_ctx hctx;       /* episode filled from the session by the caller */
};

enum broker_effect_status { BROKER_EFFECT_OK, BROKER_EFFECT_FAILED, BROKER_EFFECT_DENIED };

struct broker_effect_out {
	enum broker_effect_status status;
	char record_ref[WORLD_REF_SIZE];
	json_t *entry;           /* {"id","effect","status","record","output"} for the finish phase */
	json_t *output;          /* handler output (succeeded) or NULL (borrowed from entry) */
	char *record;            /* canonical record bytes, written by broker_effect_write */
	size_t record_len;
	char *result;            /* canonical result bytes (succeeded) or NULL */
	size_t result_len;
	long long intent_id;     /* effect intent (allowed), else 0 */
	long long invocation_intent_id; /* the invocation's intent (allowed), else 0 */
	char episode[65];        /* the session's episode: broker_effect_write records membership */
	char failure[1024];      /* failed: the handler's error */
	long handler_ms;
};

/* Run one effect. 0: out filled (ok, failed or denied are all outcomes);
 * -1: the pipeline itself broke (store error before the handler ran;
 * nothing durable beyond what err says). */
int broker_effect_run(const struct broker_effect_req *rq, struct broker_effect_out *out, struct world_err *err);
/* Write the pending objects and outcome of out. Call inside a transaction
 * the caller holds (the invocation commit, or its own on failure). */
int broker_effect_write(struct world_store *st, const struct broker_effect_out *out, struct world_err *err);
void broker_effect_out_free(struct broker_effect_out *out);
#endif
