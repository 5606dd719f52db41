/* coordinator/registry.c: see registry.h. */
#include "coordinator/registry.h"
#include "coordinator/catalog.h"
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

/* ---- writing the transition registry ---- */

#define CAS_ATTEMPTS 3

int registry_same_json(const json_t *v, const json_t *w)
{
	if (!v || !w) return !v && !w;
	size_t a, b;
	char *x = world_canon_json(v, &a, NULL), *y = world_canon_json(w, &b, NULL);
	int same = x && y && a == b && memcmp(x, y, a) == 0;
	free(x);
	free(y);
	return same;
}

static int by_id(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	return strcmp(json_string_value(json_object_get(x, "id")), json_string_value(json_object_get(y, "id")));
}

/* current's transitions with every id of descs replaced, sorted by id. */
static json_t *merged(const json_t *current, const json_t *descs)
{
	size_t nc = current ? json_array_size(json_object_get(current, "transitions")) : 0, nd = json_array_size(descs);
	json_t **all = calloc(nc + nd + 1, sizeof *all);
	if (!all) return NULL;
	size_t k = 0, i;
	json_t *d;
	json_array_foreach(descs, i, d) all[k++] = d;
	if (current) {
		json_array_foreach(json_object_get(current, "transitions"), i, d) {
			const char *id = json_string_value(json_object_get(d, "id"));
			int replaced = 0;
			for (size_t j = 0; j < nd && id; j++)
				if (strcmp(id, json_string_value(json_object_get(json_array_get(descs, j), "id"))) == 0)
					replaced = 1;
			if (!replaced && id) all[k++] = d;
		}
	}
	qsort(all, k, sizeof *all, by_id);
	json_t *out = json_array();
	for (size_t j = 0; out && j < k; j++) json_array_append(out, all[j]);
	free(all);
	return out;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(catalog_key(*(json_t *const *)a), catalog_key(*(json_t *const *)b));
}

static const char *const extras_members[] = { "prompts", "resources" };

/* This change's prompts (i 0) or resources (i 1); NULL = none. */
static const json_t *extras_of(const struct registry_change *c, int i)
{
	return !c ? NULL : i ? c->resources : c->prompts;
}

/* base's member ("prompts" / "resources") with every key of mine replaced,
 * sorted by key; NULL when it holds none (the member is then omitted, so a
 * registry without prompts keeps its bytes). */
static json_t *extras_merged(const json_t *base, const json_t *mine, const char *member)
{
	json_t *have = base ? json_object_get(base, member) : NULL;
	size_t nb = json_array_size(have), nm = json_array_size(mine), k = 0, i;
	if (nb + nm == 0) return NULL;
	json_t **all = calloc(nb + nm, sizeof *all), *d;
	if (!all) return NULL;
	json_array_foreach(mine, i, d) all[k++] = d;
	json_array_foreach(have, i, d) {
		int replaced = 0;
		size_t j;
		json_t *x;
		json_array_foreach(mine, j, x) replaced |= strcmp(catalog_key(x), catalog_key(d)) == 0;
		if (!replaced) all[k++] = d;
	}
	qsort(all, k, sizeof *all, by_key);
	json_t *out = json_array();
	for (size_t j = 0; out && j < k; j++) json_array_append(out, all[j]);
	free(all);
	return out;
}

/* The next revision over base keeps base's prompts and resources as they are
 * (1) or changes them (0). */
static int extras_same(const json_t *base, const struct registry_change *c)
{
	for (int i = 0; i < 2; i++) {
		json_t *next = extras_merged(base, extras_of(c, i), extras_members[i]);
		int same = registry_same_json(next, base ? json_object_get(base, extras_members[i]) : NULL);
		json_decref(next);
		if (!same) return 0;
	}
	return 1;
}

/* payload's "prompts" and "resources" for the next revision over base
 * (c NULL: base's kept as they are). */
static int extras_set(json_t *payload, const json_t *base, const struct registry_change *c)
{
	json_t *p = extras_merged(base, extras_of(c, 0), "prompts");
	json_t *r = extras_merged(base, extras_of(c, 1), "resources");
	int rc = (p && json_object_set_new(payload, "prompts", p) < 0) || (r && json_object_set_new(payload, "resources", r) < 0);
	return rc ? -1 : 0;
}

/* base's retired ids minus those descs publishes again (NULL when none are
 * left: the member is omitted, so a registry that never retired anything
 * keeps its bytes). */
