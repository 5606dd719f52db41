/* supervisor/testbroker.h: a stand-in broker for the supervisor's tests, its
 * benchmark and `worldd invoke --test-broker`, until broker/ exists.
 *
 * Owns: a sup_broker_fn that checks the plan's outline (world/effect-plan/v1,
 * at most one effect with a string id and effect) and "runs" the effect by
 * echoing its payload: results = [{"id","effect","status":"ok","record",
 * "output":{"echoed":PAYLOAD}}], record = sha256 of the effect object's
 * bytes. It grants everything and stores nothing: it is NOT the broker of
 * docs/design.md §5 (no grants, budgets, journal or handlers). */
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
#endif
