/* verify/world-verify.c: the offline verifier of World's transparency log
 * (docs/provenance.md, "Verifying the log offline").
 *
 * Needs no store and no network: the log's verifier key, the signed
 * checkpoint(s), the leaf and the proof, as files. Links tlog/ alone
 * (tlog/libtlog.a and libcrypto): the hashing, proofs, signed notes and
 * checkpoints of tlog/tlog.h, tlog/note.h and tlog/checkpoint.h, so this
 * file is only the reading of files and the order of the checks. Meant
 * to read like a reference implementation:
 *
 *   checkpoint   open the signed note with the key (the key's signature
 *                present and valid), parse its body, check its origin.
 *   inclusion    the checkpoint as above; entry N is leaf N-1; leaf hash
 *                = SHA-256(0x00 ‖ leaf file bytes); the proof leads from
 *                it to the checkpoint's root (RFC 6962 §2.1.1).
 *   consistency  both checkpoints as above, old size <= new size; the
 *                proof leads to both roots (RFC 6962 §2.1.2).
 *
 * Exit codes (common/error.h): 0 verified; 2 usage; 3 a malformed key,
 * checkpoint, proof file or index; 4 a file absent, or an entry beyond the
 * checkpoint's tree; 7 refused: a signature, an origin or a proof that does
 * not verify; 9 a file that cannot be read. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "tlog/checkpoint.h"
#include "tlog/note.h"
#include "tlog/tlog.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "dev"
#endif

#define MAX_NOTE (1 << 20)        /* a checkpoint: 1 MB, as Go's tlog.ParseTree */
#define MAX_LEAF (256 << 20)      /* an entry's canonical JSON */
#define MAX_PROOF_FILE (64 * 46)  /* 64 lines of 44 characters, CR LF */

static const char *verb = "world-verify";

static const char help[] =
	"usage: world-verify checkpoint --key VKEYFILE [--origin ORIGIN] CHECKPOINT\n"
	"       world-verify inclusion --key VKEYFILE [--origin ORIGIN]\n"
	"                    --checkpoint FILE --index N --leaf FILE --proof FILE\n"
	"       world-verify consistency --key VKEYFILE [--origin ORIGIN]\n"
	"                    --old FILE --new FILE --proof FILE\n"
	"       world-verify --version\n"
	"Verifies World's transparency log offline, with no store: checkpoints signed\n"
	"by the log's key, the inclusion of an entry, and that an older tree is a\n"
	"prefix of a newer one. Flags take --flag VALUE or --flag=VALUE; a flag given\n"
	"twice is refused; - reads a file from standard input (one file at most).\n\n"
	"VKEYFILE holds the log's verifier key, NAME+HASH+BASE64 (a C2SP signed-note\n"
	"Ed25519 key, as worldd log key prints it). A checkpoint is a C2SP\n"
	"tlog-checkpoint signed note (worldd log checkpoint, GET /v1/log/checkpoint);\n"
	"it is accepted when it carries a valid signature by that key (signatures by\n"
	"other keys, e.g. witnesses', are ignored) and its origin line is the key's\n"
	"name, or ORIGIN when --origin is given.\n\n"
	"checkpoint: verifies CHECKPOINT and prints three lines: origin O, size S,\n"
	"root BASE64.\n\n"
	"inclusion: entry N (N >= 1, World's entry number: leaf N-1 of the tree) is in\n"
	"the tree of the checkpoint. --leaf FILE holds the entry's bytes exactly as\n"
	"`worldd log get N --leaf` prints them (its canonical JSON, no trailing\n"
	"newline); --proof FILE the proof as `worldd log prove --index N --size S`\n"
	"prints it, S the checkpoint's size.\n\n"
	"consistency: the tree of the --old checkpoint is a prefix of the tree of the\n"
	"--new one (the log was only appended to in between). --proof FILE as\n"
	"`worldd log prove --from A --to B` prints it, A and B the checkpoints' sizes.\n\n"
	"A proof file holds one base64 hash per line in RFC 6962 order, at most 64\n"
	"(none when the sizes are equal or the old tree is empty, or for the one\n"
	"entry of a tree of size 1).\n"
	"On success one line says what was verified; a refusal is one line on stderr\n"
	"naming what failed. docs/provenance.md describes the formats.\n\n"
	"exit codes:\n"
	"  0  verified\n"
	"  2  usage\n"
	"  3  malformed: the key, a checkpoint, the proof file, the index\n"
	"  4  a file absent, or entry N beyond the checkpoint's tree\n"
	"  7  refused: no valid signature by the key, another origin, a proof that\n"
	"     does not lead to the root(s), an older checkpoint larger than the newer\n"
	"  9  a file cannot be read\n";

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", verb);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return code;
}

