/* store/open_opts.c: see open_opts.h.
 *
 * How the password file reaches the store: world_store_open takes a name
 * only, and store/db_pg.c connects with the URI it is given. So the file's
 * first line is read here (world_password_file_read, the one reader: the
 * driver's wdb_opts.password_file reads through it too) and handed to
 * libpq inside the URI, in memory only, as its
 * last query parameter `password=...` (percent-encoded): libpq keeps the
 * last value given for a parameter, so the file's password wins over the
 * URI's, as wdb_opts.password_file's does; and the driver registers every
 * `password=` value of the URI it opens (as written and decoded) as a
 * secret scrubbed from every message. The URI holding it is wiped and
 * freed once the open returns. No environment variable is set (PGPASSFILE
 * keeps its meaning for libpq). */
#include "store/open_opts.h"
#include "store/db.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void world_store_name_redact(const char *name, char *out, size_t cap)
{
	if (!cap) return;
	out[0] = 0;
	if (!name) return;
	if (wdb_kind_of(name) != WDB_PG) {
		snprintf(out, cap, "%s", name);
		return;
	}
	const char *a = strstr(name, "://") + 3;
	size_t k = (size_t)snprintf(out, cap, "%.*s", (int)(a - name), name);
	size_t auth = strcspn(a, "/?#");
	/* userinfo: up to the last '@' of the authority; its user before ':' */
	const char *at = NULL;
	for (size_t i = 0; i < auth; i++)
		if (a[i] == '@') at = a + i;
	const char *host = a;
	if (at) {
		size_t ul = strcspn(a, ":@");
		if (a + ul > at) ul = (size_t)(at - a);
		if (k < cap) k += (size_t)snprintf(out + k, cap - k, "%.*s@", (int)ul, a);
		host = at + 1;
	}
	const char *rest = host + strcspn(host, "/?#");
	if (k < cap) k += (size_t)snprintf(out + k, cap - k, "%.*s", (int)(rest - host), host);
	if (*rest == '/' && k < cap) {
		size_t dl = strcspn(rest, "?#");
		k += (size_t)snprintf(out + k, cap - k, "%.*s", (int)dl, rest);
		rest += dl;
	}
	/* the query: every parameter but password */
	if (*rest == '?') {
		char sep = '?';
		for (const char *p = rest + 1; *p && *p != '#';) {
			size_t n = strcspn(p, "&#");
			if (!(n >= 9 && strncmp(p, "password=", 9) == 0) && n && k < cap) {
				k += (size_t)snprintf(out + k, cap - k, "%c%.*s", sep, (int)n, p);
				sep = '&';
			}
			p += n;
			if (*p == '&') p++;
		}
	}
	if (k >= cap && cap > 4) memcpy(out + cap - 4, "...", 4);
}

int world_password_file_read(const char *shown, const char *path, char **out, struct world_err *err)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		return werr(err, e == ENOENT ? WX_NOT_FOUND : WX_IO, "store %s: password file %s: %s", shown, path,
		            e == ELOOP ? "a symbolic link (name the file itself)" : strerror(e));
	}
	struct stat sb;
	if (fstat(fd, &sb) != 0) {
		int e = errno;
		close(fd);
		return werr(err, WX_IO, "store %s: password file %s: fstat: %s", shown, path, strerror(e));
	}
	if (!S_ISREG(sb.st_mode) || (sb.st_mode & 077)) {
		close(fd);
		return werr(err, WX_USAGE,
		            "store %s: password file %s: must be a regular file readable by its owner only (chmod 600)", shown,
		            path);
	}
	char buf[1024];
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, sizeof buf - 1 - n);
		if (r < 0) {
			if (errno == EINTR) continue;
			int e = errno;
			close(fd);
			explicit_bzero(buf, sizeof buf);
			return werr(err, WX_IO, "store %s: password file %s: read: %s", shown, path, strerror(e));
		}
		if (r == 0 || (n += (size_t)r) == sizeof buf - 1) break;
	}
	if (close(fd) != 0) {
		int e = errno;
		explicit_bzero(buf, sizeof buf);
		return werr(err, WX_IO, "store %s: password file %s: close: %s", shown, path, strerror(e));
	}
	buf[n] = 0;
	/* the line's end by bytes, not strcspn: a NUL must not end it early */
	size_t len = 0;
	while (len < n && buf[len] != '\n' && buf[len] != '\r') len++;
	if (len == 0) {
		explicit_bzero(buf, sizeof buf);
		return werr(err, WX_USAGE, "store %s: password file %s: its first line is empty", shown, path);
	}
	if (memchr(buf, 0, len)) {
		explicit_bzero(buf, sizeof buf);
		return werr(err, WX_USAGE, "store %s: password file %s: its first line holds a NUL byte", shown, path);
	}
	*out = strndup(buf, len);
	explicit_bzero(buf, sizeof buf);
	if (!*out) return werr(err, WX_FAIL, "store %s: password file %s: out of memory", shown, path);
	return 0;
}

