/* cli/serve_exec.h: owns how the worldd program hands a verb to a sibling
 * program: `worldd serve` to worldd-serve (see serve_exec.c for why),
 * `worldd store copy` and a PostgreSQL `worldd backup` to world-store-copy
 * (cli/copy_exec.h). */
#ifndef WORLD_CLI_SERVE_EXEC_H
#define WORLD_CLI_SERVE_EXEC_H
#include "common/error.h"
/* Exec worldd-serve with "serve" and argv (the flags after the verb).
 * Returns only on failure (one line printed), with WX_FAIL. */
int worldd_exec_serve(int argc, char **argv);
/* Exec PROGRAM -- beside the running program, then in pkglibexecdir --
 * with argv[0] AV0, then WORDS (the verb's words), then argv. Returns only
 * on failure (one line naming VERB and PROGRAM printed), with WX_FAIL. */
int worldd_exec_sibling(const char *verb, const char *program, const char *av0, const char *const *words, int nwords,
                        int argc, char **argv);
#endif
