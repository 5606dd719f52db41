/* broker/plan.c: see plan.h. */
#include "broker/plan.h"
#include "common/canon.h"
#include <stdlib.h>
#include <string.h>

#define LAW(name, ...) werr(err, WX_PLAN_LAW, "plan law " name ": " __VA_ARGS__)

static int only_keys(const json_t *o, const char *const *keys, const char **extra)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v) {
		int known = 0;
		for (const char *const *p = keys; *p; p++)
			if (strcmp(*p, k) == 0) known = 1;
		if (!known) { *extra = k; return 0; }
	}
	for (const char *const *p = keys; *p; p++)
		if (!json_object_get(o, *p)) { *extra = NULL; return 0; }
	return 1;
}

static int id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 16) return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9'))) return 0;
	return 1;
}

int broker_plan_parse(const char *bytes, size_t len, const json_t *declared, struct broker_plan *out,
                      struct world_err *err)
{
	memset(out, 0, sizeof *out);
	struct world_err pe;
	json_t *p = world_json_parse(bytes, len, &pe);
	if (!p) return LAW("shape", "plan is not strict JSON (%s)", pe.msg);
	out->root = p;
	static const char *const top[] = { "plan", "effects", "finish", "result", NULL };
	const char *extra = NULL;
	if (!json_is_object(p)) goto shape;
	if (!only_keys(p, top, &extra)) {
		if (extra) { LAW("shape", "unknown key \"%s\"", extra); goto fail; }
		goto shape;
	}
	const char *kind = json_string_value(json_object_get(p, "plan"));
	if (!kind || strcmp(kind, "world/effect-plan/v1") != 0) {
		LAW("shape", "\"plan\" must be \"world/effect-plan/v1\"");
		goto fail;
	}
	json_t *effects = json_object_get(p, "effects");
	json_t *finish = json_object_get(p, "finish");
	json_t *result = json_object_get(p, "result");
	if (!json_is_array(effects) || !json_is_boolean(finish)) goto shape;
	if (json_array_size(effects) > 1) {
		LAW("one-effect", "%zu effects planned, at most one allowed", json_array_size(effects));
		goto fail;
	}
	out->finish = json_is_true(finish);
	if (json_array_size(effects) == 1) {
		json_t *e = json_array_get(effects, 0);
		static const char *const ek[] = { "id", "effect", "scope", "cost", "payload", NULL };
		if (!json_is_object(e) || !only_keys(e, ek, &extra)) {
			if (extra) LAW("effect-shape", "effect has unknown key \"%s\"", extra);
			else LAW("effect-shape", "effect must be exactly {id, effect, scope, cost, payload}");
			goto fail;
		}
		const char *id = json_string_value(json_object_get(e, "id"));
		const char *name = json_string_value(json_object_get(e, "effect"));
		const char *scope = json_string_value(json_object_get(e, "scope"));
		json_t *cost = json_object_get(e, "cost");
		json_t *payload = json_object_get(e, "payload");
		if (!id || !id_valid(id)) { LAW("effect-id", "effect id must match [a-z0-9]{1,16}"); goto fail; }
		if (!name || !scope || !json_is_integer(cost)) {
			LAW("effect-shape", "effect, scope must be strings and cost an integer");
			goto fail;
		}
		int found = 0;
		size_t i;
		json_t *d;
		json_array_foreach(declared, i, d) {
			const char *dn = json_string_value(json_object_get(d, "effect"));
			const char *ds = json_string_value(json_object_get(d, "scope"));
			json_t *dc = json_object_get(d, "cost");
			if (dn && ds && strcmp(dn, name) == 0 && strcmp(ds, scope) == 0 && json_is_integer(dc) &&
			    json_integer_value(dc) == json_integer_value(cost))
				found = 1;
		}
		if (!found) {
			LAW("declared", "effect %s scope %s cost %lld is not one of the transition's declaredEffects", name,
			    scope, (long long)json_integer_value(cost));
			goto fail;
		}
		if (!json_is_object(payload)) { LAW("payload", "payload must be a JSON object"); goto fail; }
		size_t plen = 0;
		char *pc = world_canon_json(payload, &plen, NULL);
		free(pc);
		if (!pc || plen > BROKER_PAYLOAD_MAX) { LAW("payload", "payload over 1 MiB"); goto fail; }
		if (json_object_get(payload, "world")) { LAW("no-world", "payload has the reserved key \"world\""); goto fail; }
		if (!json_is_null(result)) { LAW("result", "a plan with an effect must have result null"); goto fail; }
		out->effect = e;
	} else {
		if (!json_is_object(result)) { LAW("result", "a plan without effects needs an object result"); goto fail; }
		if (json_object_get(result, "world")) { LAW("no-world", "result has the reserved key \"world\""); goto fail; }
		if (out->finish) { LAW("finish", "finish:true needs an effect"); goto fail; }
		out->result = result;
	}
	return 0;
shape:
	LAW("shape", "plan must be exactly {\"plan\":\"world/effect-plan/v1\",\"effects\":[...],\"finish\":bool,\"result\":null|object}");
fail:
	broker_plan_free(out);
	return -1;
}

void broker_plan_free(struct broker_plan *p)
{
	json_decref(p->root);
	memset(p, 0, sizeof *p);
}
