/* tests/broker/test_workspace.c: the Workspace.Read / Workspace.Write
 * handlers (docs/design.md §5.4) and their confinement to <root>/<episode>.
 *
 * Every path attempt asserts the refusal AND carries a control: the same
 * file or content is reachable by a plain open() from this test, so the
 * refusal is the handler's doing, not an accident of the setup. As root the
 * core refusals run again in a child that setresuid()s to 65534 over a
 * worktree it owns (the unprivileged path). Every refusal is also held to
 * the outputSchema se-tools publishes for the tool that passes it on
 * (ailang-read, ailang-write, ailang-edit; tests/broker/se_schemas.h). */
#include "broker/workspace.h"
#include "tests/broker/se_schemas.h"
#include "tests/tap.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define SECRET "OUTSIDE-SECRET\n"
#define INSIDE "INSIDE\n"

static char base[1024], root[2048], wt[3072], outside[2048];
static struct broker_handler_ctx ctx;

/* Rotating buffers so a test line can name two joined paths. */
static const char *P(const char *dir, const char *rel)
{
	static char bufs[8][PATH_MAX + 64];
	static int k;
	char *b = bufs[k++ % 8];
	snprintf(b, sizeof bufs[0], "%s/%s", dir, rel);
	return b;
}
#define W(rel) P(wt, rel)
#define O(rel) P(outside, rel)

static void put(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) bail("create %s: %s", path, strerror(errno));
	size_t n = strlen(content);
	if (write(fd, content, n) != (ssize_t)n) bail("write %s: %s", path, strerror(errno));
	if (close(fd) < 0) bail("close %s: %s", path, strerror(errno));
}

/* The control: a plain read, no protection. NULL when unreadable. */
static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) return NULL;
	char *b = malloc(1 << 16);
	if (!b) bail("oom");
	ssize_t n = read(fd, b, (1 << 16) - 1);
	close(fd);
	if (n < 0) {
		free(b);
		return NULL;
	}
	b[n] = '\0';
	return b;
}

static int slurp_is(const char *path, const char *want)
{
	char *s = slurp(path);
	int r = s && strcmp(s, want) == 0;
	free(s);
	return r;
}

static void mklink(const char *target, const char *rel)
{
	if (symlink(target, W(rel)) < 0) bail("symlink %s: %s", rel, strerror(errno));
}

static json_t *call(broker_handler_fn fn, json_t *payload, struct world_err *err)
{
	json_t *out = NULL;
	struct world_err e0 = { 0, "" };
	if (!err) err = &e0;
	if (!payload) bail("payload pack failed");
	int r = fn(&ctx, payload, &out, err);
	json_decref(payload);
	if (r < 0) {
		if (out) bail("handler returned -1 with an output");
		if (err == &e0) diag("handler failed: %s", e0.msg);
		return NULL;
	}
	if (r != 0 || !out) bail("handler returned %d without output", r);
	return out;
}

/* The se-tools tool of the last rd / wr / ed (whose outputSchema a refusal
 * is held to). */
static const char *last_tool = "ailang-read";

static json_t *rd(const char *path)
{
	last_tool = "ailang-read";
	return call(workspace_read, json_pack("{s:s,s:s}", "op", "read", "path", path), NULL);
}

static json_t *wr(const char *path, const char *content)
{
	last_tool = "ailang-write";
	return call(workspace_write, json_pack("{s:s,s:s,s:s}", "op", "write", "path", path, "content", content), NULL);
}

static json_t *ed(const char *path, const char *a, const char *b)
{
	last_tool = "ailang-edit";
	return call(workspace_write,
	            json_pack("{s:s,s:s,s:s,s:s}", "op", "edit", "path", path, "old_text", a, "new_text", b), NULL);
}

/* The refusal reason, or NULL when out is not a refusal. */
static const char *refusal(const json_t *out)
{
	if (!out || !json_is_false(json_object_get(out, "ok"))) return NULL;
	if (json_object_size(out) != 2) return NULL;
	return json_string_value(json_object_get(out, "refused"));
}

/* Assert a refusal whose reason contains `has`, and never outside content. */
static void refused(json_t *out, const char *has, const char *name)
{
	const char *w = refusal(out);
	char why[512] = "";
	int valid = out && se_schema_check(last_tool, out, why, sizeof why) == 0;
	ok(w && strstr(w, has) != NULL && valid, "%s: refused, reason has '%s', fits %s's outputSchema (got: %s; %s)",
	   name, has, last_tool, w ? w : out ? "not a refusal" : "handler failed", why);
	const char *c = json_string_value(json_object_get(out, "content"));
	if (c && (strstr(c, "OUTSIDE-SECRET") || strstr(c, "root:"))) ok(0, "%s: outside content returned!", name);
	json_decref(out);
}

static const char *content_of(const json_t *out)
{
	if (!out || !json_is_true(json_object_get(out, "ok"))) return NULL;
	return json_string_value(json_object_get(out, "content"));
}

static int count_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) bail("opendir %s: %s", dir, strerror(errno));
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, ".ws-tmp-", 8) == 0) n++;
	closedir(d);
	return n;
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* ---- a worktree the operator made ---- */

/* docs/operations.md "First start" has the operator make WS/EPISODE; a plain
 * mkdir under umask 022 gives 0755. The first handler that opens it makes
 * it 0700 (docs/security.md); the control is the mode before. */
static void test_operator_worktree(void)
{
	struct broker_handler_ctx keep = ctx;
	char opwt[4096];
	snprintf(opwt, sizeof opwt, "%s/opmade", root);
	if (mkdir(opwt, 0755) < 0 || chmod(opwt, 02755) < 0) bail("mkdir %s: %s", opwt, strerror(errno));
	put(P(opwt, "f.txt"), INSIDE);
	struct stat st;
	ok(stat(opwt, &st) == 0 && (st.st_mode & 07777) == 02755,
	   "control: the operator's worktree is 2755 (group and others may read it)");
	ctx.episode = "opmade";
	json_t *o = rd("f.txt");
	is_str(content_of(o), INSIDE, "a read of the operator's worktree is served");
	json_decref(o);
	ok(stat(opwt, &st) == 0 && (st.st_mode & 07777) == 0700, "... and the worktree is 0700 now (mode %04o)",
	   (unsigned)(st.st_mode & 07777));
	if (chmod(opwt, 0750) < 0) bail("chmod %s", opwt);
	o = wr("g.txt", "x");
	ok(o && json_is_true(json_object_get(o, "ok")) && stat(opwt, &st) == 0 && (st.st_mode & 07777) == 0700,
	   "a write to a 0750 worktree: written, the worktree 0700");
	json_decref(o);
	if (chmod(opwt, 0500) < 0) bail("chmod %s", opwt);
	o = rd("f.txt");
	ok(content_of(o) && stat(opwt, &st) == 0 && (st.st_mode & 07777) == 0500,
	   "a 0500 worktree (no group or other bits) is left as the operator made it");
	json_decref(o);
	if (chmod(opwt, 0700) < 0) bail("chmod %s", opwt);
	ctx = keep;
}

/* ---- basic operations ---- */

