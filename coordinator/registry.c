/* coordinator/registry.c: see registry.h. */
#include "coordinator/registry.h"
#include "store/canon.h"
#include "store/store.h"
#include <stdlib.h>
#include <string.h>

static int load_head(struct world_store *st, const char *name, json_t **out, long long *revision,
                     char head[WORLD_REF_SIZE], struct world_err *err)
{
	char ref[WORLD_REF_SIZE] = "";
	long long rev = 0;
	*out = NULL;
	if (revision) *revision = 0;
	if (head) head[0] = 0;
	struct world_err e = { 0 };
	if (world_registry_head_get(st, name, ref, &rev, &e) < 0) {
		if (e.code == WX_NOT_FOUND) return 0;
		if (err) *err = e;
		return -1;
	}
	struct world_object o;
	if (world_object_get(st, ref, &o, err) < 0) return werr_prefix(err, "registry %s head %s", name, ref);
	if (strcmp(o.semantic_id, name) != 0) {
		world_object_free(&o);
		return werr(err, WX_INTEGRITY, "registry %s: head %s is a %s object", name, ref, o.semantic_id);
	}
	json_t *v = world_json_parse((const char *)o.payload, o.len, err);
	world_object_free(&o);
	if (!v) return werr_prefix(err, "registry %s head %s", name, ref);
	if (!json_is_object(v)) {
		json_decref(v);
		return werr(err, WX_INTEGRITY, "registry %s head %s: payload is not an object", name, ref);
	}
	*out = v;
	if (revision) *revision = rev;
	if (head) memcpy(head, ref, WORLD_REF_SIZE);
	return 0;
}

int registry_load(struct world_store *st, json_t **out, long long *revision, char head[WORLD_REF_SIZE],
                  struct world_err *err)
{
	if (load_head(st, REGISTRY_TRANSITIONS, out, revision, head, err) < 0) return -1;
	if (*out && !json_is_array(json_object_get(*out, "transitions"))) {
		json_decref(*out);
		*out = NULL;
		return werr(err, WX_INTEGRITY, "registry %s: /transitions is not an array", REGISTRY_TRANSITIONS);
	}
	return 0;
}

const json_t *registry_find(const json_t *registry, const char *id)
{
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(registry, "transitions"), i, d) {
		const char *did = json_string_value(json_object_get(d, "id"));
		if (did && strcmp(did, id) == 0) return d;
	}
	return NULL;
}

static int epoch_lookup(const json_t *reg, const char *release, long long *epoch, struct world_err *err)
{
	json_t *epochs = json_object_get(reg, "epochs");
	if (!json_is_array(epochs))
		return werr(err, WX_INTEGRITY, "registry %s: /epochs is not an array", REGISTRY_EPOCHS);
	int found = 0;
	size_t i;
	json_t *e;
	json_array_foreach(epochs, i, e) {
		const char *r = json_string_value(json_object_get(e, "release"));
		if (r && strcmp(r, release) == 0) {
			found++;
			*epoch = json_integer_value(json_object_get(e, "epoch"));
		}
	}
	if (found > 1)
		return werr(err, WX_CONFLICT, "registry %s nominates interpreter release \"%s\" %d times (ambiguous)",
		            REGISTRY_EPOCHS, release, found);
	if (!found)
		return werr(err, WX_NOT_FOUND, "registry %s does not nominate interpreter release \"%s\"", REGISTRY_EPOCHS,
		            release);
	if (*epoch < 1) return werr(err, WX_INTEGRITY, "registry %s: epoch of \"%s\" is not >= 1", REGISTRY_EPOCHS, release);
	return 0;
}

int registry_epoch_for(struct world_store *st, const char *release, long long *epoch, struct world_err *err)
{
	json_t *reg;
	if (load_head(st, REGISTRY_EPOCHS, &reg, NULL, NULL, err) < 0) return -1;
	if (!reg)
		return werr(err, WX_NOT_FOUND, "no %s in this store (bootstrap it: worldd epoch bootstrap)", REGISTRY_EPOCHS);
	int rc = epoch_lookup(reg, release, epoch, err);
	json_decref(reg);
	return rc;
}

int registry_epoch_bootstrap(struct world_store *st, const char *release, long long *epoch, int *created,
                             struct world_err *err)
{
	if (created) *created = 0;
	json_t *reg;
	char head[WORLD_REF_SIZE];
	if (load_head(st, REGISTRY_EPOCHS, &reg, NULL, head, err) < 0) return -1;
	if (reg) {
		struct world_err e = { 0 };
		int rc = epoch_lookup(reg, release, epoch, &e);
		if (rc < 0 && e.code == WX_NOT_FOUND) {
			json_t *first = json_array_get(json_object_get(reg, "epochs"), 0);
			werr(err, WX_CONFLICT, "store is bound to interpreter release \"%s\" (epoch %lld); refusing release \"%s\"",
			     json_string_value(json_object_get(first, "release")) ? json_string_value(json_object_get(first, "release")) : "?",
			     (long long)json_integer_value(json_object_get(first, "epoch")), release);
		} else if (rc < 0 && err) {
			*err = e;
		}
		json_decref(reg);
		return rc;
	}
	json_t *v = json_pack("{s:[{s:i,s:s}]}", "epochs", "epoch", 1, "release", release);
	if (!v) return werr(err, WX_FAIL, "epoch bootstrap: out of memory");
	char ref[WORLD_REF_SIZE];
	long long rev;
	int rc = world_store_begin(st, err);
	if (rc == 0) rc = world_object_put_json(st, REGISTRY_EPOCHS, "worldd epoch bootstrap", v, ref, err);
	if (rc == 0) rc = world_registry_head_cas(st, REGISTRY_EPOCHS, NULL, ref, &rev, err);
	if (rc == 0) rc = world_store_commit(st, err);
	else world_store_rollback(st);
	json_decref(v);
	if (rc < 0) return werr_prefix(err, "epoch bootstrap");
	*epoch = 1;
	if (created) *created = 1;
	return 0;
}
