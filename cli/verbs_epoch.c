/* cli/verbs_epoch.c: the worldd verbs of the epoch registry (see
 * cli/verbs.h, coordinator/registry.h): `epoch bootstrap` (archive the
 * interpreter and nominate its release as epoch 1 of a store, as
 * `worldd serve` does at start), `epoch admit` (attended: new bytes under
 * a release an epoch nominates) and `epoch show`. */
#include "cli/attended.h"
#include "cli/flags.h"
#include "cli/verbs.h"
#include "coordinator/registry.h"
#include "store/canon.h"
#include "store/store.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct epoch_opts {
	const char *store, *bin;
	int json;
	double wait_lock;
};

static int epoch_opts(const char *verb, int argc, char **argv, struct epoch_opts *o, int show)
{
	memset(o, 0, sizeof *o);
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--ailang-bin", .has_value = 1 },
		                   { .name = "--wait-lock", .has_value = 1 }, { .name = NULL } };
	if (show) f[1].name = "--json", f[1].has_value = 0, f[2].name = NULL;
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 0, &npos);
	if (rc) return rc;
	o->store = f[0].value;
	if (show) o->json = f[1].value != NULL;
	else if ((rc = worldd_wait_lock(verb, f[2].value, &o->wait_lock))) return rc;
	else o->bin = f[1].value;
	if (!o->store) return worldd_usage(verb, "--store DB is required");
	if (!show && !o->bin) return worldd_usage(verb, "--ailang-bin BIN is required");
	return 0;
}

static int bootstrap_run(int argc, char **argv)
{
	const char *verb = "epoch bootstrap";
	struct epoch_opts o;
	int u = epoch_opts(verb, argc, argv, &o, 0);
	if (u) return u;
	struct world_err err = { 0, "" };
	struct world_store *st;
	if (world_store_open_wait(o.store, WORLD_STORE_WRITER, o.wait_lock, &st, &err) < 0) return worldd_fail(verb, &err);
	struct world_interp wi;
	long long epoch = 0;
	int created = 0;
	int rc = world_archive_interpreter(st, o.bin, &wi, &err);
	if (rc == 0) rc = registry_epoch_bootstrap(st, &wi, &epoch, &created, &err);
	world_store_close(st);
	if (rc < 0) return worldd_fail(verb, &err);
	if (created)
		printf("bootstrapped world/epoch-registry/v1: epoch %lld = interpreter release \"%s\" (interpreter %s)\n",
		       epoch, wi.version, wi.ref);
	else
		printf("world/epoch-registry/v1 already nominates interpreter release \"%s\" as epoch %lld; unchanged "
		       "(interpreter %s)\n",
		       wi.version, epoch, wi.ref);
	return WX_OK;
}

static int admit_run(int argc, char **argv)
{
	const char *verb = "epoch admit";
	struct epoch_opts o;
	int u = epoch_opts(verb, argc, argv, &o, 0);
	if (u) return u;
	struct world_err err = { 0, "" };
	struct world_store *st;
	if (world_store_open_wait(o.store, WORLD_STORE_WRITER, o.wait_lock, &st, &err) < 0) return worldd_fail(verb, &err);
	struct world_interp wi;
	long long epoch = 0;
	int admitted = 0, added = 0, code = WX_OK;
	char refs[1024], head[WORLD_REF_SIZE];
	if (world_archive_interpreter(st, o.bin, &wi, &err) < 0 ||
	    registry_epoch_admission(st, &wi, &epoch, &admitted, refs, sizeof refs, &err) < 0) {
		code = worldd_fail(verb, &err);
		goto out;
	}
	if (admitted) {
		printf("interpreter %s is already admitted to epoch %lld (release \"%s\"); unchanged\n", wi.ref, epoch,
		       wi.version);
		goto out;
	}
	char intro[2400], phrase[160];
	snprintf(intro, sizeof intro,
	         "Interpreter %s (%s) prints release \"%s\" of epoch %lld, which admits %s.\n"
	         "Type exactly, to admit these new bytes to epoch %lld of %s:",
	         o.bin, wi.ref, wi.version, epoch, refs, epoch, o.store);
	snprintf(phrase, sizeof phrase, "admit %s to epoch %lld", wi.ref, epoch);
	struct attended_stop stop;
	if (attended_confirm_phrase(intro, phrase, &stop) < 0) {
		code = attended_report(stderr, &stop);
		goto out;
	}
	if (registry_epoch_admit(st, &wi, &epoch, &added, head, &err) < 0) {
		code = worldd_fail(verb, &err);
		goto out;
	}
	if (added)
		printf("admitted interpreter %s to epoch %lld (release \"%s\") beside %s; world/epoch-registry/v1 head %s\n",
		       wi.ref, epoch, wi.version, refs, head);
	else
		printf("interpreter %s is already admitted to epoch %lld (release \"%s\"); unchanged\n", wi.ref, epoch,
		       wi.version);
out:
	world_store_close(st);
	return code;
}

