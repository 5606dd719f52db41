/* common/jschema.h: argument validation by a documented subset of JSON Schema
 * 2020-12 (docs/publishing.md, "Schema subset").
 *
 * Owns: which schemas World accepts (jschema_check) and what an instance
 * must be to satisfy one (jschema_validate). No C library for JSON Schema
 * ships with Debian 12, so this is the smallest honest subset: a schema that
 * uses anything outside it is refused as a whole, naming the keyword, so no
 * schema is ever silently half-enforced.
 *
 * Supported: boolean schemas; `type` (one of the 7 type names, or an array
 * of unique ones), `properties`, `required`, `additionalProperties` (a
 * schema), `items` (a schema; the array form is refused), `enum`, `const`,
 * `minLength`/`maxLength`, `minimum`/`maximum`, `minItems`/`maxItems`,
 * `exclusiveMinimum`/`exclusiveMaximum` (numbers), `minProperties`/
 * `maxProperties`, `uniqueItems`, `prefixItems`, `dependentRequired`,
 * `allOf`/`anyOf`/`oneOf`/`not`, `$defs`, and `$ref` to a local JSON pointer
 * ("#" or "#/...", percent-decoded, RFC 6901) naming a subschema of the same
 * schema -- resolved at check time (a dangling one is refused), and refused
 * when following references and in-place applicators from it comes back to
 * it without moving into the instance (it would never end);
 * `title`, `description`, `$comment` (strings) as annotations; `$schema` at
 * the root only, and only as the 2020-12 meta-schema URI. Everything else
 * (`$id`, `$anchor`, a `$ref` to another document or an anchor, `pattern`,
 * `format`, `contains`, `if`, `default`, ...) is refused.
 *
 * Semantics are JSON Schema's exactly: 1.0 is an integer; string lengths
 * count Unicode code points; enum/const compare by deep equality in which
 * numbers compare by value (1 == 1.0) and no other types mix; minimum and
 * maximum compare integers and reals exactly. Schema nesting is bounded by
 * JSCHEMA_MAX_DEPTH (refused beyond it), which bounds validation recursion.
 *
 * Messages (WX_BAD_INPUT, one line) name a JSON pointer (RFC 6901, `~0`
 * `~1`; "(root)" for the empty pointer; control characters shown as
 * \u00XX so a message stays one line):
 *   jschema_check:    schema /properties/a: unsupported keyword "pattern"
 *   jschema_validate: /path: expected type string, got integer
 *                     (root): missing required property "path"
 *                     /x: additional property not allowed */
#ifndef WORLD_COMMON_JSCHEMA_H
#define WORLD_COMMON_JSCHEMA_H
#include <jansson.h>
#include "common/error.h"

/* Deepest nesting of subschemas a schema may have (the root is depth 0). */
#define JSCHEMA_MAX_DEPTH 64
/* Deepest nesting of arrays/objects compared by enum/const. */
#define JSCHEMA_MAX_VALUE_DEPTH 256
/* Deepest nesting of schema applications during one validation (a
 * recursive "$ref" follows the instance's depth). */
#define JSCHEMA_MAX_NESTING 1024

/* The only `$schema` value accepted (at the root only). */
#define JSCHEMA_DIALECT "https://json-schema.org/draft/2020-12/schema"

/* 0 when schema uses only the supported keywords, each correctly typed;
 * else -1 with WX_BAD_INPUT: "schema POINTER: ..." naming the keyword. */
int jschema_check(const json_t *schema, struct world_err *err);

/* 0 when instance satisfies schema; -1 with WX_BAD_INPUT and
 * "POINTER: RULE" naming the first failed rule (deterministic: keywords in a
 * fixed order, object members in bytewise key order). The schema is checked
 * first (jschema_check); a schema that does not pass is refused with that
 * message. -1 with WX_FAIL on allocation failure. */
int jschema_validate(const json_t *schema, const json_t *instance, struct world_err *err);
#endif
