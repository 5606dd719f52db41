/* broker/workspace.c: see workspace.h. */
#include "broker/workspace.h"
#include "common/pause.h"
#include "common/canon.h"
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Every resolution under the worktree. RESOLVE_BENEATH refuses absolute
 * paths, absolute symlinks and any `..` (literal or in a symlink) that
 * would climb above the starting directory; RESOLVE_NO_MAGICLINKS refuses
 * /proc/<pid>/fd and /proc/<pid>/root style links (RESOLVE_BENEATH does
 * today too, but the man page says not to rely on it); RESOLVE_NO_XDEV
 * refuses crossing a mount point, since a mount inside the worktree is not
 * the episode's (it would be the operator's bind mount of something else). */
#define WS_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)
/* openat2 with RESOLVE_BENEATH returns EAGAIN when a rename raced the
 * resolution (its guard against escapes through concurrent renames). */
#define WS_EAGAIN_RETRIES 64
/* Bound on the upward walk from a write's directory to the worktree. */
#define WS_MAX_DEPTH 4096

static int refuse(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t whylen, const char *fmt, ...)
{
	if (why && whylen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return 1;
}

static size_t file_cap(const struct broker_handler_ctx *ctx)
{
	return ctx->file_max ? ctx->file_max : BROKER_FILE_MAX;
}

static size_t output_cap(const struct broker_handler_ctx *ctx)
{
	return ctx->output_max ? ctx->output_max : BROKER_HANDLER_OUTPUT_MAX;
}

static int ws_openat2(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how;
	memset(&how, 0, sizeof how);
	how.flags = (uint64_t)(unsigned)flags;
	how.mode = mode;
	how.resolve = WS_RESOLVE;
	for (int i = 0;; i++) {
		long r = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
		if (r >= 0) return (int)r;
		if (errno == EINTR || (errno == EAGAIN && i < WS_EAGAIN_RETRIES)) continue;
		return -1;
	}
}

/* errno of a resolution beneath the worktree -> refusal (1) or breakage (-1).
 * `what` names the operation for the error line; reasons never hold the
 * path (the caller knows it, and it may be 4 KiB long). */
static int resolve_errno(int e, const char *what, const char *path, char *why, size_t whylen,
                         struct world_err *err)
{
	switch (e) {
	case EXDEV:
		return refuse(why, whylen,
		              "path leads outside the worktree (a symlink climbing out, an absolute symlink or a mount point)");
	case ELOOP:
		return refuse(why, whylen, "too many symlinks, or a /proc magic link, on the path");
	case ENOENT: return refuse(why, whylen, "no such file");
	case ENOTDIR: return refuse(why, whylen, "a component of the path is not a directory");
	case EACCES:
	case EPERM: return refuse(why, whylen, "permission denied");
	case ENAMETOOLONG: return refuse(why, whylen, "path or one of its components is too long");
	case ENXIO:
	case ENODEV: return refuse(why, whylen, "not a regular file (a socket or a device)");
	case EISDIR: return refuse(why, whylen, "is a directory, not a regular file");
	case ENOSYS:
		return werr(err, WX_SETUP,
		            "%s %.200s: openat2 is not available (Linux >= 5.6 needed; there is no weaker fallback)",
		            what, path);
	default: return werr(err, WX_IO, "%s %.200s: %s", what, path, strerror(e));
	}
}

/* ---- lexical rules ---- */

const char *workspace_path_refusal_n(const char *p, size_t n)
{
	if (!p) return "path missing";
	if (n == 0) return "empty path";
	if (memchr(p, '\0', n)) return "path contains a NUL byte";
	if (n > WORKSPACE_PATH_MAX) return "path is longer than 4096 bytes";
	if (p[0] == '/') return "absolute path (paths are relative to the worktree)";
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)p[i];
		if (c < 0x20 || c == 0x7f) return "path contains a control character";
		size_t k = world_utf8_seq((const unsigned char *)p + i, n - i);
		if (k == 0) return "path is not valid UTF-8";
		i += k;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && p[j] != '/') j++;
		if (j - i == 2 && p[i] == '.' && p[i + 1] == '.') return "path has a '..' component";
		if (j - i > 255) return "a path component is longer than 255 bytes";
		i = j + 1;
	}
	if (p[n - 1] == '/') return "path ends in '/' (names a directory, not a file)";
	return NULL;
}

const char *workspace_path_refusal(const char *path)
{
	return workspace_path_refusal_n(path, path ? strlen(path) : 0);
}

/* Unicode code points some filesystems (HFS+, and ext4 casefold before
 * Linux 6.13) ignore in names, so ".g\u200cit" could be ".git" there. */
