/* tests/daemon/test_toolname: the MCP tool name of a transition id
 * (dtool_name, daemon/server.c; docs/design.md §7) is one-to-one, keeps the
 * reference's `tools.echo` -> `tools_decho`, and leaves the MCP conformance
 * suite's fixture names (`test_simple_text`, ...) as they are.
 *
 * One-to-one is checked by reading every name back with a decoder written
 * here from the documented rule, over every string of up to 5 characters
 * drawn from the characters that matter (a d u _ . /): decode(name) must be
 * the id, so no two ids share a name. Control: the same check catches a
 * collision in an encoder that escapes '.' but leaves every '_' alone. */
#include "daemon/route.h"
#include "tests/tap.h"
#include <stdio.h>
#include <string.h>

/* The documented reading: "_d" '.', "__" '/', "_u" '_', another '_' itself. */
static void decode(const char *name, char *out)
{
	size_t j = 0;
	for (const char *p = name; *p; p++) {
		if (*p == '_' && (p[1] == 'd' || p[1] == '_' || p[1] == 'u')) {
			out[j++] = p[1] == 'd' ? '.' : p[1] == '_' ? '/' : '_';
			p++;
		} else {
			out[j++] = *p;
		}
	}
	out[j] = 0;
}

/* A broken encoder for the control: '.' -> "_d", '/' -> "__", '_' kept. */
static int naive_name(const char *id, char out[65])
{
	size_t j = 0;
	for (const char *p = id; *p && j < 62; p++) {
		if (*p == '.') { out[j++] = '_'; out[j++] = 'd'; }
		else if (*p == '/') { out[j++] = '_'; out[j++] = '_'; }
		else out[j++] = *p;
	}
	out[j] = 0;
	return 0;
}

/* Every id over ALPHA of length 1..5: how many read back as another id. */
static long round_trip_failures(int (*enc)(const char *, char[65]), char *first_bad, size_t n)
{
	static const char alpha[] = "adu_./";
	const int k = (int)strlen(alpha);
	long bad = 0;
	char id[8], name[65], back[65];
	for (int len = 1; len <= 5; len++) {
		int idx[5] = { 0 };
		for (;;) {
			for (int i = 0; i < len; i++) id[i] = alpha[idx[i]];
			id[len] = 0;
			if (enc(id, name) == 0) {
				decode(name, back);
				if (strcmp(back, id) != 0) {
					if (!bad) snprintf(first_bad, n, "%.8s -> %.64s -> %.64s", id, name, back);
					bad++;
				}
			}
			int i = len - 1;
			while (i >= 0 && ++idx[i] == k) idx[i--] = 0;
			if (i < 0) break;
		}
	}
	return bad;
}

int main(void)
{
	char name[65], why[256] = "";
	static const struct { const char *id, *name; } fixed[] = {
		{ "tools.echo", "tools_decho" },
		{ "ailang-read", "ailang-read" },
		{ "test_simple_text", "test_simple_text" },
		{ "test_error_handling", "test_error_handling" },
		{ "test_tool_with_progress", "test_tool_with_progress" },
		{ "json_schema_2020_12_tool", "json_schema_2020_12_tool" },
		{ "my_data", "my_udata" },     /* '_' before 'd' would read as '.' */
		{ "a_.b", "a_u_db" },         /* '_' before an escape */
		{ "pkg/tool", "pkg__tool" },
		{ "a__b", "a_u_b" },
	};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		ok(dtool_name(fixed[i].id, name) == 0, "%s has a name", fixed[i].id);
		is_str(name, fixed[i].name, "%s -> %s", fixed[i].id, fixed[i].name);
	}
	char long_id[70];
	memset(long_id, 'a', 64);
	long_id[64] = 0;
	ok(dtool_name(long_id, name) == 0, "a 64-character id fits");
	long_id[63] = '.';
	ok(dtool_name(long_id, name) == -1, "an id whose name would pass 64 bytes has none");

	long bad = round_trip_failures(dtool_name, why, sizeof why);
	is_int(bad, 0, "every id of up to 5 characters over a d u _ . / reads back as itself%s%s", bad ? ": " : "",
	       why);
	why[0] = 0;
	long naive_bad = round_trip_failures(naive_name, why, sizeof why);
	ok(naive_bad > 0, "control: an encoder that leaves '_' alone is caught (%ld ids read back wrong, e.g. %s)",
	   naive_bad, why);
	return done_testing();
}
