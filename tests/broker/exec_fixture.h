/* tests/broker/exec_fixture.h: the file helpers test_exec and
 * test_exec_profile share (each bails on any failure): fmt (a formatted
 * string from a ring of 64 buffers), put (a file with content and mode),
 * mk (a directory, 0755, kept if there). */
#ifndef WORLD_TESTS_BROKER_EXEC_FIXTURE_H
#define WORLD_TESTS_BROKER_EXEC_FIXTURE_H
#include "tests/tap.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *f, ...)
{
	static char bufs[64][8192];
	static int k;
	char *b = bufs[k++ % 64];
	va_list ap;
	va_start(ap, f);
	vsnprintf(b, sizeof bufs[0], f, ap);
	va_end(ap);
	return b;
}

static void put(const char *path, const char *content, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) bail("create %s: %s", path, strerror(errno));
	size_t n = strlen(content);
	if (write(fd, content, n) != (ssize_t)n) bail("write %s: %s", path, strerror(errno));
	if (close(fd) < 0) bail("close %s: %s", path, strerror(errno));
	if (chmod(path, mode) < 0) bail("chmod %s: %s", path, strerror(errno));
}

static void mk(const char *p)
{
	if (mkdir(p, 0755) < 0 && errno != EEXIST) bail("mkdir %s: %s", p, strerror(errno));
}
#endif
