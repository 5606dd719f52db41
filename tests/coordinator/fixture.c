/* tests/coordinator/fixture.c: `ctest-fixture DB EPISODE GRANT...` makes a
 * store for CLI tests: ailang-lite archived, epoch 1, the pure transition
 * t.seen registered through the store API (publishing has its own tests),
 * and a session of EPISODE with the grants; prints the credential. */
#include "tests/coordinator/ctest.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: ctest-fixture DIR EPISODE [GRANT...]\n");
		return 2;
	}
	struct ctest t = { 0 };
	ctest_open(&t, argv[1]);
	struct world_err e;
	json_t *reg = NULL;
	long long rev;
	if (registry_load(t.st, &reg, &rev, NULL, &e) < 0) ctest_die("registry", &e);
	if (!reg) ctest_register(&t, "t.seen", ctest_seen_source, "[]", "null", NULL);
	json_decref(reg);
	const char *grants[16] = { 0 };
	for (int i = 3; i < argc && i < 18; i++) grants[i - 3] = argv[i];
	char cred[65];
	ctest_session(&t, argv[2], grants, 3600, cred);
	printf("%s\n", cred);
	world_store_close(t.st);
	return 0;
}