static json_t *retired_after(const json_t *base, const json_t *descs)
{
	json_t *out = NULL;
	size_t i;
	json_t *r;
	json_array_foreach(base ? json_object_get(base, "retired") : NULL, i, r) {
		const char *id = json_string_value(json_object_get(r, "id"));
		int again = 0;
		size_t j;
		json_t *d;
		json_array_foreach(descs, j, d)
			if (id && strcmp(id, json_string_value(json_object_get(d, "id"))) == 0) again = 1;
		if (again || !id) continue;
		if (!out) out = json_array();
		if (out) json_array_append(out, r);
	}
	return out;
}

static int too_many(size_t n, long long rev, struct world_err *err)
{
	return werr(err, WX_BAD_INPUT,
	            "the registry would hold %zu descriptors (revision %lld plus this manifest's new ids); at most %d; "
	            "nothing was written",
	            n, rev, REGISTRY_ENTRIES_MAX);
}

int registry_publish_check(const json_t *current, long long rev, const struct registry_change *c, int *unchanged,
                           struct world_err *err)
{
	*unchanged = 0;
	json_t *list = merged(current, c->descs);
	if (!list) return werr(err, WX_FAIL, "publish: out of memory");
	size_t total = json_array_size(list);
	/* and so do its prompts and its resources, each */
	json_t *np = extras_merged(current, c->prompts, "prompts"), *nr = extras_merged(current, c->resources, "resources");
	size_t pn = json_array_size(np), rn = json_array_size(nr);
	json_decref(np);
	json_decref(nr);
	if (total > REGISTRY_ENTRIES_MAX) {
		json_decref(list);
		return too_many(total, rev, err);
	}
	if (pn > REGISTRY_ENTRIES_MAX || rn > REGISTRY_ENTRIES_MAX) {
		json_decref(list);
		return werr(err, WX_BAD_INPUT, "the registry would hold %zu %s (revision %lld plus this manifest's new ones); "
		            "at most %d; nothing was written", pn > REGISTRY_ENTRIES_MAX ? pn : rn,
		            pn > REGISTRY_ENTRIES_MAX ? "prompts" : "resources", rev, REGISTRY_ENTRIES_MAX);
	}
	*unchanged = current && registry_same_json(list, json_object_get(current, "transitions")) && extras_same(current, c);
	json_decref(list);
	return 0;
}

/* Writes payload as the next transition registry revision, its head moved
 * from old (NULL = none) by compare-and-swap; *nrev the head's revision. */
static int head_write(struct world_store *st, const json_t *payload, const char *provenance, const char *old,
                      char ref[WORLD_REF_SIZE], long long *nrev, struct world_err *err)
{
	if (world_object_put_json(st, REGISTRY_TRANSITIONS, provenance, payload, ref, err) < 0) return -1;
	return world_registry_head_cas(st, REGISTRY_TRANSITIONS, old, ref, nrev, err);
}

/* TEST HOOK (WORLD_PUBLISH_TEST_RIVAL, docs/publishing.md): play another
 * writer that moves the head between the checks and the swap. "same-id"
 * republishes the first descriptor with another title; "moving" adds a
 * descriptor under a fresh id on every attempt; "same-prompt" sets the
 * first prompt with another title. */
static int test_rival(struct world_store *st, const struct registry_change *c, int attempt, struct world_err *err)
{
	const char *mode = getenv("WORLD_PUBLISH_TEST_RIVAL");
	if (!mode || !*mode) return 0;
	json_t *cur = NULL, *payload = NULL;
	long long rev;
	char head[WORLD_REF_SIZE];
	if (registry_load(st, &cur, &rev, head, err) < 0) return -1;
	if (strcmp(mode, "same-prompt") == 0) {
		json_t *p = json_deep_copy(json_array_get(c->prompts, 0));
		if (attempt > 0 || !p) { json_decref(p); json_decref(cur); return 0; }
		json_object_set_new(p, "title", json_string("a rival publisher's title"));
		struct registry_change one = { .prompts = json_array() };
		json_array_append_new((json_t *)one.prompts, p);
		payload = cur ? json_deep_copy(cur) : json_pack("{s:[]}", "transitions");
		json_object_set_new(payload, "parent", *head ? json_string(head) : json_null());
		json_object_set_new(payload, "revision", json_integer(rev + 1));
		extras_set(payload, cur, &one);
		json_decref((json_t *)one.prompts);
	} else {
		json_t *d = json_deep_copy(json_array_get(c->descs, 0));
		if (strcmp(mode, "same-id") == 0) {
			if (attempt > 0) { json_decref(d); json_decref(cur); return 0; }
			json_object_set_new(d, "title", json_string("a rival publisher's title"));
		} else {
			char id[64];
			snprintf(id, sizeof id, "zz.rival.%d", attempt + 1);
			json_object_set_new(d, "id", json_string(id));
		}
		json_t *one = json_array();
		json_array_append_new(one, d);
		json_t *list = merged(cur, one);
		json_decref(one);
		payload = json_pack("{s:o, s:I, s:o}", "parent", *head ? json_string(head) : json_null(), "revision",
		                    (json_int_t)(rev + 1), "transitions", list);
		if (payload) extras_set(payload, cur, NULL);
	}
	json_decref(cur);
	char ref[WORLD_REF_SIZE];
	int rc = head_write(st, payload, "world-publish test rival", *head ? head : NULL, ref, NULL, err);
	json_decref(payload);
	return rc;
}

