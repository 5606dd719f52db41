/* cli/verbs_store.c: the worldd verbs of store/ (see cli/verbs.h):
 * json canon, hash, object put/get, log get/append, world head, scan,
 * archive. Read verbs open the store read-only; write verbs as a writer
 * (both work while daemons serve it: no process owns the store). */
#include "cli/store_uri.h"
#include "cli/flags.h"
#include "cli/verbs.h"
#include "common/canon.h"
#include "common/ref.h"
#include "broker/effect.h"
#include "store/scan.h"
#include "store/store.h"
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STDIN_MAX (64u << 20)

/* ---- small helpers ---- */

static int parse_ll(const char *verb, const char *what, const char *s, long long min, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || errno || v < min)
		return worldd_usage(verb, "%s '%s' is not an integer >= %lld", what, s, min);
	*out = v;
	return 0;
}

static char *read_stdin(const char *verb, size_t *len, int *rc)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) goto oom;
	for (;;) {
		if (n == cap) {
			if (cap >= STDIN_MAX) {
				free(buf);
				fprintf(stderr, "worldd %s: stdin: more than %u bytes\n", verb, STDIN_MAX);
				*rc = WX_BAD_INPUT;
				return NULL;
			}
			cap *= 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb) { free(buf); goto oom; }
			buf = nb;
		}
		ssize_t r = read(0, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR) continue;
			fprintf(stderr, "worldd %s: read stdin: %s\n", verb, strerror(errno));
			free(buf);
			*rc = WX_IO;
			return NULL;
		}
		if (r == 0) break;
		n += (size_t)r;
	}
	buf[n] = 0;
	*len = n;
	return buf;
oom:
	fprintf(stderr, "worldd %s: out of memory reading stdin\n", verb);
	*rc = WX_FAIL;
	return NULL;
}

static int write_out(const char *verb, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, stdout) != n) {
		fprintf(stderr, "worldd %s: write stdout: %s\n", verb, strerror(errno));
		return WX_IO;
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "worldd %s: write stdout: %s\n", verb, strerror(errno));
		return WX_IO;
	}
	return WX_OK;
}

/* wait_lock: the --wait-lock value of a writer verb (NULL = the default busy timeout). */
static int open_store(const char *verb, const char *path, int mode, const char *wait_lock, struct world_store **st)
{
	struct world_err err = {0};
	if (!path) return worldd_usage(verb, "--store DB is required");
	double wait = 0;
	int rc = worldd_wait_lock(verb, wait_lock, &wait);
	if (rc) return rc;
	if (worldd_store_open(path, mode, wait, st, &err) < 0) return worldd_fail(verb, &err);
	return 0;
}

/* One canonical JSON line for --json outputs. */
static int print_json(const char *verb, json_t *v)
{
	struct world_err err = {0};
	size_t n;
	char *c = v ? world_canon_json(v, &n, &err) : NULL;
	json_decref(v);
	if (!c) {
		if (!err.code) werr(&err, WX_FAIL, "out of memory");
		return worldd_fail(verb, &err);
	}
	printf("%s\n", c);
	free(c);
	return write_out(verb, "", 0);
}

#define EXIT_CODES_COMMON "exit codes: 0 ok, 2 usage"

/* ---- json canon / hash ---- */

static int v_json_canon(int argc, char **argv)
{
	const char *pos[1];
	int npos;
	struct worldd_flag flags[] = { { .name = NULL } };
	int rc = worldd_parse_flags("json canon", argc, argv, flags, pos, 0, &npos);
	if (rc) return rc;
	size_t n, cn;
	char *in = read_stdin("json canon", &n, &rc);
	if (!in) return rc;
	struct world_err err = {0};
	char *c = world_canon_bytes(in, n, &cn, &err);
	free(in);
	if (!c) return worldd_fail("json canon", &err);
	rc = write_out("json canon", c, cn);
	free(c);
	return rc;
}