static int show_run(int argc, char **argv)
{
	const char *verb = "epoch show";
	struct epoch_opts o;
	int u = epoch_opts(verb, argc, argv, &o, 1);
	if (u) return u;
	struct world_err err = { 0, "" };
	struct world_store *st;
	if (world_store_open(o.store, WORLD_STORE_READER, &st, &err) < 0) return worldd_fail(verb, &err);
	char head[WORLD_REF_SIZE];
	long long rev = 0;
	struct world_object obj = { 0 };
	json_t *payload = NULL;
	int code = WX_OK;
	if (world_registry_head_get(st, REGISTRY_EPOCHS, head, &rev, &err) < 0) {
		if (err.code == WX_NOT_FOUND)
			werr(&err, WX_NOT_FOUND, "%s: no epoch registry in this store (worldd epoch bootstrap --store %s "
			     "--ailang-bin BIN writes it)", o.store, o.store);
		code = worldd_fail(verb, &err);
		goto out;
	}
	if (world_object_get(st, head, &obj, &err) < 0) { code = worldd_fail(verb, &err); goto out; }
	payload = world_json_parse((const char *)obj.payload, obj.len, &err);
	json_t *epochs = payload ? json_object_get(payload, "epochs") : NULL;
	if (!json_is_array(epochs) || strcmp(obj.semantic_id, REGISTRY_EPOCHS) != 0) {
		if (!err.msg[0]) werr(&err, WX_INTEGRITY, "epoch registry head %s: not a %s object", head, REGISTRY_EPOCHS);
		else werr_prefix(&err, "epoch registry head %s", head);
		if (err.code != WX_INTEGRITY) err.code = WX_INTEGRITY;
		code = worldd_fail(verb, &err);
		goto out;
	}
	if (o.json) {
		json_t *all = json_pack("{s:O, s:s, s:I}", "epochs", epochs, "head", head, "revision", (json_int_t)rev);
		size_t n;
		char *text = all ? world_canon_json(all, &n, &err) : NULL;
		json_decref(all);
		if (!text) { code = worldd_fail(verb, &err); goto out; }
		printf("%s\n", text);
		free(text);
	} else {
		printf("world/epoch-registry/v1 revision %lld (head %s)\n", rev, head);
		size_t i;
		json_t *e;
		json_array_foreach(epochs, i, e) {
			printf("  epoch %lld: interpreter release \"%s\"\n",
			       (long long)json_integer_value(json_object_get(e, "epoch")),
			       json_string_value(json_object_get(e, "release")) ? json_string_value(json_object_get(e, "release"))
			                                                         : "?");
			json_t *list = json_object_get(e, "interpreters"), *a;
			size_t k;
			if (!list) printf("    (no admission list: the first writer upgrades it, coordinator/registry.h)\n");
			json_array_foreach(list, k, a)
				printf("    admits %s (%s)\n", json_string_value(json_object_get(a, "ref")) ? json_string_value(json_object_get(a, "ref")) : "?",
				       json_string_value(json_object_get(a, "admission")) ? json_string_value(json_object_get(a, "admission")) : "?");
		}
	}
out:
	json_decref(payload);
	if (obj.payload || obj.semantic_id) world_object_free(&obj);
	world_store_close(st);
	return code;
}