static void test_basic(void)
{
	json_t *o = wr("a.txt", "hello\n");
	ok(o && json_is_true(json_object_get(o, "ok")), "write a.txt: ok");
	is_str(json_string_value(json_object_get(o, "path")), "a.txt", "write echoes the path");
	is_int(json_integer_value(json_object_get(o, "bytes")), 6, "write reports 6 bytes");
	json_decref(o);
	ok(slurp_is(W("a.txt"), "hello\n"), "the file holds the content");
	struct stat st;
	ok(stat(wt, &st) == 0 && (st.st_mode & 0777) == 0700, "the worktree was created 0700");
	ok(stat(W("a.txt"), &st) == 0 && (st.st_mode & 0777) == 0644 && S_ISREG(st.st_mode), "new file is 0644");

	o = rd("a.txt");
	is_str(content_of(o), "hello\n", "read a.txt");
	is_str(json_string_value(json_object_get(o, "path")), "a.txt", "read echoes the path");
	ok(json_object_size(o) == 3, "read output has exactly ok, path, content");
	json_decref(o);

	o = wr("sub/dir/b.txt", INSIDE);
	ok(o && json_is_true(json_object_get(o, "ok")), "write sub/dir/b.txt creates the parents");
	json_decref(o);
	ok(slurp_is(W("sub/dir/b.txt"), INSIDE), "nested file holds the content");
	o = rd("./sub//dir/./b.txt");
	is_str(content_of(o), INSIDE, "read through '.' and '//' components");
	json_decref(o);

	/* Edit, and atomic replacement: a new inode each time, mode kept. */
	if (chmod(W("a.txt"), 0755) < 0) bail("chmod: %s", strerror(errno));
	struct stat before, after;
	if (stat(W("a.txt"), &before) < 0) bail("stat");
	o = ed("a.txt", "hello", "goodbye");
	ok(o && json_is_true(json_object_get(o, "ok")), "edit a.txt: ok");
	is_int(json_integer_value(json_object_get(o, "bytes")), 8, "edit reports the new size");
	json_decref(o);
	ok(slurp_is(W("a.txt"), "goodbye\n"), "edit replaced the one occurrence");
	ok(stat(W("a.txt"), &after) == 0 && after.st_ino != before.st_ino,
	   "the edit replaced the file by rename (new inode), never in place");
	ok((after.st_mode & 0777) == 0755, "the replaced file keeps its mode");
	ok(count_tmp(wt) == 0 && count_tmp(W("sub/dir")) == 0, "no temporary file left behind");

	put(W("twice.txt"), "ab ab\n");
	refused(ed("twice.txt", "ab", "x"), "more than once", "edit with 2 occurrences");
	ok(slurp_is(W("twice.txt"), "ab ab\n"), "... and the file is unchanged");
	put(W("overlap.txt"), "aaa");
	refused(ed("overlap.txt", "aa", "b"), "more than once", "edit with overlapping occurrences");
	refused(ed("twice.txt", "zz", "x"), "does not occur", "edit with 0 occurrences");
	ok(slurp_is(W("twice.txt"), "ab ab\n"), "... and the file is unchanged");
	refused(ed("twice.txt", "", "x"), "empty", "edit with an empty old_text");
	refused(ed("nope.txt", "a", "b"), "no such file", "edit of a missing file");
	ok(!exists(W("nope.txt")), "... creates nothing");
	o = wr("empty.txt", "");
	ok(o && json_integer_value(json_object_get(o, "bytes")) == 0, "an empty file can be written");
	json_decref(o);
	o = rd("empty.txt");
	is_str(content_of(o), "", "and read back empty");
	json_decref(o);
	ok(count_tmp(wt) == 0, "still no temporary file left behind");

	/* Payload shapes. */
	refused(call(workspace_read, json_pack("{s:s,s:s}", "op", "cat", "path", "a.txt"), NULL), "unknown op",
	        "Read: unknown op");
	refused(call(workspace_read, json_pack("{s:s,s:s,s:b}", "op", "read", "path", "a.txt", "follow", 1), NULL),
	        "unknown key 'follow'", "Read: unknown key");
	refused(call(workspace_read, json_pack("{s:s}", "op", "read"), NULL), "missing key 'path'", "Read: no path");
	refused(call(workspace_read, json_pack("{s:s}", "path", "a.txt"), NULL), "missing key 'op'", "Read: no op");
	refused(call(workspace_read, json_pack("{s:s,s:i}", "op", "read", "path", 7), NULL), "must be a string",
	        "Read: path not a string");
	refused(call(workspace_read, json_pack("[s]", "a.txt"), NULL), "not an object", "Read: payload an array");
	refused(call(workspace_write, json_pack("{s:s,s:s}", "op", "write", "path", "c.txt"), NULL),
	        "missing key 'content'", "Write: no content");
	refused(call(workspace_write, json_pack("{s:s,s:s,s:s,s:s}", "op", "edit", "path", "a.txt", "content", "x",
	                                        "old_text", "a"),
	             NULL),
	        "unknown key 'content'", "Write: edit with a write key");
	refused(call(workspace_write, json_pack("{s:s,s:s,s:s}", "op", "append", "path", "a.txt", "content", "x"), NULL),
	        "unknown op", "Write: unknown op");
	refused(call(workspace_write, json_pack("{s:i,s:s}", "op", 1, "path", "a.txt"), NULL), "must be a string",
	        "Write: op not a string");
	ok(!exists(W("c.txt")), "refused payloads wrote nothing");

	/* The worktree and the root. */
	struct broker_handler_ctx keep = ctx;
	ctx.episode = "no-such-episode";
	refused(rd("a.txt"), "no such file", "read in an episode without a worktree");
	ok(!exists(P(root, "no-such-episode")), "... creates no worktree");
	ctx.episode = "../x";
	struct world_err err = { 0, "" };
	o = call(workspace_read, json_pack("{s:s,s:s}", "op", "read", "path", "a.txt"), &err);
	ok(!o && err.code == WX_BAD_INPUT, "a malformed episode id is a failure, never a path (%s)", err.msg);
	ctx = keep;
	ctx.workspace_root = NULL;
	o = call(workspace_read, json_pack("{s:s,s:s}", "op", "read", "path", "a.txt"), &err);
	ok(!o && err.code == WX_USAGE && strstr(err.msg, "workspace root"), "no workspace root: a failure (%s)", err.msg);
	ctx = keep;
}

/* ---- the path attempts ---- */

/* The exported rules the Ailang.* handlers use. */
static void test_exported(void)
{
	ok(workspace_path_refusal("src/main.ail") == NULL, "path rules: a plain relative path is fine");
	ok(workspace_path_refusal("a/./b") == NULL, "path rules: '.' components are fine");
	ok(workspace_path_refusal("..x/y..") == NULL, "path rules: '..x' is a name, not '..'");
	ok(workspace_path_refusal(NULL) != NULL, "path rules: NULL refused");
	ok(workspace_path_refusal_n("a\0b", 3) != NULL, "path rules: an embedded NUL refused");
	ok(workspace_write_refusal("docs/x.md") == NULL, "write rules: docs/x.md allowed");
	ok(workspace_write_refusal("vendor/.git") != NULL, "write rules: a .git file anywhere refused");
	ok(workspace_write_refusal("my.github.io/x") == NULL, "write rules: names merely containing .git are allowed");
	int fd = -1;
	char why[256] = "";
	struct world_err err = { 0, "" };
	int r = workspace_open_file(&ctx, "inside.txt", &fd, why, sizeof why, &err);
	char buf[32] = "";
	ok(r == 0 && fd >= 0 && read(fd, buf, sizeof buf - 1) == (ssize_t)strlen(INSIDE) && strcmp(buf, INSIDE) == 0,
	   "workspace_open_file opens inside.txt (%d %s)", r, r ? why : "");
	if (fd >= 0) close(fd);
	r = workspace_open_file(&ctx, "passwd", &fd, why, sizeof why, &err);
	ok(r == 1 && fd == -1 && strstr(why, "outside"), "workspace_open_file refuses passwd -> /etc/passwd (%s)", why);
	r = workspace_open_worktree(&ctx, 0, &fd, why, sizeof why, &err);
	struct stat st;
	ok(r == 0 && fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode), "workspace_open_worktree opens the worktree");
	if (fd >= 0) close(fd);
}

static char *passwd;

