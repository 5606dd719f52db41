/* tests/store/jschema_suite: common/jschema.h against the official JSON
 * Schema Test Suite, for the test file of every supported keyword.
 *
 * For each file: every case whose schema passes jschema_check must get the
 * suite's verdict from jschema_validate; every schema jschema_check refuses
 * must use something outside the subset (found by an independent walk here
 * and named "unsupported" in the message), and no schema that uses something
 * outside the subset may pass. A control first shows that this comparison
 * catches a wrong verdict and a refusal for another reason. One TAP line
 * per file, then
 *   # json-schema-test-suite: P passed of N cases (K schemas skipped as unsupported)
 *
 * Where the suite is: $JSON_SCHEMA_TEST_SUITE (directories holding draftN/,
 * separated by ':'), else the npm package scripts/install-test-deps.sh puts
 * in $top_srcdir/build/npm and Debian's json-schema-test-suite package. No
 * published copy carries draft2020-12 yet (see docs/publishing.md), so the
 * drafts run are every one present whose meaning of the supported keywords
 * is 2020-12's: 2020-12, 2019-09, 7, 6 and 4 (draft 3 is not: its
 * "required" is a boolean and its "type" may hold schemas). Skips when no
 * copy is installed. */
#include "common/jschema.h"
#include "tests/tap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const keywords[] = {
    "type",     "properties", "required",  "additionalProperties", "items",    "enum",     "const",
    "minLength", "maxLength", "minimum",   "maximum",              "minItems", "maxItems", "boolean_schema",
    "exclusiveMinimum", "exclusiveMaximum", "minProperties", "maxProperties", "uniqueItems", "dependentRequired",
    "not", "allOf", "anyOf", "oneOf", "prefixItems", "defs",
};
static const char *const drafts[] = {"draft2020-12", "draft2019-09", "draft7", "draft6", "draft4"};
/* Files run for draft 2020-12 only: "$ref" beside other keywords is
 * 2020-12's (draft 7 and before ignore a $ref's siblings); minContains,
 * maxContains and dependentSchemas are 2019-09's and later; the others are
 * the subset's newer keywords, judged against the dialect it speaks. */
static const char *const keywords_2020[] = {"ref", "infinite-loop-detection", "contains", "minContains",
                                            "maxContains", "if-then-else", "multipleOf", "dependentSchemas",
                                            "propertyNames"};


static bool member_in(const char *k, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(k, set[i])) return true;
	return false;
}

/* Independent of jschema.c: the first thing in schema s outside the subset,
 * or NULL. Walks subschema positions only (not enum/const values, nor the
 * member names of "properties"). */
static const char *outside_subset(const json_t *s, int depth)
{
	static const char *const supported[] = {
	    "type",     "properties", "required", "additionalProperties", "items",       "enum",
	    "const",    "minLength",  "maxLength", "minimum",             "maximum",     "minItems",
	    "maxItems", "title",      "description", "$comment",          "$schema",
	    "exclusiveMinimum", "exclusiveMaximum", "minProperties", "maxProperties", "uniqueItems",
	    "dependentRequired", "not", "allOf", "anyOf", "oneOf", "prefixItems", "$defs", "$ref",
	    "contains", "minContains", "maxContains", "if", "then", "else", "multipleOf",
	    "dependentSchemas", "propertyNames",
	};
	if (!json_is_object(s)) return NULL;
	const char *k;
	size_t klen;
	json_t *v;
	json_object_keylen_foreach((json_t *)s, k, klen, v) {
		if (strlen(k) != klen) return "a keyword holding NUL";
		if (!member_in(k, supported, sizeof supported / sizeof *supported)) return k;
		if (!strcmp(k, "$schema") &&
		    (depth || !json_is_string(v) || strcmp(json_string_value(v), JSCHEMA_DIALECT)))
			return "$schema (other than 2020-12 at the root)";
		if (!strcmp(k, "items") && json_is_array(v)) return "items (array form)";
		if (!strcmp(k, "$ref") &&
		    (!json_is_string(v) || (strcmp(json_string_value(v), "#") && strncmp(json_string_value(v), "#/", 2))))
			return "$ref (other than a local JSON pointer)";
		if ((!strcmp(k, "exclusiveMinimum") || !strcmp(k, "exclusiveMaximum")) && !json_is_number(v))
			return "exclusiveMinimum/Maximum (draft 4's boolean form)";
		const char *r = NULL;
		if (!strcmp(k, "items") || !strcmp(k, "additionalProperties") || !strcmp(k, "not") ||
		    !strcmp(k, "contains") || !strcmp(k, "if") || !strcmp(k, "then") || !strcmp(k, "else") ||
		    !strcmp(k, "propertyNames"))
			r = outside_subset(v, depth + 1);
		if (!strcmp(k, "allOf") || !strcmp(k, "anyOf") || !strcmp(k, "oneOf") || !strcmp(k, "prefixItems")) {
			size_t i;
			json_t *e;
			json_array_foreach(v, i, e) if (!r) r = outside_subset(e, depth + 1);
		}
		if ((!strcmp(k, "properties") || !strcmp(k, "$defs") || !strcmp(k, "dependentSchemas")) &&
		    json_is_object(v)) {
			const char *pk;
			json_t *pv;
			json_object_foreach(v, pk, pv) if (!r) r = outside_subset(pv, depth + 1);
		}
		if (r) return r;
	}
	return NULL;
}

