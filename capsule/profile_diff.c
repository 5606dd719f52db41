/* capsule/profile_diff.c: the difference of two profile documents (see
 * profile_diff.h). */
#include "capsule/profile_diff.h"
#include <stdlib.h>
#include <string.h>

/* The member that names an element of an array of objects, if every
 * element of both arrays has it as a string and no two elements of one
 * array share it: then elements are matched by it. */
static const char *key_of(json_t *a, json_t *b)
{
	static const char *const keys[] = { "syscall", "path", "name", NULL };
	for (size_t k = 0; keys[k]; k++) {
		int good = 1;
		json_t *arrs[2] = { a, b };
		for (int s = 0; s < 2 && good; s++) {
			size_t i, j;
			json_t *e, *f;
			json_array_foreach(arrs[s], i, e) {
				if (!json_is_string(json_object_get(e, keys[k]))) {
					good = 0;
					break;
				}
				json_array_foreach(arrs[s], j, f) if (j < i && json_equal(json_object_get(e, keys[k]),
				                                                          json_object_get(f, keys[k]))) good = 0;
			}
		}
		if (good) return keys[k];
	}
	return NULL;
}

static json_t *find_by(json_t *arr, const char *key, json_t *val)
{
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e) if (json_equal(json_object_get(e, key), val)) return e;
	return NULL;
}

static int in_array(json_t *arr, json_t *v)
{
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e) if (json_equal(e, v)) return 1;
	return 0;
}

static void add(json_t *out, const char *layer, const char *path, const char *op, json_t *a, json_t *b)
{
	json_t *c = json_pack("{s:s,s:s,s:s}", "layer", layer, "path", path, "op", op);
	if (!c) return;
	if (a) json_object_set(c, "a", a);
	if (b) json_object_set(c, "b", b);
	json_array_append_new(out, c);
}

static void walk(json_t *out, const char *layer, const char *path, json_t *a, json_t *b)
{
	char sub[512];
	if (json_equal(a, b)) return;
	if (json_is_object(a) && json_is_object(b)) {
		const char *k;
		json_t *v;
		json_object_foreach(a, k, v) {
			snprintf(sub, sizeof sub, "%s.%s", path, k);
			json_t *w = json_object_get(b, k);
			if (!w) add(out, layer, sub, "removed", v, NULL);
			else walk(out, layer, sub, v, w);
		}
		json_object_foreach(b, k, v) {
			snprintf(sub, sizeof sub, "%s.%s", path, k);
			if (!json_object_get(a, k)) add(out, layer, sub, "added", NULL, v);
		}
		return;
	}
	if (json_is_array(a) && json_is_array(b)) {
		size_t i;
		json_t *e;
		const char *key = key_of(a, b);
		if (key) {
			json_array_foreach(a, i, e) {
				json_t *name = json_object_get(e, key);
				snprintf(sub, sizeof sub, "%s[%s=%s]", path, key, json_string_value(name));
				json_t *f = find_by(b, key, name);
				if (!f) add(out, layer, sub, "removed", e, NULL);
				else walk(out, layer, sub, e, f);
			}
			json_array_foreach(b, i, e) {
				json_t *name = json_object_get(e, key);
				snprintf(sub, sizeof sub, "%s[%s=%s]", path, key, json_string_value(name));
				if (!find_by(a, key, name)) add(out, layer, sub, "added", NULL, e);
			}
			return;
		}
		/* a list of values: what left and what came; the same values in
		 * another order is one change of the whole list (argv order matters) */
		size_t before = json_array_size(out);
		json_array_foreach(a, i, e) if (!in_array(b, e)) add(out, layer, path, "removed", e, NULL);
		json_array_foreach(b, i, e) if (!in_array(a, e)) add(out, layer, path, "added", NULL, e);
		if (json_array_size(out) == before) add(out, layer, path, "changed", a, b);
		return;
	}
	add(out, layer, path, "changed", a, b);
}

json_t *capsule_profile_diff(json_t *a, json_t *b)
{
	json_t *out = json_array();
	if (!out) return NULL;
	const char *k;
	json_t *v;
	json_object_foreach(a, k, v) {
		if (strcmp(k, "this_host") == 0 || strcmp(k, "profile") == 0) continue;
		json_t *w = json_object_get(b, k);
		if (!w) add(out, k, k, "removed", v, NULL);
		else walk(out, k, k, v, w);
	}
	json_object_foreach(b, k, v) {
		if (strcmp(k, "this_host") == 0 || strcmp(k, "profile") == 0) continue;
		if (!json_object_get(a, k)) add(out, k, k, "added", NULL, v);
	}
	return out;
}

static int put_value(FILE *out, json_t *v)
{
	char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	int rc = fputs(t ? t : "?", out);
	free(t);
	return rc < 0 ? -1 : 0;
}

int capsule_profile_diff_text(json_t *changes, const char *name_a, const char *name_b, FILE *out)
{
	fprintf(out, "profile diff: a = %s, b = %s\n", name_a, name_b);
	if (json_array_size(changes) == 0) fprintf(out, "no difference\n");
	const char *layer = NULL;
	size_t i;
	json_t *c;
	json_array_foreach(changes, i, c) {
		const char *l = json_string_value(json_object_get(c, "layer"));
		const char *op = json_string_value(json_object_get(c, "op"));
		if (!layer || strcmp(layer, l) != 0) fprintf(out, "\n[%s]\n", l);
		layer = l;
		fprintf(out, "  %c %s: ", op[0] == 'a' ? '+' : op[0] == 'r' ? '-' : '~',
		        json_string_value(json_object_get(c, "path")));
		if (op[0] == 'c') {
			put_value(out, json_object_get(c, "a"));
			fputs(" -> ", out);
			put_value(out, json_object_get(c, "b"));
		} else {
			put_value(out, json_object_get(c, op[0] == 'a' ? "b" : "a"));
		}
		fputc('\n', out);
	}
	fprintf(out, "%s%zu change%s\n", json_array_size(changes) ? "\n" : "", json_array_size(changes),
	        json_array_size(changes) == 1 ? "" : "s");
	return fflush(out) != 0 || ferror(out) ? -1 : 0;
}
