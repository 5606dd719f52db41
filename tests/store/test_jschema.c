/* tests/store/test_jschema.c: the JSON Schema subset (common/jschema.h):
 * what jschema_check accepts and refuses, what jschema_validate decides,
 * and every message shape, byte for byte. The official test suite runs in
 * tests/store/jschema_suite. */
#include "common/jschema.h"
#include "tests/tap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	if (!v) bail("test JSON does not parse: %s: %s", text, e.text);
	return v;
}

/* want == NULL: the schema must pass; else refused with exactly want. */
static void check(const char *schema, const char *want)
{
	json_t *s = parse(schema);
	struct world_err err = {0};
	int rc = jschema_check(s, &err);
	if (!want) {
		if (!ok(rc == 0, "check accepts %s", schema)) diag("refused: %s", err.msg);
	} else {
		is_int(rc, -1, "check refuses %s", schema);
		is_int(err.code, WX_BAD_INPUT, "  ... with WX_BAD_INPUT");
		is_str(err.msg, want, "  ... message");
	}
	json_decref(s);
}

/* want == NULL: instance valid; else invalid with exactly want. */
static void val(const char *schema, const char *instance, const char *want)
{
	json_t *s = parse(schema), *v = parse(instance);
	struct world_err err = {0};
	int rc = jschema_validate(s, v, &err);
	if (!want) {
		if (!ok(rc == 0, "%s valid under %s", instance, schema)) diag("refused: %s", err.msg);
	} else {
		is_int(rc, -1, "%s invalid under %s", instance, schema);
		is_int(err.code, WX_BAD_INPUT, "  ... with WX_BAD_INPUT");
		is_str(err.msg, want, "  ... message");
	}
	json_decref(s);
	json_decref(v);
}

/* {"items": {"items": ... {}}} with n levels of "items". */
static char *nested_items(int n)
{
	size_t cap = (size_t)n * 12 + 8;
	char *b = malloc(cap), *o = b;
	if (!b) bail("out of memory");
	for (int i = 0; i < n; i++) o += sprintf(o, "{\"items\":");
	o += sprintf(o, "{}");
	for (int i = 0; i < n; i++) *o++ = '}';
	*o = '\0';
	return b;
}