/* The whole of file `path` ("-": stdin), at most max bytes, NUL-terminated
 * (*len without it). */
static int read_file(const char *what, const char *path, size_t max, char **buf, size_t *len)
{
	static int stdin_used;
	FILE *f = stdin;
	if (strcmp(path, "-") == 0) {
		if (stdin_used++)
			return fail(WX_USAGE, "%s: standard input is read once only", what);
	} else if (!(f = fopen(path, "rb"))) {
		return fail(errno == ENOENT ? WX_NOT_FOUND : WX_IO, "%s %s: %s", what, path, strerror(errno));
	}
	size_t n = 0, cap = 4096;
	char *b = malloc(cap + 1);
	for (size_t r; b && (r = fread(b + n, 1, cap - n, f)) > 0;) {
		n += r;
		if (n > max)
			break;
		if (n == cap) {
			char *nb = realloc(b, (cap *= 2) + 1);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	int bad = !b || ferror(f), big = n > max;
	if (f != stdin)
		fclose(f);
	if (bad || big) {
		free(b);
		return big ? fail(WX_BAD_INPUT, "%s %s: larger than %zu bytes", what, path, max)
		           : fail(WX_IO, "%s %s: read failed", what, path);
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* The log's verifier key from its file. */
static int read_key(const char *path, struct note_vkey *key)
{
	char *text;
	size_t len;
	int rc = read_file("key", path, 4096, &text, &len);
	if (rc)
		return rc;
	struct world_err e = {0};
	rc = strlen(text) != len || note_vkey_parse(text, key, &e) < 0;
	free(text);
	if (rc)
		return e.code ? fail(e.code, "key %s: %s", path, e.msg) : fail(WX_BAD_INPUT, "key %s: a NUL byte", path);
	return 0;
}

/* A signed checkpoint from its file: signature by key, body, origin. */
static int read_checkpoint(const char *path, const struct note_vkey *key, const char *origin,
                           struct tlog_checkpoint *cp)
{
	char *note, *text = NULL;
	size_t len;
	int rc = read_file("checkpoint", path, MAX_NOTE, &note, &len);
	if (rc)
		return rc;
	struct world_err e = {0};
	if (note_verify_key(key, note, len, &text, &e) < 0 || tlog_checkpoint_parse(text, strlen(text), cp, &e) < 0) {
		free(note), free(text);
		return fail(e.code, "checkpoint %s: %s", path, e.msg);
	}
	free(note), free(text);
	/* RFC 6962: the tree of no leaves has the root SHA-256 of nothing */
	struct tlog_hash empty = tlog_empty_hash();
	if (cp->size == 0 && !tlog_hash_equal(&cp->root, &empty)) {
		tlog_checkpoint_free(cp);
		return fail(WX_INTEGRITY, "checkpoint %s: size 0 with a root that is not SHA-256 of nothing (RFC 6962)", path);
	}
	const char *want = origin ? origin : key->name;
	if (strcmp(cp->origin, want) != 0) {
		rc = fail(WX_INTEGRITY, "checkpoint %s: origin \"%.200s\" is not %s \"%s\"", path, cp->origin,
		          origin ? "the --origin" : "the key's name", want);
		tlog_checkpoint_free(cp);
		return rc;
	}
	return 0;
}

/* A proof file: one base64 hash per line ("\n" or "\r\n"), the last line's
 * newline optional, at most TLOG_MAX_PROOF lines. */
static int read_proof(const char *path, struct tlog_hash proof[TLOG_MAX_PROOF], size_t *n)
{
	char *text;
	size_t len;
	int rc = read_file("proof", path, MAX_PROOF_FILE, &text, &len);
	if (rc)
		return rc;
	*n = 0;
	for (size_t at = 0, line = 1; at < len; line++) {
		char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len, l = end - at;
		if (l && text[at + l - 1] == '\r')
			l--;
		struct world_err e = {0};
		if (*n == TLOG_MAX_PROOF)
			rc = fail(WX_BAD_INPUT, "proof %s: more than %d hashes", path, TLOG_MAX_PROOF);
		else if (tlog_hash_parse_b64(text + at, l, &proof[*n], &e) < 0)
			rc = fail(WX_BAD_INPUT, "proof %s: line %zu: %s", path, line, e.msg);
		if (rc)
			break;
		(*n)++;
		at = end + 1;
	}
	free(text);
	return rc;
}

/* Flags: --name VALUE or --name=VALUE, each at most once; the rest are
 * operands. */
struct flag {
	const char *name;
	const char *value;
};

static int parse_flags(int argc, char **argv, struct flag *flags, const char **operand)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		if (strncmp(a, "--", 2) != 0) {
			if (!operand || *operand)
				return fail(WX_USAGE, "unexpected argument '%s' (see world-verify --help)", a);
			*operand = a;
			continue;
		}
		size_t nl = eq ? (size_t)(eq - a) : strlen(a);
		struct flag *f = flags;
		while (f->name && !(strlen(f->name) == nl && strncmp(f->name, a, nl) == 0))
			f++;
		if (!f->name)
			return fail(WX_USAGE, "unknown flag %.*s (see world-verify --help)", (int)nl, a);
		if (f->value)
			return fail(WX_USAGE, "flag %s given twice", f->name);
		if (eq)
			f->value = eq + 1;
		else if (i + 1 < argc)
			f->value = argv[++i];
		else
			return fail(WX_USAGE, "flag %s needs a value", f->name);
	}
	for (struct flag *f = flags; f->name; f++)
		if (!f->value && strcmp(f->name, "--origin") != 0)
			return fail(WX_USAGE, "flag %s is required (see world-verify --help)", f->name);
	return 0;
}

static const char *flag(const struct flag *flags, const char *name)
{
	for (; flags->name; flags++)
		if (strcmp(flags->name, name) == 0)
			return flags->value;
	return NULL;
}

static void print_hash(const char *label, const struct tlog_hash *h)
{
	char b[45];
	tlog_hash_b64(h, b);
	printf("%s%s", label, b);
}

static int cmd_checkpoint(int argc, char **argv)
{
	struct flag fl[] = {{"--key", NULL}, {"--origin", NULL}, {NULL, NULL}};
	const char *path = NULL;
	int rc = parse_flags(argc, argv, fl, &path);
	if (rc)
		return rc;
	if (!path)
		return fail(WX_USAGE, "give the CHECKPOINT file (see world-verify --help)");
	struct note_vkey key;
	struct tlog_checkpoint cp;
	if ((rc = read_key(flag(fl, "--key"), &key)) || (rc = read_checkpoint(path, &key, flag(fl, "--origin"), &cp)))
		return rc;
	printf("origin %s\nsize %" PRId64 "\n", cp.origin, cp.size);
	print_hash("root ", &cp.root);
	printf("\n");
	tlog_checkpoint_free(&cp);
	return 0;
}

static int cmd_inclusion(int argc, char **argv)
{
	struct flag fl[] = {{"--key", NULL},   {"--origin", NULL}, {"--checkpoint", NULL}, {"--index", NULL},
	                    {"--leaf", NULL},  {"--proof", NULL},  {NULL, NULL}};
	int rc = parse_flags(argc, argv, fl, NULL);
	if (rc)
		return rc;
	/* the entry number: decimal, 1 or more */
	const char *s = flag(fl, "--index");
	char *end;
	errno = 0;
	long long entry = strtoll(s, &end, 10);
	if (s[0] < '1' || s[0] > '9' || *end || errno)
		return fail(WX_BAD_INPUT, "--index '%s' is not an entry number (1, 2, ...)", s);
	struct note_vkey key;
	struct tlog_checkpoint cp;
	struct tlog_hash proof[TLOG_MAX_PROOF];
	size_t n;
	char *leaf;
	size_t leaf_len;
	if ((rc = read_key(flag(fl, "--key"), &key)) ||
	    (rc = read_checkpoint(flag(fl, "--checkpoint"), &key, flag(fl, "--origin"), &cp)))
		return rc;
	if (entry > cp.size) {
		rc = fail(WX_NOT_FOUND, "entry %lld is not in the checkpoint's tree of size %" PRId64 " (a later checkpoint covers it)",
		          entry, cp.size);
		goto out;
	}
	if ((rc = read_proof(flag(fl, "--proof"), proof, &n)) ||
	    (rc = read_file("leaf", flag(fl, "--leaf"), MAX_LEAF, &leaf, &leaf_len)))
		goto out;
	/* entry N is leaf N-1; its hash is SHA-256(0x00 ‖ the leaf's bytes) */
	struct tlog_hash lh = tlog_leaf_hash(leaf, leaf_len);
	int trailing_nl = leaf_len && leaf[leaf_len - 1] == '\n';
	free(leaf);
	struct world_err e = {0};
	if (tlog_check_record(proof, n, cp.size, &cp.root, entry - 1, &lh, &e) < 0) {
		rc = fail(e.code, "entry %lld: %s%s", entry, e.msg,
		          trailing_nl ? " (the leaf file ends with a newline: the entry's bytes have none)" : "");
		goto out;
	}
	printf("verified: entry %lld (leaf %lld) is in the tree of size %" PRId64 " of %s, ", entry, entry - 1,
	       cp.size, cp.origin);
	print_hash("leaf hash ", &lh);
	print_hash(", root ", &cp.root);
	printf("\n");
out:
	tlog_checkpoint_free(&cp);
	return rc;
}

static int cmd_consistency(int argc, char **argv)
{
	struct flag fl[] = {{"--key", NULL}, {"--origin", NULL}, {"--old", NULL},
	                    {"--new", NULL}, {"--proof", NULL},  {NULL, NULL}};
	int rc = parse_flags(argc, argv, fl, NULL);
	if (rc)
		return rc;
	struct note_vkey key;
	struct tlog_checkpoint old = {0}, new = {0};
	struct tlog_hash proof[TLOG_MAX_PROOF];
	size_t n;
	const char *origin = flag(fl, "--origin");
	if ((rc = read_key(flag(fl, "--key"), &key)) || (rc = read_checkpoint(flag(fl, "--old"), &key, origin, &old)))
		return rc;
	if ((rc = read_checkpoint(flag(fl, "--new"), &key, origin, &new)))
		goto out;
	if ((rc = read_proof(flag(fl, "--proof"), proof, &n)))
		goto out;
	if (old.size > new.size) {
		rc = fail(WX_INTEGRITY, "the old checkpoint's tree (size %" PRId64 ") is larger than the new one's (%" PRId64 ")",
		          old.size, new.size);
		goto out;
	}
	struct world_err e = {0};
	if (old.size == 0) {
		/* the empty tree is a prefix of every tree: nothing to prove */
		if (n != 0)
			rc = fail(WX_INTEGRITY, "consistency proof: %zu hashes from the empty tree (none is needed)", n);
	} else if (tlog_check_tree(proof, n, new.size, &new.root, old.size, &old.root, &e) < 0) {
		rc = fail(e.code, "%s", e.msg);
	}
	if (rc)
		goto out;
	printf("verified: the tree of size %" PRId64 " is a prefix of the tree of size %" PRId64 " of %s, ", old.size,
	       new.size, new.origin);
	print_hash("old root ", &old.root);
	print_hash(", new root ", &new.root);
	printf("\n");
out:
	tlog_checkpoint_free(&old);
	tlog_checkpoint_free(&new);
	return rc;
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		fputs(help, stderr);
		return WX_USAGE;
	}
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("world-verify (World) " PACKAGE_VERSION "\n");
		return WX_OK;
	}
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(help, stdout);
			return WX_OK;
		}
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {{"checkpoint", cmd_checkpoint}, {"inclusion", cmd_inclusion}, {"consistency", cmd_consistency}};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (strcmp(argv[1], cmds[i].name) == 0) {
			static char name[64];
			snprintf(name, sizeof name, "world-verify %s", cmds[i].name);
			verb = name;
			return cmds[i].fn(argc - 2, argv + 2);
		}
	return fail(WX_USAGE, "unknown verb '%s' (see world-verify --help)", argv[1]);
}

/* Output lost (a full disk, a closed pipe) is an error too: exit 9. */
int main(int argc, char **argv)
{
	int rc = dispatch(argc, argv);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: writing standard output failed: %s\n", verb, strerror(errno));
		return rc ? rc : WX_IO;
	}
	return rc;
}