static int ignorable(uint32_t cp)
{
	return cp == 0xAD || cp == 0x34F || cp == 0x61C || (cp >= 0x115F && cp <= 0x1160) ||
	       (cp >= 0x17B4 && cp <= 0x17B5) || (cp >= 0x180B && cp <= 0x180F) ||
	       (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
	       (cp >= 0x2060 && cp <= 0x206F) || cp == 0x3164 || (cp >= 0xFE00 && cp <= 0xFE0F) ||
	       cp == 0xFEFF || cp == 0xFFA0 || (cp >= 0x1BCA0 && cp <= 0x1BCA3) ||
	       (cp >= 0x1D173 && cp <= 0x1D17A) || (cp >= 0xE0000 && cp <= 0xE0FFF);
}

static uint32_t utf8_decode(const unsigned char *s, size_t k)
{
	if (k == 1) return s[0];
	uint32_t cp = s[0] & (0x7F >> k);
	for (size_t i = 1; i < k; i++) cp = (cp << 6) | (s[i] & 0x3F);
	return cp;
}

/* The name a component is matched as: ASCII lowercased, default-ignorable
 * code points dropped, the non-ASCII letters that case-fold to an ASCII
 * letter of the denied names mapped (U+017F long s -> s, U+212A Kelvin -> k,
 * U+0130 -> i), trailing dots and spaces dropped (".git." is ".git" on
 * NTFS/SMB). Returns 0 when the component does not fit in out (no denied
 * name is that long). Non-UTF-8 components are matched bytewise. */
static int fold_component(const char *c, size_t n, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k = world_utf8_seq((const unsigned char *)c + i, n - i);
		char ch;
		if (k == 0) {
			ch = c[i];
			k = 1;
		} else if (k == 1) {
			ch = c[i];
			if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
		} else {
			uint32_t cp = utf8_decode((const unsigned char *)c + i, k);
			if (ignorable(cp)) {
				i += k;
				continue;
			}
			if (cp == 0x17F) ch = 's';
			else if (cp == 0x212A) ch = 'k';
			else if (cp == 0x130) ch = 'i';
			else ch = '\x80'; /* some other letter: never part of a denied name */
		}
		if (o + 1 >= outlen) return 0;
		out[o++] = ch;
		i += k;
	}
	while (o > 0 && (out[o - 1] == '.' || out[o - 1] == ' ')) o--;
	out[o] = '\0';
	return 1;
}

/* Denied names, matched on any component (directory or file) after
 * fold_component. Beyond git's and our own, each entry is a tool
 * configuration an operator's tool runs code from (or picks a program to run
 * from) when the operator merely enters the directory, asks the VCS for its
 * status, commits, or opens the folder in an editor: no build or run step of
 * the project is needed. docs/broker.md lists them with the names that were
 * considered and left out (.svn, .bzr, .tool-versions, ...). */
static const struct {
	const char *name, *why;
} denied[] = {
	{ ".git", "writes under .git are refused (a hook or config there would run as the operator)" },
	{ ".github", "writes under .github are refused (CI and agent configuration)" },
	{ ".gitmodules", "writes to .gitmodules are refused (repository configuration)" },
	{ ".gitattributes", "writes to .gitattributes are refused (repository configuration: filters run commands)" },
	{ ".ailang", "writes under .ailang are refused (agent configuration)" },
	{ ".hg", "writes under .hg are refused (Mercurial runs the hooks and extensions its hgrc names, on any command)" },
	{ ".jj", "writes under .jj are refused (Jujutsu's repository config names the pager, diff and fix programs it runs)" },
	{ "_darcs", "writes under _darcs are refused (darcs runs the pre- and posthooks its prefs name, on any command)" },
	{ ".pijul", "writes under .pijul are refused (Pijul runs the hooks its config names)" },
	{ ".envrc", "writes to .envrc are refused (direnv runs it as a shell script when the operator enters the directory)" },
	{ ".direnv", "writes under .direnv are refused (direnv's layouts put its bin directories first on the PATH)" },
	{ ".vscode", "writes under .vscode are refused (VS Code runs folder-open tasks and the programs its settings name)" },
	{ ".idea", "writes under .idea are refused (JetBrains IDEs run the startup tasks and run configurations it holds)" },
};

/* The denied names as one NULL-terminated list (workspace.h): the exec
 * capsule makes them read-only inside the worktree (broker/exec.c). */
static const char *protected_list[sizeof denied / sizeof denied[0] + 1];
static pthread_once_t protected_once = PTHREAD_ONCE_INIT;
static void protected_fill(void)
{
	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) protected_list[i] = denied[i].name;
}
const char *const *workspace_protected_names(void)
{
	pthread_once(&protected_once, protected_fill);
	return protected_list;
}

static const char *denied_component(const char *c, size_t n)
{
	char f[32];
	if (!fold_component(c, n, f, sizeof f)) return NULL;
	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
		if (strcmp(f, denied[i].name) == 0) return denied[i].why;
	return NULL;
}

const char *workspace_write_refusal(const char *p)
{
	if (!p) return "path missing";
	size_t n = strlen(p);
	for (size_t i = 0; i <= n;) {
		size_t j = i;
		while (j < n && p[j] != '/') j++;
		const char *why = denied_component(p + i, j - i);
		if (why) return why;
		i = j + 1;
	}
	return NULL;
}

/* ---- the worktree ---- */

static int episode_ok(const char *ep)
{
	if (!ep) return 0;
	size_t n = strlen(ep);
	if (n < 1 || n > 64) return 0;
	if (!((ep[0] >= 'a' && ep[0] <= 'z') || (ep[0] >= '0' && ep[0] <= '9'))) return 0;
	for (size_t i = 1; i < n; i++)
		if (!((ep[i] >= 'a' && ep[i] <= 'z') || (ep[i] >= '0' && ep[i] <= '9') || ep[i] == '-')) return 0;
	return 1;
}

