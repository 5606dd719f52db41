/* capsule/seccomp_gen.c: the build-time generator of the profiles' seccomp
 * programs. Linked with libseccomp and profile.c (built
 * with CAPSULE_SECCOMP_GENERATOR, so it holds no embedded programs of its
 * own), it builds every profile of capsule_profiles[] exactly as the
 * runtime would (capsule_seccomp_bpf, capsule_seccomp_pfc) and writes one C
 * file holding each raw BPF program and its PFC text, which libworld.a
 * embeds: a capsule loads the embedded bytes, `worldd profile show --format
 * pfc|bpf` prints them, and tests/capsule/test_seccomp proves they equal
 * what libseccomp builds at run time.
 *
 * usage: seccomp_gen OUT.c   (written whole, then renamed into place) */
#include "capsule/profile.h"
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void emit_bytes(FILE *f, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) fprintf(f, "%s0x%02x,", i % 12 == 0 ? "\n\t" : " ", b[i]);
	fprintf(f, "\n");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: seccomp_gen OUT.c\n");
		return 2;
	}
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "seccomp_gen: %s: %s\n", tmp, strerror(errno));
		return 1;
	}
	const struct scmp_version *v = seccomp_version();
	fprintf(f, "/* Generated at build time by capsule/seccomp_gen from capsule/profile.c\n"
	           " * with libseccomp %u.%u.%u: do not edit. */\n"
	           "#include \"capsule/profile.h\"\n",
	        v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0);
	size_t n = 0;
	for (const struct capsule_profile *p = capsule_profiles; p->name; p++, n++) {
		struct world_err err = { 0, "" };
		unsigned char *bpf = NULL, *pfc = NULL;
		size_t bl = 0, pl = 0;
		if (capsule_seccomp_bpf(p, &bpf, &bl, &err) < 0 || capsule_seccomp_pfc(p, &pfc, &pl, &err) < 0) {
			fprintf(stderr, "seccomp_gen: profile %s: %s\n", p->name, err.msg);
			free(bpf);
			fclose(f);
			remove(tmp);
			return 1;
		}
		fprintf(f, "\n/* profile %s: %zu BPF instructions */\nstatic const unsigned char bpf_%zu[%zu] = {", p->name,
		        bl / 8, n, bl);
		emit_bytes(f, bpf, bl);
		fprintf(f, "};\nstatic const unsigned char pfc_%zu[%zu] = {", n, pl + 1);
		emit_bytes(f, pfc, pl + 1); /* with its NUL: printed as text */
		fprintf(f, "};\n");
		free(bpf);
		free(pfc);
	}
	fprintf(f, "\nconst struct capsule_seccomp_program capsule_seccomp_programs[] = {\n");
	n = 0;
	for (const struct capsule_profile *p = capsule_profiles; p->name; p++, n++)
		fprintf(f, "\t{ \"%s\", bpf_%zu, sizeof bpf_%zu, (const char *)pfc_%zu, sizeof pfc_%zu - 1 },\n", p->name, n,
		        n, n, n);
	fprintf(f, "\t{ NULL, NULL, 0, NULL, 0 },\n};\n");
	if (fclose(f) != 0 || rename(tmp, argv[1]) < 0) {
		fprintf(stderr, "seccomp_gen: write %s: %s\n", argv[1], strerror(errno));
		remove(tmp);
		return 1;
	}
	return 0;
}
