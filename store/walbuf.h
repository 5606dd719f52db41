/* store/walbuf.h: the store's own SQLite VFS for durable writers
 * (store/db_sqlite_wal.c; docs/store.md, The write path).
 *
 * Owns: gathering the WAL frames a connection writes between two syncs
 * into one write to the file. Every other file, and every other call, is
 * the default VFS's. Only for connections whose every commit syncs the WAL
 * (synchronous=FULL): see db_sqlite_wal.c for why that is what makes it safe. */
#ifndef WORLD_STORE_WALBUF_H
#define WORLD_STORE_WALBUF_H
#include <sqlite3.h>

#define WORLD_WALBUF_VFS "world-walbuf"

/* The VFS name to give sqlite3_open_v2 (registered on the first call, not
 * as the default), or NULL when it could not be registered (then open
 * with the default VFS: nothing is lost but the gathering). */
const char *world_walbuf_vfs(void);

/* Process-wide counts, for tests and benchmarks: writes SQLite made to WAL
 * files of this VFS, and the writes that took them to the files. */
void world_walbuf_stats(unsigned long long *writes_in, unsigned long long *writes_out);
#endif