static const char *str_or(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : dflt;
}

struct counts {
	long cases, passed, skipped;
};

/* Run the test groups of one file; returns how many things went wrong (a
 * wrong verdict, a refusal for another reason than the subset, a schema
 * outside the subset that passed). quiet: no diagnostics (the control). */
static long run_groups(const json_t *groups, const char *label, struct counts *c, bool quiet)
{
	long bad = 0;
	for (size_t g = 0; g < json_array_size(groups); g++) {
		json_t *grp = json_array_get(groups, g), *schema = json_object_get(grp, "schema");
		json_t *tests = json_object_get(grp, "tests");
		const char *gdesc = str_or(grp, "description", "?");
		struct world_err err = {0};
		const char *outside = outside_subset(schema, 0);
		if (jschema_check(schema, &err)) {
			c->skipped++;
			if (!outside || !strstr(err.msg, "unsupported")) {
				bad++;
				if (!quiet)
					diag("%s: \"%s\": refused, but not for something outside the subset: %s", label,
					     gdesc, err.msg);
			} else if (!quiet)
				diag("%s: skipped \"%s\" (%zu cases): %s", label, gdesc, json_array_size(tests), err.msg);
			continue;
		}
		if (outside) {
			bad++;
			if (!quiet) diag("%s: \"%s\": schema uses %s, yet jschema_check accepted it", label, gdesc, outside);
		}
		for (size_t t = 0; t < json_array_size(tests); t++) {
			json_t *tc = json_array_get(tests, t);
			bool want = json_is_true(json_object_get(tc, "valid"));
			int rc = jschema_validate(schema, json_object_get(tc, "data"), &err);
			c->cases++;
			if ((rc == 0) == want) c->passed++;
			else {
				bad++;
				if (!quiet)
					diag("%s: \"%s\" / \"%s\": expected %s, got %s%s", label, gdesc,
					     str_or(tc, "description", "?"), want ? "valid" : "invalid",
					     rc ? "invalid: " : "valid", rc ? err.msg : "");
			}
		}
	}
	return bad;
}

static struct counts total;

/* One TAP line for one test file. */
static void run_file(const char *path, const char *label, struct counts *draft)
{
	json_error_t je;
	json_t *groups = json_load_file(path, JSON_ALLOW_NUL, &je);
	if (!json_is_array(groups)) {
		ok(0, "%s: loads as an array of test groups (%s at line %d)", label, je.text, je.line);
		json_decref(groups);
		return;
	}
	struct counts c = {0};
	long bad = run_groups(groups, label, &c, false);
	json_decref(groups);
	ok(bad == 0, "%s: %ld/%ld cases passed, %ld schema(s) skipped as unsupported", label, c.passed, c.cases,
	   c.skipped);
	draft->cases += c.cases;
	draft->passed += c.passed;
	draft->skipped += c.skipped;
}

