/* supervisor/testbroker.h: a stand-in broker for the supervisor's tests, its
 * benchmark and `worldd invoke --test-broker`, until broker/ exists.
 *
 * Owns: a sup_broker_fn that checks the plan's outline (world/effect-plan/v1,
 * at most one effect with a string id and effect) and "runs" the effect by
 * echoing its payload: results = [{"id","effect","status":"ok","record",
 * "output":{"echoed":PAYLOAD}}], record = sha256 of the effect object's
 * bytes. It grants everything and stores nothing: it is NOT the broker of
 * docs/design.md §5 (no grants, budgets, journal or handlers). Its plan
 * laws are the caller's to hand in (sup_test_broker_with_laws). */
#ifndef WORLD_SUPERVISOR_TESTBROKER_H
#define WORLD_SUPERVISOR_TESTBROKER_H
#include "supervisor/supervisor.h"

struct sup_test_broker {
	unsigned calls;      /* plans seen */
	unsigned effects;    /* effects "run" */
};
/* ctx is a struct sup_test_broker * (may be NULL). */
int sup_test_broker(void *ctx, const char *plan, size_t plan_len, struct sup_broker_reply *reply,
                    struct world_err *err);

/* The test broker behind a plan-law check handed in by the caller: the
 * supervisor never includes broker/, so whoever composes the run (cli/'s
 * `worldd run --effectful --test-broker`) passes the broker's own law
 * check (broker/plan.c) here, and a plan the real broker would refuse is
 * refused with the same error and exit code before anything is echoed. */
typedef int (*sup_plan_law_fn)(void *ctx, const char *plan, size_t plan_len, struct world_err *err);
struct sup_test_broker_laws {
	sup_plan_law_fn laws;          /* -1 with err set: the plan broke a law */
	void *laws_ctx;
	struct sup_test_broker *tb;    /* counters (may be NULL) */
};
/* ctx is a struct sup_test_broker_laws *: laws first, then sup_test_broker. */
int sup_test_broker_with_laws(void *ctx, const char *plan, size_t plan_len, struct sup_broker_reply *reply,
                              struct world_err *err);
#endif
