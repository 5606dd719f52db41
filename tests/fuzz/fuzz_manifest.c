/* tests/fuzz/fuzz_manifest.c: libFuzzer target over world-publish's
 * manifest parser (cli/world-publish.c's manifest_parse: keys, ids, MCP
 * tool names, schemas and their subset, source files, effects, epochs),
 * compiled in with its main renamed. Runs in a temporary directory holding
 * src/echo.ail, so transitionFnFile can name a real source. A manifest it
 * accepts has, for every entry without a refusal, an id, a canonical
 * source or a stored ref, and object schemas; every refusal has a message. */
#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "fuzz" /* config.h's, for --version */
#endif
#define main world_publish_main
#include "cli/world-publish.c"
#undef main
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready) {
		static char dir[] = "/tmp/world-fuzz-manifest.XXXXXX";
		if (!mkdtemp(dir) || chdir(dir) < 0 || mkdir("src", 0700) < 0) abort();
		FILE *f = fopen("src/echo.ail", "w");
		if (!f) abort();
		fputs("module echo\nexport func main(input: string) -> string { input }\n", f);
		if (fclose(f) != 0) abort();
		ready = 1;
	}
	struct manifest mf;
	struct world_err err = { 0, "" };
	if (manifest_parse((const char *)data, size, "fuzz.json", SOURCES_CWD, &mf, &err) < 0) {
		if (!err.code || !err.msg[0]) __builtin_trap();
	} else {
		for (size_t i = 0; i < mf.n; i++) {
			struct entry *e = &mf.e[i];
			if (e->err.code) {
				if (!e->err.msg[0]) __builtin_trap();
				continue;
			}
			if (!e->id || !json_is_object(e->input) || !json_is_object(e->output) || !json_is_array(e->effects))
				__builtin_trap();
			if (!e->source && !e->fn[0]) __builtin_trap();
		}
	}
	manifest_free(&mf);
	return 0;
}
