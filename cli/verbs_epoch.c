/* cli/verbs_epoch.c: the worldd verbs of the epoch registry (see
 * cli/verbs.h, coordinator/registry.h): `epoch bootstrap` (archive the
 * interpreter and nominate its release as epoch 1 of a store, as
 * `worldd serve` does at start), `epoch nominate` (attended: a new
 * interpreter release as the next epoch of a bootstrapped store), `epoch
 * admit` (attended: new bytes under a release an epoch nominates) and
 * `epoch show`. */
#include "cli/store_uri.h"
#include "cli/attended.h"
#include "cli/default_interp.h"
#include "cli/flags.h"
#include "cli/verbs.h"
#include "store/tree.h"
#include "coordinator/registry.h"
#include "common/canon.h"
#include "store/db.h"
#include "store/open_opts.h"
#include "store/store.h"
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	/* as every verb: without --ailang-bin, the installed interpreter */
	if (!show && !o->bin) o->bin = cli_default_ailang_bin();
	return 0;
}

/* 1 when path exists (as anything), 0 when not; -1 with err otherwise. */
static int path_exists(const char *path, struct world_err *err)
{
	struct stat sb;
	if (lstat(path, &sb) == 0) return 1;
	if (errno == ENOENT) return 0;
	return werr(err, WX_IO, "store %s: stat: %s", path, strerror(errno));
}

/* Removes a file this invocation created; a failure is added to err's
 * line (the refusal stays the cause). */
static void remove_made(const char *path, int dir, struct world_err *err)
{
	if ((dir ? rmdir(path) : unlink(path)) == 0 || errno == ENOENT) return;
	size_t n = strlen(err->msg);
	snprintf(err->msg + n, sizeof err->msg - n, "; removing %s failed: %s", path, strerror(errno));
}

/* A failed bootstrap that created the store leaves none behind: the
 * database and its -wal/-shm/-journal, and the archive directories it
 * made (the archive removes its own files on a refusal; an interpreter
 * archived before a later refusal goes with them). */
static void bootstrap_undo(const char *db, int made_artifacts, const struct world_interp *wi, struct world_err *err)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	char p[8500];
	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
		snprintf(p, sizeof p, "%s%s", db, sfx[i]);
		remove_made(p, 0, err);
	}
	if (!made_artifacts) return;
	if (wi->path[0]) {
		remove_made(wi->path, 0, err);
		char dir[4200];
		snprintf(dir, sizeof dir, "%s", wi->path);
		char *slash = strrchr(dir, '/');
		if (slash) {
			*slash = 0;
			snprintf(p, sizeof p, "%s/manifest.json", dir);
			remove_made(p, 0, err);
			remove_made(dir, 1, err);
		}
	}
	static const char *const dirs[] = { ".artifacts/interpreters/sha256", ".artifacts/interpreters", ".artifacts" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(p, sizeof p, "%s%s", db, dirs[i]);
		remove_made(p, 1, err);
	}
}