static void test_paths(void)
{
	put(O("secret"), SECRET);
	put(W("inside.txt"), INSIDE);
	if (mkdir(W("a"), 0755) < 0) bail("mkdir a");

	/* 1. absolute */
	ok(passwd && strstr(passwd, "root:"), "control: /etc/passwd is readable by a plain open");
	refused(rd("/etc/passwd"), "absolute", "absolute path /etc/passwd");
	refused(wr("/tmp/ws-abs-escape", "x"), "absolute", "absolute write path");
	ok(!exists("/tmp/ws-abs-escape"), "... nothing written there");

	/* 2. .. */
	ok(slurp_is(W("../../outside/secret"), SECRET), "control: <wt>/../../outside/secret reaches the secret");
	refused(rd("../../outside/secret"), "'..'", "../../outside/secret");
	ok(slurp_is(W("a/../../../outside/secret"), SECRET), "control: a/../../../outside/secret reaches it");
	refused(rd("a/../../../outside/secret"), "'..'", "a/../../../outside/secret");
	refused(rd("a/../inside.txt"), "'..'", "a/../inside.txt (any '..' is refused, even one staying inside)");
	refused(wr("a/../../../outside/new", "x"), "'..'", "write a/../../../outside/new");
	ok(!exists(O("new")), "... nothing written outside");

	/* 3. symlink to /etc/passwd */
	mklink("/etc/passwd", "passwd");
	ok(slurp_is(W("passwd"), passwd), "control: the symlink passwd reaches /etc/passwd");
	refused(rd("passwd"), "outside the worktree", "symlink to /etc/passwd");

	/* 4. chain of symlinks ending outside */
	mklink("l2", "l1");
	mklink("a/l3", "l2");
	mklink("../../../outside/secret", "a/l3");
	ok(slurp_is(W("l1"), SECRET), "control: the chain l1 -> l2 -> a/l3 -> outside reaches the secret");
	refused(rd("l1"), "outside the worktree", "a chain of symlinks ending outside");
	mklink("../inside.txt", "a/in3");
	mklink("a/in3", "in2");
	mklink("in2", "in1");
	json_t *o = rd("in1");
	is_str(content_of(o), INSIDE, "a chain of symlinks staying inside is followed");
	json_decref(o);

	/* 5. directory symlinks */
	mklink("../../outside", "dout");
	ok(slurp_is(W("dout/secret"), SECRET), "control: dout/secret reaches the secret");
	refused(rd("dout/secret"), "outside the worktree", "a directory symlink pointing outside");
	refused(wr("dout/planted", "x"), "outside the worktree", "write through a directory symlink pointing outside");
	refused(wr("dout/newdir/planted", "x"), "outside the worktree", "write under a new dir through dout");
	ok(!exists(O("planted")) && !exists(O("newdir")), "... nothing written or created outside");
	mklink("sub", "din");
	o = rd("din/dir/b.txt");
	is_str(content_of(o), INSIDE, "a directory symlink staying inside is followed (read)");
	json_decref(o);
	o = wr("din/dir/c.txt", "through din\n");
	ok(o && json_is_true(json_object_get(o, "ok")), "a directory symlink staying inside is followed (write)");
	json_decref(o);
	ok(slurp_is(W("sub/dir/c.txt"), "through din\n"), "... and the write landed in sub/dir");
	mklink(wt, "dabs");
	ok(slurp_is(W("dabs/inside.txt"), INSIDE), "control: an absolute symlink to the worktree reaches inside.txt");
	refused(rd("dabs/inside.txt"), "outside the worktree",
	        "an absolute symlink is refused even when it points inside (kernel rule of RESOLVE_BENEATH)");

	/* 6. /proc/self */
	ok(slurp_is("/proc/self/root/etc/passwd", passwd), "control: /proc/self/root/etc/passwd reaches /etc/passwd");
	refused(rd("/proc/self/root/etc/passwd"), "absolute", "/proc/self/root/etc/passwd");
	mklink("/proc/self/root", "proot");
	ok(slurp_is(W("proot/etc/passwd"), passwd), "control: proot -> /proc/self/root reaches /etc/passwd");
	refused(rd("proot/etc/passwd"), "outside the worktree", "a symlink inside to /proc/self/root");
	mklink("/proc/self/cwd", "pcwd");
	refused(rd("pcwd/etc/passwd"), "outside the worktree", "a symlink inside to /proc/self/cwd");
	{
		/* A magic link beneath the worktree itself: worktree = /proc/self/fd. */
		int sfd = open(O("secret"), O_RDONLY | O_CLOEXEC);
		if (sfd < 0) bail("open secret");
		char num[16], ppath[64];
		snprintf(num, sizeof num, "%d", sfd);
		snprintf(ppath, sizeof ppath, "/proc/self/fd/%d", sfd);
		ok(slurp_is(ppath, SECRET), "control: the magic link /proc/self/fd/%d reaches the secret", sfd);
		struct broker_handler_ctx keep = ctx;
		ctx.workspace_root = "/proc/self";
		ctx.episode = "fd";
		refused(rd(num), "magic link", "a /proc magic link beneath the worktree (RESOLVE_NO_MAGICLINKS)");
		ctx = keep;
		close(sfd);
	}

	/* 7. hard link to an outside file */
	if (link(O("secret"), W("hl")) < 0) bail("link: %s", strerror(errno));
	ok(slurp_is(W("hl"), SECRET), "control: the hard link hl reaches the outside secret");
	refused(rd("hl"), "hard links", "read of a hard link to an outside file");
	refused(wr("hl", "overwritten\n"), "hard links", "write over a hard link");
	refused(ed("hl", "SECRET", "x"), "hard links", "edit of a hard link");
	ok(slurp_is(O("secret"), SECRET) && slurp_is(W("hl"), SECRET), "... the outside file and the link are unchanged");

	/* 8. 2 GiB sparse file */
	{
		int fd = open(W("big"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || ftruncate(fd, (off_t)2 << 30) < 0) bail("sparse: %s", strerror(errno));
		close(fd);
		struct stat st;
		fd = open(W("big"), O_RDONLY | O_CLOEXEC);
		ok(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == (off_t)2 << 30,
		   "control: the 2 GiB sparse file opens, size %lld", fd >= 0 ? (long long)st.st_size : -1LL);
		if (fd >= 0) close(fd);
		refused(rd("big"), "2147483648 bytes, over the", "a 2 GiB sparse file is refused by its size");
		refused(ed("big", "x", "y"), "over the", "an edit of the 2 GiB file is refused by its size");
	}

	/* 9. non-UTF-8 name and content */
	{
		put(W("caf\xe9"), INSIDE);
		ok(slurp_is(W("caf\xe9"), INSIDE), "control: the file named caf\\xe9 is readable by a plain open");
		json_t *pl = json_object();
		json_object_set_new(pl, "op", json_string("read"));
		json_object_set_new(pl, "path", json_stringn_nocheck("caf\xe9", 4));
		refused(call(workspace_read, pl, NULL), "not valid UTF-8", "a non-UTF-8 name");
		put(W("latin1.txt"), "caf\xe9\n");
		ok(slurp_is(W("latin1.txt"), "caf\xe9\n"), "control: latin1.txt is readable by a plain open");
		refused(rd("latin1.txt"), "not valid UTF-8 (byte 0xe9 at offset 3)", "non-UTF-8 content");
		pl = json_object();
		json_object_set_new(pl, "op", json_string("write"));
		json_object_set_new(pl, "path", json_string("w-latin1.txt"));
		json_object_set_new(pl, "content", json_stringn_nocheck("caf\xe9", 4));
		refused(call(workspace_write, pl, NULL), "not valid UTF-8", "a write of non-UTF-8 content");
		ok(!exists(W("w-latin1.txt")), "... writes nothing");
		put(W("bin.txt"), "");
		int fd = open(W("bin.txt"), O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "a\0b", 3) != 3) bail("bin.txt");
		close(fd);
		refused(rd("bin.txt"), "NUL byte at offset 1", "content with a NUL byte");
	}

	/* 10. empty path, NUL, long paths */
	{
		struct stat st;
		ok(stat(W(""), &st) == 0 && S_ISDIR(st.st_mode), "control: <wt>/ + \"\" opens the worktree itself");
		refused(rd(""), "empty path", "the empty path");
		refused(wr("", "x"), "empty path", "a write to the empty path");
		json_error_t je;
		json_t *pl = json_loads("{\"op\":\"read\",\"path\":\"inside.txt\\u0000../../outside/secret\"}",
		                        JSON_ALLOW_NUL, &je);
		ok(pl && strlen(json_string_value(json_object_get(pl, "path"))) == 10 &&
		       slurp_is(W(json_string_value(json_object_get(pl, "path"))), INSIDE),
		   "control: a C string API would truncate the NUL path to inside.txt and open it");
		refused(call(workspace_read, pl, NULL), "NUL", "a path with NUL (JSON \\u0000)");
		char *lp = calloc(1, 5100);
		if (!lp) bail("oom");
		for (int i = 0; i < 2497; i++) memcpy(lp + 2 * i, "./", 2);
		strcat(lp, "inside.txt");
		ok(strlen(lp) == 5004, "the long path is 5004 bytes");
		refused(rd(lp), "longer than 4096", "a path of 5000 bytes");
		lp[200] = '\0';
		strcat(lp, "inside.txt");
		o = rd(lp);
		is_str(content_of(o), INSIDE, "control: the same path shortened to 210 bytes reads inside.txt");
		json_decref(o);
		free(lp);
		char comp[300];
		memset(comp, 'c', 256);
		comp[256] = '\0';
		refused(rd(comp), "longer than 255", "a component of 256 bytes");
		refused(rd("a.txt/"), "ends in '/'", "a trailing slash");
		refused(rd("a\nb"), "control character", "a newline in a name");
	}

	/* 11. fifo (in a child with an alarm: if it ever blocked, the test
	 * would fail instead of hanging) */
	{
		if (mkfifo(W("fifo"), 0644) < 0) bail("mkfifo: %s", strerror(errno));
		struct stat st;
		int fd = open(W("fifo"), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		ok(fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode), "control: the fifo opens with a plain open");
		if (fd >= 0) close(fd);
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0) bail("fork");
		if (pid == 0) {
			alarm(60);
			json_t *r = rd("fifo");
			const char *w = refusal(r);
			json_t *r2 = wr("fifo", "x");
			const char *w2 = refusal(r2);
			_exit(w && strstr(w, "fifo") && w2 && strstr(w2, "fifo") ? 0 : 1);
		}
		int status;
		if (waitpid(pid, &status, 0) < 0) bail("waitpid");
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a fifo is refused for read and write, without blocking");
		ok(lstat(W("fifo"), &st) == 0 && S_ISFIFO(st.st_mode), "... and is still a fifo");
	}

	/* 12. devices, sockets, directories */
	{
		mklink("/dev/null", "dnull");
		struct stat st;
		ok(stat(W("dnull"), &st) == 0 && S_ISCHR(st.st_mode), "control: dnull -> /dev/null is a device");
		refused(rd("dnull"), "outside the worktree", "/dev/null via a symlink");
		refused(wr("dnull", "x"), "symlink", "a write to /dev/null via a symlink");
		if (geteuid() == 0 && mknod(W("nulldev"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
			int fd = open(W("nulldev"), O_RDONLY | O_CLOEXEC);
			ok(fd >= 0, "control: a device node inside the worktree opens with a plain open");
			if (fd >= 0) close(fd);
			refused(rd("nulldev"), "device", "a device node inside the worktree (read)");
			refused(wr("nulldev", "x"), "device", "a device node inside the worktree (write)");
		} else {
			skip("mknod needs root", "a device node inside the worktree (read)");
			skip("mknod needs root", "a device node inside the worktree (write)");
		}
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		snprintf(sa.sun_path, sizeof sa.sun_path, "%s", W("sock"));
		if (s < 0 || strlen(W("sock")) >= sizeof sa.sun_path || bind(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
			skip("no unix socket", "a socket inside the worktree");
		} else {
			ok(lstat(W("sock"), &st) == 0 && S_ISSOCK(st.st_mode), "control: sock is a socket");
			refused(rd("sock"), "socket", "a socket inside the worktree");
		}
		if (s >= 0) close(s);
		refused(rd("sub"), "directory", "a directory (read)");
		refused(wr("sub", "x"), "directory", "a directory (write)");
		refused(wr("sub/.", "x"), "directory", "a '.' last component (write)");
	}

	/* 13. writes: denied targets, symlink at the last component */
	{
		if (mkdir(W(".git"), 0755) < 0 || mkdir(W(".git/hooks"), 0755) < 0) bail("mkdir .git/hooks");
		put(W(".git/hooks/control"), "ok\n");
		ok(slurp_is(W(".git/hooks/control"), "ok\n"), "control: .git/hooks is writable by a plain open");
		refused(wr(".git/hooks/pre-commit", "#!/bin/sh\nid\n"), ".git", ".git/hooks/pre-commit");
		ok(!exists(W(".git/hooks/pre-commit")), "... no hook written");
		refused(wr("sub/.Git/config", "x"), ".git", "sub/.Git/config (.git anywhere, any case)");
		refused(wr(".GitHub/x", "x"), ".github", ".GitHub/x");
		refused(wr(".gitmodules", "x"), ".gitmodules", ".gitmodules");
		refused(wr("lib/.GITATTRIBUTES", "x"), ".gitattributes", "lib/.GITATTRIBUTES");
		refused(wr(".ailang/config", "x"), ".ailang", ".ailang/config");
		refused(wr(".g\xe2\x80\x8cit/hooks/x", "x"), ".git", ".g<ZWNJ>it (default-ignorable code point)");
		refused(wr(".git./hooks/x", "x"), ".git", ".git. (trailing dot)");
		refused(wr(".gitattribute\xc5\xbf", "x"), ".gitattributes", ".gitattribute<long s>");
		refused(ed(".git/hooks/control", "ok", "id"), ".git", "edit under .git");
		ok(slurp_is(W(".git/hooks/control"), "ok\n"), "... leaves it unchanged");
		o = rd(".git/hooks/control");
		is_str(content_of(o), "ok\n", "reads under .git are allowed");
		json_decref(o);
		o = wr(".gitignore", "*.o\n");
		ok(o && json_is_true(json_object_get(o, "ok")), ".gitignore is not a denied name");
		json_decref(o);
		mklink(".git", "gl");
		ok(slurp_is(W("gl/hooks/control"), "ok\n"), "control: gl -> .git reaches .git/hooks");
		refused(wr("gl/hooks/pre-commit", "x"), "(reached through a symlink)", "gl/hooks/pre-commit via gl -> .git");
		refused(wr("gl/newdir/x", "x"), ".git", "gl/newdir/x via gl -> .git");
		ok(!exists(W(".git/hooks/pre-commit")) && !exists(W(".git/newdir")), "... nothing written or created in .git");
		mklink("../.git/hooks", "sub/hk");
		refused(wr("sub/hk/post-checkout", "x"), ".git", "sub/hk -> ../.git/hooks");

		mklink("../../outside/target", "lw");
		if (symlink("../../outside/ctl-target", W("lw-ctl")) < 0) bail("symlink");
		put(W("lw-ctl"), "planted\n");
		ok(slurp_is(O("ctl-target"), "planted\n"), "control: a plain write through a last-component symlink lands outside");
		refused(wr("lw", "x"), "symlink", "a symlink at the last component of a write");
		refused(ed("lw", "x", "y"), "outside the worktree", "an edit through a last-component symlink");
		struct stat st;
		ok(!exists(O("target")) && lstat(W("lw"), &st) == 0 && S_ISLNK(st.st_mode),
		   "... nothing outside, and lw is still a symlink");
		mklink("inside.txt", "lin");
		refused(wr("lin", "x"), "symlink", "a symlink at the last component pointing inside (never followed)");
		ok(slurp_is(W("inside.txt"), INSIDE), "... and its target is unchanged");
		mklink("nowhere", "dangling");
		refused(wr("dangling/x", "x"), "symlink to nothing", "a write under a dangling symlink inside");
		ok(!exists(W("nowhere")), "... creates nothing at its target");
		put(W("f"), "file\n");
		refused(wr("f/x", "x"), "not a directory", "a write under a regular file");
	}

	/* 14. size caps */
	{
		struct broker_handler_ctx keep = ctx;
		ctx.file_max = 16;
		put(W("17.txt"), "12345678901234567");
		ok(slurp_is(W("17.txt"), "12345678901234567"), "control: 17.txt is readable by a plain open");
		refused(rd("17.txt"), "17 bytes, over the 16-byte cap", "a read over file_max");
		refused(wr("17w.txt", "12345678901234567"), "over the 16-byte cap", "a write over file_max");
		ok(!exists(W("17w.txt")), "... writes nothing");
		put(W("16.txt"), "1234567890123456");
		o = rd("16.txt");
		is_str(content_of(o), "1234567890123456", "a read of exactly file_max bytes");
		json_decref(o);
		refused(ed("16.txt", "9", "ab"), "would be 17 bytes", "an edit growing over file_max");
		ctx = keep;
		ctx.output_max = 20;
		struct world_err err = { 0, "" };
		o = call(workspace_read, json_pack("{s:s,s:s}", "op", "read", "path", "16.txt"), &err);
		ok(!o && err.code == WX_OUTPUT_CAP, "an output over output_max is a failed effect (%s)", err.msg);
		ctx = keep;
		json_t *pl = json_loads("{\"op\":\"write\",\"path\":\"nul.txt\",\"content\":\"a\\u0000b\"}", JSON_ALLOW_NUL, NULL);
		refused(call(workspace_write, pl, NULL), "NUL byte", "a write with a NUL byte in the content");
		ok(!exists(W("nul.txt")), "... writes nothing");
	}
	ok(count_tmp(wt) == 0, "no temporary file left after all the refusals");
}

/* ---- repositories and tool configurations ----
 *
 * The controls here are judged by git itself: the same layout made by
 * plain syscalls (or the one write the handler refused, done by a plain
 * open) is a directory `git rev-parse --git-dir` takes for a repository. */

#define HEADREF "ref: refs/heads/main\n"
#define SHA "4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
#define AGENT_CMD "echo agent-command"
#define FSMON "[core]\n\tfsmonitor = " AGENT_CMD "\n"
#define LAYOUT "repository-layout rule"

static int git_missing;

/* Run `git -C dir a1 a2 a3` with a pinned view: no system or global
 * config, bare repositories allowed (git's default, which an operator's
 * safe.bareRepository=explicit changes), and discovery stopped at dir's
 * parent, so an enclosing repository never answers. Returns git's exit
 * status with the first line of its stdout in out, -1 when git cannot run. */
static int run_git(const char *dir, const char *a1, const char *a2, const char *a3, char *out, size_t outlen)
{
	char parent[PATH_MAX];
	snprintf(parent, sizeof parent, "%s", dir);
	char *slash = strrchr(parent, '/');
	if (slash) *slash = '\0';
	int pfd[2];
	if (pipe(pfd) < 0) bail("pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) bail("fork: %s", strerror(errno));
	if (pid == 0) {
		int dn = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (dn < 0 || dup2(pfd[1], 1) < 0 || dup2(dn, 2) < 0) _exit(126);
		if (setenv("GIT_CONFIG_NOSYSTEM", "1", 1) < 0 || setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1) < 0 ||
		    setenv("GIT_CEILING_DIRECTORIES", parent, 1) < 0 || unsetenv("GIT_DIR") < 0 ||
		    unsetenv("GIT_COMMON_DIR") < 0 || unsetenv("GIT_WORK_TREE") < 0)
			_exit(126);
		execlp("git", "git", "-c", "safe.bareRepository=all", "-C", dir, a1, a2, a3, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	size_t n = 0;
	while (n < outlen - 1) {
		ssize_t r = read(pfd[0], out + n, outlen - 1 - n);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
		n += (size_t)r;
	}
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	close(pfd[0]);
	int status;
	if (waitpid(pid, &status, 0) < 0) bail("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 126 || WEXITSTATUS(status) == 127) return -1;
	return WEXITSTATUS(status);
}

/* 1 when git takes `dir` itself for a repository (`git rev-parse
 * --git-dir` run there prints "."), 0 when not, -1 when git cannot run. */
static int git_repo(const char *dir)
{
	char out[PATH_MAX];
	int r = run_git(dir, "rev-parse", "--git-dir", NULL, out, sizeof out);
	if (r < 0) return -1;
	return r == 0 && strcmp(out, ".") == 0;
}

/* Assert git's verdict on dir, or skip when git is not installed. */
static void git_is(const char *dir, int want, const char *name)
{
	int r = git_missing ? -1 : git_repo(dir);
	if (r < 0) {
		skip("git is not installed", "%s", name);
		return;
	}
	ok(r == want, "%s (git: %s)", name, r ? "a repository" : "no repository");
}

static void mkdir_p(const char *path)
{
	char b[PATH_MAX];
	snprintf(b, sizeof b, "%s", path);
	for (char *s = b + 1; *s; s++) {
		if (*s != '/') continue;
		*s = '\0';
		if (mkdir(b, 0755) < 0 && errno != EEXIST) bail("mkdir %s: %s", b, strerror(errno));
		*s = '/';
	}
	if (mkdir(b, 0755) < 0 && errno != EEXIST) bail("mkdir %s: %s", b, strerror(errno));
}

/* A plain write of path, parents made: the control's hand. */
static void put_p(const char *path, const char *content)
{
	char d[PATH_MAX];
	snprintf(d, sizeof d, "%s", path);
	char *slash = strrchr(d, '/');
	if (slash) {
		*slash = '\0';
		mkdir_p(d);
	}
	put(path, content);
}

/* The handler wrote it (out released). */
static int written(json_t *o)
{
	int r = o && json_is_true(json_object_get(o, "ok"));
	if (!r) diag("not written: %s", refusal(o) ? refusal(o) : "handler failed");
	json_decref(o);
	return r;
}

/* A refusal that is one line starting with `prefix` (the path, quoted) and
 * holding `rule`; out released. */
static void refused_line(json_t *out, const char *prefix, const char *rule, const char *name)
{
	const char *w = refusal(out);
	ok(w && strncmp(w, prefix, strlen(prefix)) == 0 && strstr(w, rule) && !strchr(w, '\n'),
	   "%s: one line naming the path and the rule (got: %s)", name, w ? w : "not a refusal");
	json_decref(out);
}

static void test_layouts(void)
{
	char ctl[1200];
	snprintf(ctl, sizeof ctl, "%s/ctl-layouts", base);
	mkdir_p(ctl);
	git_missing = git_repo(ctl) < 0;
	if (git_missing) diag("git cannot be run here: the git controls are skipped");

	/* The control layout, by plain syscalls outside the worktree: HEAD,
	 * objects/ and refs/ make a repository, whatever the directory's name. */
	put_p(P(ctl, "full/HEAD"), HEADREF);
	put_p(P(ctl, "full/objects/info/packs"), "");
	put_p(P(ctl, "full/refs/heads/main"), SHA);
	git_is(P(ctl, "full"), 1, "control: HEAD + objects/ + refs/ made by plain syscalls is a repository");
	put_p(P(ctl, "nohead/objects/info/packs"), "");
	put_p(P(ctl, "nohead/refs/heads/main"), SHA);
	git_is(P(ctl, "nohead"), 0, "control: objects/ + refs/ without a HEAD is none");

	/* 1. HEAD first; then objects/ and refs/, made by the write's mkdir. */
	ok(written(wr("la/HEAD", HEADREF)), "la/HEAD alone is written (nothing next to it)");
	refused(wr("la/objects/info/packs", ""), "objects next to HEAD", "la/objects/... next to an existing HEAD");
	refused(wr("la/refs/heads/main", SHA), "refs next to HEAD", "la/refs/... next to an existing HEAD");
	refused(wr("la/refs", SHA), "refs next to HEAD", "a file la/refs next to HEAD (any type counts)");
	ok(!exists(W("la/objects")) && !exists(W("la/refs")) && count_tmp(W("la")) == 0,
	   "... nothing created: no objects/, no refs, no temporary file");
	git_is(W("la"), 0, "... la is no repository");
	mkdir_p(W("la/objects/info"));
	git_is(W("la"), 0, "control: la with objects/ made by a plain mkdir is still none (refs/ is needed too)");
	mkdir_p(W("la/refs/heads"));
	git_is(W("la"), 1, "control: ... and the refused refs/, made by a plain mkdir, completes the repository");

	/* 2. objects/ and refs/ first (no HEAD: allowed), then HEAD: the
	 * handler's own rename of its temporary file onto HEAD is refused. */
	ok(written(wr("lb/objects/info/packs", "")), "lb/objects/... without a HEAD is written");
	ok(written(wr("lb/refs/heads/main", SHA)), "lb/refs/... without a HEAD is written");
	git_is(W("lb"), 0, "... lb is no repository");
	refused(wr("lb/HEAD", HEADREF), "HEAD next to objects", "lb/HEAD next to existing objects/ and refs/");
	ok(!exists(W("lb/HEAD")) && count_tmp(W("lb")) == 0, "... no HEAD and no temporary file left");
	ok(written(ed("lb/refs/heads/main", "4b8", "4b9")), "... files under a HEAD-less objects/ and refs/ stay editable");
	put(W("lb/HEAD"), HEADREF);
	git_is(W("lb"), 1, "control: the refused HEAD, written by a plain open, makes lb a repository");

	/* 3. A layout already there (lb, completed above by an outside hand):
	 * nothing in it or under it is writable, whatever the name. */
	refused(wr("lb/config", FSMON), "a directory on its path holds HEAD and objects", "config in an existing layout");
	refused(wr("lb/hooks/post-checkout", "#!/bin/sh\nid\n"), "a directory on its path holds HEAD",
	        "a hook under an existing layout");
	refused(wr("lb/description", "x\n"), "a directory on its path holds HEAD", "any file in an existing layout");
	refused(ed("lb/HEAD", "main", "evil"), LAYOUT, "an edit of HEAD in an existing layout");
	refused(wr("lb/objects/info/packs", "P x.pack\n"), "a directory on its path holds HEAD",
	        "a write under objects/ of an existing layout");
	ok(!exists(W("lb/config")) && !exists(W("lb/hooks")) && !exists(W("lb/description")) &&
	       slurp_is(W("lb/HEAD"), HEADREF) && slurp_is(W("lb/objects/info/packs"), "") && count_tmp(W("lb")) == 0,
	   "... nothing written or created in lb");
	mklink("lb", "lbl");
	refused(wr("lbl/config", FSMON), LAYOUT, "config through a symlink lbl -> lb (the real directory is checked)");
	ok(!exists(W("lb/config")), "... not written");
	json_t *o = rd("lb/HEAD");
	is_str(content_of(o), HEADREF, "reads in a layout are allowed");
	json_decref(o);

	/* 4. config next to HEAD, in both orders. */
	ok(written(wr("lc/HEAD", HEADREF)), "lc/HEAD is written");
	refused(wr("lc/config", FSMON), "config next to HEAD", "lc/config (core.fsmonitor) next to HEAD");
	ok(!exists(W("lc/config")), "... not written");
	ok(written(wr("lc2/config", FSMON)), "lc2/config alone is written (an ordinary file named config)");
	refused(wr("lc2/HEAD", HEADREF), "HEAD next to config", "lc2/HEAD next to config");
	ok(!exists(W("lc2/HEAD")) && count_tmp(W("lc2")) == 0, "... not written");
	put(W("lc2/HEAD"), HEADREF);
	mkdir_p(W("lc2/objects"));
	mkdir_p(W("lc2/refs"));
	git_is(W("lc2"), 1, "control: lc2 with the refused HEAD and objects/, refs/ made by plain syscalls is a repository");
	if (!git_missing) {
		char out[256] = "";
		int r = run_git(W("lc2"), "config", "--get", "core.fsmonitor", out, sizeof out);
		ok(r == 0 && strcmp(out, AGENT_CMD) == 0,
		   "control: ... whose config git honours: core.fsmonitor = '%s' (the command git status would run)", out);
	} else {
		skip("git is not installed", "control: git honours the config of the layout");
	}

	/* 5. commondir: HEAD alone borrows objects/ and refs/ from a directory
	 * without a HEAD (allowed, like lb before its HEAD). */
	ok(written(wr("lstore/objects/info/packs", "")) && written(wr("lstore/refs/heads/main", SHA)),
	   "lstore: objects/ and refs/ without a HEAD are written");
	ok(written(wr("lcd/HEAD", HEADREF)), "lcd/HEAD is written");
	refused(wr("lcd/commondir", "../lstore\n"), "commondir next to HEAD", "lcd/commondir next to HEAD");
	ok(written(wr("lcd2/commondir", "../lstore\n")), "lcd2/commondir alone is written");
	refused(wr("lcd2/HEAD", HEADREF), "HEAD next to commondir", "lcd2/HEAD next to commondir");
	ok(!exists(W("lcd/commondir")) && !exists(W("lcd2/HEAD")), "... neither written");
	put(W("lcd/commondir"), "../lstore\n");
	git_is(W("lcd"), 1, "control: HEAD + the refused commondir (plain write) is a repository borrowing lstore's");

	/* 6. gitdir, the back-pointer of a linked worktree's gitdir. */
	ok(written(wr("lgd/HEAD", HEADREF)), "lgd/HEAD is written");
	refused(wr("lgd/gitdir", "/elsewhere/.git\n"), "gitdir next to HEAD", "lgd/gitdir next to HEAD");
	ok(!exists(W("lgd/gitdir")), "... not written");
	put(W("lgd/gitdir"), "/elsewhere/.git\n");
	put(W("lgd/commondir"), "../lstore\n");
	git_is(W("lgd"), 1, "control: HEAD, commondir and gitdir (a linked worktree's gitdir, plain writes) is a repository");

	/* 7. Directories renamed into place by another hand (the handler has
	 * no rename op; its only rename is its temporary file's, case 2). */
	char stage[1300];
	snprintf(stage, sizeof stage, "%s/stage", ctl);
	put_p(P(stage, "HEAD"), HEADREF);
	mkdir_p(P(stage, "objects"));
	mkdir_p(P(stage, "refs"));
	git_is(stage, 1, "control: the staged layout is a repository");
	if (rename(stage, W("lmv")) < 0) bail("rename: %s", strerror(errno));
	git_is(W("lmv"), 1, "control: ... and still one, renamed into the worktree as lmv");
	refused(wr("lmv/config", FSMON), "a directory on its path holds HEAD", "config in the layout renamed in");
	refused(wr("lmv/hooks/pre-commit", "#!/bin/sh\nid\n"), LAYOUT, "a hook in the layout renamed in");
	ok(!exists(W("lmv/config")) && !exists(W("lmv/hooks")), "... nothing written or created");
	mkdir_p(P(stage, "objects"));
	mkdir_p(P(stage, "refs"));
	git_is(stage, 0, "control: a staged objects/ + refs/ without a HEAD is none");
	if (rename(stage, W("lmv2")) < 0) bail("rename: %s", strerror(errno));
	refused(wr("lmv2/HEAD", HEADREF), "HEAD next to objects", "HEAD into the half layout renamed in");
	ok(!exists(W("lmv2/HEAD")), "... not written");
	put_p(P(stage, "inner/HEAD"), HEADREF);
	mkdir_p(P(stage, "inner/objects"));
	mkdir_p(P(stage, "inner/refs"));
	if (rename(stage, W("lmv3")) < 0) bail("rename: %s", strerror(errno));
	git_is(W("lmv3/inner"), 1, "control: lmv3/inner (renamed in inside lmv3) is a repository");
	ok(written(wr("lmv3/notes.txt", "x\n")), "lmv3, which holds a layout but is none, stays writable");
	refused(wr("lmv3/inner/config", FSMON), "a directory on its path holds HEAD", "config in the nested layout");
	refused(wr("lmv3/inner/objects/info/alternates", "/\n"), LAYOUT, "a write under the nested layout's objects/");
	ok(!exists(W("lmv3/inner/config")) && !exists(W("lmv3/inner/objects/info")), "... nothing written or created");

	/* 8. Spelling: a HEAD directory, case, trailing dots, ignorables. git
	 * on a case-insensitive filesystem opens `head` for HEAD; this one is
	 * case-sensitive, so there is no git control for these. */
	ok(written(wr("lm/objects/x.txt", "x\n")), "lm/objects/... without a HEAD is written");
	refused(wr("lm/HEAD/x", "x\n"), "HEAD next to objects", "a directory lm/HEAD (made by the write's mkdir)");
	ok(!exists(W("lm/HEAD")), "... not created");
	ok(written(wr("lci/head", HEADREF)), "lci/head is written");
	refused(wr("lci/Objects/x", "x\n"), "objects next to HEAD", "lci/Objects next to head (case-insensitive)");
	refused(wr("lci/REFS./x", "x\n"), "refs next to HEAD", "lci/REFS. (trailing dot)");
	refused(wr("lci/con\xe2\x80\x8b" "fig", "x\n"), "config next to HEAD", "lci/con<ZWSP>fig (default-ignorable)");
	ok(!exists(W("lci/Objects")) && !exists(W("lci/REFS.")) && !exists(W("lci/con\xe2\x80\x8b" "fig")),
	   "... nothing created");

	/* 9. No over-blocking: the names alone, near names, other directories. */
	ok(written(wr("notes/HEAD", "x\n")) && written(wr("notes/objects.txt", "x\n")) &&
	       written(wr("notes/refs.md", "x\n")) && written(wr("notes/heads/x", "x\n")),
	   "HEAD next to objects.txt, refs.md, heads/ is written");
	ok(written(wr("app/config", "x\n")) && written(wr("app/config.d/a", "x\n")) && written(wr("app/refs/x", "x\n")) &&
	       written(wr("app/objects/y", "x\n")),
	   "config, refs/ and objects/ without a HEAD are written");
	ok(written(wr("deep/HEAD", HEADREF)) && written(wr("deep/sub/objects/x", "x\n")) &&
	       written(wr("deep/sub/refs/y", "x\n")),
	   "objects/ and refs/ one directory below a HEAD are written");
	ok(written(ed("notes/HEAD", "x", "y")) && written(ed("app/config", "x", "y")), "... and stay editable");

	/* 10. The refusal line: the path (quoted, at most 200 bytes, cut on a
	 * UTF-8 boundary) and the rule; a refusal like the .git one. */
	ok(written(wr("lf/HEAD", HEADREF)), "lf/HEAD is written");
	refused_line(wr("lf/objects/x", ""), "'lf/objects/x': refused by the " LAYOUT ": it would put objects next to HEAD",
	             "a directory holding HEAD with objects, refs, config, commondir or gitdir is a git repository",
	             "the layout refusal");
	{
		char lp[300] = "lf/objects/";
		for (int i = 0; i < 120; i++) strcat(lp, "\xc3\xa9");
		o = wr(lp, "x");
		const char *w = refusal(o);
		const char *dots = w ? strstr(w, "...'") : NULL;
		ok(w && strncmp(w, "'lf/objects/\xc3\xa9", 14) == 0 && dots && dots - w <= 201 && !strchr(w, '?'),
		   "a 251-byte path is named by its first 199 bytes and '...', cut between characters");
		json_decref(o);
	}
	refused_line(wr(".git/config", "x"), "'.git/config': writes under .git are refused", "hook or config",
	             "the .git refusal names the path the same way");
}

static void test_tool_configs(void)
{
	static const struct {
		const char *path, *has, *top;
	} cases[] = {
		{ ".hg/hgrc", ".hg", ".hg" },
		{ "sub/.HG/hgrc", ".hg", "sub/.HG" },
		{ ".jj/repo/config.toml", ".jj", ".jj" },
		{ "_darcs/prefs/defaults", "_darcs", "_darcs" },
		{ "vendor/_Darcs/prefs/defaults", "_darcs", "vendor" },
		{ ".pijul/config", ".pijul", ".pijul" },
		{ ".envrc", ".envrc", ".envrc" },
		{ "app/.ENVRC", ".envrc", "app/.ENVRC" },
		{ "lib/.envrc.", ".envrc", "lib" },
		{ ".direnv/python-3.12/bin/pip", ".direnv", ".direnv" },
		{ ".vscode/tasks.json", ".vscode", ".vscode" },
		{ "web/.vscode/settings.json", ".vscode", "web" },
		{ ".idea/workspace.xml", ".idea", ".idea" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char name[128];
		snprintf(name, sizeof name, "write %s", cases[i].path);
		refused(wr(cases[i].path, "x\n"), cases[i].has, name);
		ok(!exists(W(cases[i].top)), "... %s: nothing created (%s)", cases[i].path, cases[i].top);
		put_p(W(cases[i].path), "x\n");
		ok(slurp_is(W(cases[i].path), "x\n"), "control: %s is writable by a plain open", cases[i].path);
		snprintf(name, sizeof name, "edit %s", cases[i].path);
		refused(ed(cases[i].path, "x", "y"), cases[i].has, name);
		ok(slurp_is(W(cases[i].path), "x\n"), "... %s unchanged", cases[i].path);
	}
	mklink(".hg", "hgl");
	ok(slurp_is(W("hgl/hgrc"), "x\n"), "control: hgl -> .hg reaches .hg/hgrc");
	refused(wr("hgl/hgrc", "[hooks]\npre-status = id\n"), "(reached through a symlink)", "hgl/hgrc via hgl -> .hg");
	ok(slurp_is(W(".hg/hgrc"), "x\n"), "... unchanged");
	json_t *o = rd(".hg/hgrc");
	is_str(content_of(o), "x\n", "reads of tool configs are allowed");
	json_decref(o);
	refused_line(wr(".vscode/tasks.json", "{}\n"), "'.vscode/tasks.json': writes under .vscode are refused",
	             "folder-open tasks", "a tool-config refusal");

	/* Near names are ordinary files. */
	static const char *const fine[] = { ".hgignore", ".hgtags", "my.hg/x", ".envrc.example", "envrc", "docs/.envrc-notes",
		                            ".vscodeignore", "idea/x", "darcs/x", ".jjx", ".idea.md", "pijul/x" };
	for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++)
		ok(written(wr(fine[i], "x\n")), "%s is not a denied name", fine[i]);

	ok(workspace_write_refusal(".hg/hgrc") != NULL && workspace_write_refusal("a/.EnvRC") != NULL &&
	       workspace_write_refusal("x/.idea/y") != NULL,
	   "write rules: .hg, .envrc, .idea refused by the exported rule");
	ok(workspace_write_refusal("my.hg/x") == NULL && workspace_write_refusal(".envrc.example") == NULL,
	   "write rules: names merely containing them are allowed");
}

/* ---- races ---- */

struct swapper {
	const char *a, *b;
	int iterations, done, swaps;
};

static void *swap_thread(void *arg)
{
	struct swapper *s = arg;
	for (int i = 0; i < s->iterations && !__atomic_load_n(&s->done, __ATOMIC_ACQUIRE); i++)
		if (renameat2(AT_FDCWD, s->a, AT_FDCWD, s->b, RENAME_EXCHANGE) == 0) s->swaps++;
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_races(void)
{
	/* Read: `race` flips between an inside file and a symlink to the
	 * outside secret, atomically (RENAME_EXCHANGE), while the handler reads. */
	put(W("race"), INSIDE);
	mklink("../../outside/secret", "race-alt");
	ok(slurp_is(W("race-alt"), SECRET), "control: the swapped-in symlink reaches the secret with a plain open");
	struct swapper s = { W("race"), W("race-alt"), 200000, 0, 0 };
	char ra[PATH_MAX], rb[PATH_MAX];
	snprintf(ra, sizeof ra, "%s", s.a);
	snprintf(rb, sizeof rb, "%s", s.b);
	s.a = ra;
	s.b = rb;
	pthread_t th;
	if (pthread_create(&th, NULL, swap_thread, &s) != 0) bail("pthread_create");
	int inside = 0, refusals = 0, leaks = 0, other = 0, failures = 0;
	for (int i = 0; i < 3000 && !__atomic_load_n(&s.done, __ATOMIC_ACQUIRE); i++) {
		json_t *o = call(workspace_read, json_pack("{s:s,s:s}", "op", "read", "path", "race"),
		                 &(struct world_err){ 0, "" });
		const char *c = content_of(o);
		if (!o) failures++;
		else if (c && strcmp(c, INSIDE) == 0) inside++;
		else if (c && strstr(c, "OUTSIDE")) leaks++;
		else if (refusal(o)) refusals++;
		else other++;
		json_decref(o);
	}
	__atomic_store_n(&s.done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	diag("read race: %d swaps, %d inside, %d refused, %d failed, %d other", s.swaps, inside, refusals, failures, other);
	ok(leaks == 0 && other == 0, "a symlink swapped in between check and open never yields outside content");

	/* Write: `wd` flips between an inside directory and a symlink to the
	 * outside directory while the handler writes wd/planted. */
	if (mkdir(W("wd"), 0755) < 0) bail("mkdir wd");
	mklink("../../outside", "wd-alt");
	put(W("wd-alt/ctl-planted"), "x");
	ok(exists(O("ctl-planted")), "control: a plain write through the swapped-in symlink lands outside");
	if (unlink(O("ctl-planted")) < 0) bail("unlink");
	struct swapper s2 = { ra, rb, 200000, 0, 0 };
	snprintf(ra, sizeof ra, "%s", W("wd"));
	snprintf(rb, sizeof rb, "%s", W("wd-alt"));
	if (pthread_create(&th, NULL, swap_thread, &s2) != 0) bail("pthread_create");
	int written = 0;
	refusals = failures = 0;
	for (int i = 0; i < 2000 && !__atomic_load_n(&s2.done, __ATOMIC_ACQUIRE); i++) {
		json_t *o = call(workspace_write,
		                 json_pack("{s:s,s:s,s:s}", "op", "write", "path", "wd/planted", "content", "x"),
		                 &(struct world_err){ 0, "" });
		if (!o) failures++;
		else if (refusal(o)) refusals++;
		else written++;
		json_decref(o);
	}
	__atomic_store_n(&s2.done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	diag("write race: %d swaps, %d written, %d refused, %d failed", s2.swaps, written, refusals, failures);
	ok(!exists(O("planted")), "a directory swapped for an outside symlink never receives the write");
	ok(count_tmp(outside) == 0, "... nor a temporary file");
}

/* ---- a mount point inside the worktree (root: private mount namespace) ---- */

static void test_mount(void)
{
	if (geteuid() != 0) {
		skip("needs root", "a mount point inside the worktree is refused");
		return;
	}
	fflush(stdout);
	int pfd[2];
	if (pipe(pfd) < 0) bail("pipe");
	pid_t pid = fork();
	if (pid < 0) bail("fork");
	if (pid == 0) {
		close(pfd[0]);
		char r = 'x';
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mkdir(W("mnt"), 0755) < 0 || mount("tmpfs", W("mnt"), "tmpfs", 0, "size=64k") < 0) {
			r = 's';
		} else {
			put(W("mnt/f"), INSIDE);
			int control = slurp_is(W("mnt/f"), INSIDE);
			json_t *o = rd("mnt/f");
			const char *w = refusal(o);
			r = control && w && strstr(w, "mount point") ? 'y' : 'n';
		}
		if (write(pfd[1], &r, 1) != 1) _exit(2);
		_exit(0);
	}
	close(pfd[1]);
	char r = 0;
	if (read(pfd[0], &r, 1) != 1) r = 0;
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	rmdir(W("mnt"));
	if (r == 's') skip("cannot mount here", "a mount point inside the worktree is refused");
	else ok(r == 'y', "control: a file on a tmpfs mounted inside the worktree is readable; the handler refuses it");
}

/* ---- the unprivileged path ---- */

static void child_check(int fd, int cond, const char *name)
{
	dprintf(fd, "%d %s\n", cond ? 1 : 0, name);
}

static int child_refused(json_t *o, const char *has)
{
	const char *w = refusal(o);
	int r = w && strstr(w, has);
	json_decref(o);
	return r;
}

static void test_unprivileged(void)
{
	if (geteuid() != 0) {
		diag("running as uid %d: the whole test above was the unprivileged path", (int)geteuid());
		return;
	}
	char uroot[1100], uout[1100];
	snprintf(uroot, sizeof uroot, "%s/uroot", base);
	snprintf(uout, sizeof uout, "%s/uoutside", base);
	if (chmod(base, 0755) < 0 || mkdir(uroot, 0755) < 0 || chown(uroot, 65534, 65534) < 0 || mkdir(uout, 0755) < 0 ||
	    chown(uout, 65534, 65534) < 0)
		bail("unprivileged setup: %s", strerror(errno));
	/* A root-only file the child will find inside its worktree. */
	char uwt[1200];
	snprintf(uwt, sizeof uwt, "%s/ep2", uroot);
	if (mkdir(uwt, 0700) < 0 || chown(uwt, 65534, 65534) < 0) bail("mkdir %s", uwt);
	char rwt[1200];
	snprintf(rwt, sizeof rwt, "%s/rootwt", uroot);
	if (mkdir(rwt, 0755) < 0 || chmod(rwt, 0755) < 0) bail("mkdir %s", rwt);
	put(P(rwt, "f.txt"), INSIDE);
	int fd = open(P(uwt, "rootonly"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, "root\n", 5) != 5 || close(fd) < 0) bail("rootonly");
	ok(slurp_is(P(uwt, "rootonly"), "root\n"), "control: root reads the root-only file inside the 65534 worktree");
	fflush(stdout);
	int pfd[2];
	if (pipe(pfd) < 0) bail("pipe");
	pid_t pid = fork();
	if (pid < 0) bail("fork");
	if (pid == 0) {
		close(pfd[0]);
		int o = pfd[1];
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0) {
			child_check(o, 0, "setresuid to 65534");
			_exit(1);
		}
		child_check(o, geteuid() == 65534 && getegid() == 65534, "child runs as 65534:65534");
		snprintf(root, sizeof root, "%s", uroot);
		snprintf(wt, sizeof wt, "%s", uwt);
		snprintf(outside, sizeof outside, "%s", uout);
		ctx.workspace_root = root;
		ctx.episode = "ep2";
		json_t *r = wr("d/f.txt", INSIDE);
		child_check(o, r && json_is_true(json_object_get(r, "ok")), "unprivileged: write d/f.txt");
		json_decref(r);
		r = rd("d/f.txt");
		child_check(o, content_of(r) && strcmp(content_of(r), INSIDE) == 0, "unprivileged: read it back");
		json_decref(r);
		struct stat st;
		child_check(o, stat(W("d/f.txt"), &st) == 0 && st.st_uid == 65534, "unprivileged: the file is owned by 65534");
		child_check(o, slurp("/etc/passwd") != NULL, "unprivileged control: /etc/passwd readable by a plain open");
		mklink("/etc/passwd", "passwd");
		child_check(o, child_refused(rd("passwd"), "outside the worktree"), "unprivileged: symlink to /etc/passwd");
		child_check(o, child_refused(rd("/etc/passwd"), "absolute"), "unprivileged: absolute path");
		put(O("secret"), SECRET);
		child_check(o, slurp_is(W("../../uoutside/secret"), SECRET), "unprivileged control: ../../uoutside/secret readable");
		child_check(o, child_refused(rd("../../uoutside/secret"), "'..'"), "unprivileged: '..'");
		mklink("../../uoutside", "dout");
		child_check(o, child_refused(wr("dout/planted", "x"), "outside the worktree") && !exists(O("planted")),
		            "unprivileged: write through a directory symlink out");
		child_check(o, link(O("secret"), W("hl")) == 0 && slurp_is(W("hl"), SECRET),
		            "unprivileged control: a hard link to its outside file reads it");
		child_check(o, child_refused(rd("hl"), "hard links"), "unprivileged: hard link refused");
		child_check(o, child_refused(wr(".git/hooks/pre-commit", "x"), ".git") && !exists(W(".git")),
		            "unprivileged: .git/hooks/pre-commit refused, nothing created");
		r = wr("bare/HEAD", HEADREF);
		child_check(o, r && json_is_true(json_object_get(r, "ok")), "unprivileged: bare/HEAD alone is written");
		json_decref(r);
		child_check(o, child_refused(wr("bare/objects/info/packs", ""), "objects next to HEAD") && !exists(W("bare/objects")),
		            "unprivileged: bare/objects/ next to HEAD refused, nothing created");
		child_check(o, child_refused(wr("app/.envrc", "id\n"), ".envrc") && !exists(W("app")),
		            "unprivileged: app/.envrc refused, nothing created");
		child_check(o, mkfifo(W("fifo"), 0600) == 0, "unprivileged: mkfifo");
		alarm(60);
		child_check(o, child_refused(rd("fifo"), "fifo"), "unprivileged: fifo refused without blocking");
		alarm(0);
		child_check(o, slurp(W("rootonly")) == NULL, "unprivileged control: the root-only file is unreadable by a plain open");
		child_check(o, child_refused(rd("rootonly"), "permission denied"), "unprivileged: root-only file refused");
		int bfd = open(W("big"), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		child_check(o, bfd >= 0 && ftruncate(bfd, (off_t)2 << 30) == 0, "unprivileged: a 2 GiB sparse file");
		if (bfd >= 0) close(bfd);
		child_check(o, child_refused(rd("big"), "over the"), "unprivileged: the sparse file refused by size");
		child_check(o, count_tmp(wt) == 0 && count_tmp(W("d")) == 0, "unprivileged: no temporary file left");
		struct broker_handler_ctx keep = ctx;
		ctx.workspace_root = "/";
		ctx.episode = "root";
		struct world_err err = { 0, "" };
		r = call(workspace_write, json_pack("{s:s,s:s,s:s}", "op", "write", "path", "x", "content", "x"), &err);
		child_check(o, !r && err.code == WX_IO && !exists("/root/x"),
		            "unprivileged: a worktree it may not open is a failure, nothing written");
		json_decref(r);
		/* A 0755 worktree of another owner: readable, but it cannot be
		 * made 0700, so it is not served (docs/security.md). */
		ctx.workspace_root = uroot;
		ctx.episode = "rootwt";
		child_check(o, slurp_is(P(uroot, "rootwt/f.txt"), INSIDE),
		            "unprivileged control: root's 0755 worktree is readable by a plain open");
		err = (struct world_err){ 0, "" };
		r = call(workspace_read, json_pack("{s:s,s:s}", "op", "read", "path", "f.txt"), &err);
		child_check(o, !r && err.code == WX_IO && strstr(err.msg, "is mode 0755 and cannot be made 0700"),
		            "unprivileged: a 0755 worktree it cannot make 0700 is a failure naming it, not served");
		ctx = keep;
		_exit(0);
	}
	close(pfd[1]);
	FILE *f = fdopen(pfd[0], "r");
	if (!f) bail("fdopen");
	char line[512];
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		ok(line[0] == '1', "%s", line + 2);
		n++;
	}
	fclose(f);
	int status;
	if (waitpid(pid, &status, 0) < 0) bail("waitpid");
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && n >= 20, "the unprivileged child ran %d checks and exited 0", n);
}

static void rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0) return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d)) != NULL) {
				if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
				char sub[PATH_MAX * 2];
				snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
				rm_rf(sub);
			}
			closedir(d);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(base, sizeof base, "%s/ws-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) bail("mkdtemp: %s", strerror(errno));
	snprintf(root, sizeof root, "%s/root", base);
	snprintf(wt, sizeof wt, "%s/ep1", root);
	snprintf(outside, sizeof outside, "%s/outside", base);
	if (mkdir(root, 0755) < 0 || mkdir(outside, 0755) < 0) bail("mkdir: %s", strerror(errno));
	ctx = (struct broker_handler_ctx){ .workspace_root = root, .episode = "ep1", .wall_ms = BROKER_HANDLER_WALL_MS,
		                           .output_max = BROKER_HANDLER_OUTPUT_MAX, .file_max = BROKER_FILE_MAX };
	passwd = slurp("/etc/passwd");
	test_basic();
	test_operator_worktree();
	test_paths();
	test_layouts();
	test_tool_configs();
	test_exported();
	test_races();
	test_mount();
	test_unprivileged();
	free(passwd);
	rm_rf(base);
	return done_testing();
}
