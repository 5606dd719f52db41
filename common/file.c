/* common/file.c: see file.h. */
#include "common/file.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int world_read_file(const char *path, size_t max, char **out, size_t *len, struct world_err *err)
{
	/* O_NONBLOCK: a FIFO is judged (refused below), never waited on for a
	 * writer; O_NOCTTY: a terminal given as a file never becomes ours. A
	 * regular file's reads ignore O_NONBLOCK. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return werr(err, errno == ENOENT ? WX_NOT_FOUND : WX_IO, "open %s: %s", path, strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		int e = errno;
		close(fd);
		return werr(err, WX_IO, "stat %s: %s", path, strerror(e));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return werr(err, WX_BAD_INPUT, "%s is not a regular file (%s)", path,
		            S_ISFIFO(sb.st_mode) ? "a FIFO" : S_ISCHR(sb.st_mode) ? "a character device"
		            : S_ISBLK(sb.st_mode) ? "a block device" : S_ISDIR(sb.st_mode) ? "a directory"
		            : S_ISSOCK(sb.st_mode) ? "a socket" : "not a file");
	}
	if ((unsigned long long)sb.st_size > max) {
		close(fd);
		return werr(err, WX_BAD_INPUT, "%s is %lld bytes, over the %zu-byte cap", path,
		            (long long)sb.st_size, max);
	}
	/* One spare byte: reading into it means the file grew after fstat. */
	size_t cap = (size_t)sb.st_size + 1, n = 0;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return werr(err, WX_FAIL, "out of memory reading %s", path);
	}
	for (;;) {
		if (n == cap) {
			free(buf);
			close(fd);
			return werr(err, WX_IO, "%s changed while being read", path);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR) continue;
			int e = errno;
			free(buf);
			close(fd);
			return werr(err, WX_IO, "read %s: %s", path, strerror(e));
		}
		if (r == 0) break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR) continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