int workspace_open_worktree(const struct broker_handler_ctx *ctx, int create, int *fd, char *why,
                            size_t whylen, struct world_err *err)
{
	*fd = -1;
	if (!ctx->workspace_root || !*ctx->workspace_root)
		return werr(err, WX_USAGE, "workspace: no workspace root configured (--workspace-root)");
	/* The session layer validates episodes; checked again because the id
	 * becomes a path component here. */
	if (!episode_ok(ctx->episode))
		return werr(err, WX_BAD_INPUT, "workspace: episode id is not ^[a-z0-9][a-z0-9-]{0,63}$");
	const char *root = ctx->workspace_root, *ep = ctx->episode;
	int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) return werr(err, WX_IO, "workspace root %s: %s", root, strerror(errno));
	/* O_NOFOLLOW: the worktree itself is never reached through a symlink. */
	int wt = openat(rootfd, ep, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wt < 0 && errno == ENOENT && create) {
		if (mkdirat(rootfd, ep, 0700) < 0 && errno != EEXIST) {
			int e = errno;
			close(rootfd);
			return werr(err, WX_IO, "workspace: create worktree %s/%s: %s", root, ep, strerror(e));
		}
		wt = openat(rootfd, ep, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	int e = errno;
	close(rootfd);
	if (wt < 0) {
		if (e == ENOENT && !create) return refuse(why, whylen, "no such file (the episode has no worktree yet)");
		if (e == ELOOP || e == ENOTDIR)
			return werr(err, WX_IO, "workspace: worktree %s/%s is a symlink or not a directory", root, ep);
		return werr(err, WX_IO, "workspace: open worktree %s/%s: %s", root, ep, strerror(e));
	}
	/* The worktree is kept 0700 (docs/security.md, "The tool-run worktree"):
	 * one the operator made with group or other bits (mkdir under umask 022
	 * gives 0755) is tightened through this very fd on first use; one this
	 * process may not chmod (another owner, not root) is a breakage naming
	 * it, never served as it is. */
	struct stat st;
	if (fstat(wt, &st) < 0) {
		e = errno;
		close(wt);
		return werr(err, WX_IO, "workspace: stat worktree %s/%s: %s", root, ep, strerror(e));
	}
	if ((st.st_mode & 07077) && fchmod(wt, st.st_mode & 0700) < 0) {
		e = errno;
		close(wt);
		return werr(err, WX_IO, "workspace: worktree %s/%s is mode %04o and cannot be made 0700: %s", root, ep,
		            (unsigned)(st.st_mode & 07777), strerror(e));
	}
	*fd = wt;
	return 0;
}

/* fstat verdict on an opened or named file: only regular files, one link. */
static int regular_one_link(const struct stat *st, char *why, size_t whylen)
{
	if (S_ISDIR(st->st_mode)) return refuse(why, whylen, "is a directory, not a regular file");
	if (S_ISFIFO(st->st_mode)) return refuse(why, whylen, "not a regular file (a fifo)");
	if (S_ISSOCK(st->st_mode)) return refuse(why, whylen, "not a regular file (a socket)");
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) return refuse(why, whylen, "not a regular file (a device)");
	if (S_ISLNK(st->st_mode)) return refuse(why, whylen, "is a symlink (writes never follow the last component)");
	if (!S_ISREG(st->st_mode)) return refuse(why, whylen, "not a regular file");
	/* A hard link to a file outside the worktree is indistinguishable from
	 * an inside file by any path resolution; its link count is the tell.
	 * Refusing every multiply-linked file also refuses harmless inside
	 * links: that is the price (docs/broker.md). */
	if (st->st_nlink > 1)
		return refuse(why, whylen, "file has %llu hard links (it may be a file outside the worktree)",
		              (unsigned long long)st->st_nlink);
	return 0;
}

int workspace_open_file(const struct broker_handler_ctx *ctx, const char *path, int *fd, char *why,
                        size_t whylen, struct world_err *err)
{
	*fd = -1;
	const char *lex = workspace_path_refusal(path);
	if (lex) return refuse(why, whylen, "%s", lex);
	int wt, r = workspace_open_worktree(ctx, 0, &wt, why, whylen, err);
	if (r) return r;
	/* First an O_PATH open, which opens nothing (no device driver, no fifo
	 * rendezvous): only a regular file is then opened for reading, and the
	 * second open must reach the same inode. O_NONBLOCK: should a fifo be
	 * swapped in between, it opens at once (and is refused after fstat)
	 * instead of waiting for a writer; O_NOCTTY: a tty never becomes ours. */
	int f = ws_openat2(wt, path, O_PATH | O_CLOEXEC, 0);
	int e = errno;
	struct stat pst, st;
	if (f < 0) {
		close(wt);
		return resolve_errno(e, "workspace: open", path, why, whylen, err);
	}
	if (fstat(f, &pst) < 0) {
		e = errno;
		close(f);
		close(wt);
		return werr(err, WX_IO, "workspace: stat %.200s: %s", path, strerror(e));
	}
	close(f);
	r = regular_one_link(&pst, why, whylen);
	if (r) {
		close(wt);
		return r;
	}
	f = ws_openat2(wt, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);
	e = errno;
	close(wt);
	if (f < 0) return resolve_errno(e, "workspace: open", path, why, whylen, err);
	if (fstat(f, &st) < 0) {
		e = errno;
		close(f);
		return werr(err, WX_IO, "workspace: stat %.200s: %s", path, strerror(e));
	}
	r = regular_one_link(&st, why, whylen);
	if (r == 0 && !(st.st_dev == pst.st_dev && st.st_ino == pst.st_ino))
		r = refuse(why, whylen, "the file was replaced while being opened");
	if (r == 0 && (unsigned long long)st.st_size > file_cap(ctx))
		r = refuse(why, whylen, "file is %lld bytes, over the %zu-byte cap", (long long)st.st_size, file_cap(ctx));
	if (r) {
		close(f);
		return r;
	}
	*fd = f;
	return 0;
}