static int bootstrap_run(int argc, char **argv)
{
	const char *verb = "epoch bootstrap";
	struct epoch_opts o;
	int u = epoch_opts(verb, argc, argv, &o, 0);
	if (u) return u;
	struct world_err err = { 0, "" };
	char arts[4200];
	if (snprintf(arts, sizeof arts, "%s.artifacts", o.store) >= (int)sizeof arts) {
		char shown[600];
		world_store_name_redact(o.store, shown, sizeof shown);
		werr(&err, WX_USAGE, "store %s: name too long", shown);
		return worldd_fail(verb, &err);
	}
	/* A postgresql:// store has no file here, and nothing named after its
	 * URI is ever touched: the archive row and the registry are written in
	 * one transaction, which a failure rolls back (the schema the open
	 * made for an empty database stays: an empty store). */
	int pg = wdb_kind_of(o.store) == WDB_PG;
	int had_db = pg ? 1 : path_exists(o.store, &err), had_arts = pg ? 1 : had_db < 0 ? -1 : path_exists(arts, &err);
	if (had_db < 0 || had_arts < 0) return worldd_fail(verb, &err);
	struct world_store *st;
	if (worldd_store_open(o.store, WORLD_STORE_WRITER, o.wait_lock, &st, &err) < 0) return worldd_fail(verb, &err);
	struct world_interp wi;
	memset(&wi, 0, sizeof wi);
	long long epoch = 0;
	int created = 0;
	int rc = pg ? world_store_begin(st, &err) : 0;
	if (rc == 0) rc = world_archive_interpreter(st, o.bin, &wi, &err);
	if (rc == 0) rc = registry_epoch_bootstrap(st, &wi, &epoch, &created, &err);
	if (pg && rc == 0) rc = world_store_commit(st, &err);
	else if (pg) world_store_rollback(st);
	/* a new store gets the log's signing key (store/tree.h):
	 * when it has none and no entry yet, the signer key to DB.log-key
	 * (0600), its verifier key into the store; an existing store gets one
	 * from the attended `worldd log key init` */
	char vkey[1024] = "", kpath[4400] = "";
	if (rc == 0) {
		char have[1024];
		long long size = -1;
		struct world_err ke = { 0, "" };
		if (world_log_key_get(st, have, sizeof have, &ke) < 0 && ke.code == WX_NOT_FOUND &&
		    world_tree_size(st, &size, &ke) == 0 && size == 0 &&
		    world_log_key_path(st, kpath, sizeof kpath, 1, &ke) == 0 &&
		    world_log_key_init(st, kpath, NULL, 0, vkey, sizeof vkey, &ke) < 0) {
			rc = -1;
			err = ke;
		}
	}
	/* created the store file, and nothing (not even a racing bootstrap)
	 * wrote an epoch registry into it: remove what this invocation made */
	int undo = !pg && rc < 0 && !had_db && registry_epochs_exist(st, NULL) == 0;
	world_store_close(st);
	if (undo) bootstrap_undo(o.store, !had_arts, &wi, &err);
	if (rc < 0) return worldd_fail(verb, &err);
	if (created)
		printf("bootstrapped world/epoch-registry/v1: epoch %lld = interpreter release \"%s\" (interpreter %s)\n",
		       epoch, wi.version, wi.ref);
	else
		printf("world/epoch-registry/v1 already nominates interpreter release \"%s\" as epoch %lld; unchanged "
		       "(interpreter %s)\n",
		       wi.version, epoch, wi.ref);
	if (*vkey) fprintf(stderr, "worldd epoch bootstrap: log key %s (signer key in %s, 0600; worldd log key)\n", vkey, kpath);
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
	if (worldd_store_open(o.store, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, o.wait_lock, &st, &err) < 0) return worldd_fail(verb, &err);
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
	         o.bin, wi.ref, wi.version, epoch, refs, epoch, world_store_path(st));
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

