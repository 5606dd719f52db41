/* cli/verbs_log.c: the worldd verbs of the verifiable log
 * (store/tree.h; docs/provenance.md "A verifiable log"): `log key` (print
 * the store's verifier key; `log key init`, attended, makes the signing
 * key of an existing store), `log checkpoint` (print the latest signed
 * checkpoint; --sign signs one now with the key file), `log prove`
 * (inclusion and consistency proofs, one base64 hash a line). `log get N
 * --leaf` is in verbs_store.c beside `log get`. */
#include "cli/attended.h"
#include "cli/flags.h"
#include "cli/store_uri.h"
#include "cli/verbs.h"
#include "store/tree.h"
#include "tlog/note.h"
#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STORE_HELP WORLDD_STORE_URI_HELP

static int open_st(const char *verb, const char *path, int mode, const char *wait_lock, struct world_store **st)
{
	struct world_err err = { 0 };
	if (!path) return worldd_usage(verb, "--store DB is required");
	double wait = 0;
	int rc = worldd_wait_lock(verb, wait_lock, &wait);
	if (rc) return rc;
	if (worldd_store_open(path, mode, wait, st, &err) < 0) return worldd_fail(verb, &err);
	return 0;
}

static int out_done(const char *verb)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "worldd %s: write stdout: %s\n", verb, strerror(errno));
		return WX_IO;
	}
	return WX_OK;
}

/* the key file: --log-key FILE, else the store's default (make_dirs for a
 * PostgreSQL store's cache directory when a key is to be written) */
static int key_path(const char *verb, struct world_store *st, const char *flag, int make_dirs, char *path, size_t n)
{
	if (flag) {
		if (!*flag) return worldd_usage(verb, "--log-key needs a file");
		snprintf(path, n, "%s", flag);
		return 0;
	}
	struct world_err err = { 0 };
	if (world_log_key_path(st, path, n, make_dirs, &err) < 0) return worldd_fail(verb, &err);
	return 0;
}

/* ---- log key [init] ---- */