/* Read the opened file (size known from fstat <= cap) into *buf. A file
 * that grows past the cap while read is refused like an oversized one. */
static int read_all(const struct broker_handler_ctx *ctx, int fd, const char *path, char **buf, size_t *len,
                    char *why, size_t whylen, struct world_err *err)
{
	size_t cap = file_cap(ctx), size = 4096, n = 0;
	char *b = malloc(size + 1);
	if (!b) return werr(err, WX_FAIL, "workspace: out of memory reading %.200s", path);
	for (;;) {
		if (n == size) {
			if (size > cap) {
				free(b);
				return refuse(why, whylen, "file grew over the %zu-byte cap while being read", cap);
			}
			size_t ns = size * 2 > cap + 1 ? cap + 1 : size * 2;
			char *nb = realloc(b, ns + 1);
			if (!nb) {
				free(b);
				return werr(err, WX_FAIL, "workspace: out of memory reading %.200s", path);
			}
			b = nb;
			size = ns;
		}
		ssize_t r = read(fd, b + n, size - n);
		if (r < 0) {
			if (errno == EINTR) continue;
			int e = errno;
			free(b);
			return werr(err, WX_IO, "workspace: read %.200s: %s", path, strerror(e));
		}
		if (r == 0) break;
		n += (size_t)r;
	}
	if (n > cap) {
		free(b);
		return refuse(why, whylen, "file grew over the %zu-byte cap while being read", cap);
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* Text rule for content read or written: UTF-8, no NUL (a NUL byte means a
 * binary file, which no se-tool reads or writes as TEXT). */
static int text_ok(const char *s, size_t n, const char *what, char *why, size_t whylen)
{
	for (size_t i = 0; i < n;) {
		if (s[i] == '\0') return refuse(why, whylen, "%s contains a NUL byte at offset %zu (binary)", what, i);
		size_t k = world_utf8_seq((const unsigned char *)s + i, n - i);
		if (k == 0)
			return refuse(why, whylen, "%s is not valid UTF-8 (byte 0x%02x at offset %zu)", what,
			              (unsigned char)s[i], i);
		i += k;
	}
	return 0;
}

/* Read a whole text file beneath the worktree: 0 buf, 1 why, -1 err. */
static int read_text(const struct broker_handler_ctx *ctx, const char *path, char **buf, size_t *len, char *why,
                     size_t whylen, struct world_err *err)
{
	int fd, r = workspace_open_file(ctx, path, &fd, why, whylen, err);
	if (r) return r;
	r = read_all(ctx, fd, path, buf, len, why, whylen, err);
	close(fd);
	if (r) return r;
	r = text_ok(*buf, *len, "content", why, whylen);
	if (r) {
		free(*buf);
		*buf = NULL;
	}
	return r;
}

/* ---- writes ---- */

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The name of directory `child` (stat cst) inside directory fd `up`. */
static int name_in(int up, const struct stat *cst, char *name, size_t namelen, struct world_err *err)
{
	int dfd = fcntl(up, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0) return werr(err, WX_IO, "workspace: dup: %s", strerror(errno));
	DIR *d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		return werr(err, WX_IO, "workspace: opendir: %s", strerror(e));
	}
	/* Two passes: d_ino first (cheap); then a stat of every directory
	 * entry, because on overlayfs d_ino need not equal st_ino. */
	int found = 0;
	for (int pass = 0; pass < 2 && !found; pass++) {
		rewinddir(d);
		struct dirent *de;
		errno = 0;
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
			if (pass == 0 && de->d_ino != cst->st_ino) continue;
			if (pass == 1 && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) continue;
			struct stat st;
			if (fstatat(up, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
			if (same_file(&st, cst)) {
				snprintf(name, namelen, "%s", de->d_name);
				found = 1;
				break;
			}
		}
		if (!found && errno) {
			int e = errno;
			closedir(d);
			return werr(err, WX_IO, "workspace: readdir: %s", strerror(e));
		}
	}
	closedir(d);
	return found ? 0 : werr(err, WX_IO, "workspace: a directory on the write path moved while it was checked");
}

/* ---- repository layouts ----
 *
 * git takes a directory D for a repository (a bare one, or the gitdir of a
 * linked worktree) when D/HEAD is a valid head and D's common directory (D
 * itself, or the directory D/commondir names) holds objects and refs
 * (is_git_directory() in git's setup.c), whatever D is called and wherever
 * it is; git then honours D's config (core.fsmonitor runs on `git status`)
 * and runs its hooks. The .git name rule cannot see that, so no directory
 * in a worktree may come to hold HEAD together with a companion:
 *   - objects, refs: what git checks for;
 *   - commondir: lets HEAD alone borrow objects and refs from elsewhere (the
 *     operator's own .git, or an objects+refs directory without a HEAD);
 *   - config, gitdir: git needs neither to recognise the layout, but HEAD
 *     with either is half a repository (its config; a linked worktree's
 *     back-pointer) and no project needs that pair.
 * A companion without a HEAD is harmless (no repository), as is HEAD alone,
 * so ordinary files named HEAD or config stay writable. Entries count
 * whatever their type (a `refs` file, a `HEAD` symlink).
 *
 * Two checks, so that the order of writes does not matter:
 *   - a write that adds a marker name (the file, or a directory its mkdir
 *     makes) is matched against the siblings it would join; the new name
 *     and every sibling are folded like the denied names (fold_component),
 *     so `head` next to `Objects` is refused too: git on a case-insensitive
 *     filesystem (or on one the worktree is later copied to) opens `head`
 *     for HEAD. This reads the directory, but only for the rare write that
 *     adds one of the six names;
 *   - every directory a write lands in or under (check_real_dirs) must not
 *     already be a layout, however it got there: that one is looked up by
 *     git's exact names, as git itself does, so a case-insensitive
 *     filesystem folds them exactly as it would for git. It costs one
 *     fstatat per directory, not a directory read. A layout that only the
 *     folding makes (`head` next to `objects` on a case-sensitive
 *     filesystem) cannot be built through the handler (the first check);
 *     made by an outside hand, git here does not take it for a repository,
 *     and writes under it are let through (docs/broker.md, residuals). */
static const char *const layout_companions[] = { "objects", "refs", "config", "commondir", "gitdir" };
#define N_COMPANIONS (sizeof layout_companions / sizeof layout_companions[0])
#define LAYOUT_HEAD (-1)
#define LAYOUT_NONE (-2)

#define LAYOUT_REFUSED "'%s': refused by the repository-layout rule: "
#define LAYOUT_RULE                                                                                     \
	"a directory holding HEAD with objects, refs, config, commondir or gitdir is a git repository " \
	"(git honours its config and hooks wherever it is: they would run as the operator)"

/* LAYOUT_HEAD, the index of a companion, or LAYOUT_NONE. */
static int layout_kind(const char *name)
{
	char f[16]; /* longer than any marker: fold_component says 0 */
	if (!fold_component(name, strlen(name), f, sizeof f)) return LAYOUT_NONE;
	if (strcmp(f, "head") == 0) return LAYOUT_HEAD;
	for (size_t i = 0; i < N_COMPANIONS; i++)
		if (strcmp(f, layout_companions[i]) == 0) return (int)i;
	return LAYOUT_NONE;
}

/* Does directory `dir` hold an entry `name` (any type)? 1 yes, 0 no, -1 err. */
static int has_entry(int dir, const char *name, const char *shown, struct world_err *err)
{
	struct stat st;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) return 1;
	if (errno == ENOENT) return 0;
	return werr(err, WX_IO, "workspace: stat %s in a directory of %s: %s", name, shown, strerror(errno));
}

/* Is `dir`, as it is, a repository layout (exact names)? 0 no, 1 refused
 * (the reason starts with `shown`, the write's path), -1 err. */
static int layout_present(int dir, const char *shown, char *why, size_t whylen, struct world_err *err)
{
	int r = has_entry(dir, "HEAD", shown, err);
	if (r <= 0) return r;
	for (size_t i = 0; i < N_COMPANIONS; i++) {
		r = has_entry(dir, layout_companions[i], shown, err);
		if (r < 0) return r;
		if (r)
			return refuse(why, whylen, LAYOUT_REFUSED "a directory on its path holds HEAD and %s, and " LAYOUT_RULE,
			              shown, layout_companions[i]);
	}
	return 0;
}

/* Would directory `dir` become a repository layout once an entry named
 * `add` is in it? Siblings folded as described above. 0 no, 1 refused, -1
 * err. A name that is no marker cannot make one (check_real_dirs has
 * already refused a directory that is one), so the directory is read only
 * when `add` is a marker. */
static int layout_refusal(int dir, const char *add, const char *shown, char *why, size_t whylen,
                          struct world_err *err)
{
	int add_kind = layout_kind(add);
	if (add_kind == LAYOUT_NONE) return 0;
	/* A fresh open file description: a dup of dir would share (and move)
	 * its directory offset. */
	int dfd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == EACCES || errno == EPERM)
			return refuse(why, whylen,
			              "'%s': its directory cannot be listed, so it cannot be checked for a git repository layout",
			              shown);
		return werr(err, WX_IO, "workspace: open the directory of %s: %s", shown, strerror(errno));
	}
	DIR *d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		return werr(err, WX_IO, "workspace: opendir the directory of %s: %s", shown, strerror(e));
	}
	/* The companions present, as bits: the refusal names the first in table
	 * order, so the line does not depend on readdir's order. */
	int head = 0;
	unsigned comps = 0;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		int k = layout_kind(de->d_name);
		if (k == LAYOUT_HEAD) head = 1;
		else if (k >= 0) comps |= 1u << k;
		errno = 0;
	}
	int e = errno;
	if (closedir(d) < 0 && e == 0) e = errno;
	if (e) return werr(err, WX_IO, "workspace: read the directory of %s: %s", shown, strerror(e));
	if (add_kind >= 0) {
		if (!head) return 0;
		return refuse(why, whylen, LAYOUT_REFUSED "it would put %s next to HEAD, and " LAYOUT_RULE, shown,
		              layout_companions[add_kind]);
	}
	for (size_t i = 0; i < N_COMPANIONS; i++)
		if (comps & (1u << i))
			return refuse(why, whylen, LAYOUT_REFUSED "it would put HEAD next to %s, and " LAYOUT_RULE, shown,
			              layout_companions[i]);
	return 0;
}

