/* cli/copy_exec.h: owns `worldd store copy` and the PostgreSQL side of
 * `worldd backup` (store/copy.h). The static worldd cannot link libpq
 * (docs/HACKING.md), so both run in world-store-copy, a small dynamically
 * linked program with the PostgreSQL driver enabled: worldd execs it,
 * looked up beside the running worldd (the build tree, a relocated
 * install), then in pkglibexecdir -- as `worldd serve` finds worldd-serve.
 * verbs_copy.c is compiled into both programs; in world-store-copy
 * (WORLD_STORE_COPY_PROGRAM) the verbs run the copy themselves. */
#ifndef WORLD_CLI_COPY_EXEC_H
#define WORLD_CLI_COPY_EXEC_H

/* `worldd backup --store postgresql://... [--store-password-file FILE] DEST`:
 * argv as the backup verb got it (after its name). */
int worldd_backup_via_copy(int argc, char **argv);
#endif
