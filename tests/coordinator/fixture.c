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
	snprintf(t.dir, sizeof t.dir, "%s", argv[1]);
	snprintf(t.db, sizeof t.db, "%s/world.db", t.dir);
	struct world_err e;
	if (world_store_open(t.db, WORLD_STORE_WRITER, &t.st, &e) < 0) ctest_die("open", &e);
	if (world_archive_interpreter(t.st, getenv("AILANG_LITE"), &t.interp, &e) < 0) ctest_die("archive", &e);
	long long epoch;
	int created;
	if (registry_epoch_bootstrap(t.st, t.interp.version, &epoch, &created, &e) < 0) ctest_die("epoch", &e);
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