/* The path as a refusal names it: at most 200 bytes, cut at a UTF-8
 * boundary (the lexical rules made it UTF-8 without control characters). */
static const char *shown_path(const char *p, char *buf, size_t buflen)
{
	size_t n = strlen(p), keep = 0;
	if (n <= 200) {
		snprintf(buf, buflen, "%s", p);
		return buf;
	}
	for (size_t i = 0; i < n;) {
		size_t k = world_utf8_seq((const unsigned char *)p + i, n - i);
		if (k == 0) k = 1;
		if (i + k > 200) break;
		i += k;
		keep = i;
	}
	snprintf(buf, buflen, "%.*s...", (int)keep, p);
	return buf;
}

/* The directory a write lands in, as the kernel resolved it, may differ
 * from the path as written (a symlink `x -> .git` inside the worktree):
 * walk up from it to the worktree and match each real directory name
 * against the denied names, and refuse when any of these directories (the
 * worktree included) is a git repository layout, however it got there
 * (an outside hand may have moved one in). Also a second proof that it is
 * beneath. `shown` is the write's path for the refusal line. */
static int check_real_dirs(int wt, int dir, const char *shown, char *why, size_t whylen, struct world_err *err)
{
	struct stat wst, st;
	if (fstat(wt, &wst) < 0 || fstat(dir, &st) < 0) return werr(err, WX_IO, "workspace: stat: %s", strerror(errno));
	int cur = fcntl(dir, F_DUPFD_CLOEXEC, 0);
	if (cur < 0) return werr(err, WX_IO, "workspace: dup: %s", strerror(errno));
	for (int depth = 0; depth < WS_MAX_DEPTH; depth++) {
		int r = layout_present(cur, shown, why, whylen, err);
		if (r) {
			close(cur);
			return r;
		}
		if (same_file(&st, &wst)) {
			close(cur);
			return 0;
		}
		int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (up < 0) {
			int e = errno;
			close(cur);
			return werr(err, WX_IO, "workspace: open ..: %s", strerror(e));
		}
		close(cur);
		cur = up;
		struct stat ust;
		if (fstat(up, &ust) < 0) {
			int e = errno;
			close(cur);
			return werr(err, WX_IO, "workspace: stat ..: %s", strerror(e));
		}
		if (same_file(&ust, &st)) { /* the filesystem root: never met the worktree */
			close(cur);
			return refuse(why, whylen, "path leads outside the worktree");
		}
		char name[256];
		if (name_in(up, &st, name, sizeof name, err) < 0) {
			close(cur);
			return -1;
		}
		const char *d = denied_component(name, strlen(name));
		if (d) {
			close(cur);
			return refuse(why, whylen, "'%s': %s (reached through a symlink)", shown, d);
		}
		st = ust;
	}
	close(cur);
	return refuse(why, whylen, "the directory of the path is nested too deeply");
}