static void test_check(void)
{
	struct world_err err = {0};
	/* Accepted: boolean schemas, the empty schema, every keyword at once. */
	check("true", NULL);
	check("false", NULL);
	check("{}", NULL);
	check("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$comment\":\"c\","
	      "\"title\":\"t\",\"description\":\"d\",\"type\":\"object\",\"required\":[\"a\"],"
	      "\"properties\":{\"a\":{\"type\":[\"string\",\"null\"],\"minLength\":1,\"maxLength\":2},"
	      "\"b\":{\"type\":\"array\",\"items\":{\"enum\":[1,\"x\",null]},\"minItems\":0,\"maxItems\":3},"
	      "\"c\":{\"minimum\":-1.5,\"maximum\":10,\"const\":3},\"d\":true,\"e\":false},"
	      "\"additionalProperties\":{\"type\":\"integer\"}}",
	      NULL);
	check("{\"additionalProperties\":false,\"items\":true}", NULL);
	check("{\"minLength\":2.0,\"maxItems\":0}", NULL); /* 2.0 is an integer */
	check("{\"enum\":[]}", NULL);                     /* matches nothing, but legal */
	check("{\"required\":[]}", NULL);

	/* Not a schema at all. */
	check("\"x\"", "schema (root): a schema must be an object or a boolean, got string");
	check("{\"properties\":{\"a\":1}}",
	      "schema /properties/a: a schema must be an object or a boolean, got integer");
	check("{\"items\":null}", "schema /items: a schema must be an object or a boolean, got null");
	check("{\"additionalProperties\":[]}",
	      "schema /additionalProperties: a schema must be an object or a boolean, got array");
	is_int(jschema_check(NULL, &err), -1, "check refuses a NULL schema");
	is_str(err.msg, "schema (root): a schema must be an object or a boolean, got nothing", "  ... message");

	/* Unsupported keywords, named, at their pointer (RFC 6901 escapes). */
	check("{\"properties\":{\"a\":{\"pattern\":\"x\"}}}", "schema /properties/a: unsupported keyword \"pattern\"");
	check("{\"properties\":{\"a/b~c\":{\"format\":\"uri\"}}}",
	      "schema /properties/a~1b~0c: unsupported keyword \"format\"");
	check("{\"properties\":{\"a\\nb\":{\"default\":1}}}",
	      "schema /properties/a\\u000ab: unsupported keyword \"default\"");
	check("{\"items\":{\"additionalProperties\":{\"x\\\"y\":1}}}",
	      "schema /items/additionalProperties: unsupported keyword \"x\\\"y\"");
	/* A key holding NUL (jansson's parser refuses one; its API makes one). */
	json_t *nul = json_object();
	json_object_setn_new(nul, "type\0x", 6, json_string("string"));
	is_int(jschema_check(nul, &err), -1, "check refuses the keyword \"type\\u0000x\"");
	is_str(err.msg, "schema (root): unsupported keyword \"type\\u0000x\"", "  ... message");
	json_decref(nul);
	check("{\"$id\":\"https://example.com/s\"}", "schema (root): unsupported keyword \"$id\"");
	/* MCP's x-mcp-header annotation (2026-07-28): an HTTP token, on a
	 * property reached from the root through "properties" alone */
	check("{\"properties\":{\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"}}}", NULL);
	check("{\"properties\":{\"a\":{\"properties\":{\"b\":{\"x-mcp-header\":\"B\"}}}}}", NULL);
	check("{\"x-mcp-header\":\"R\"}",
	      "schema (root): \"x-mcp-header\" only on a property reached from the root through \"properties\" alone");
	check("{\"items\":{\"x-mcp-header\":\"R\"}}",
	      "schema /items: \"x-mcp-header\" only on a property reached from the root through \"properties\" alone");
	check("{\"properties\":{\"a\":{\"x-mcp-header\":\"a b\"}}}",
	      "schema /properties/a: \"x-mcp-header\" must be an HTTP token of 1-64 characters");
	check("{\"properties\":{\"a\":{\"x-mcp-header\":\"\"}}}",
	      "schema /properties/a: \"x-mcp-header\" must be an HTTP token of 1-64 characters");
	/* "$ref": local JSON pointers to a subschema, resolved at check time */
	check("{\"$ref\":\"#/$defs/a\",\"$defs\":{\"a\":true}}", NULL);
	check("{\"properties\":{\"n\":{\"$ref\":\"#\"}}}", NULL); /* recursion through the instance */
	check("{\"$defs\":{\"a b\":{\"type\":\"string\"}},\"$ref\":\"#/$defs/a%20b\"}", NULL);
	check("{\"$ref\":\"http://example.com/s\"}",
	      "schema (root): \"$ref\" \"http://example.com/s\" is unsupported: only local references (\"#\" or "
	      "\"#/...\") are supported");
	check("{\"$ref\":\"#a\"}",
	      "schema (root): \"$ref\" \"#a\" is unsupported: only local references (\"#\" or \"#/...\") are "
	      "supported, not anchors");
	check("{\"properties\":{\"x\":{\"$ref\":\"#/$defs/missing\"}}}",
	      "schema /properties/x: \"$ref\" \"#/$defs/missing\" does not resolve within this schema");
	check("{\"$ref\":\"#/$defs/a~2\",\"$defs\":{\"a\":true}}",
	      "schema (root): \"$ref\" \"#/$defs/a~2\" is not a valid JSON pointer (~ must be ~0 or ~1)");
	check("{\"$ref\":\"#/enum/0\",\"enum\":[{\"type\":\"string\"}]}",
	      "schema (root): \"$ref\" \"#/enum/0\" points at a value that is not a subschema");
	check("{\"$ref\":\"#/required\",\"required\":[\"a\"]}",
	      "schema (root): \"$ref\" \"#/required\" points at a array, not a schema");
	check("{\"$ref\":\"#\"}",
	      "schema (root): \"$ref\" leads back to this schema without applying to a part of the instance (it "
	      "would never end)");
	check("{\"$defs\":{\"a\":{\"allOf\":[{\"$ref\":\"#/$defs/b\"}]},\"b\":{\"not\":{\"$ref\":\"#/$defs/a\"}}},"
	      "\"$ref\":\"#/$defs/a\"}",
	      "schema /$defs/a/allOf/0: \"$ref\" leads back to this schema without applying to a part of the instance "
	      "(it would never end)");
	check("{\"$ref\":7}", "schema (root): \"$ref\" must be a string");
	check("{\"$defs\":{\"a\":{\"pattern\":\"x\"}}}", "schema /$defs/a: unsupported keyword \"pattern\"");
	check("{\"unevaluatedItems\":true}", "schema (root): unsupported keyword \"unevaluatedItems\"");
	check("{\"anyOf\":[{\"patternProperties\":{}}]}", "schema /anyOf/0: unsupported keyword \"patternProperties\"");
	/* contains, if/then/else, multipleOf, dependentSchemas, propertyNames */
	check("{\"contains\":{\"pattern\":\"x\"}}", "schema /contains: unsupported keyword \"pattern\"");
	check("{\"if\":true,\"then\":{\"format\":\"x\"}}", "schema /then: unsupported keyword \"format\"");
	check("{\"dependentSchemas\":{\"a\":7}}", "schema /dependentSchemas/a: a schema must be an object or a boolean, got integer");
	check("{\"multipleOf\":0}", "schema (root): \"multipleOf\" must be a number greater than 0");
	check("{\"multipleOf\":\"2\"}", "schema (root): \"multipleOf\" must be a number greater than 0");
	check("{\"minContains\":-1}", "schema (root): \"minContains\" must be a non-negative integer");
	check("{\"$defs\":{\"a\":{\"if\":{\"$ref\":\"#/$defs/a\"}}},\"$ref\":\"#/$defs/a\"}",
	      "schema /$defs/a/if: \"$ref\" leads back to this schema without applying to a part of the instance "
	      "(it would never end)");
	check("{\"$defs\":{\"a\":{\"properties\":{\"k\":{\"contains\":{\"$ref\":\"#/$defs/a\"}}}}},\"$ref\":\"#/$defs/a\"}",
	      NULL); /* contains moves into the instance: a finite recursion */
	check("{\"exclusiveMinimum\":true}",
	      "schema (root): unsupported form of \"exclusiveMinimum\": a boolean (draft 4; 2020-12 gives the bound as a number)");
	check("{\"allOf\":[]}", "schema (root): \"allOf\" must be a non-empty array of schemas");
	check("{\"dependentRequired\":{\"a\":[\"b\",\"b\"]}}", "schema /dependentRequired/a: \"required\": property \"b\" listed twice");
	check("{\"items\":[{}]}",
	      "schema (root): unsupported form of \"items\": an array (draft 2019-09 and older; 2020-12 "
	      "spells it \"prefixItems\")");
	/* the 2020-12 keywords beyond the first subset, each with its message */
	check("{\"$defs\":{\"a\":true},\"prefixItems\":[true],\"uniqueItems\":true,\"not\":false}", NULL);
	val("{\"exclusiveMinimum\":1}", "1", "(root): 1 is not greater than exclusiveMinimum 1");
	val("{\"exclusiveMaximum\":1}", "1.0", "(root): 1 is not less than exclusiveMaximum 1");
	val("{\"minProperties\":2}", "{\"a\":1}", "(root): object of 1 member(s) has fewer than minProperties 2");
	val("{\"maxProperties\":0}", "{\"a\":1}", "(root): object of 1 member(s) has more than maxProperties 0");
	val("{\"uniqueItems\":true}", "[1,{\"a\":1},1.0]", "(root): items 0 and 2 are equal (uniqueItems)");
	val("{\"dependentRequired\":{\"a\":[\"b\"]}}", "{\"a\":1}", "(root): property \"a\" requires property \"b\" (dependentRequired)");
	val("{\"dependentRequired\":{\"a\":[\"b\"]}}", "{\"b\":1}", NULL);
	val("{\"prefixItems\":[{\"type\":\"integer\"}],\"items\":{\"type\":\"string\"}}", "[1,\"x\",2]", "/2: expected type string, got integer");
	val("{\"prefixItems\":[{\"type\":\"integer\"}],\"items\":{\"type\":\"string\"}}", "[\"x\"]", "/0: expected type integer, got string");
	val("{\"prefixItems\":[{\"type\":\"integer\"}],\"items\":false}", "[1]", NULL);
	val("{\"properties\":{\"a\":{\"allOf\":[{\"minimum\":1},{\"maximum\":2}]}}}", "{\"a\":3}", "/a: 3 is greater than maximum 2");
	val("{\"anyOf\":[{\"type\":\"string\"},{\"minimum\":5}]}", "1", "(root): value matches none of the \"anyOf\" schemas");
	val("{\"anyOf\":[{\"type\":\"string\"},{\"minimum\":5}]}", "6", NULL);
	val("{\"oneOf\":[{\"type\":\"integer\"},{\"minimum\":0}]}", "1", "(root): value matches 2 of the \"oneOf\" schemas (exactly one wanted)");
	val("{\"oneOf\":[{\"type\":\"integer\"},{\"minimum\":0}]}", "-1", NULL);
	val("{\"not\":{\"type\":\"null\"}}", "null", "(root): value matches the schema of \"not\"");
	/* Members are looked at in key order: the first bad one is named. */
	check("{\"zzz\":1,\"aaa\":1}", "schema (root): unsupported keyword \"aaa\"");

	/* Supported keywords with values of the wrong type. */
	check("{\"type\":\"strin\"}", "schema (root): \"type\": unknown type \"strin\"");
	check("{\"type\":5}", "schema (root): \"type\" must be a type name or a non-empty array of type names");
	check("{\"type\":[]}", "schema (root): \"type\" must be a type name or a non-empty array of type names");
	check("{\"type\":[\"string\",1]}", "schema (root): \"type\"[1] must be a type name");
	check("{\"type\":[\"string\",\"float\"]}", "schema (root): \"type\"[1]: unknown type \"float\"");
	check("{\"type\":[\"string\",\"string\"]}", "schema (root): \"type\": type \"string\" listed twice");
	check("{\"required\":\"a\"}", "schema (root): \"required\" must be an array of strings");
	check("{\"required\":[\"a\",2]}", "schema (root): \"required\"[1] must be a string");
	check("{\"required\":[\"a\",\"a\"]}", "schema (root): \"required\": property \"a\" listed twice");
	check("{\"properties\":[]}", "schema (root): \"properties\" must be an object");
	check("{\"enum\":{}}", "schema (root): \"enum\" must be an array");
	check("{\"items\":{\"items\":{\"minLength\":-1}}}",
	      "schema /items/items: \"minLength\" must be a non-negative integer");
	check("{\"maxLength\":2.5}", "schema (root): \"maxLength\" must be a non-negative integer");
	check("{\"minItems\":\"1\"}", "schema (root): \"minItems\" must be a non-negative integer");
	check("{\"maxItems\":true}", "schema (root): \"maxItems\" must be a non-negative integer");
	check("{\"additionalProperties\":{\"maximum\":\"x\"}}",
	      "schema /additionalProperties: \"maximum\" must be a number");
	check("{\"minimum\":null}", "schema (root): \"minimum\" must be a number");
	check("{\"title\":1}", "schema (root): \"title\" must be a string");
	check("{\"description\":[]}", "schema (root): \"description\" must be a string");
	check("{\"$comment\":{}}", "schema (root): \"$comment\" must be a string");
	check("{\"$schema\":\"http://json-schema.org/draft-07/schema#\"}",
	      "schema (root): unsupported \"$schema\": only \"https://json-schema.org/draft/2020-12/schema\" is "
	      "supported");
	check("{\"properties\":{\"a\":{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\"}}}",
	      "schema /properties/a: \"$schema\" is only supported at the root");

	/* Bounded nesting: JSCHEMA_MAX_DEPTH levels of subschemas pass, one more
	 * is refused; enum/const values are bounded too. */
	char *deep = nested_items(JSCHEMA_MAX_DEPTH);
	check(deep, NULL);
	free(deep);
	deep = nested_items(JSCHEMA_MAX_DEPTH + 1);
	json_t *s = parse(deep);
	is_int(jschema_check(s, &err), -1, "check refuses %d levels of subschemas", JSCHEMA_MAX_DEPTH + 1);
	ok(strstr(err.msg, ": subschemas nested deeper than 64 levels") && !strncmp(err.msg, "schema /items/items/", 20),
	   "  ... message names the depth and the pointer (%s)", err.msg);
	json_decref(s);
	free(deep);
	json_t *v = json_array();
	for (int i = 0; i < JSCHEMA_MAX_VALUE_DEPTH + 1; i++) v = json_pack("[o]", v);
	s = json_pack("{s:o}", "const", v);
	is_int(jschema_check(s, &err), -1, "check refuses a const value nested %d levels", JSCHEMA_MAX_VALUE_DEPTH + 2);
	is_str(err.msg, "schema (root): \"const\" value nested deeper than 256 levels", "  ... message");
	json_decref(s);
}