/* The head moved from base to cur: refuse when the other writer set one of
 * our ids to bytes other than ours (a lost update otherwise). */
static int same_id_conflict(const json_t *base, const json_t *cur, long long cur_rev, const json_t *descs,
                            struct world_err *err)
{
	size_t i;
	json_t *d;
	json_array_foreach(descs, i, d) {
		const char *id = json_string_value(json_object_get(d, "id"));
		const json_t *b = base ? registry_find(base, id) : NULL, *c = cur ? registry_find(cur, id) : NULL;
		if (!registry_same_json(b, c) && c && !registry_same_json(c, d))
			return werr(err, WX_CONFLICT,
			            "both this publish and the registry's revision %lld set \"%s\" with different bytes; "
			            "nothing was written \xe2\x80\x94 republish the winner's descriptor, or remove the entry",
			            cur_rev, id);
	}
	return 0;
}

/* The same for prompts and resources: one of ours that the other writer
 * set to other bytes than ours is refused, never overwritten. */
static int extras_conflict(const json_t *base, const json_t *cur, long long cur_rev, const struct registry_change *ch,
                           struct world_err *err)
{
	for (int i = 0; i < 2; i++) {
		size_t j, k;
		json_t *d, *o;
		json_array_foreach(extras_of(ch, i), j, d) {
			const json_t *b = NULL, *c = NULL;
			json_array_foreach(base ? json_object_get(base, extras_members[i]) : NULL, k, o)
				if (strcmp(catalog_key(o), catalog_key(d)) == 0) b = o;
			json_array_foreach(cur ? json_object_get(cur, extras_members[i]) : NULL, k, o)
				if (strcmp(catalog_key(o), catalog_key(d)) == 0) c = o;
			if (!registry_same_json(b, c) && c && !registry_same_json(c, d))
				return werr(err, WX_CONFLICT,
				            "both this publish and the registry's revision %lld set %s \"%s\" with different bytes; "
				            "nothing was written \xe2\x80\x94 republish the winner's, or remove the entry",
				            cur_rev, i ? "resource" : "prompt", catalog_key(d));
		}
	}
	return 0;
}

/* Every source the new registry names is stored as a transition source
 * (re-hashed on read) and every interpreter is archived. */
static int reverify(struct world_store *st, const json_t *list, struct world_err *err)
{
	size_t i;
	json_t *d;
	json_array_foreach(list, i, d) {
		const char *id = json_string_value(json_object_get(d, "id"));
		const char *fn = json_string_value(json_object_get(d, "transitionFn"));
		const char *in = json_string_value(json_object_get(d, "interpreter"));
		struct world_object o;
		if (!fn || world_object_get(st, fn, &o, err) < 0) return werr_prefix(err, "re-verify \"%s\"", id);
		int ok = strcmp(o.semantic_id, REGISTRY_SOURCE) == 0;
		world_object_free(&o);
		if (!ok) return werr(err, WX_INTEGRITY, "re-verify \"%s\": transitionFn %s is not a %s", id, fn, REGISTRY_SOURCE);
		struct world_interp wi;
		if (!in || world_interp_get(st, in, &wi, err) < 0) return werr_prefix(err, "re-verify \"%s\"", id);
	}
	return 0;
}

/* Compare with the head, then (unless unchanged) store the sources,
 * re-verify, write the next registry object and swap the head: one
 * transaction per attempt; a head that moved is re-read up to
 * CAS_ATTEMPTS times. base is the caller's reference. */