/* Open (creating missing components of) the write's parent directory
 * `parent` beneath the worktree. Existing prefixes are resolved from the
 * worktree with the beneath rules (inside symlinks followed); a missing
 * component is made with mkdirat in the resolved directory above it and
 * opened O_NOFOLLOW, after the real directories were checked, so a refused
 * write creates nothing. */
static int open_parent(int wt, const char *parent, const char *shown, int *out, char *why, size_t whylen,
                       struct world_err *err)
{
	*out = -1;
	int fd = ws_openat2(wt, parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd >= 0) {
		int r = check_real_dirs(wt, fd, shown, why, whylen, err);
		if (r) {
			close(fd);
			return r;
		}
		*out = fd;
		return 0;
	}
	if (errno != ENOENT) return resolve_errno(errno, "workspace: open directory", parent, why, whylen, err);
	char *buf = strdup(parent);
	if (!buf) return werr(err, WX_FAIL, "workspace: out of memory");
	int cur = fcntl(wt, F_DUPFD_CLOEXEC, 0), checked = 0, r = 0;
	if (cur < 0) {
		free(buf);
		return werr(err, WX_IO, "workspace: dup: %s", strerror(errno));
	}
	size_t n = strlen(buf);
	for (size_t i = 0; i < n;) {
		if (buf[i] == '/') {
			i++;
			continue;
		}
		size_t j = i;
		while (j < n && buf[j] != '/') j++;
		char save = buf[j];
		buf[j] = '\0';
		int nfd = -1;
		if (strcmp(buf + i, ".") != 0) {
			nfd = ws_openat2(wt, buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
			if (nfd < 0 && errno == ENOENT) {
				if (!checked) {
					r = check_real_dirs(wt, cur, shown, why, whylen, err);
					if (r) break;
					checked = 1;
				}
				/* The new directory against its siblings (objects/ next
				 * to HEAD). Only the first mkdir can be refused: every
				 * later one is made in a directory this loop just made,
				 * empty, so a refused write still creates nothing. */
				r = layout_refusal(cur, buf + i, shown, why, whylen, err);
				if (r) break;
				if (mkdirat(cur, buf + i, 0755) < 0 && errno != EEXIST) {
					r = resolve_errno(errno, "workspace: mkdir", buf, why, whylen, err);
					break;
				}
				nfd = openat(cur, buf + i, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				struct stat lst;
				if (nfd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
				    fstatat(cur, buf + i, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode)) {
					/* EEXIST above was a symlink to nothing: never
					 * created through, never followed here. */
					r = refuse(why, whylen, "a directory on the path is a symlink to nothing");
					break;
				}
			}
			if (nfd < 0) {
				r = resolve_errno(errno, "workspace: open directory", buf, why, whylen, err);
				break;
			}
			close(cur);
			cur = nfd;
		}
		buf[j] = save;
		i = j;
	}
	free(buf);
	if (r == 0 && !checked) r = check_real_dirs(wt, cur, shown, why, whylen, err);
	if (r) {
		close(cur);
		return r;
	}
	*out = cur;
	return 0;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR) continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Replace (or create) `path` beneath the worktree with data[0..n) atomically. */
static int write_file(const struct broker_handler_ctx *ctx, const char *path, const char *data, size_t n,
                      char *why, size_t whylen, struct world_err *err)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (strcmp(base, ".") == 0) return refuse(why, whylen, "path names a directory, not a file");
	char *parent = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
	if (!parent) return werr(err, WX_FAIL, "workspace: out of memory");
	char shown[208];
	shown_path(path, shown, sizeof shown);
	int wt, dir = -1, tfd = -1, r = workspace_open_worktree(ctx, 1, &wt, why, whylen, err);
	char tmp[64] = "";
	if (r) goto out;
	r = open_parent(wt, parent, shown, &dir, why, whylen, err);
	if (r) goto out;
	/* The file's name against its siblings (HEAD next to objects/). If
	 * open_parent made the directory, it is empty and this cannot refuse,
	 * so a refused write leaves no directory behind. The temporary name
	 * below is no marker, so only the final rename adds one. */
	r = layout_refusal(dir, base, shown, why, whylen, err);
	if (r) goto out;
	/* The target as it is now, never followed. */
	mode_t mode = 0644;
	struct stat st;
	if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		r = regular_one_link(&st, why, whylen);
		if (r) goto out;
		mode = st.st_mode & 0777;
	} else if (errno != ENOENT) {
		r = resolve_errno(errno, "workspace: stat", path, why, whylen, err);
		goto out;
	}
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
		r = werr(err, WX_IO, "workspace: getrandom: %s", strerror(errno));
		goto out;
	}
	snprintf(tmp, sizeof tmp, ".ws-tmp-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
	         rnd[5], rnd[6], rnd[7]);
	tfd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (tfd < 0) {
		tmp[0] = '\0';
		r = resolve_errno(errno, "workspace: create temporary file for", path, why, whylen, err);
		goto out;
	}
	if (write_all(tfd, data, n) < 0) {
		r = werr(err, WX_IO, "workspace: write %.200s: %s", path, strerror(errno));
		goto out;
	}
	if (fchmod(tfd, mode) < 0 || fsync(tfd) < 0) {
		r = werr(err, WX_IO, "workspace: fsync %.200s: %s", path, strerror(errno));
		goto out;
	}
	int c = close(tfd);
	tfd = -1;
	if (c < 0) {
		r = werr(err, WX_IO, "workspace: close %.200s: %s", path, strerror(errno));
		goto out;
	}
	/* renameat replaces the name: whatever is there now (even a symlink
	 * swapped in since the fstatat) is replaced, never followed. */
	if (renameat(dir, tmp, dir, base) < 0) {
		r = resolve_errno(errno, "workspace: rename onto", path, why, whylen, err);
		goto out;
	}
	tmp[0] = '\0';
	if (fsync(dir) < 0) {
		r = werr(err, WX_IO, "workspace: fsync the directory of %.200s: %s", path, strerror(errno));
		goto out;
	}
