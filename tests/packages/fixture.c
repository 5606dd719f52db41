/* tests/packages/fixture.c: `packages-fixture DIR TOP EPISODE MANIFEST
 * [GRANT...]` makes a store DIR/world.db for the package call tests:
 * ailang-lite archived, epoch 1, every descriptor of MANIFEST registered
 * through the store API (tests/coordinator/ctest.h; publishing has its own
 * tests) with its source read from transitionFnFile (relative to TOP, the
 * repository root, as world-publish reads it from there), its access,
 * declaredEffects and inputSchema, and a session of EPISODE with the grants.
 * Prints the credential. Run it again on the same DIR to register another
 * manifest (the session is minted each time). */
#include "tests/coordinator/ctest.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "packages-fixture: cannot open %s\n", path);
		exit(99);
	}
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) exit(99);
	n = fread(buf, 1, cap, f);
	if (ferror(f) || !feof(f)) {
		fprintf(stderr, "packages-fixture: cannot read %s (or over 1 MiB)\n", path);
		exit(99);
	}
	fclose(f);
	buf[n] = 0;
	return buf;
}

static char *canon_text(const json_t *v)
{
	struct world_err e;
	size_t n;
	char *s = world_canon_json(v, &n, &e);
	if (!s) ctest_die("canon", &e);
	return s;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: packages-fixture DIR TOP EPISODE MANIFEST [GRANT...]\n");
		return 2;
	}
	struct ctest t = { 0 };
	ctest_open(&t, argv[1]);
	struct world_err e;

	char *mtext = slurp(argv[4]);
	json_t *m = world_json_parse(mtext, strlen(mtext), &e);
	if (!m || !json_is_array(m)) ctest_die("manifest", &e);
	size_t i;
	json_t *d;
	json_array_foreach(m, i, d) {
		const char *id = json_string_value(json_object_get(d, "id"));
		const char *file = json_string_value(json_object_get(d, "transitionFnFile"));
		if (!id || !file) ctest_die("descriptor without id or transitionFnFile", NULL);
		/* transitionFnFile is relative to the repository root TOP, as
		 * world-publish run from the root reads it (the current
		 * directory: docs/publishing.md) */
		char path[4096];
		if (file[0] == '/') snprintf(path, sizeof path, "%s", file);
		else snprintf(path, sizeof path, "%s/%s", argv[2], file);
		char *src = slurp(path);
		const json_t *acc = json_object_get(d, "access");
		char *decl = canon_text(json_object_get(d, "declaredEffects"));
		char *access = acc ? canon_text(acc) : strdup("null");
		char *schema = canon_text(json_object_get(d, "inputSchema"));
		ctest_register(&t, id, src, decl, access, schema);
		free(src);
		free(decl);
		free(access);
		free(schema);
	}
	json_decref(m);
	free(mtext);

	const char *grants[16] = { 0 };
	for (int k = 5; k < argc && k < 20; k++) grants[k - 5] = argv[k];
	char cred[65];
	ctest_session(&t, argv[3], grants, 3600, cred);
	printf("%s\n", cred);
	world_store_close(t.st);
	return 0;
}
