/* coordinator/registry.c: see registry.h. */
#include "coordinator/registry.h"
#include "common/canon.h"
#include "common/elf.h"
#include "common/file.h"
#include "store/store.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What a refusal for a release no epoch nominates says: with a registry
 * the store needs a new epoch (attended), never a second bootstrap. */
#define NOMINATE_HINT "nominate it as the next epoch, attended: worldd epoch nominate --store DB --ailang-bin BIN"

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

/* The member of registry's array `list` whose "id" is id, or NULL. */
static const json_t *find_by_id(const json_t *registry, const char *list, const char *id)
{
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(registry, list), i, d) {
		const char *did = json_string_value(json_object_get(d, "id"));
		if (did && strcmp(did, id) == 0) return d;
	}
	return NULL;
}

const json_t *registry_find(const json_t *registry, const char *id)
{
	return find_by_id(registry, "transitions", id);
}

const json_t *registry_retired_find(const json_t *registry, const char *id)
{
	return find_by_id(registry, "retired", id);
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
		return werr(err, WX_NOT_FOUND, "registry %s does not nominate interpreter release \"%s\"; " NOMINATE_HINT,
		            REGISTRY_EPOCHS, release);
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

/* Writes v as the next epoch registry revision (CAS from old, NULL = none):
 * in a transaction of its own, or inside the caller's when one is open
 * (the caller commits or rolls back: a bootstrap on PostgreSQL, whose
 * archive row and registry land together or not at all). */
static int epochs_write(struct world_store *st, json_t *v, const char *old, const char *who, char head[WORLD_REF_SIZE],
                        struct world_err *err)
{
	char ref[WORLD_REF_SIZE];
	long long rev;
	int own = !world_store_in_txn(st);
	int rc = own ? world_store_begin(st, err) : 0;
	if (rc == 0) rc = world_object_put_json(st, REGISTRY_EPOCHS, who, v, ref, err);
	if (rc == 0) rc = world_registry_head_cas(st, REGISTRY_EPOCHS, old, ref, &rev, err);
	if (own) {
		if (rc == 0) rc = world_store_commit(st, err);
		else world_store_rollback(st);
	}
	if (rc < 0) return werr_prefix(err, "%s: %s", who, REGISTRY_EPOCHS);
	if (head) memcpy(head, ref, WORLD_REF_SIZE);
	return 0;
}

static json_t *admission(const char *how, const char *ref)
{
	return json_pack("{s:s,s:s}", "admission", how, "ref", ref);
}

static int list_has(const json_t *list, const char *ref)
{
	size_t i;
	json_t *a;
	json_array_foreach(list, i, a) {
		const char *r = json_string_value(json_object_get(a, "ref"));
		if (r && strcmp(r, ref) == 0) return 1;
	}
	return 0;
}

/* The legacy epoch's list: its descriptors' interpreters, else ref. */
static json_t *legacy_list(struct world_store *st, long long epoch, const char *ref, struct world_err *err)
{
	json_t *tr = NULL, *list = json_array();
	if (!list || registry_load(st, &tr, NULL, NULL, err) < 0) {
		json_decref(list);
		return NULL;
	}
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(tr, "transitions"), i, d) {
		const char *in = json_string_value(json_object_get(d, "interpreter"));
		if (in && json_integer_value(json_object_get(d, "semanticsEpoch")) == epoch && !list_has(list, in))
			json_array_append_new(list, admission("upgrade", in));
	}
	json_decref(tr);
	if (json_array_size(list) == 0) json_array_append_new(list, admission("upgrade", ref));
	return list;
}

/* Loads the registry (*reg, owned; NULL with WX_NOT_FOUND when absent), the
 * entry of wi's release (*entry, borrowed from *reg) with its admission
 * list, upgrading a registry without lists first. */