out:
	if (tfd >= 0) close(tfd);
	if (tmp[0] && unlinkat(dir, tmp, 0) < 0 && r < 0)
		werr_prefix(err, "(temporary %s left behind: %s)", tmp, strerror(errno));
	if (dir >= 0) close(dir);
	if (wt >= 0) close(wt);
	free(parent);
	return r;
}

/* ---- payloads ---- */

/* Exactly the keys named (all strings), op first checked. 0 ok, 1 refused. */
static int payload_keys(const json_t *payload, const char *const *keys, size_t nkeys, char *why, size_t whylen)
{
	if (!json_is_object(payload)) return refuse(why, whylen, "payload is not an object");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)payload, k, v) {
		size_t i;
		for (i = 0; i < nkeys; i++)
			if (strcmp(k, keys[i]) == 0) break;
		if (i == nkeys) return refuse(why, whylen, "unknown key '%.64s'", k);
	}
	for (size_t i = 0; i < nkeys; i++) {
		json_t *x = json_object_get(payload, keys[i]);
		if (!x) return refuse(why, whylen, "missing key '%s'", keys[i]);
		if (!json_is_string(x)) return refuse(why, whylen, "'%s' must be a string", keys[i]);
	}
	return 0;
}

/* The payload's path, with the lexical rules (NUL seen via the length). */
static int payload_path(const json_t *payload, const char **path, char *why, size_t whylen)
{
	json_t *p = json_object_get(payload, "path");
	const char *lex = workspace_path_refusal_n(json_string_value(p), json_string_length(p));
	if (lex) return refuse(why, whylen, "%s", lex);
	*path = json_string_value(p);
	return 0;
}

static int finish(const struct broker_handler_ctx *ctx, const char *effect, json_t *out, json_t **output,
                  struct world_err *err)
{
	if (!out) return werr(err, WX_FAIL, "%s: out of memory building the output", effect);
	size_t len = 0;
	char *c = world_canon_json(out, &len, err);
	if (!c) {
		json_decref(out);
		return werr_prefix(err, "%s: output", effect);
	}
	free(c);
	if (len > output_cap(ctx)) {
		json_decref(out);
		return werr(err, WX_OUTPUT_CAP, "%s: output is %zu bytes, over the %zu-byte cap", effect, len,
		            output_cap(ctx));
	}
	*output = out;
	return 0;
}

static int refused(json_t **output, const char *why, struct world_err *err)
{
	if (broker_refuse(output, "%s", why) < 0) return werr(err, WX_FAIL, "workspace: out of memory");
	return 0;
}

