/* common/file.h: reading a whole regular file under a size cap; writing all of a buffer.
 *
 * Owns: the one careful "read this file into memory" used by the archive
 * (interpreter binaries) and the CLI (sources, input files): refuses
 * non-regular files and files over the cap before reading, notices a file
 * that grows while being read, and reports every failure as one line
 * naming the path; and the one "write all of these bytes" loop (write_all)
 * used by the archive, the supervisor's frames and the CLI's prompts. */
#ifndef WORLD_COMMON_FILE_H
#define WORLD_COMMON_FILE_H
#include "common/error.h"
#include <stddef.h>

/* On success *out is a malloc'd buffer of *len bytes plus a terminating NUL
 * (so text callers may treat it as a string); the caller frees it.
 * Errors: WX_NOT_FOUND (absent), WX_BAD_INPUT (not a regular file, over
 * max), WX_IO (open/read failure, file changed while read), WX_FAIL (memory). */
int world_read_file(const char *path, size_t max, char **out, size_t *len, struct world_err *err);
/* Write all bytes, retrying on EINTR and short writes: 0, or -1 with errno. */
int write_all(int fd, const void *buf, size_t len);
#endif