static int nominate_run(int argc, char **argv)
{
	const char *verb = "epoch nominate";
	struct epoch_opts o;
	int u = epoch_opts(verb, argc, argv, &o, 0);
	if (u) return u;
	struct world_err err = { 0, "" };
	/* a store that is not there is never created here */
	int have = wdb_kind_of(o.store) == WDB_PG ? 1 : path_exists(o.store, &err);
	if (have < 0) return worldd_fail(verb, &err);
	if (!have) {
		werr(&err, WX_NOT_FOUND,
		     "store %s: %s; nothing created (a new store starts with worldd epoch bootstrap --store %s "
		     "--ailang-bin BIN)",
		     o.store, strerror(ENOENT), o.store);
		return worldd_fail(verb, &err);
	}
	struct world_store *st;
	if (worldd_store_open(o.store, WORLD_STORE_WRITER, o.wait_lock, &st, &err) < 0) return worldd_fail(verb, &err);
	int code = WX_OK;
	/* BIN read, not archived: nothing is written before the confirmation */
	struct world_interp pw, wi;
	long long epoch = 0, got = 0;
	int already = 0, created = 0;
	char head[WORLD_REF_SIZE];
	if (world_interp_probe(o.bin, &pw, &err) < 0 || registry_epoch_nominee(st, &pw, &epoch, &already, &err) < 0) {
		code = worldd_fail(verb, &err);
		goto out;
	}
	if (already) {
		printf("world/epoch-registry/v1 already nominates interpreter release \"%s\" as epoch %lld, which admits "
		       "interpreter %s; unchanged\n",
		       pw.version, epoch, pw.ref);
		goto out;
	}
	char intro[2400], phrase[400];
	snprintf(intro, sizeof intro,
	         "Interpreter %s (%s) prints release \"%s\", which no epoch of %s nominates.\n"
	         "Type exactly, to nominate it as semantics epoch %lld (its bytes admitted) of %s:",
	         o.bin, pw.ref, pw.version, world_store_path(st), epoch, world_store_path(st));
	snprintf(phrase, sizeof phrase, "nominate %s as epoch %lld", pw.version, epoch);
	struct attended_stop stop;
	if (attended_confirm_phrase(intro, phrase, &stop) < 0) {
		code = attended_report(stderr, &stop);
		goto out;
	}
	if (world_archive_interpreter(st, o.bin, &wi, &err) < 0) {
		code = worldd_fail(verb, &err);
		goto out;
	}
	if (strcmp(wi.ref, pw.ref) != 0 || strcmp(wi.version, pw.version) != 0) {
		werr(&err, WX_HASH_MISMATCH,
		     "interpreter %s changed while nominating (%s \"%s\" confirmed, %s \"%s\" archived); nothing "
		     "nominated",
		     o.bin, pw.ref, pw.version, wi.ref, wi.version);
		code = worldd_fail(verb, &err);
		goto out;
	}
	if (registry_epoch_nominate(st, &wi, epoch, &got, &created, head, &err) < 0) {
		code = worldd_fail(verb, &err);
		goto out;
	}
	if (created)
		printf("nominated interpreter release \"%s\" as epoch %lld (interpreter %s admitted); "
		       "world/epoch-registry/v1 head %s\n",
		       wi.version, got, wi.ref, head);
	else
		printf("world/epoch-registry/v1 already nominates interpreter release \"%s\" as epoch %lld, which admits "
		       "interpreter %s; unchanged\n",
		       wi.version, got, wi.ref);
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
	if (worldd_store_open(o.store, WORLD_STORE_READER, 0, &st, &err) < 0) return worldd_fail(verb, &err);
	char head[WORLD_REF_SIZE];
	long long rev = 0;
	struct world_object obj = { 0 };
	json_t *payload = NULL;
	int code = WX_OK;
	if (world_registry_head_get(st, REGISTRY_EPOCHS, head, &rev, &err) < 0) {
		if (err.code == WX_NOT_FOUND)
			werr(&err, WX_NOT_FOUND, "%s: no epoch registry in this store (worldd epoch bootstrap --store %s "
			     "--ailang-bin BIN writes it)", world_store_path(st), world_store_path(st));
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
	  "usage: worldd epoch bootstrap --store DB [--ailang-bin BIN] [--wait-lock SECONDS]\n\n"
	  "BIN is the interpreter; default the installed ailang-lite (worldd --help names it).\n"
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
	  "  4  interpreter not found (a store this invocation created is removed again on any\n"
	  "     refusal: no DB, DB-wal, DB-shm or DB.artifacts is left)\n"
	  "  5  another writer's transaction outlasted --wait-lock (default 5 s)\n"
	  "  8  the store is bound to another interpreter release (worldd epoch nominate makes it the\n"
	  "     next epoch), or BIN's bytes are not admitted to its epoch (worldd epoch admit)\n"
	  "  3  BIN is not a static ELF\n"
	  " 14  BIN --version failed or printed no release line (NAME vX.Y.Z)\n",
	  bootstrap_run },
	{ "epoch nominate", "nominate a new interpreter release as the next epoch of a store (attended)",
	  "usage: worldd epoch nominate --store DB [--ailang-bin BIN] [--wait-lock SECONDS]\n\n"
	  "BIN is the interpreter; default the installed ailang-lite (worldd --help names it).\n"
	  "Upgrading the interpreter: on a store that already has world/epoch-registry/v1 (worldd\n"
	  "epoch bootstrap), worldd serve, world-publish transitions and worldd epoch bootstrap refuse\n"
	  "a BIN whose release string (first line of BIN --version) no epoch nominates. This verb\n"
	  "reads BIN (its sha256 and release; nothing is archived yet), shows them and the next epoch\n"
	  "N (the highest + 1), and after the typed confirmation \"nominate RELEASE as epoch N\" at\n"
	  "the controlling terminal (never headless: CI set, no terminal or a redirected stdin refuse,\n"
	  "as worldd epoch admit) archives BIN and writes the next world/epoch-registry/v1 revision\n"
	  "with epoch N nominating the release and admitting BIN's bytes (\"attended\"), in one short\n"
	  "transaction, the head moved by compare-and-swap. Entries of older epochs keep theirs;\n"
	  "descriptors published with BIN get epoch N. A release already nominated whose epoch admits\n"
	  "BIN's bytes: nothing written, exit 0; other bytes under it: worldd epoch admit. The store\n"
	  "must exist (nothing is created) and have an epoch registry.\n\n"
	  WORLDD_WAIT_LOCK_HELP "\n"
	  "exit codes:\n"
	  "  0  nominated, or already nominated with these bytes admitted\n"
	  "  2  usage\n"
	  "  4  store absent (nothing created), no epoch registry (worldd epoch bootstrap), or\n"
	  "     interpreter not found\n"
	  "  5  another writer's transaction outlasted --wait-lock (default 5 s)\n"
	  "  8  the release is nominated already with other bytes (worldd epoch admit), nominated\n"
	  "     twice, or the registry moved since the confirmation (re-run)\n"
	  "  3  BIN is not a static ELF\n"
	  " 14  BIN --version failed or printed no release line (NAME vX.Y.Z)\n"
	  " 15  BIN changed between the confirmation and the archive\n"
	  " 20  the attended step refused (STOP fence=...)\n",
	  nominate_run },
	{ "epoch admit", "admit an interpreter's new bytes to the epoch of its release (attended)",
	  "usage: worldd epoch admit --store DB [--ailang-bin BIN] [--wait-lock SECONDS]\n\n"
	  "BIN is the interpreter; default the installed ailang-lite (worldd --help names it).\n"
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