static int publish(struct world_store *st, const struct registry_change *c, const json_t *base, const char *base_head,
                   long long base_rev, long long *rev_out, char head_out[WORLD_REF_SIZE], int *published,
                   struct world_err *err)
{
	json_t *basecopy = base ? json_incref((json_t *)base) : NULL;
	char bhead[WORLD_REF_SIZE];
	snprintf(bhead, sizeof bhead, "%s", base_head);
	long long brev = base_rev;
	for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
		json_t *list = merged(basecopy, c->descs);
		if (!list) { json_decref(basecopy); return werr(err, WX_FAIL, "publish: out of memory"); }
		if (json_array_size(list) > REGISTRY_ENTRIES_MAX) {
			size_t n = json_array_size(list);
			json_decref(list);
			json_decref(basecopy);
			return too_many(n, brev, err);
		}
		json_t *retired = retired_after(basecopy, c->descs);
		if (basecopy && registry_same_json(list, json_object_get(basecopy, "transitions")) && extras_same(basecopy, c)) {
			json_decref(retired);
			json_decref(list);
			json_decref(basecopy);
			*published = 0;
			*rev_out = brev;
			snprintf(head_out, WORLD_REF_SIZE, "%s", bhead);
			return 0;
		}
		if (test_rival(st, c, attempt, err) < 0 || world_store_begin(st, err) < 0) {
			json_decref(retired);
			json_decref(list);
			json_decref(basecopy);
			return -1;
		}
		json_t *cur = NULL;
		long long crev = 0;
		char chead[WORLD_REF_SIZE];
		if (registry_load(st, &cur, &crev, chead, err) < 0) goto fail;
		if (strcmp(chead, bhead) != 0) {
			/* another writer won: never clobber its same-id bytes; merge
			 * over its revision otherwise */
			world_store_rollback(st);
			json_decref(list);
			json_decref(retired);
			int cf = same_id_conflict(basecopy, cur, crev, c->descs, err);
			if (cf == 0) cf = extras_conflict(basecopy, cur, crev, c, err);
			json_decref(basecopy);
			if (cf < 0) { json_decref(cur); return -1; }
			basecopy = cur;
			snprintf(bhead, sizeof bhead, "%s", chead);
			brev = crev;
			continue;
		}
		json_decref(cur);
		cur = NULL;
		for (size_t i = 0; i < c->nsources; i++) {
			const struct registry_source *s = &c->sources[i];
			char ref[WORLD_REF_SIZE];
			if (world_object_put(st, REGISTRY_SOURCE, c->provenance, s->text, s->len, ref, NULL, err) < 0) goto fail;
			if (strcmp(ref, s->ref) != 0) {
				werr(err, WX_INTEGRITY, "store source of \"%s\": stored as %s, checked as %s", s->id, ref, s->ref);
				goto fail;
			}
		}
		if (reverify(st, list, err) < 0) goto fail;
		json_t *payload = json_pack("{s:o, s:I, s:O}", "parent", *bhead ? json_string(bhead) : json_null(),
		                            "revision", (json_int_t)(brev + 1), "transitions", list);
		if (payload && ((retired && json_object_set(payload, "retired", retired) < 0) || extras_set(payload, basecopy, c) < 0)) {
			json_decref(payload);
			payload = NULL;
		}
		if (!payload) { werr(err, WX_FAIL, "publish: out of memory"); goto fail; }
		char ref[WORLD_REF_SIZE];
		long long nrev = 0;
		int rc = head_write(st, payload, c->provenance, *bhead ? bhead : NULL, ref, &nrev, err);
		json_decref(payload);
		if (rc < 0) goto fail;
		if (nrev != brev + 1) {
			werr(err, WX_INTEGRITY, "publish: head revision %lld, payload says %lld", nrev, brev + 1);
			goto fail;
		}
		if (world_store_commit(st, err) < 0) goto fail;
		json_decref(list);
		json_decref(retired);
		json_decref(basecopy);
		*published = 1;
		*rev_out = nrev;
		snprintf(head_out, WORLD_REF_SIZE, "%s", ref);
		return 0;
	fail:
		world_store_rollback(st);
		json_decref(cur);
		json_decref(list);
		json_decref(retired);
		json_decref(basecopy);
		if (err->code == WX_CONFLICT)
			return werr(err, WX_CONFLICT, "the registry head kept moving during publish; re-run the command");
		return -1;
	}
	json_decref(basecopy);
	return werr(err, WX_CONFLICT, "the registry head kept moving during publish; re-run the command");
}

