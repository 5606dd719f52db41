/* tests/tlog/tlog_tool.c: drives tlog/ from the shell tests (verify.sh,
 * go_verify.sh), over a log of deterministic leaves kept in memory
 * (tests/tlog/memlog.h). Entry N (1-based) is leaf N-1; its bytes are
 * leaf_bytes(N), a small canonical-JSON-like object.
 *
 *   tlog_tool keygen NAME SKEYFILE VKEYFILE
 *   tlog_tool leaf N                      entry N's bytes (no newline)
 *   tlog_tool sign SKEYFILE               signs the text on stdin (a signed note)
 *   tlog_tool checkpoint SKEYFILE SIZE    the signed checkpoint of SIZE entries
 *                                         (origin: the key's name)
 *   tlog_tool inclusion N SIZE            the proof, one base64 hash a line
 *   tlog_tool consistency A B             the proof from size A to size B
 *   tlog_tool root SIZE                   the root, base64
 *   tlog_tool leaves DIR COUNT            builds its log from DIR/leaf.1..COUNT
 *                                         (files) instead; then one of the
 *                                         above (root, inclusion, consistency)
 *                                         follows: tlog_tool leaves DIR 9 root 9
 * Exit: 0, or the library's code with its one-line message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tlog/memlog.h"
#include "tlog/checkpoint.h"
#include "tlog/note.h"
#include "tlog/tlog.h"

static int die(const struct world_err *e)
{
	fprintf(stderr, "tlog_tool: %s\n", e->msg);
	return e->code ? e->code : 1;
}

static int leaf_bytes(long long n, char *buf, size_t cap)
{
	return snprintf(buf, cap, "{\"entry\":%lld,\"payload\":\"leaf %lld of the test log\"}", n, n);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap + 1);
	for (size_t r; b && (r = fread(b + n, 1, cap - n, f)) > 0;)
		if ((n += r) == cap)
			b = realloc(b, (cap *= 2) + 1);
	fclose(f);
	if (b)
		b[n] = '\0';
	*len = n;
	return b;
}

static void print_proof(const struct tlog_hash *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char b[45];
		tlog_hash_b64(&p[i], b);
		printf("%s\n", b);
	}
}

int main(int argc, char **argv)
{
	struct world_err e = {0};
	struct memlog m = {0};
	const char *dir = NULL;
	long long count = 0;
	if (argc >= 4 && !strcmp(argv[1], "leaves")) {
		dir = argv[2], count = atoll(argv[3]);
		argc -= 3, argv += 3;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: see tests/tlog/tlog_tool.c\n");
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "keygen") && argc == 5) {
		char *sk, *vk;
		if (note_key_generate(argv[2], &sk, &vk, &e) < 0)
			return die(&e);
		FILE *a = fopen(argv[3], "w"), *b = fopen(argv[4], "w");
		if (!a || !b)
			return 9;
		fprintf(a, "%s\n", sk), fprintf(b, "%s\n", vk);
		fclose(a), fclose(b);
		free(sk), free(vk);
		return 0;
	}
	if (!strcmp(cmd, "sign") && argc == 3) {
		size_t len;
		char *sk = slurp(argv[2], &len), *text = slurp("/dev/stdin", &len), *note = NULL;
		int rc = 0;
		if (!sk || !text || note_sign(sk, text, &note, &e) < 0)
			rc = sk && text ? die(&e) : 4;
		else
			fputs(note, stdout);
		free(sk), free(text), free(note);
		return rc;
	}
	if (!strcmp(cmd, "leaf") && argc == 3) {
		char b[256];
		fwrite(b, 1, (size_t)leaf_bytes(atoll(argv[2]), b, sizeof b), stdout);
		return 0;
	}
	/* the log: as many entries as the largest size asked */
	long long want = 0;
	for (int i = 2; i < argc; i++)
		if (atoll(argv[i]) > want)
			want = atoll(argv[i]);
	if (dir)
		want = count;
	for (long long n = 1; n <= want; n++) {
		char b[256], path[4096], *d = b;
		size_t len;
		if (dir) {
			snprintf(path, sizeof path, "%s/leaf.%lld", dir, n);
			if (!(d = slurp(path, &len))) {
				fprintf(stderr, "tlog_tool: %s: cannot read\n", path);
				return 4;
			}
		} else {
			len = (size_t)leaf_bytes(n, b, sizeof b);
		}
		struct tlog_hash lh = tlog_leaf_hash(d, len);
		if (d != b)
			free(d);
		if (memlog_append(&m, &lh, &e) < 0)
			return die(&e);
	}
	struct tlog_hash p[TLOG_MAX_PROOF], root;
	size_t n;
	int rc = 0;
	if (!strcmp(cmd, "checkpoint") && argc == 4) {
		size_t len;
		char *sk = slurp(argv[2], &len), *body = NULL, *note = NULL;
		struct note_signer *s = sk ? note_signer_new(sk, &e) : NULL;
		if (!s || tlog_tree_hash(atoll(argv[3]), memlog_read, &m, &root, &e) < 0 ||
		    tlog_checkpoint_format(note_signer_name(s), atoll(argv[3]), &root, NULL, &body, &e) < 0 ||
		    note_signer_sign(s, body, strlen(body), &note, &e) < 0)
			rc = die(&e);
		else
			fputs(note, stdout);
		note_signer_free(s);
		free(sk), free(body), free(note);
	} else if (!strcmp(cmd, "root") && argc == 3) {
		char b[45];
		if (tlog_tree_hash(atoll(argv[2]), memlog_read, &m, &root, &e) < 0)
			rc = die(&e);
		else
			tlog_hash_b64(&root, b), printf("%s\n", b);
	} else if (!strcmp(cmd, "inclusion") && argc == 4) {
		if (tlog_prove_record(atoll(argv[3]), atoll(argv[2]) - 1, memlog_read, &m, p, &n, &e) < 0)
			rc = die(&e);
		else
			print_proof(p, n);
	} else if (!strcmp(cmd, "consistency") && argc == 4) {
		if (tlog_prove_tree(atoll(argv[3]), atoll(argv[2]), memlog_read, &m, p, &n, &e) < 0)
			rc = die(&e);
		else
			print_proof(p, n);
	} else {
		fprintf(stderr, "tlog_tool: unknown command or arguments: %s\n", cmd);
		rc = 2;
	}
	memlog_free(&m);
	return rc;
}