static int epoch_entry(struct world_store *st, const struct world_interp *wi, json_t **reg, json_t **entry,
                       long long *epoch, char head[WORLD_REF_SIZE], struct world_err *err)
{
	*reg = NULL;
	*entry = NULL;
	for (int attempt = 0;; attempt++) {
		if (load_head(st, REGISTRY_EPOCHS, reg, NULL, head, err) < 0) return -1;
		if (!*reg)
			return werr(err, WX_NOT_FOUND, "no %s in this store (bootstrap it: worldd epoch bootstrap)",
			            REGISTRY_EPOCHS);
		if (epoch_lookup(*reg, wi->version, epoch, err) < 0) goto fail;
		size_t i;
		json_t *e, *legacy = NULL;
		json_array_foreach(json_object_get(*reg, "epochs"), i, e) {
			json_t *l = json_object_get(e, "interpreters");
			if (l && !json_is_array(l)) {
				werr(err, WX_INTEGRITY, "registry %s head %s: epoch %lld's /interpreters is not an array",
				     REGISTRY_EPOCHS, head, (long long)json_integer_value(json_object_get(e, "epoch")));
				goto fail;
			}
			const char *r = json_string_value(json_object_get(e, "release"));
			if (r && strcmp(r, wi->version) == 0) *entry = e;
			if (!l) {
				long long ep = json_integer_value(json_object_get(e, "epoch"));
				json_t *nl = legacy_list(st, ep, wi->ref, err);
				if (!nl) goto fail;
				json_object_set_new(e, "interpreters", nl);
				legacy = e;
			}
		}
		if (!legacy) return 0;
		char old[WORLD_REF_SIZE];
		memcpy(old, head, WORLD_REF_SIZE);
		struct world_err e2 = { 0, "" };
		if (epochs_write(st, *reg, old, "worldd epoch upgrade", head, &e2) == 0) return 0;
		if (e2.code != WX_CONFLICT || attempt > 2) {
			if (err) *err = e2;
			goto fail;
		}
		json_decref(*reg); /* another writer moved the head: read it again */
		*reg = NULL;
	}
fail:
	json_decref(*reg);
	*reg = NULL;
	*entry = NULL;
	return -1;
}

static void refs_text(const json_t *list, char *out, size_t n)
{
	size_t i, len = 0;
	json_t *a;
	if (n) out[0] = 0;
	json_array_foreach(list, i, a) {
		const char *r = json_string_value(json_object_get(a, "ref"));
		int k = snprintf(out + len, n > len ? n - len : 0, "%s%s", i ? ", " : "", r ? r : "?");
		if (k < 0 || len + (size_t)k >= n) break;
		len += (size_t)k;
	}
}

int registry_epoch_admission(struct world_store *st, const struct world_interp *wi, long long *epoch, int *admitted,
                             char *refs, size_t n, struct world_err *err)
{
	json_t *reg, *entry;
	char head[WORLD_REF_SIZE];
	if (epoch_entry(st, wi, &reg, &entry, epoch, head, err) < 0) return -1;
	json_t *list = json_object_get(entry, "interpreters");
	*admitted = list_has(list, wi->ref);
	if (refs) refs_text(list, refs, n);
	json_decref(reg);
	return 0;
}

int registry_epoch_admitted(struct world_store *st, const struct world_interp *wi, long long *epoch,
                            struct world_err *err)
{
	int admitted = 0;
	char refs[1024];
	if (registry_epoch_admission(st, wi, epoch, &admitted, refs, sizeof refs, err) < 0) return -1;
	if (admitted) return 0;
	return werr(err, WX_CONFLICT,
	            "interpreter %s prints release \"%s\" of epoch %lld, which admits %s, not these bytes; admit them "
	            "attended first: worldd epoch admit --store DB --ailang-bin BIN",
	            wi->ref, wi->version, *epoch, refs);
}

