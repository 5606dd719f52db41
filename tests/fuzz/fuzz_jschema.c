/* tests/fuzz/fuzz_jschema.c: libFuzzer target over the JSON Schema subset
 * (common/jschema.c), schema and instance both hostile: the input is
 * SCHEMA, a 0x00 byte, INSTANCE (without the byte the input is both). A
 * schema jschema_check refuses must be refused by jschema_validate too. */
#include "common/jschema.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	const char *nul = memchr(p, 0, size);
	size_t sl = nul ? (size_t)(nul - p) : size;
	const char *ip = nul ? nul + 1 : p;
	size_t il = nul ? size - sl - 1 : size;
	json_error_t je;
	json_t *schema = json_loadb(p, sl, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
	if (!schema) return 0;
	json_t *inst = json_loadb(ip, il, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	struct world_err err = { 0, "" };
	int ok = jschema_check(schema, &err);
	if (inst) {
		struct world_err e2 = { 0, "" };
		int v = jschema_validate(schema, inst, &e2);
		if (ok < 0 && v == 0) __builtin_trap(); /* an unchecked schema validated something */
		json_decref(inst);
	}
	json_decref(schema);
	return 0;
}
