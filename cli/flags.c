/* cli/flags.c: see flags.h. */
#include "cli/flags.h"
#include "cli/verbs.h"
#include <string.h>

int worldd_parse_flags(const char *verb, int argc, char **argv, struct worldd_flag *flags, const char **pos,
                       int maxpos, int *npos)
{
	*npos = 0;
	int rest = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!rest && strcmp(a, "--") == 0) { rest = 1; continue; }
		if (rest || strncmp(a, "--", 2) != 0 || strcmp(a, "-") == 0) {
			if (*npos >= maxpos) return worldd_usage(verb, "unexpected argument '%s'", a);
			pos[(*npos)++] = a;
			continue;
		}
		const char *eq = strchr(a, '=');
		size_t nl = eq ? (size_t)(eq - a) : strlen(a);
		struct worldd_flag *f = NULL;
		for (struct worldd_flag *g = flags; g->name; g++)
			if (strlen(g->name) == nl && strncmp(g->name, a, nl) == 0) f = g;
		if (!f) return worldd_usage(verb, "unknown flag '%.*s'", (int)nl, a);
		if (f->value && !f->multi) return worldd_usage(verb, "flag %s given twice", f->name);
		const char *v;
		if (!f->has_value) {
			if (eq) return worldd_usage(verb, "flag %s takes no value", f->name);
			v = "";
		} else if (eq) {
			v = eq + 1;
		} else {
			if (i + 1 >= argc) return worldd_usage(verb, "flag %s needs a value", f->name);
			v = argv[++i];
		}
		if (f->nvalues >= WORLDD_FLAG_MAX_VALUES) return worldd_usage(verb, "flag %s given too often", f->name);
		f->values[f->nvalues++] = v;
		f->value = v;
	}
	return 0;
}

struct worldd_flag *worldd_flag(struct worldd_flag *flags, const char *name)
{
	for (struct worldd_flag *g = flags; g->name; g++)
		if (strcmp(g->name, name) == 0) return g;
	return NULL;
}
