/* tests/capsule/test_seccomp.c: the seccomp programs embedded at build time
 * (capsule/seccomp_gen) are exactly what libseccomp builds from each
 * profile at run time, BPF and PFC alike; the renderers print the embedded
 * bytes (what a capsule loads); and a look-alike profile with one rule
 * fewer builds another program and gets no embedded one (the control: the
 * comparison can tell programs apart). */
#include "capsule/profile.h"
#include "tests/tap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rendered(const struct capsule_profile *p, const char *fmt, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	struct world_err err = { 0, "" };
	if (!f) return -1;
	int rc = capsule_profile_render(p, fmt, NULL, f, &err);
	if (fclose(f) != 0) rc = -1;
	return rc;
}

int main(void)
{
	size_t n = 0;
	for (const struct capsule_profile *p = capsule_profiles; p->name; p++, n++) {
		struct world_err err = { 0, "" };
		const struct capsule_seccomp_program *e = capsule_seccomp_embedded(p);
		ok(e != NULL, "profile %s: a program is embedded", p->name);
		if (!e) continue;
		ok(e->bpf_len > 0 && e->bpf_len % 8 == 0, "profile %s: %zu BPF instructions", p->name, e->bpf_len / 8);
		unsigned char *bpf = NULL, *pfc = NULL;
		size_t bl = 0, pl = 0;
		ok(capsule_seccomp_bpf(p, &bpf, &bl, &err) == 0, "profile %s: libseccomp builds it now: %s", p->name, err.msg);
		ok(bpf && bl == e->bpf_len && memcmp(bpf, e->bpf, bl) == 0,
		   "profile %s: the embedded BPF equals the run-time build (%zu and %zu bytes)", p->name, e->bpf_len, bl);
		ok(capsule_seccomp_pfc(p, &pfc, &pl, &err) == 0, "profile %s: and its PFC text: %s", p->name, err.msg);
		ok(pfc && pl == e->pfc_len && memcmp(pfc, e->pfc, pl) == 0, "profile %s: the embedded PFC equals it", p->name);
		char *out = NULL;
		size_t ol = 0;
		ok(rendered(p, "bpf", &out, &ol) == 0 && ol == e->bpf_len && memcmp(out, e->bpf, ol) == 0,
		   "profile %s: --format bpf prints the embedded program", p->name);
		free(out);
		out = NULL;
		ok(rendered(p, "pfc", &out, &ol) == 0 && ol == e->pfc_len && memcmp(out, e->pfc, ol) == 0,
		   "profile %s: --format pfc prints its PFC", p->name);
		free(out);
		free(bpf);
		free(pfc);
	}
	ok(n >= 3, "every profile of the table checked (%zu)", n);
	size_t ne = 0;
	while (capsule_seccomp_programs[ne].profile) ne++;
	is_int((int)ne, (int)n, "one embedded program per profile, no more");

	/* Control: the same profile with one allowed syscall fewer. */
	const struct capsule_profile *t = capsule_profile_find("transition");
	struct capsule_profile copy = *t;
	size_t ns = 0;
	while (t->syscalls[ns].name) ns++;
	struct capsule_syscall *fewer = calloc(ns, sizeof *fewer);
	size_t k = 0;
	int dropped = 0;
	for (size_t i = 0; i < ns; i++) {
		if (!dropped && t->syscalls[i].kind == SC_ALLOW && strcmp(t->syscalls[i].name, "getpid") == 0) {
			dropped = 1;
			continue;
		}
		fewer[k++] = t->syscalls[i];
	}
	copy.syscalls = fewer;
	ok(dropped, "control: getpid dropped from a copy of the transition profile");
	ok(capsule_seccomp_embedded(&copy) == NULL, "control: the look-alike copy gets no embedded program");
	unsigned char *bpf = NULL;
	size_t bl = 0;
	struct world_err err = { 0, "" };
	const struct capsule_seccomp_program *e = capsule_seccomp_embedded(t);
	ok(capsule_seccomp_bpf(&copy, &bpf, &bl, &err) == 0 && e &&
	   (bl != e->bpf_len || memcmp(bpf, e->bpf, bl) != 0),
	   "control: its run-time program differs from the embedded one, so the comparison above can fail");
	char *out = NULL;
	size_t ol = 0;
	ok(rendered(&copy, "bpf", &out, &ol) == 0 && ol == bl && memcmp(out, bpf, bl) == 0,
	   "control: --format bpf of a look-alike prints its own run-time build");
	free(out);
	free(bpf);
	free(fewer);
	return done_testing();
}
