/* supervisor/testbroker.c: see testbroker.h. */
#include "supervisor/testbroker.h"
#include <jansson.h>
#include "common/ref.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sup_test_broker(void *ctx, const char *plan, size_t plan_len, struct sup_broker_reply *reply,
                    struct world_err *err)
{
	struct sup_test_broker *tb = ctx;
	if (tb) tb->calls++;
	reply->finish = 0;
	reply->results = NULL;
	reply->results_len = 0;
	json_t *p = json_loadb(plan, plan_len, JSON_REJECT_DUPLICATES, NULL);
	const char *kind = json_string_value(json_object_get(p, "plan"));
	json_t *effects = json_object_get(p, "effects");
	json_t *finish = json_object_get(p, "finish");
	if (!json_is_object(p) || !kind || strcmp(kind, "world/effect-plan/v1") != 0 || !json_is_array(effects) ||
	    json_array_size(effects) > 1 || !json_is_boolean(finish)) {
		json_decref(p);
		return werr(err, WX_BAD_INPUT, "test broker: plan is not a world/effect-plan/v1 with at most one effect");
	}
	if (json_array_size(effects) == 0 || !json_is_true(finish)) {
		json_decref(p);
		return 0; /* no finish phase */
	}
	json_t *e = json_array_get(effects, 0);
	const char *id = json_string_value(json_object_get(e, "id"));
	const char *name = json_string_value(json_object_get(e, "effect"));
	json_t *payload = json_object_get(e, "payload");
	if (!id || !name || !json_is_object(payload)) {
		json_decref(p);
		return werr(err, WX_BAD_INPUT, "test broker: effect needs a string id, effect and an object payload");
	}
	char *ebytes = json_dumps(e, JSON_COMPACT);
	char ref[WORLD_REF_SIZE];
	struct world_err herr;
	int hrc = ebytes ? world_hash_ref(ebytes, strlen(ebytes), ref, &herr) : -1;
	free(ebytes);
	json_t *results = hrc < 0 ? NULL :
	    json_pack("[{s:s, s:s, s:s, s:s, s:{s:O}}]", "id", id, "effect", name, "status", "ok",
	              "record", ref, "output", "echoed", payload);
	char *text = results ? json_dumps(results, JSON_COMPACT) : NULL;
	json_decref(results);
	json_decref(p);
	if (!text) return werr(err, WX_FAIL, "test broker: cannot build results");
	if (tb) tb->effects++;
	reply->finish = 1;
	reply->results = text;
	reply->results_len = strlen(text);
	return 0;
}

int sup_test_broker_with_laws(void *ctx, const char *plan, size_t plan_len, struct sup_broker_reply *reply,
                              struct world_err *err)
{
	struct sup_test_broker_laws *tl = ctx;
	reply->finish = 0;
	reply->results = NULL;
	reply->results_len = 0;
	if (tl && tl->laws && tl->laws(tl->laws_ctx, plan, plan_len, err) < 0) {
		if (tl->tb) tl->tb->calls++;
		return -1;
	}
	return sup_test_broker(tl ? tl->tb : NULL, plan, plan_len, reply, err);
}