/* name with "password=PW" (percent-encoded) as its last query parameter */
static char *uri_with_password(const char *name, const char *pw)
{
	size_t nl = strlen(name), pl = strlen(pw);
	char *u = malloc(nl + 11 + 3 * pl + 1);
	if (!u) return NULL;
	memcpy(u, name, nl);
	size_t k = nl;
	/* a fragment is no part of a libpq URI: nothing to append after */
	u[k++] = strchr(name, '?') ? '&' : '?';
	memcpy(u + k, "password=", 9);
	k += 9;
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < pl; i++) {
		unsigned char c = (unsigned char)pw[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~') {
			u[k++] = (char)c;
		} else {
			u[k++] = '%';
			u[k++] = hex[c >> 4];
			u[k++] = hex[c & 15];
		}
	}
	u[k] = 0;
	return u;
}

/* A message naming the URI as given (the open's own checks before the
 * driver has parsed it name it so) names it redacted instead: every
 * occurrence of raw in err's line becomes shown. */
static void scrub_name(struct world_err *err, const char *raw, const char *shown)
{
	size_t rl = strlen(raw);
	if (!err || !rl || !strstr(err->msg, raw)) return;
	char out[sizeof err->msg];
	size_t k = 0;
	for (const char *p = err->msg; *p && k + 1 < sizeof out;) {
		if (strncmp(p, raw, rl) == 0) {
			k += (size_t)snprintf(out + k, sizeof out - k, "%s", shown);
			if (k >= sizeof out) k = sizeof out - 1;
			p += rl;
		} else {
			out[k++] = *p++;
		}
	}
	out[k] = 0;
	explicit_bzero(err->msg, sizeof err->msg);
	memcpy(err->msg, out, k + 1);
	explicit_bzero(out, sizeof out);
}

int world_store_open_opts(const char *name, int mode, const struct world_store_open_opts *o,
                          struct world_store **out, struct world_err *err)
{
	static const struct world_store_open_opts none;
	if (!o) o = &none;
	*out = NULL;
	char shown[600];
	world_store_name_redact(name, shown, sizeof shown);
	if (!o->password_file) {
		int rc = world_store_open_wait(name, mode, o->wait_lock_s, out, err);
		if (rc < 0 && name && wdb_kind_of(name) == WDB_PG) scrub_name(err, name, shown);
		return rc;
	}
	if (!name || wdb_kind_of(name) != WDB_PG)
		return werr(err, WX_USAGE, "store %s: a password file is for a postgresql:// store only", shown);
	if (strchr(name, '#'))
		return werr(err, WX_USAGE, "store %s: a postgresql:// URI has no #fragment", shown);
	char *pw;
	if (world_password_file_read(shown, o->password_file, &pw, err) < 0) return -1;
	char *uri = uri_with_password(name, pw);
	explicit_bzero(pw, strlen(pw));
	free(pw);
	if (!uri) return werr(err, WX_FAIL, "store %s: out of memory", shown);
	int rc = world_store_open_wait(uri, mode, o->wait_lock_s, out, err);
	if (rc < 0) scrub_name(err, uri, shown);
	explicit_bzero(uri, strlen(uri));
	free(uri);
	return rc;
}