static int v_hash(int argc, char **argv)
{
	const char *pos[1];
	int npos;
	struct worldd_flag flags[] = { { .name = NULL } };
	int rc = worldd_parse_flags("hash", argc, argv, flags, pos, 0, &npos);
	if (rc) return rc;
	unsigned char d[WORLD_DIGEST_LEN];
	struct world_err err = {0};
	if (world_sha256_fd(0, "stdin", d, NULL, &err) < 0) return worldd_fail("hash", &err);
	char ref[WORLD_REF_SIZE];
	world_ref_format(d, ref);
	printf("%s\n", ref);
	return write_out("hash", "", 0);
}

/* ---- object put / get ---- */

static int v_object_put(int argc, char **argv)
{
	const char *V = "object put";
	struct worldd_flag flags[] = { { .name = "--store", .has_value = 1 }, { .name = "--semantic-id", .has_value = 1 }, { .name = "--provenance", .has_value = 1 }, { .name = "--as", .has_value = 1 }, { .name = "--wait-lock", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos;
	int rc = worldd_parse_flags(V, argc, argv, flags, pos, 0, &npos);
	if (rc) return rc;
	double wait;
	if ((rc = worldd_wait_lock(V, flags[4].value, &wait))) return rc;
	const char *path = flags[0].value, *sid = flags[1].value, *prov = flags[2].value, *as = flags[3].value;
	if (!path) return worldd_usage(V, "--store DB is required");
	if (!sid) return worldd_usage(V, "--semantic-id ID is required");
	if (!as) {
		/* the semantic id says how the payload is canonicalised */
		if (strcmp(sid, "world/transition-source/v1") == 0) as = "source";
		else if (strcmp(sid, "world/effect-result/v1") == 0 || strncmp(sid, "world/", 6) != 0) as = "raw";
		else as = "json";
	}
	if (strcmp(as, "json") != 0 && strcmp(as, "source") != 0 && strcmp(as, "raw") != 0)
		return worldd_usage(V, "--as '%s': want json, source or raw", as);
	size_t n;
	char *in = read_stdin(V, &n, &rc);
	if (!in) return rc;
	struct world_err err = {0};
	char *payload = in;
	size_t plen = n;
	if (strcmp(as, "json") == 0) payload = world_canon_bytes(in, n, &plen, &err);
	else if (strcmp(as, "source") == 0) payload = world_canon_source(in, n, &plen, &err);
	if (!payload) {
		free(in);
		return worldd_fail(V, &err);
	}
	struct world_store *st;
	rc = open_store(V, path, WORLD_STORE_WRITER, flags[4].value, &st);
	if (rc) goto out;
	char ref[WORLD_REF_SIZE];
	int created;
	if (world_object_put(st, sid, prov, payload, plen, ref, &created, &err) < 0) rc = worldd_fail(V, &err);
	else {
		printf("%s\n", ref);
		rc = write_out(V, "", 0);
	}
	world_store_close(st);
out:
	if (payload != in) free(payload);
	free(in);
	return rc;
}

static int v_object_get(int argc, char **argv)
{
	const char *V = "object get";
	struct worldd_flag flags[] = { { .name = "--store", .has_value = 1 }, { .name = "--payload" }, { .name = NULL } };
	const char *pos[1];
	int npos;
	int rc = worldd_parse_flags(V, argc, argv, flags, pos, 1, &npos);
	if (rc) return rc;
	if (npos != 1) return worldd_usage(V, "one REF is required");
	struct world_err err = {0};
	if (world_ref_parse(pos[0], "REF", NULL, &err) < 0) return worldd_fail(V, &err);
	struct world_store *st;
	rc = open_store(V, flags[0].value, WORLD_STORE_READER, NULL, &st);
	if (rc) return rc;
	struct world_object o;
	if (world_object_get(st, pos[0], &o, &err) < 0) {
		world_store_close(st);
		return worldd_fail(V, &err);
	}
	if (flags[1].value) {
		rc = write_out(V, o.payload, o.len);
	} else {
		json_t *m = json_pack("{sssssssI}", "ref", o.ref, "semanticId", o.semantic_id, "provenance", o.provenance,
		                      "size", (json_int_t)o.len);
		size_t cn;
		char *c = m ? world_canon_json(m, &cn, &err) : NULL;
		json_decref(m);
		if (!c) rc = worldd_fail(V, &err);
		else {
			printf("%s\n", c);
			free(c);
			rc = write_out(V, "", 0);
		}
	}
	world_object_free(&o);
	world_store_close(st);
	return rc;
}

/* ---- log get / append, world head ---- */

static int v_log_get(int argc, char **argv)
{
	const char *V = "log get";
	struct worldd_flag flags[] = { { .name = "--store", .has_value = 1 }, { .name = "--json" }, { .name = "--leaf" },
		                       { .name = NULL } };
	const char *pos[1];
	int npos;
	int rc = worldd_parse_flags(V, argc, argv, flags, pos, 1, &npos);
	if (rc) return rc;
	if (npos != 1) return worldd_usage(V, "one entry index N is required");
	if (flags[1].value && flags[2].value) return worldd_usage(V, "--json and --leaf exclude each other");
	long long idx;
	if ((rc = parse_ll(V, "entry index", pos[0], 1, &idx))) return rc;
	struct world_store *st;
	if ((rc = open_store(V, flags[0].value, WORLD_STORE_READER, NULL, &st))) return rc;
	struct world_err err = {0};
	struct world_log_entry e;
	if (world_log_get(st, idx, &e, &err) < 0) rc = worldd_fail(V, &err);
	else if (flags[2].value) {
		/* the leaf of the log's Merkle tree: exactly the stored canonical
		 * JSON, no newline (store/tree.h) */
		if (fwrite(e.json, 1, e.json_len, stdout) != e.json_len) rc = WX_IO;
		if (!rc) rc = write_out(V, "", 0);
		else fprintf(stderr, "worldd %s: write stdout: %s\n", V, strerror(errno));
		world_log_entry_free(&e);
	} else if (flags[1].value) {
		/* {"index","entry"}: the entry as stored, beside its index */
		json_t *entry = world_json_parse(e.json, strlen(e.json), &err);
		rc = entry ? print_json(V, json_pack("{s:I, s:o}", "index", (json_int_t)idx, "entry", entry))
		           : worldd_fail(V, &err);
		world_log_entry_free(&e);
	} else {
		printf("%s\n", e.json);
		rc = write_out(V, "", 0);
		world_log_entry_free(&e);
	}
	world_store_close(st);
	return rc;
}

static int v_log_append(int argc, char **argv)
{
	const char *V = "log append";
	struct worldd_flag flags[] = { { .name = "--store", .has_value = 1 }, { .name = "--transition-ref", .has_value = 1 }, { .name = "--state-root", .has_value = 1 }, { .name = "--transition-fn", .has_value = 1 }, { .name = "--interpreter", .has_value = 1 }, { .name = "--epoch", .has_value = 1 }, { .name = "--written-by", .has_value = 1 }, { .name = "--index", .has_value = 1 }, { .name = "--prev", .has_value = 1 }, { .name = "--expect-world", .has_value = 1 }, { .name = "--wait-lock", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos;
	int rc = worldd_parse_flags(V, argc, argv, flags, pos, 0, &npos);
	if (rc) return rc;
	double wait;
	if ((rc = worldd_wait_lock(V, flags[10].value, &wait))) return rc;
	for (int i = 1; i <= 4; i++)
		if (!flags[i].value) return worldd_usage(V, "%s REF is required", flags[i].name);
	struct world_log_append a = { 0, 1, flags[3].value, flags[4].value, NULL,
	                              flags[6].value ? flags[6].value : "worldd log append", flags[1].value,
	                              flags[2].value, NULL };
	if (flags[5].value && (rc = parse_ll(V, "--epoch", flags[5].value, 1, &a.semantics_epoch))) return rc;
	struct world_store *st;
	if ((rc = open_store(V, flags[0].value, WORLD_STORE_WRITER, flags[10].value, &st))) return rc;
	struct world_err err = {0};
	/* Defaults follow the current head; --index/--prev/--expect-world
	 * override them so the store's own chain checks can be exercised. */
	long long last;
	char last_hash[WORLD_REF_SIZE];
	struct world_world head;
	char head_ref[WORLD_REF_SIZE] = "";
	if (world_log_last(st, &last, last_hash, &err) < 0) goto fail;
	if (world_head_get(st, &head, &err) == 0) memcpy(head_ref, head.ref, WORLD_REF_SIZE);
	else if (err.code != WX_NOT_FOUND) goto fail;
	a.entry_index = last + 1;
	a.prev_entry_hash = last_hash;
	a.expected_world = head_ref;
	if (flags[7].value && (rc = parse_ll(V, "--index", flags[7].value, 1, &a.entry_index))) {
		world_store_close(st);
		return rc;
	}
	if (flags[8].value) a.prev_entry_hash = strcmp(flags[8].value, "null") == 0 ? NULL : flags[8].value;
	if (flags[9].value) a.expected_world = flags[9].value;
	struct world_log_result r;
	if (world_log_append(st, &a, &r, &err) < 0) goto fail;
	printf("entry %lld %s world %s\n", r.entry_index, r.entry_hash, r.world_ref);
	world_store_close(st);
	return write_out(V, "", 0);
fail:
	world_store_close(st);
	return worldd_fail(V, &err);
}

static int v_world_head(int argc, char **argv)
{
	const char *V = "world head";
	struct worldd_flag flags[] = { { .name = "--store", .has_value = 1 }, { .name = "--json" }, { .name = NULL } };
	const char *pos[1];
	int npos;
	int rc = worldd_parse_flags(V, argc, argv, flags, pos, 0, &npos);
	if (rc) return rc;
	struct world_store *st;
	if ((rc = open_store(V, flags[0].value, WORLD_STORE_READER, NULL, &st))) return rc;
	struct world_err err = {0};
	struct world_world w;
	if (world_head_get(st, &w, &err) < 0) rc = worldd_fail(V, &err);
	else if (flags[1].value) {
		json_t *world = world_json_parse(w.json, strlen(w.json), &err);
		rc = world ? print_json(V, json_pack("{s:s, s:o}", "ref", w.ref, "world", world)) : worldd_fail(V, &err);
	} else {
		printf("%s %s\n", w.ref, w.json);
		rc = write_out(V, "", 0);
	}
	world_store_close(st);
	return rc;
}

/* ---- scan ---- */

static int v_scan(int argc, char **argv)
{
	const char *V = "scan";
	struct worldd_flag flags[] = { { .name = "--store", .has_value = 1 },           { .name = "--rows", .has_value = 1 },
	                               { .name = "--seconds", .has_value = 1 },         { .name = "--resume-log-index", .has_value = 1 },
	                               { .name = "--resume-world-ref", .has_value = 1 }, { .name = "--objects" },
	                               { .name = "--resume-object-ref", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos;
	int rc = worldd_parse_flags(V, argc, argv, flags, pos, 0, &npos);
	if (rc) return rc;
	/* the effect record law is the broker's; the scan applies it */
	struct world_scan_opts o = { .effect_record_check = broker_record_check };
	if (flags[1].value && (rc = parse_ll(V, "--rows", flags[1].value, 1, &o.max_rows))) return rc;
	if (flags[2].value) {
		char *end;
		errno = 0;
		o.max_seconds = strtod(flags[2].value, &end);
		if (!*flags[2].value || *end || errno || !(o.max_seconds > 0))
			return worldd_usage(V, "--seconds '%s' is not a positive number", flags[2].value);
	}
	if (flags[3].value && (rc = parse_ll(V, "--resume-log-index", flags[3].value, 1, &o.resume_log_index))) return rc;
	struct world_err err = {0};
	if (flags[4].value) {
		if (world_ref_parse(flags[4].value, "--resume-world-ref", NULL, &err) < 0) return worldd_fail(V, &err);
		o.resume_world_ref = flags[4].value;
	}
	o.objects = flags[5].value != NULL;
	if (flags[6].value) {
		if (!o.objects) return worldd_usage(V, "--resume-object-ref needs --objects");
		if (world_ref_parse(flags[6].value, "--resume-object-ref", NULL, &err) < 0) return worldd_fail(V, &err);
		o.resume_object_ref = flags[6].value;
	}
	struct world_store *st;
	if ((rc = open_store(V, flags[0].value, WORLD_STORE_READER, NULL, &st))) return rc;
	struct world_scan_result r;
	if (world_scan(st, &o, stdout, &r, &err) < 0) rc = worldd_fail(V, &err);
	else rc = r.holes ? WX_INTEGRITY : WX_OK;
	world_store_close(st);
	int wr = write_out(V, "", 0);
	return rc ? rc : wr;
}

/* ---- archive ---- */

static int v_archive(int argc, char **argv)
{
	const char *V = "archive";
	struct worldd_flag flags[] = { { .name = "--store", .has_value = 1 }, { .name = "--ailang-bin", .has_value = 1 }, { .name = "--wait-lock", .has_value = 1 }, { .name = "--json" }, { .name = NULL } };
	const char *pos[1];
	int npos;
	int rc = worldd_parse_flags(V, argc, argv, flags, pos, 0, &npos);
	if (rc) return rc;
	if (!flags[1].value) return worldd_usage(V, "--ailang-bin BIN is required");
	double wait;
	if ((rc = worldd_wait_lock(V, flags[2].value, &wait))) return rc;
	/* A refusal leaves nothing behind, not even a store this call created. */
	struct stat sb;
	int fresh = flags[0].value && stat(flags[0].value, &sb) < 0 && errno == ENOENT;
	struct world_store *st;
	if ((rc = open_store(V, flags[0].value, WORLD_STORE_WRITER, flags[2].value, &st))) return rc;
	struct world_err err = {0};
	struct world_interp in;
	if (world_archive_interpreter(st, flags[1].value, &in, &err) < 0) {
		/* the archive's messages say "archive: ..."; worldd_fail names the verb */
		if (strncmp(err.msg, "archive: ", 9) == 0) memmove(err.msg, err.msg + 9, strlen(err.msg + 9) + 1);
		rc = worldd_fail(V, &err);
		world_store_close(st);
		if (fresh) {
			const char *sfx[] = { "-wal", "-shm", "" };
			for (size_t i = 0; i < 3; i++) {
				char p[4200];
				snprintf(p, sizeof p, "%s%s", flags[0].value, sfx[i]);
				unlink(p);
			}
		}
		return rc;
	} else if (flags[3].value) {
		rc = print_json(V, json_pack("{s:s, s:s, s:I, s:s, s:b}", "ref", in.ref, "version", in.version, "size",
		                             (json_int_t)in.size, "path", in.path, "created", in.created));
	} else {
		printf("%s %s\n", in.ref, in.version);
		rc = write_out(V, "", 0);
	}
	world_store_close(st);
	return rc;
}

const struct worldd_verb store_verbs[] = {
	{ "json canon", "stdin JSON -> canonical JSON on stdout (no trailing newline)",
	  "usage: worldd json canon < FILE\n"
	  "  Reads one JSON value from stdin and writes its canonical form (docs/design.md\n"
	  "  §6.2, docs/store.md) to stdout with no trailing newline.\n"
	  "exit codes: 0 ok, 2 usage, 3 bad JSON (the message names the byte offset), 9 I/O\n",
	  v_json_canon },
	{ "hash", "stdin bytes -> sha256:<hex>",
	  "usage: worldd hash < FILE\n"
	  "  Prints the ref (sha256:<64 lowercase hex>) of the bytes on stdin.\n"
	  "exit codes: 0 ok, 2 usage, 9 I/O\n",
	  v_hash },
	{ "object put", "store stdin as an object; print its ref",
	  "usage: worldd object put --store DB --semantic-id ID [--provenance P] [--as json|source|raw]\n"
	  "                         [--wait-lock SECONDS] < FILE\n"
	  "  --store DB         the store (created if absent)\n"
	  "  --semantic-id ID   label, e.g. world/invocation-input/v1 (printable ASCII, <= 256 bytes)\n"
	  "  --provenance P     free-form label (first writer's labels win)\n"
	  "  --as MODE          json: canonical JSON (default for world/* ids); source: canonical\n"
	  "                     transition source (default for world/transition-source/v1); raw: bytes\n"
	  "                     as given (default for world/effect-result/v1 and non-world ids)\n"
	  WORLDD_WAIT_LOCK_HELP
	  "  Prints the ref of the stored payload.\n"
	  "exit codes: 0 ok, 2 usage, 3 bad input, 5 store busy, 6 unknown schema, 9 I/O,\n"
	  "            24 not a SQLite store\n",
	  v_object_put },
	{ "object get", "print an object's labels, or its payload",
	  "usage: worldd object get --store DB REF [--payload]\n"
	  "  Without --payload prints {\"provenance\",\"ref\",\"semanticId\",\"size\"} as canonical JSON;\n"
	  "  with --payload writes the payload bytes. The payload is re-hashed first: a damaged\n"
	  "  row is never returned. Opens the store read-only (a store of another user or in a\n"
	  "  read-only directory works; nothing is created beside it).\n"
	  "exit codes: 0 ok, 2 usage, 3 bad ref, 4 not found, 6 unknown schema, 7 integrity hole, 9 I/O,\n"
	  "            24 not a SQLite store\n",
	  v_object_get },
	{ "log get", "print log entry N (re-verified)",
	  "usage: worldd log get --store DB N [--json | --leaf]\n"
	  "  Prints entry N as canonical JSON after recomputing its entryHash and chain link;\n"
	  "  --json: {\"entry\":ENTRY,\"index\":N}; --leaf: the entry's canonical JSON with no\n"
	  "  trailing newline, the exact bytes of leaf N-1 of the log's Merkle tree\n"
	  "  (worldd log prove, docs/provenance.md). Opens the store read-only.\n"
	  "exit codes: 0 ok, 2 usage, 4 not found, 6 unknown schema, 7 integrity hole, 9 I/O,\n"
	  "            24 not a SQLite store\n",
	  v_log_get },
	{ "log append", "append a log entry (operator/test path)",
	  "usage: worldd log append --store DB --transition-ref R --state-root R --transition-fn R\n"
	  "                         --interpreter R [--epoch N] [--written-by W]\n"
	  "                         [--index N] [--prev R|null] [--expect-world R] [--wait-lock SECONDS]\n"
	  "  Appends one entry, its world and moves the selected head in one transaction.\n"
	  "  --transition-ref (invocation record) and --state-root (output) must be stored objects.\n"
	  "  --index/--prev/--expect-world default to the current head; giving others exercises\n"
	  "  the store's chain and compare-and-swap checks. Prints: entry N ENTRYHASH world WORLDREF\n"
	  WORLDD_WAIT_LOCK_HELP
	  "exit codes: 0 ok, 2 usage, 3 bad ref, 4 object not stored, 5 store busy, 6 unknown schema,\n"
	  "            8 chain or head mismatch (nothing written), 9 I/O, 24 not a SQLite store\n",
	  v_log_append },
	{ "world head", "print the selected world",
	  "usage: worldd world head --store DB [--json]\n"
	  "  Prints the selected world's ref and its JSON {logHead, revision, stateRoot};\n"
	  "  --json: {\"ref\":REF,\"world\":{...}}. Opens the store read-only.\n"
	  "exit codes: 0 ok, 2 usage, 4 no world yet, 6 unknown schema, 7 integrity hole, 9 I/O,\n"
	  "            24 not a SQLite store\n",
	  v_world_head },
	{ "scan", "integrity scan: recompute hashes and the chain",
	  "usage: worldd scan --store DB [--rows N] [--seconds S] [--objects]\n"
	  "                   [--resume-log-index N --resume-world-ref R [--resume-object-ref R]]\n"
	  "  Recomputes every log entry's hash, the chain, every world, and for each entry\n"
	  "  everything the committed call depends on: its invocation record (kind, and its\n"
	  "  transitionFn, interpreter, semanticsEpoch = the header), input, plan, output, effect\n"
	  "  records (under their law) with their requests and results, the transition source,\n"
	  "  the archived interpreter file and manifest.json, the journal rows naming them, and\n"
	  "  the log's Merkle tree over the entries covered (docs/provenance.md).\n"
	  "  --objects also recomputes every object in the store (orphans included).\n"
	  "  Prints nothing when clean and complete; otherwise the lines\n"
	  "    integrity_hole table=log_entries index=N field=F\n"
	  "    integrity_hole table=objects|artifacts|journal index=N field=F ref=R\n"
	  "    integrity_hole table=worlds ref=R field=F\n"
	  "    integrity_hole table=log_tree index=N field=hash   (the log's Merkle tree: the hashes\n"
	  "      entry N's append stored differ from their recomputation, or are missing)\n"
	  "    integrity_hole table=objects ref=R field=payload   (--objects)\n"
	  "    integrity_scan_incomplete log_rows=N world_rows=N holes=N resume_log_index=N resume_world_ref=R\n"
	  "      [object_rows=N resume_object_ref=R]   (--objects)\n"
	  "  A later scan continues from the printed cursors (docs/store.md lists the fields).\n"
	  "  Opens the store read-only: a store of another user or in a read-only directory\n"
	  "  is scanned without creating anything beside it.\n"
	  "exit codes: 0 ok (no hole found; complete or not), 2 usage, 3 bad cursor, 4 no store,\n"
	  "            6 unknown schema,\n"
	  "            7 at least one integrity hole, 9 I/O, 24 not a SQLite store\n",
	  v_scan },
	{ "archive", "archive an interpreter binary; print its ref and release",
	  "usage: worldd archive --store DB --ailang-bin BIN [--json] [--wait-lock SECONDS]\n"
	  "  Archives an interpreter: BIN must be a static x86_64 ELF whose --version (probed\n"
	  "  on the bytes read, 10 s, empty environment) prints a release line of the\n"
	  "  interpreter contract's form (docs/design.md §2): NAME vMAJOR.MINOR.PATCH[ ...],\n"
	  "  e.g. \"AILANG v0.41.0\". Then copies BIN to DB.artifacts/interpreters/sha256/<hex>/ailang\n"
	  "  (0555) with manifest.json and prints: REF RELEASE-STRING; --json prints\n"
	  "  {\"created\",\"path\",\"ref\",\"size\",\"version\"}. Same bytes again: no-op.\n"
	  "  Every refusal names BIN as given and leaves nothing behind (no file, directory or row).\n"
	  WORLDD_WAIT_LOCK_HELP
	  "exit codes: 0 ok, 2 usage, 3 not a regular file or not a static ELF, 4 BIN missing,\n"
	  "            5 store busy, 6 unknown schema, 7 archived copy damaged, 9 I/O,\n"
	  "            11 --version timed out, 14 --version failed or not a release line,\n"
	  "            24 not a SQLite store\n",
	  v_archive },
	{ NULL, NULL, NULL, NULL },
};