const struct worldd_verb epoch_verbs[] = {
	{ "epoch bootstrap", "archive an interpreter and nominate its release as epoch 1 of a store",
	  "usage: worldd epoch bootstrap --store DB --ailang-bin BIN [--wait-lock SECONDS]\n\n"
	  "Archives BIN next to the store (DB.artifacts/, as worldd serve does at start; the store is\n"
	  "created when absent) and, when the store has no world/epoch-registry/v1 yet, writes one\n"
	  "nominating BIN's release string (first line of BIN --version) as semantics epoch 1. A store\n"
	  "already bound to this release is left unchanged; one bound to another release is refused.\n"
	  "world-publish transitions derives the epoch of every descriptor from this registry.\n"
	  "BIN must be an interpreter (worldd archive --help says what is refused).\n\n"
	  WORLDD_WAIT_LOCK_HELP "\n"
	  "exit codes:\n"
	  "  0  bootstrapped, or already nominating this release\n"
	  "  2  usage\n"
	  "  4  interpreter not found\n"
	  "  5  another writer's transaction outlasted --wait-lock (default 5 s)\n"
	  "  8  the store is bound to another interpreter release, or BIN's bytes are not admitted to\n"
	  "     its epoch (worldd epoch admit)\n"
	  "  3  BIN is not a static ELF\n"
	  " 14  BIN --version failed or printed no release line (NAME vX.Y.Z)\n",
	  bootstrap_run },
	{ "epoch admit", "admit an interpreter's new bytes to the epoch of its release (attended)",
	  "usage: worldd epoch admit --store DB --ailang-bin BIN [--wait-lock SECONDS]\n\n"
	  "An epoch admits interpreters by their bytes (sha256), not by their release string:\n"
	  "worldd serve, world-publish transitions and worldd epoch bootstrap refuse a BIN whose\n"
	  "release an epoch nominates but whose bytes it does not admit. This verb archives BIN,\n"
	  "shows the epoch, BIN's hash and the hashes the epoch admits, and after the typed\n"
	  "confirmation \"admit sha256:... to epoch N\" at the controlling terminal (never headless:\n"
	  "CI set, no terminal or a redirected stdin refuse, as worldd session mint) writes the next\n"
	  "world/epoch-registry/v1 revision with BIN's ref admitted (\"attended\"). Already\n"
	  "admitted: nothing written. worldd epoch show lists every admission.\n\n"
	  WORLDD_WAIT_LOCK_HELP "\n"
	  "exit codes:\n"
	  "  0  admitted, or already admitted\n"
	  "  2  usage\n"
	  "  4  interpreter not found; no epoch registry, or no epoch nominates BIN's release\n"
	  "  5  another writer's transaction outlasted --wait-lock (default 5 s)\n"
	  "  8  the release is nominated twice, or the registry head moved\n"
	  "  3  BIN is not a static ELF\n"
	  " 14  BIN --version failed or printed no release line (NAME vX.Y.Z)\n"
	  " 20  the attended step refused (STOP fence=...)\n",
	  admit_run },
	{ "epoch show", "print the epoch registry of a store",
	  "usage: worldd epoch show --store DB [--json]\n\n"
	  "Prints the store's world/epoch-registry/v1 head: its revision and ref, then one line per\n"
	  "epoch (\"  epoch N: interpreter release \\\"R\\\"\"), each followed by the interpreters it\n"
	  "admits (\"    admits REF (bootstrap|attended|upgrade)\"). --json prints\n"
	  "{\"epochs\":[{\"epoch\":N,\"interpreters\":[{\"admission\":A,\"ref\":REF},...],\"release\":R},...],\n"
	  "\"head\":REF,\"revision\":N} (canonical JSON).\n"
	  "Read only: works while the daemon runs.\n\n"
	  "exit codes:\n"
	  "  0  ok\n"
	  "  2  usage\n"
	  "  4  store absent, or no epoch registry in it\n"
	  "  6  not a store / unknown schema version\n"
	  "  7  the registry object is damaged\n",
	  show_run },
	{ NULL, NULL, NULL, NULL },
};
