/* cli/serve_exec.h: owns how the worldd program hands `worldd serve` to
 * worldd-serve (see serve_exec.c for why). */
#ifndef WORLD_CLI_SERVE_EXEC_H
#define WORLD_CLI_SERVE_EXEC_H
#include "store/error.h"
/* Exec worldd-serve with "serve" and argv (the flags after the verb).
 * Returns only on failure (one line printed), with WX_FAIL. */
int worldd_exec_serve(int argc, char **argv);
#endif
