/* cli/output.h: the end of every program's standard output.
 *
 * Owns: the one check that standard output reached its file (a full disk or
 * a closed pipe is an error whatever the verb returned: exit 9, WX_IO),
 * shared by worldd and world-publish. */
#ifndef WORLD_CLI_OUTPUT_H
#define WORLD_CLI_OUTPUT_H

/* Flush and close stdout. On failure print "WHO: write standard output:
 * REASON" and return WX_IO when rc was WX_OK; otherwise return rc. */
int cli_close_stdout(const char *who, int rc);
#endif
