/* broker/plan.h: the plan a transition's plan phase returns (docs/design.md §5.2).
 *
 * Owns: parsing world/effect-plan/v1 and enforcing every law, each with its
 * own name so a violation names the law it broke:
 *   shape        exactly {"plan","effects","finish","result"}, plan = "world/effect-plan/v1"
 *   one-effect   at most one effect
 *   effect-shape an effect is exactly {"id","effect","scope","cost","payload"}
 *   effect-id    id matches [a-z0-9]{1,16}
 *   declared     the (effect, scope, cost) triple is one of the declaredEffects
 *   payload      payload is an object, canonical JSON <= 1 MiB
 *   no-world     no "world" key in the plan's result or payload
 *   result       zero effects <=> result is an object (else null)
 *   finish       finish:true needs an effect
 * A violation is WX_PLAN_LAW "plan law LAW: detail". */
#ifndef WORLD_BROKER_PLAN_H
#define WORLD_BROKER_PLAN_H
#include <jansson.h>
#include <stddef.h>
#include "common/error.h"

#define BROKER_PAYLOAD_MAX ((size_t)1 << 20)

struct broker_plan {
	json_t *root;            /* the parsed plan (owned) */
	json_t *effect;          /* the one effect, or NULL (borrowed from root) */
	int finish;
	json_t *result;          /* object when there are no effects (borrowed) */
};
/* declared: the descriptor's declaredEffects array [{"effect","scope","cost"}]. */
int broker_plan_parse(const char *bytes, size_t len, const json_t *declared, struct broker_plan *out,
                      struct world_err *err);
void broker_plan_free(struct broker_plan *p);
#endif