int registry_publish(struct world_store *st, const struct registry_change *c, json_t **before, long long *rev,
                     char head[WORLD_REF_SIZE], int *published, struct world_err *err)
{
	*before = NULL;
	*published = 0;
	long long brev = 0;
	char bhead[WORLD_REF_SIZE];
	if (registry_load(st, before, &brev, bhead, err) < 0) return -1;
	return publish(st, c, *before, bhead, brev, rev, head, published, err);
}

/* The next revision's payload over cur: the live ids of ids[] taken out of
 * "transitions" and added to "retired" at revision rev (new reference). */
static json_t *retired_payload(const json_t *cur, const char *head, long long rev, char *const *ids, int n)
{
	json_t *tr = json_array(), *all[REGISTRY_ENTRIES_MAX * 2 + 1];
	size_t k = 0, i;
	json_t *d;
	json_array_foreach(json_object_get(cur, "transitions"), i, d) {
		const char *id = json_string_value(json_object_get(d, "id"));
		int gone = 0;
		for (int j = 0; j < n && id; j++)
			if (strcmp(ids[j], id) == 0) gone = 1;
		if (gone) {
			if (k < REGISTRY_ENTRIES_MAX * 2) all[k++] = json_pack("{s:s, s:I}", "id", id, "revision", (json_int_t)rev);
		} else {
			json_array_append(tr, d);
		}
	}
	json_array_foreach(json_object_get(cur, "retired"), i, d)
		if (k < REGISTRY_ENTRIES_MAX * 2) all[k++] = json_incref(d);
	qsort(all, k, sizeof *all, by_id);
	json_t *ret = json_array();
	for (size_t j = 0; j < k; j++) json_array_append_new(ret, all[j]);
	json_t *payload = json_pack("{s:o, s:o, s:I, s:o}", "parent", json_string(head), "retired", ret, "revision",
	                            (json_int_t)rev, "transitions", tr);
	/* a retire keeps the prompts and resources as they are */
	if (payload && extras_set(payload, cur, NULL) < 0) {
		json_decref(payload);
		payload = NULL;
	}
	return payload;
}

static int live_count(const json_t *cur, char *const *ids, int n)
{
	int live = 0;
	for (int j = 0; j < n; j++)
		if (registry_find(cur, ids[j])) live++;
	return live;
}

int registry_retire_check(struct world_store *st, char *const *ids, int n, json_t **cur, long long *rev,
                          char head[WORLD_REF_SIZE], int *live, struct world_err *err)
{
	*live = 0;
	if (registry_load(st, cur, rev, head, err) < 0) return -1;
	if (!*cur)
		return werr(err, WX_NOT_FOUND, "nothing is published in %s (no world/transition-registry/v1)",
		            world_store_path(st));
	/* every id must be published or retired already: a typo changes nothing */
	for (int j = 0; j < n; j++)
		if (!registry_find(*cur, ids[j]) && !registry_retired_find(*cur, ids[j]))
			return werr(err, WX_NOT_FOUND, "\"%s\" is not published in %s (revision %lld); nothing was retired",
			            ids[j], world_store_path(st), *rev);
	*live = live_count(*cur, ids, n);
	return 0;
}

int registry_retire(struct world_store *st, char *const *ids, int n, const char *provenance, json_t **before,
                    json_t **after, long long *rev, char head[WORLD_REF_SIZE], struct world_err *err)
{
	*before = *after = NULL;
	/* one IMMEDIATE transaction: what it reads is what it swaps from */
	if (world_store_begin(st, err) < 0) return -1;
	struct world_err le = { 0 };
	if (registry_load(st, before, rev, head, &le) < 0 || !*before) {
		world_store_rollback(st);
		if (!*before && !le.code) return werr(err, WX_CONFLICT, "the registry head was removed meanwhile");
		if (err) *err = le;
		return -1;
	}
	if (!live_count(*before, ids, n)) {
		/* retired meanwhile: nothing to write */
		world_store_rollback(st);
		return 0;
	}
	json_t *payload = retired_payload(*before, head, *rev + 1, ids, n);
	if (!payload) {
		world_store_rollback(st);
		return werr(err, WX_FAIL, "retire: out of memory");
	}
	char ref[WORLD_REF_SIZE];
	long long nrev = 0;
	if (head_write(st, payload, provenance, head, ref, &nrev, err) < 0 || world_store_commit(st, err) < 0) {
		world_store_rollback(st);
		json_decref(payload);
		return -1;
	}
	*after = payload;
	*rev = nrev;
	memcpy(head, ref, WORLD_REF_SIZE);
	return 0;
}
