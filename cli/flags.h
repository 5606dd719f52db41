/* cli/flags.h: one flag parser for the verbs (GNU long options only).
 *
 * Owns: `--flag VALUE` and `--flag=VALUE`, boolean flags, flags that may be
 * repeated (each value kept, in order), a repeated single flag refused
 * ("flag --x given twice"), unknown flags refused, `--` ending the flags,
 * positional arguments collected. Errors are printed as the verb's usage
 * line and return WX_USAGE. */
#ifndef WORLD_CLI_FLAGS_H
#define WORLD_CLI_FLAGS_H
#define WORLDD_FLAG_MAX_VALUES 64

struct worldd_flag {
	const char *name;     /* "--store" */
	int has_value;
	int multi;            /* may be given several times */
	const char *value;    /* last value; "" for a boolean flag; NULL = not given */
	const char *values[WORLDD_FLAG_MAX_VALUES];
	int nvalues;
};

/* flags is terminated by an entry with name NULL. */
int worldd_parse_flags(const char *verb, int argc, char **argv, struct worldd_flag *flags, const char **pos,
                       int maxpos, int *npos);
/* The flag named name in flags (must exist). */
struct worldd_flag *worldd_flag(struct worldd_flag *flags, const char *name);
#endif
