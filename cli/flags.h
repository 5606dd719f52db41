/* cli/flags.h: one flag parser for the verbs (GNU long options only).
 *
 * Owns: `--flag VALUE` and `--flag=VALUE`, boolean flags, flags that may be
 * repeated (each value kept, in order), a repeated single flag refused
 * ("flag --x given twice"), unknown flags refused, `--` ending the flags,
 * positional arguments collected. Errors are printed as the verb's usage
 * line and return WX_USAGE. Also the verbs' shared input conventions: a
 * file argument of `-` is standard input, numbers are parsed in one way,
 * and --wait-lock SECONDS for writers. */
#ifndef WORLD_CLI_FLAGS_H
#define WORLD_CLI_FLAGS_H
#include <stddef.h>
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
/* Reads path ("-" = standard input) into *out (NUL-terminated), at most max
 * bytes. On failure prints "worldd VERB: WHAT PATH: reason" and returns the
 * exit code (WX_NOT_FOUND, WX_BAD_INPUT over max, WX_IO); 0 on success. */
int worldd_read_input(const char *verb, const char *what, const char *path, size_t max, char **out, size_t *len);
/* An integer flag value in min..max, or a usage error naming the flag. */
int worldd_flag_ll(const char *verb, const char *flag, const char *s, long long min, long long max, long long *out);
/* --wait-lock SECONDS (NULL = 0): a number of seconds in 0..86400, the busy
 * timeout of the store's writes (0 = the store's default). */
int worldd_wait_lock(const char *verb, const char *s, double *out);
#define WORLDD_WAIT_LOCK_HELP \
	"  --wait-lock SECONDS  how long each write waits for another writer's transaction\n" \
	"                       (the busy timeout; default and 0: 5 s; past it, exit 5)\n"
#endif