int registry_epoch_admit(struct world_store *st, const struct world_interp *wi, long long *epoch, int *added,
                         char head[WORLD_REF_SIZE], struct world_err *err)
{
	*added = 0;
	json_t *reg, *entry;
	if (epoch_entry(st, wi, &reg, &entry, epoch, head, err) < 0) return -1;
	json_t *list = json_object_get(entry, "interpreters");
	int rc = 0;
	if (!list_has(list, wi->ref)) {
		char old[WORLD_REF_SIZE];
		memcpy(old, head, WORLD_REF_SIZE);
		json_array_append_new(list, admission("attended", wi->ref));
		rc = epochs_write(st, reg, old, "worldd epoch admit", head, err);
		if (rc == 0) *added = 1;
	}
	json_decref(reg);
	return rc;
}

int registry_epoch_bootstrap(struct world_store *st, const struct world_interp *wi, long long *epoch, int *created,
                             struct world_err *err)
{
	if (created) *created = 0;
	const char *release = wi->version;
	json_t *reg;
	char head[WORLD_REF_SIZE];
	if (load_head(st, REGISTRY_EPOCHS, &reg, NULL, head, err) < 0) return -1;
	if (reg) {
		struct world_err e = { 0 };
		int rc = epoch_lookup(reg, release, epoch, &e);
		if (rc < 0 && e.code == WX_NOT_FOUND) {
			json_t *first = json_array_get(json_object_get(reg, "epochs"), 0);
			werr(err, WX_CONFLICT,
			     "store is bound to interpreter release \"%s\" (epoch %lld); refusing release \"%s\"; " NOMINATE_HINT,
			     json_string_value(json_object_get(first, "release")) ? json_string_value(json_object_get(first, "release")) : "?",
			     (long long)json_integer_value(json_object_get(first, "epoch")), release);
		} else if (rc < 0 && err) {
			*err = e;
		}
		json_decref(reg);
		if (rc < 0) return rc;
		return registry_epoch_admitted(st, wi, epoch, err);
	}
	json_t *v = json_pack("{s:[{s:i,s:[o],s:s}]}", "epochs", "epoch", 1, "interpreters", admission("bootstrap", wi->ref),
	                      "release", release);
	if (!v) return werr(err, WX_FAIL, "epoch bootstrap: out of memory");
	int rc = epochs_write(st, v, NULL, "worldd epoch bootstrap", NULL, err);
	json_decref(v);
	if (rc < 0) return -1;
	*epoch = 1;
	if (created) *created = 1;
	return 0;
}

int registry_epochs_exist(struct world_store *st, struct world_err *err)
{
	char ref[WORLD_REF_SIZE];
	long long rev;
	struct world_err e = { 0, "" };
	if (world_registry_head_get(st, REGISTRY_EPOCHS, ref, &rev, &e) == 0) return 1;
	if (e.code == WX_NOT_FOUND) return 0;
	if (err) *err = e;
	return -1;
}

/* ---- nomination ---- */

/* The registry (owned) and its highest epoch; WX_NOT_FOUND when absent. */
static int nominee_load(struct world_store *st, json_t **reg, long long *highest, char head[WORLD_REF_SIZE],
                        struct world_err *err)
{
	if (load_head(st, REGISTRY_EPOCHS, reg, NULL, head, err) < 0) return -1;
	if (!*reg)
		return werr(err, WX_NOT_FOUND,
		            "no %s in this store: nothing to nominate a next epoch in (bootstrap it: worldd epoch bootstrap "
		            "--store DB --ailang-bin BIN)",
		            REGISTRY_EPOCHS);
	json_t *epochs = json_object_get(*reg, "epochs");
	if (!json_is_array(epochs)) {
		json_decref(*reg);
		*reg = NULL;
		return werr(err, WX_INTEGRITY, "registry %s head %s: /epochs is not an array", REGISTRY_EPOCHS, head);
	}
	*highest = 0;
	size_t i;
	json_t *e;
	json_array_foreach(epochs, i, e) {
		long long n = json_integer_value(json_object_get(e, "epoch"));
		if (n > *highest) *highest = n;
	}
	return 0;
}

