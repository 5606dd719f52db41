/* cli/world-store-copy.c: the program `worldd store copy` and `worldd backup
 * --store postgresql://...` run in (cli/copy_exec.h): dynamically linked,
 * with the store's PostgreSQL driver enabled (libworld_pg.a). Installed in
 * pkglibexecdir; its verbs and their --help are worldd's (cli/verbs_copy.c). */
#include "cli/copy_exec.h"
#include "cli/output.h"
#include "cli/verbs.h"
#include "store/db.h"
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
#ifdef WORLD_HAVE_PG
	wdb_pg_enable();
#endif
	const char *verb = NULL;
	int rc;
	if (argc >= 3 && strcmp(argv[1], "store") == 0 && strcmp(argv[2], "copy") == 0) {
		verb = "store copy";
		if (worldd_wants_help(argc - 3, argv + 3)) {
			fputs(copy_verbs[0].help, stdout);
			rc = WX_OK;
		} else {
			rc = copy_verbs[0].run(argc - 3, argv + 3);
		}
	} else if (argc >= 2 && strcmp(argv[1], "backup") == 0) {
		verb = "backup";
		if (worldd_wants_help(argc - 2, argv + 2)) {
			printf("usage: world-store-copy backup --store postgresql://... [--store-password-file FILE] DEST\n"
			       "(what worldd backup runs for a PostgreSQL store: see worldd backup --help)\n");
			rc = WX_OK;
		} else {
			rc = worldd_backup_via_copy(argc - 2, argv + 2);
		}
	} else {
		fprintf(stderr, "world-store-copy: usage: world-store-copy store copy ... | backup ... (run by worldd: see "
		                "worldd store copy --help)\n");
		rc = WX_USAGE;
	}
	char who[64];
	snprintf(who, sizeof who, "worldd%s%s", verb ? " " : "", verb ? verb : "");
	return cli_close_stdout(who, rc);
}
