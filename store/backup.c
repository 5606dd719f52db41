/* store/backup.c: world_backup (store/backup.h), the engine's own: a
 * SQLite store's online backup (store/db_sqlite_backup.c), a PostgreSQL
 * store's copy to a SQLite file (store/db_pg_store.c). */
#include "store/backup.h"
#include "store/store_internal.h"
#include <string.h>

int world_backup(const char *src_path, const char *dest, const struct world_scan_opts *scan_opts, FILE *scan_out,
                 struct world_backup_result *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	return ws_engine_of(src_path)->backup(src_path, dest, scan_opts, scan_out, out, err);
}