static int v_log_key(int argc, char **argv)
{
	const char *V = "log key";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--log-key", .has_value = 1 },
		                   { .name = "--origin", .has_value = 1 }, { .name = "--wait-lock", .has_value = 1 },
		                   { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(V, argc, argv, f, pos, 1, &npos);
	if (rc) return rc;
	int init = npos == 1 && strcmp(pos[0], "init") == 0;
	if (npos == 1 && !init) return worldd_usage(V, "unknown word '%s' (want: worldd log key [init])", pos[0]);
	if (!init && (f[1].value || f[2].value || f[3].value))
		return worldd_usage(V, "--log-key, --origin and --wait-lock belong to `worldd log key init`");
	struct world_store *st;
	struct world_err err = { 0 };
	if (!init) {
		if ((rc = open_st(V, f[0].value, WORLD_STORE_READER, NULL, &st))) return rc;
		char vkey[1024];
		rc = world_log_key_get(st, vkey, sizeof vkey, &err) < 0 ? worldd_fail(V, &err) : 0;
		world_store_close(st);
		if (rc) return rc;
		printf("%s\n", vkey);
		return out_done(V);
	}
	const char *VI = "log key init";
	if (f[2].value && (!*f[2].value || strlen(f[2].value) > NOTE_NAME_MAX))
		return worldd_usage(VI, "--origin needs 1 to %d bytes", NOTE_NAME_MAX);
	/* the store judged before the question: a question we then cannot act
	 * on wastes the operator's attention */
	if ((rc = open_st(VI, f[0].value, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, f[3].value, &st))) return rc;
	char path[4400], have[1024];
	if ((rc = key_path(VI, st, f[1].value, 1, path, sizeof path))) {
		world_store_close(st);
		return rc;
	}
	if (world_log_key_get(st, have, sizeof have, &err) == 0) {
		werr(&err, WX_CONFLICT, "store %s has a log key already (%s); nothing changed", world_store_path(st), have);
		world_store_close(st);
		return worldd_fail(VI, &err);
	} else if (err.code != WX_NOT_FOUND) {
		world_store_close(st);
		return worldd_fail(VI, &err);
	}
	char question[4800];
	snprintf(question, sizeof question,
	         "Make the log signing key of store %s (signer key to %s, 0600; its verifier key into the store)? [y/N] ",
	         world_store_path(st), path);
	struct attended_stop stop;
	if (attended_confirm_yes(question, &stop) < 0) {
		world_store_close(st);
		return attended_report(stderr, &stop);
	}
	char vkey[1024];
	rc = world_log_key_init(st, path, f[2].value, 0, vkey, sizeof vkey, &err);
	long long size = 0;
	if (rc == 0) world_tree_size(st, &size, &err);
	world_store_close(st);
	if (rc < 0) return worldd_fail(VI, &err);
	printf("%s\n", vkey);
	fprintf(stderr, "worldd log key init: signer key in %s (0600; keep it beside the store, never in it); first "
	                "checkpoint signed at tree size %lld\n", path, size);
	return out_done(VI);
}

/* ---- log checkpoint ---- */

static int v_log_checkpoint(int argc, char **argv)
{
	const char *V = "log checkpoint";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--sign" },
		                   { .name = "--log-key", .has_value = 1 }, { .name = "--wait-lock", .has_value = 1 },
		                   { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(V, argc, argv, f, pos, 0, &npos);
	if (rc) return rc;
	if (!f[1].value && (f[2].value || f[3].value)) return worldd_usage(V, "--log-key and --wait-lock need --sign");
	struct world_store *st;
	struct world_err err = { 0 };
	if ((rc = open_st(V, f[0].value, f[1].value ? WORLD_STORE_WRITER | WORLD_STORE_EXISTING : WORLD_STORE_READER,
	                  f[3].value, &st)))
		return rc;
	if (f[1].value) {
		char path[4400];
		char *skey = NULL;
		if ((rc = key_path(V, st, f[2].value, 0, path, sizeof path))) {
			world_store_close(st);
			return rc;
		}
		if (world_log_key_read(path, &skey, &err) < 0 || world_tree_set_signer(st, skey, &err) < 0 ||
		    world_tree_sign_now(st, &err) < 0)
			rc = worldd_fail(V, &err);
		if (skey) {
			OPENSSL_cleanse(skey, strlen(skey));
			free(skey);
		}
		if (rc) {
			world_store_close(st);
			return rc;
		}
	}
	char *note = NULL;
	long long size = 0;
	rc = world_log_checkpoint_get(st, &note, &size, &err) < 0 ? worldd_fail(V, &err) : 0;
	world_store_close(st);
	if (rc) return rc;
	fputs(note, stdout);
	free(note);
	return out_done(V);
}

/* ---- log prove ---- */

static int v_log_prove(int argc, char **argv)
{
	const char *V = "log prove";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--index", .has_value = 1 },
		                   { .name = "--size", .has_value = 1 }, { .name = "--from", .has_value = 1 },
		                   { .name = "--to", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(V, argc, argv, f, pos, 0, &npos);
	if (rc) return rc;
	int incl = f[1].value || f[2].value, cons = f[3].value || f[4].value;
	if (incl == cons)
		return worldd_usage(V, "give either --index N --size S (inclusion) or --from A --to B (consistency)");
	long long a = 0, b = 0;
	if (incl) {
		if (!f[1].value || !f[2].value) return worldd_usage(V, "inclusion needs both --index N and --size S");
		if ((rc = worldd_flag_ll(V, "--index", f[1].value, 1, (1LL << 62), &a)) ||
		    (rc = worldd_flag_ll(V, "--size", f[2].value, 1, (1LL << 62), &b)))
			return rc;
	} else {
		if (!f[3].value || !f[4].value) return worldd_usage(V, "consistency needs both --from A and --to B");
		if ((rc = worldd_flag_ll(V, "--from", f[3].value, 1, (1LL << 62), &a)) ||
		    (rc = worldd_flag_ll(V, "--to", f[4].value, 1, (1LL << 62), &b)))
			return rc;
		if (a > b) return worldd_usage(V, "--from %lld is past --to %lld", a, b);
	}
	struct world_store *st;
	if ((rc = open_st(V, f[0].value, WORLD_STORE_READER, NULL, &st))) return rc;
	struct world_err err = { 0 };
	struct tlog_hash p[TLOG_MAX_PROOF];
	size_t n = 0;
	int r = incl ? world_tree_prove_inclusion(st, a, b, p, &n, &err) : world_tree_prove_consistency(st, a, b, p, &n, &err);
	world_store_close(st);
	if (r < 0) return worldd_fail(V, &err);
	for (size_t i = 0; i < n; i++) {
		char b64[45];
		tlog_hash_b64(&p[i], b64);
		printf("%s\n", b64);
	}
	return out_done(V);
}

const struct worldd_verb log_verbs[] = {
	{ "log key", "print the log's verifier key; `log key init` makes the signing key (attended)",
	  "usage: worldd log key --store DB\n"
	  "       worldd log key init --store DB [--log-key FILE] [--origin NAME] [--wait-lock SECONDS]\n"
	  "  Prints the store's verifier key, the signed-note form NAME+KEYHASH+BASE64 that\n"
	  "  checks its checkpoints (world-verify, Go's sumdb/note). Read-only.\n"
	  "  init: makes the Ed25519 signing key of an existing store (a new one gets it from\n"
	  "  worldd epoch bootstrap): the signer key goes to FILE (default DB.log-key; for a\n"
	  "  postgresql:// store CACHE/log-keys/NAME.log-key in the host's cache directory),\n"
	  "  0600, never into the store; its verifier key into the store; the first checkpoint\n"
	  "  is signed at once. NAME, the checkpoints' origin line, defaults to\n"
	  "  world/<32 random hex digits>. Attended: it asks on the controlling terminal\n"
	  "  (Confirm ... [y/N]) and refuses under CI=true or without a terminal (exit 20).\n"
	  "  A store that has a key, or a FILE that exists, is refused and nothing changes.\n"
	  "  Prints the verifier key.\n"
	  WORLDD_WAIT_LOCK_HELP
	  STORE_HELP
	  "exit codes: 0 ok, 2 usage, 4 no store / no key yet, 5 store busy, 6 schema (open it\n"
	  "            once with a writer), 8 a key exists already, 9 I/O, 20 attended step refused\n",
	  v_log_key },
	{ "log checkpoint", "print the latest signed checkpoint of the log",
	  "usage: worldd log checkpoint --store DB [--sign [--log-key FILE] [--wait-lock SECONDS]]\n"
	  "  Prints the latest signed checkpoint (a C2SP tlog-checkpoint in a C2SP signed note:\n"
	  "  origin, tree size, base64 root hash, a blank line, the Ed25519 signature line),\n"
	  "  byte for byte as stored. A daemon holding the key signs one after each commit\n"
	  "  batch; --sign signs one of the tree as it is now with the key file (default the\n"
	  "  store's, as for log key init) and prints it.\n"
	  WORLDD_WAIT_LOCK_HELP
	  STORE_HELP
	  "exit codes: 0 ok, 2 usage, 3 key file malformed or not 0600, 4 no store, no checkpoint\n"
	  "            yet or no key file, 6 schema, 8 the key file is not the store's key, 9 I/O\n",
	  v_log_checkpoint },
	{ "log prove", "an inclusion or consistency proof of the log's Merkle tree",
	  "usage: worldd log prove --store DB --index N --size S\n"
	  "       worldd log prove --store DB --from A --to B\n"
	  "  --index N --size S: the proof that entry N (leaf N-1, its bytes those of\n"
	  "  worldd log get N --leaf) is in the tree of the first S entries.\n"
	  "  --from A --to B: the proof that the tree of A entries is a prefix of the tree\n"
	  "  of B entries. Prints one base64 hash per line in RFC 6962 order (nothing for an\n"
	  "  empty proof); world-verify and Go's sumdb/tlog check it against checkpoints.\n"
	  "  Read-only.\n"
	  STORE_HELP
	  "exit codes: 0 ok, 2 usage, 4 a size past the tree or an index past the size,\n"
	  "            6 schema, 7 a stored hash missing or damaged, 9 I/O\n",
	  v_log_prove },
	{ NULL, NULL, NULL, NULL },
};