/* Control: the comparison can fail. A group in the suite's format with one
 * wrong expected verdict, one schema refused for a typing mistake (not for
 * being outside the subset) and one correct case must count as 2 bad. */
static void control(void)
{
	json_error_t je;
	json_t *groups = json_loads(
	    "[{\"description\":\"c\",\"schema\":{\"type\":\"integer\"},\"tests\":["
	    "{\"description\":\"right\",\"data\":1,\"valid\":true},"
	    "{\"description\":\"wrong\",\"data\":\"x\",\"valid\":true}]},"
	    "{\"description\":\"typo\",\"schema\":{\"minLength\":-1},\"tests\":[]},"
	    "{\"description\":\"outside\",\"schema\":{\"pattern\":\"x\"},\"tests\":[]}]",
	    0, &je);
	if (!groups) bail("control JSON: %s", je.text);
	struct counts c = {0};
	long bad = run_groups(groups, "control", &c, true);
	ok(bad == 2 && c.cases == 2 && c.passed == 1 && c.skipped == 2,
	   "control: a wrong verdict and a refusal for another reason are both caught (bad %ld, %ld/%ld, %ld "
	   "skipped)",
	   bad, c.passed, c.cases, c.skipped);
	json_decref(groups);
}

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A short name for a suite copy in TAP lines. */
static const char *root_tag(const char *root)
{
	if (strstr(root, "/shared/vendor/")) return "vendor";
	if (strstr(root, "/build/npm/")) return "npm";
	if (!strncmp(root, "/usr/share/json-schema-test-suite", 33)) return "debian";
	return root;
}

static int run_root(const char *root)
{
	int drafts_run = 0;
	for (size_t d = 0; d < sizeof drafts / sizeof *drafts; d++) {
		char dir[4096];
		snprintf(dir, sizeof dir, "%s/%s", root, drafts[d]);
		if (!is_dir(dir)) continue;
		if (!drafts_run++) diag("suite copy %s: %s", root_tag(root), root);
		struct counts dc = {0};
		size_t nk = sizeof keywords / sizeof *keywords, n2020 = sizeof keywords_2020 / sizeof *keywords_2020;
		size_t nall = nk + (strcmp(drafts[d], "draft2020-12") ? 0 : n2020);
		for (size_t k = 0; k < nall; k++) {
			const char *kw = k < nk ? keywords[k] : keywords_2020[k - nk];
			char path[4200], label[4300];
			snprintf(path, sizeof path, "%s/%s.json", dir, kw);
			snprintf(label, sizeof label, "%s:%s/%s.json", root_tag(root), drafts[d], kw);
			struct stat st;
			if (stat(path, &st) != 0) {
				skip("no such file in this draft", "%s", label);
				continue;
			}
			run_file(path, label, &dc);
		}
		diag("%s:%s: %ld passed of %ld cases (%ld schemas skipped as unsupported)", root_tag(root), drafts[d],
		     dc.passed, dc.cases, dc.skipped);
		total.cases += dc.cases;
		total.passed += dc.passed;
		total.skipped += dc.skipped;
	}
	return drafts_run;
}

int main(void)
{
	char roots[8192] = "";
	const char *env = getenv("JSON_SCHEMA_TEST_SUITE");
	if (env && *env) snprintf(roots, sizeof roots, "%s", env);
	else {
		const char *top = getenv("top_srcdir");
		snprintf(roots, sizeof roots, "%s/../shared/vendor/JSON-Schema-Test-Suite/tests:"
		         "%s/build/npm/node_modules/json-schema-test-suite/tests:"
		         "/usr/share/json-schema-test-suite/tests", top ? top : ".", top ? top : ".");
	}
	control();
	int found = 0;
	for (char *save = NULL, *r = strtok_r(roots, ":", &save); r; r = strtok_r(NULL, ":", &save))
		if (is_dir(r)) found += run_root(r);
	if (!found) {
		skip("json-schema-test-suite not installed (scripts/install-test-deps.sh installs it)",
		     "official JSON Schema Test Suite");
		return done_testing();
	}
	diag("json-schema-test-suite: %ld passed of %ld cases (%ld schemas skipped as unsupported)", total.passed,
	     total.cases, total.skipped);
	return done_testing();
}