int registry_epoch_nominee(struct world_store *st, const struct world_interp *wi, long long *epoch, int *already,
                           struct world_err *err)
{
	*already = 0;
	json_t *reg;
	long long highest;
	char head[WORLD_REF_SIZE];
	if (nominee_load(st, &reg, &highest, head, err) < 0) return -1;
	struct world_err e = { 0, "" };
	long long found = 0;
	int rc = epoch_lookup(reg, wi->version, &found, &e);
	json_decref(reg);
	if (rc < 0 && e.code != WX_NOT_FOUND) {
		if (err) *err = e;
		return -1;
	}
	if (rc < 0) {
		*epoch = highest + 1;
		return 0;
	}
	/* nominated already: by these bytes (nothing to do) or others */
	long long ep = 0;
	int admitted = 0;
	char refs[1024];
	if (registry_epoch_admission(st, wi, &ep, &admitted, refs, sizeof refs, err) < 0) return -1;
	*epoch = ep;
	if (admitted) {
		*already = 1;
		return 0;
	}
	return werr(err, WX_CONFLICT,
	            "interpreter release \"%s\" is already nominated by epoch %lld, which admits %s, not %s; admit these "
	            "bytes attended instead: worldd epoch admit --store DB --ailang-bin BIN",
	            wi->version, ep, refs, wi->ref);
}

int registry_epoch_nominate(struct world_store *st, const struct world_interp *wi, long long expect, long long *epoch,
                            int *created, char head[WORLD_REF_SIZE], struct world_err *err)
{
	*created = 0;
	int already = 0;
	if (registry_epoch_nominee(st, wi, epoch, &already, err) < 0) return -1;
	if (already) {
		if (head) {
			long long rev;
			if (world_registry_head_get(st, REGISTRY_EPOCHS, head, &rev, err) < 0) return -1;
		}
		return 0;
	}
	json_t *reg;
	long long highest;
	char old[WORLD_REF_SIZE], ref[WORLD_REF_SIZE];
	if (nominee_load(st, &reg, &highest, old, err) < 0) return -1;
	if (highest + 1 != expect) {
		json_decref(reg);
		return werr(err, WX_CONFLICT,
		            "%s moved while nominating: the next epoch is now %lld, not the %lld confirmed; nothing written, "
		            "re-run the command",
		            REGISTRY_EPOCHS, highest + 1, expect);
	}
	json_t *entry = json_pack("{s:I,s:[o],s:s}", "epoch", (json_int_t)expect, "interpreters",
	                          admission("attended", wi->ref), "release", wi->version);
	if (!entry || json_array_append_new(json_object_get(reg, "epochs"), entry) < 0) {
		json_decref(reg);
		return werr(err, WX_FAIL, "epoch nominate: out of memory");
	}
	/* the head moved between the load above and this write: the CAS
	 * refuses (WX_CONFLICT) and nothing is written */
	int rc = epochs_write(st, reg, old, "worldd epoch nominate", ref, err);
	json_decref(reg);
	if (rc < 0) return -1;
	*epoch = expect;
	*created = 1;
	if (head) memcpy(head, ref, WORLD_REF_SIZE);
	return 0;
}

size_t registry_tool_name(const char *id, char *out, size_t n)
{
	/* Read back: "_d" '.', "__" '/', "_u" '_', any other '_' itself; so an
	 * id of [a-z0-9_-] without "_d"/"_u" keeps its name ("test_simple_text",
	 * which the MCP conformance suite's fixtures need). */
	size_t k = 0;
	for (const char *p = id; *p; p++) {
		const char *rep;
		char one[2] = { *p, 0 };
		switch (*p) {
		case '_': rep = p[1] && strchr("du_./", p[1]) ? "_u" : "_"; break;
		case '.': rep = "_d"; break;
		case '/': rep = "__"; break;
		default: rep = one;
		}
		for (const char *r = rep; *r; r++, k++)
			if (k + 1 < n) out[k] = *r;
	}
	if (n) out[k < n ? k : n - 1] = 0;
	return k;
}