static void test_validate(void)
{
	struct world_err err = {0};
	/* type: the instance's pointer and both type names. */
	val("{\"type\":\"string\"}", "5", "(root): expected type string, got integer");
	val("{\"properties\":{\"path\":{\"type\":\"string\"}}}", "{\"path\":1}",
	    "/path: expected type string, got integer");
	val("{\"properties\":{\"path\":{\"type\":\"string\"}}}", "{\"path\":\"a\"}", NULL);
	val("{\"type\":\"integer\"}", "1.0", NULL); /* 1.0 is an integer */
	val("{\"type\":\"integer\"}", "-0.0", NULL);
	val("{\"type\":\"integer\"}", "1.5", "(root): expected type integer, got number");
	val("{\"type\":\"number\"}", "1", NULL);
	val("{\"type\":\"string\"}", "1.0", "(root): expected type string, got integer");
	val("{\"type\":[\"string\",\"null\"]}", "1", "(root): expected type string or null, got integer");
	val("{\"type\":[\"string\",\"null\"]}", "null", NULL);
	val("{\"type\":\"boolean\"}", "{}", "(root): expected type boolean, got object");
	val("{\"type\":\"object\"}", "[]", "(root): expected type object, got array");
	val("{\"type\":\"array\"}", "false", "(root): expected type array, got boolean");
	val("{\"type\":\"null\"}", "\"\"", "(root): expected type null, got string");

	/* required, properties, additionalProperties. */
	val("{\"required\":[\"path\"]}", "{\"other\":1}", "(root): missing required property \"path\"");
	val("{\"required\":[\"path\"]}", "[]", NULL); /* applies to objects only */
	val("{\"required\":[\"a\\\"b\"]}", "{}", "(root): missing required property \"a\\\"b\"");
	val("{\"required\":[\"a\\u0000b\"]}", "{\"a\":1}", "(root): missing required property \"a\\u0000b\"");
	json_t *rs = parse("{\"required\":[\"a\\u0000b\"]}"), *ri = json_object();
	json_object_setn_new(ri, "a\0b", 3, json_true());
	is_int(jschema_validate(rs, ri, &err), 0, "the required name \"a\\u0000b\" matches that key exactly");
	json_decref(rs);
	json_decref(ri);
	val("{\"properties\":{\"x\":{\"required\":[\"y\"]}}}", "{\"x\":{}}", "/x: missing required property \"y\"");
	val("{\"properties\":{\"a\":true},\"additionalProperties\":false}", "{\"a\":1,\"x\":2}",
	    "/x: additional property not allowed");
	val("{\"properties\":{\"a\":true},\"additionalProperties\":false}", "{\"a\":1}", NULL);
	val("{\"additionalProperties\":false}", "{\"b\":1,\"a\":1}", "/a: additional property not allowed");
	val("{\"additionalProperties\":{\"type\":\"string\"}}", "{\"x\":1}", "/x: expected type string, got integer");
	val("{\"properties\":{\"a/b~\":{\"type\":\"string\"}}}", "{\"a/b~\":1}", "/a~1b~0: expected type string, got integer");
	val("{\"additionalProperties\":false}", "{\"a\\tb\":1}", "/a\\u0009b: additional property not allowed");
	val("{\"properties\":{\"a\":false}}", "{\"a\":1}", "/a: no value allowed here (schema false)");
	val("false", "null", "(root): no value allowed here (schema false)");
	val("true", "{\"anything\":[1,2]}", NULL);

	/* items: the index in the pointer. */
	val("{\"items\":{\"type\":\"integer\"}}", "[1,\"x\"]", "/1: expected type integer, got string");
	val("{\"properties\":{\"l\":{\"items\":{\"items\":false}}}}", "{\"l\":[[],[3]]}",
	    "/l/1/0: no value allowed here (schema false)");
	val("{\"items\":{\"type\":\"integer\"}}", "{\"0\":\"x\"}", NULL); /* arrays only */

	/* enum and const: deep equality, numbers by value, no type mixing. */
	val("{\"enum\":[1,\"a\"]}", "2", "(root): value is not one of the schema's \"enum\" values");
	val("{\"enum\":[1,\"a\"]}", "1.0", NULL);
	val("{\"enum\":[[1]]}", "[1.0]", NULL);
	val("{\"enum\":[{\"a\":1}]}", "{\"a\":1.0}", NULL);
	val("{\"enum\":[{\"a\":1}]}", "{\"a\":1,\"b\":2}", "(root): value is not one of the schema's \"enum\" values");
	val("{\"enum\":[false]}", "0", "(root): value is not one of the schema's \"enum\" values");
	val("{\"enum\":[null]}", "0", "(root): value is not one of the schema's \"enum\" values");
	val("{\"enum\":[]}", "null", "(root): value is not one of the schema's \"enum\" values");
	val("{\"properties\":{\"k\":{\"const\":\"a\\u0000b\"}}}", "{\"k\":\"a\\u0000c\"}",
	    "/k: value does not equal the schema's \"const\"");
	val("{\"const\":\"a\\u0000b\"}", "\"a\\u0000b\"", NULL);
	val("{\"const\":[1,[2]]}", "[1,[2.0]]", NULL);
	val("{\"const\":9007199254740992}", "9007199254740992.0", NULL);
	val("{\"const\":9007199254740992}", "9007199254740991.0", "(root): value does not equal the schema's \"const\"");
	val("{\"const\":9007199254740993}", "9007199254740992.0", "(root): value does not equal the schema's \"const\"");
	val("{\"const\":\"\\u03bc\"}", "\"\\u00b5\"", "(root): value does not equal the schema's \"const\"");
	val("{\"const\":{\"a\":1,\"b\":[]}}", "{\"b\":[],\"a\":1}", NULL);
	val("{\"const\":[1,[2]]}", "[1,[2],3]", "(root): value does not equal the schema's \"const\"");

	/* minLength / maxLength count code points, not bytes. */
	val("{\"minLength\":2}", "\"\\ud83d\\ude00\"", "(root): string of 1 code point(s) is shorter than minLength 2");
	val("{\"maxLength\":1}", "\"\\ud83d\\ude00\"", NULL);
	val("{\"maxLength\":2}", "\"abc\"", "(root): string of 3 code point(s) is longer than maxLength 2");
	val("{\"maxLength\":2.0}", "\"ab\"", NULL);
	val("{\"minLength\":5}", "5", NULL); /* strings only */

	/* minimum / maximum: exact, across integers and reals. */
	val("{\"minimum\":5}", "3", "(root): 3 is less than minimum 5");
	val("{\"minimum\":5}", "5.0", NULL);
	val("{\"maximum\":7}", "7.5", "(root): 7.5 is greater than maximum 7");
	val("{\"maximum\":0.1}", "0.2", "(root): 0.2 is greater than maximum 0.1");
	val("{\"minimum\":9007199254740993}", "9007199254740992.0",
	    "(root): 9007199254740992 is less than minimum 9007199254740993");
	val("{\"maximum\":9007199254740992.0}", "9007199254740993",
	    "(root): 9007199254740993 is greater than maximum 9007199254740992");
	val("{\"maximum\":9223372036854775807}", "1e19", "(root): 1e+19 is greater than maximum 9223372036854775807");
	val("{\"minimum\":-1e300}", "-9223372036854775808", NULL);
	val("{\"minimum\":5}", "\"3\"", NULL); /* numbers only */

	/* minItems / maxItems. */
	val("{\"minItems\":2}", "[1]", "(root): array of 1 item(s) has fewer than minItems 2");
	val("{\"maxItems\":1}", "[1,2]", "(root): array of 2 item(s) has more than maxItems 1");
	val("{\"maxItems\":1e300}", "[1,2]", NULL);
	val("{\"minItems\":1e300}", "[1,2]", "(root): array of 2 item(s) has fewer than minItems 1e+300");

	/* Keywords apply in a fixed order: type, const, enum, then the rest. */
	val("{\"type\":\"string\",\"enum\":[\"a\"]}", "1", "(root): expected type string, got integer");

	/* contains with minContains / maxContains */
	val("{\"contains\":{\"type\":\"integer\"}}", "[\"a\",1]", NULL);
	val("{\"contains\":{\"type\":\"integer\"}}", "[\"a\"]",
	    "(root): 0 item(s) match the schema of \"contains\", fewer than 1");
	val("{\"contains\":{\"type\":\"integer\"},\"minContains\":0}", "[]", NULL);
	val("{\"contains\":{\"type\":\"integer\"},\"maxContains\":1}", "[1,2]",
	    "(root): 2 item(s) match the schema of \"contains\", more than maxContains 1");
	val("{\"maxContains\":0}", "[1]", NULL); /* without contains: nothing */
	val("{\"contains\":false}", "{}", NULL);      /* arrays only */
	/* if / then / else */
	val("{\"if\":{\"type\":\"integer\"},\"then\":{\"minimum\":0},\"else\":{\"type\":\"string\"}}", "-1",
	    "(root): -1 is less than minimum 0 (\"then\", as the value matches \"if\")");
	val("{\"if\":{\"type\":\"integer\"},\"then\":{\"minimum\":0},\"else\":{\"type\":\"string\"}}", "true",
	    "(root): expected type string, got boolean (\"else\", as the value does not match \"if\")");
	val("{\"if\":{\"type\":\"integer\"},\"then\":{\"minimum\":0},\"else\":{\"type\":\"string\"}}", "\"s\"", NULL);
	val("{\"then\":false,\"else\":false}", "1", NULL); /* without if: nothing */
	/* multipleOf */
	val("{\"multipleOf\":3}", "9", NULL);
	val("{\"multipleOf\":3}", "10", "(root): 10 is not a multiple of 3");
	val("{\"multipleOf\":0.0001}", "0.0075", NULL);
	val("{\"multipleOf\":0.0001}", "0.00751", "(root): 0.00751 is not a multiple of 0.0001");
	val("{\"multipleOf\":0.123456789}", "1e308", "(root): 1e+308 is not a multiple of 0.123456789");
	val("{\"multipleOf\":2}", "-9223372036854775808", NULL);
	/* dependentSchemas and propertyNames */
	val("{\"dependentSchemas\":{\"a\":{\"required\":[\"b\"]}}}", "{\"a\":1}",
	    "(root): missing required property \"b\"");
	val("{\"dependentSchemas\":{\"a\":{\"required\":[\"b\"]}}}", "{\"c\":1}", NULL);
	val("{\"propertyNames\":{\"maxLength\":2}}", "{\"ab\":1,\"abc\":2}",
	    "/abc: string of 3 code point(s) is longer than maxLength 2 (the member name, under \"propertyNames\")");
	val("{\"propertyNames\":false}", "{}", NULL);

	/* validate refuses a schema that jschema_check refuses. */
	val("{\"properties\":{\"a\":{\"pattern\":\"x\"}}}", "{}", "schema /properties/a: unsupported keyword \"pattern\"");
	val("{\"items\":[true]}", "[]",
	    "schema (root): unsupported form of \"items\": an array (draft 2019-09 and older; 2020-12 spells it "
	    "\"prefixItems\")");
	/* "$ref" applies beside its siblings (2020-12), and recursively */
	val("{\"$defs\":{\"pos\":{\"minimum\":0}},\"$ref\":\"#/$defs/pos\",\"maximum\":9}", "5", NULL);
	val("{\"$defs\":{\"pos\":{\"minimum\":0}},\"$ref\":\"#/$defs/pos\",\"maximum\":9}", "-1",
	    "(root): -1 is less than minimum 0");
	val("{\"$defs\":{\"pos\":{\"minimum\":0}},\"$ref\":\"#/$defs/pos\",\"maximum\":9}", "10",
	    "(root): 10 is greater than maximum 9");
	val("{\"type\":\"object\",\"properties\":{\"kid\":{\"$ref\":\"#\"},\"v\":{\"type\":\"integer\"}}}",
	    "{\"v\":1,\"kid\":{\"v\":2,\"kid\":{\"v\":\"x\"}}}", "/kid/kid/v: expected type integer, got string");
	val("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\",\"$defs\":{"
	    "\"address\":{\"type\":\"object\",\"properties\":{\"street\":{\"type\":\"string\"},\"city\":{\"type\":"
	    "\"string\"}}}},\"properties\":{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"}},"
	    "\"additionalProperties\":false}",
	    "{\"name\":\"a\",\"address\":{\"city\":7}}", "/address/city: expected type string, got integer");
	/* a recursive schema follows the instance: bounded by JSCHEMA_MAX_NESTING */
	json_t *recs = parse("{\"items\":{\"$ref\":\"#\"}}");
	json_t *deepv = json_array();
	for (int i = 0; i < JSCHEMA_MAX_NESTING + 5; i++) deepv = json_pack("[o]", deepv);
	is_int(jschema_validate(recs, deepv, &err), -1, "a recursive schema over a %d-level instance stops",
	       JSCHEMA_MAX_NESTING + 5);
	ok(strstr(err.msg, ": schema applied more than 1024 levels deep") != NULL, "  ... naming the bound (%s)",
	   err.msg);
	json_decref(deepv);
	deepv = json_array();
	for (int i = 0; i < 100; i++) deepv = json_pack("[o]", deepv);
	is_int(jschema_validate(recs, deepv, &err), 0, "control: the same schema over 100 levels passes");
	json_decref(deepv);
	json_decref(recs);

	json_t *s = parse("{}");
	is_int(jschema_validate(s, NULL, &err), -1, "validate refuses a NULL instance");
	is_str(err.msg, "(root): no instance to validate", "  ... message");
	json_decref(s);

	/* Deep instances are walked only as deep as the schema goes. */
	json_t *v = json_array();
	for (int i = 0; i < 5000; i++) v = json_pack("[o]", v);
	s = parse("{\"type\":\"array\",\"maxItems\":1}");
	is_int(jschema_validate(s, v, &err), 0, "a 5000-level instance under a 1-level schema");
	json_decref(s);
	s = parse("{\"const\":[[[1]]]}");
	is_int(jschema_validate(s, v, &err), -1, "... and compared by const only as deep as the const");
	is_str(err.msg, "(root): value does not equal the schema's \"const\"", "  ... message");
	json_decref(s);
	json_decref(v);
}

int main(void)
{
	test_check();
	test_validate();
	return done_testing();
}