int workspace_read(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
                   struct world_err *err)
{
	*output = NULL;
	char why[512];
	static const char *const keys[] = { "op", "path" };
	const char *path;
	int r = payload_keys(payload, keys, 2, why, sizeof why);
	if (r == 0 && strcmp(json_string_value(json_object_get(payload, "op")), "read") != 0)
		r = refuse(why, sizeof why, "unknown op (Workspace.Read takes op \"read\")");
	if (r == 0) r = payload_path(payload, &path, why, sizeof why);
	char *buf = NULL;
	size_t len = 0;
	if (r == 0) r = read_text(ctx, path, &buf, &len, why, sizeof why, err);
	if (r < 0) return werr_prefix(err, "Workspace.Read");
	if (r > 0) return refused(output, why, err);
	json_t *out = json_pack("{s:b,s:s,s:s%}", "ok", 1, "path", path, "content", buf, len);
	free(buf);
	return finish(ctx, "Workspace.Read", out, output, err);
}

/* Count occurrences of needle (overlapping ones too: "aa" in "aaa" is two,
 * an ambiguous edit), stopping at 2. */
static int occurrences(const char *hay, size_t hn, const char *needle, size_t nn, size_t *first)
{
	int count = 0;
	const char *p = hay, *end = hay + hn;
	while (count < 2 && (size_t)(end - p) >= nn) {
		const char *m = memmem(p, (size_t)(end - p), needle, nn);
		if (!m) break;
		if (count == 0) *first = (size_t)(m - hay);
		count++;
		p = m + 1;
	}
	return count;
}

int workspace_write(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
                    struct world_err *err)
{
	*output = NULL;
	char why[512];
	const char *path = NULL, *op = NULL;
	char *buf = NULL, *data = NULL;
	size_t n = 0;
	int r = 0;
	json_t *opv = json_is_object(payload) ? json_object_get(payload, "op") : NULL;
	if (!json_is_object(payload)) r = refuse(why, sizeof why, "payload is not an object");
	else if (!opv) r = refuse(why, sizeof why, "missing key 'op'");
	else if (!json_is_string(opv)) r = refuse(why, sizeof why, "'op' must be a string");
	else op = json_string_value(opv);
	if (r == 0) {
		static const char *const wkeys[] = { "op", "path", "content" };
		static const char *const ekeys[] = { "op", "path", "old_text", "new_text" };
		if (strcmp(op, "write") == 0) r = payload_keys(payload, wkeys, 3, why, sizeof why);
		else if (strcmp(op, "edit") == 0) r = payload_keys(payload, ekeys, 4, why, sizeof why);
		else r = refuse(why, sizeof why, "unknown op (Workspace.Write takes op \"write\" or \"edit\")");
	}
	if (r == 0) r = payload_path(payload, &path, why, sizeof why);
	if (r == 0) {
		const char *d = workspace_write_refusal(path);
		char shown[208];
		if (d) r = refuse(why, sizeof why, "'%s': %s", shown_path(path, shown, sizeof shown), d);
	}
	size_t cap = file_cap(ctx);
	if (r == 0 && strcmp(op, "write") == 0) {
		json_t *c = json_object_get(payload, "content");
		n = json_string_length(c);
		if (n > cap) r = refuse(why, sizeof why, "content is %zu bytes, over the %zu-byte cap", n, cap);
		else r = text_ok(json_string_value(c), n, "content", why, sizeof why);
		if (r == 0) r = write_file(ctx, path, json_string_value(c), n, why, sizeof why, err);
	} else if (r == 0) {
		json_t *a = json_object_get(payload, "old_text"), *b = json_object_get(payload, "new_text");
		size_t an = json_string_length(a), bn = json_string_length(b), len = 0, at = 0;
		r = text_ok(json_string_value(a), an, "old_text", why, sizeof why);
		if (r == 0) r = text_ok(json_string_value(b), bn, "new_text", why, sizeof why);
		if (r == 0 && an == 0) r = refuse(why, sizeof why, "old_text is empty");
		if (r == 0) r = read_text(ctx, path, &buf, &len, why, sizeof why, err);
		/* The window an unserialised edit loses another's work in: read
		 * here, replaced below (the race tests hold a call here). */
		if (r == 0) world_pause("workspace.edit.read");
		if (r == 0) {
			int k = occurrences(buf, len, json_string_value(a), an, &at);
			if (k == 0) r = refuse(why, sizeof why, "old_text does not occur in the file");
			else if (k > 1) r = refuse(why, sizeof why, "old_text occurs more than once (it must occur exactly once)");
		}
		if (r == 0) {
			n = len - an + bn;
			if (n > cap) r = refuse(why, sizeof why, "the edited file would be %zu bytes, over the %zu-byte cap", n, cap);
		}
		if (r == 0) {
			data = malloc(n + 1);
			if (!data) r = werr(err, WX_FAIL, "workspace: out of memory");
		}
		if (r == 0) {
			memcpy(data, buf, at);
			memcpy(data + at, json_string_value(b), bn);
			memcpy(data + at + bn, buf + at + an, len - at - an);
			r = write_file(ctx, path, data, n, why, sizeof why, err);
		}
	}
	free(buf);
	free(data);
	if (r < 0) return werr_prefix(err, "Workspace.Write");
	if (r > 0) return refused(output, why, err);
	json_t *out = json_pack("{s:b,s:s,s:I}", "ok", 1, "path", path, "bytes", (json_int_t)n);
	return finish(ctx, "Workspace.Write", out, output, err);
}
