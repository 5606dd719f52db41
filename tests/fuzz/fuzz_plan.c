/* tests/fuzz/fuzz_plan.c: libFuzzer target over the plan validator
 * (broker/plan.c): the bytes a hostile interpreter returns as its plan,
 * judged against a fixed declaredEffects list. A plan it accepts keeps
 * every law: at most one effect, and that one declared; a result object
 * exactly when there is no effect; finish only with an effect. */
#include "broker/plan.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *declared;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!declared)
		declared = json_loads("[{\"effect\":\"Secret.Read\",\"scope\":\"vault\",\"cost\":1},"
		                      "{\"effect\":\"Workspace.Write\",\"scope\":\"*\",\"cost\":2}]", 0, NULL);
	struct broker_plan p;
	memset(&p, 0, sizeof p);
	struct world_err err = { 0, "" };
	if (broker_plan_parse((const char *)data, size, declared, &p, &err) == 0) {
		if (p.effect) {
			if (p.result && !json_is_null(p.result)) __builtin_trap();
			json_t *e = json_object_get(p.effect, "effect");
			if (!json_is_string(e)) __builtin_trap();
		} else {
			if (!json_is_object(p.result) || p.finish) __builtin_trap();
		}
		broker_plan_free(&p);
	} else if (err.code != WX_PLAN_LAW && err.code != WX_BAD_INPUT && err.code != WX_PROTOCOL && err.code != WX_FAIL) {
		__builtin_trap(); /* every refusal is a named one */
	}
	return 0;
}
