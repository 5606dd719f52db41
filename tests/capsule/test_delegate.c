/* tests/capsule/test_delegate.c: cgroup v2 delegation (issue 24, item 3),
 * capsule_cgroup_delegate on a fake cgroupfs: a temporary directory tree of
 * plain files cgroup.controllers, cgroup.subtree_control and cgroup.procs.
 * This host has no systemd and its v2 hierarchy offers only hugetlb, so the
 * kernel's own refusal (EBUSY for a group with processes: the
 * no-internal-process rule) cannot be shown here; what is checked is the
 * order of the steps and that nothing changes when there is nothing to do
 * or a step fails. */
#include "capsule/capsule.h"
#include "tests/tap.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];
static const char *own = "/system.slice/worldd.service";

static void put(const char *rel, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s%s/%s", root, own, rel);
	FILE *f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) tap_bail("write %s: %s", p, strerror(errno));
}

static const char *get(const char *rel)
{
	static char buf[256];
	char p[512];
	snprintf(p, sizeof p, "%s%s/%s", root, own, rel);
	FILE *f = fopen(p, "r");
	if (!f) return "(absent)";
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static bool leaf_exists(void)
{
	char p[512];
	struct stat st;
	snprintf(p, sizeof p, "%s%s/daemon", root, own);
	return stat(p, &st) == 0;
}

/* A fresh delegated group: the controllers offered, none enabled, only us in it. */
static void fresh(const char *controllers, const char *procs, bool with_leaf)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s/system.slice' && mkdir -p '%s%s'", root, root, own);
	if (system(cmd) != 0) tap_bail("%s", cmd);
	put("cgroup.controllers", controllers);
	put("cgroup.subtree_control", "");
	put("cgroup.procs", procs);
	if (with_leaf) {
		char p[512];
		snprintf(p, sizeof p, "%s%s/daemon", root, own);
		if (mkdir(p, 0755) < 0) tap_bail("mkdir %s", p);
		put("daemon/cgroup.procs", ""); /* cgroupfs makes a new group's files itself */
	}
}

int main(void)
{
	snprintf(root, sizeof root, "/tmp/world-delegate.XXXXXX");
	if (!mkdtemp(root)) tap_bail("mkdtemp: %s", strerror(errno));
	char me[32], pid[32], base[900];
	snprintf(me, sizeof me, "%d\n", (int)getpid());
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	struct world_err e = { 0, "" };
	char want[900];
	snprintf(want, sizeof want, "%s%s", root, own);

	/* 1. delegated, alone: moved into the leaf, then the controllers enabled */
	fresh("cpu memory pids\n", me, true);
	int rc = capsule_cgroup_delegate(root, own, "daemon", base, sizeof base, &e);
	is_int(rc, 0, "delegated group, alone in it: done (%s)", e.msg);
	is_str(base, want, "capsule groups go in the delegated group, beside the leaf");
	is_str(get("daemon/cgroup.procs"), pid, "this process was written into the leaf's cgroup.procs");
	is_str(get("cgroup.subtree_control"), "+memory +pids", "then memory and pids enabled for the group's children");

	/* 2. enabled already (a restart): nothing moved */
	put("daemon/cgroup.procs", "");
	put("cgroup.subtree_control", "memory pids\n");
	e = (struct world_err){ 0, "" };
	rc = capsule_cgroup_delegate(root, own, "daemon", base, sizeof base, &e);
	is_int(rc, 0, "controllers enabled already: done");
	is_str(get("daemon/cgroup.procs"), "", "... and nothing was moved");

	/* 3. the controllers not offered (no Delegate=): nothing changes */
	fresh("cpu hugetlb\n", me, false);
	e = (struct world_err){ 0, "" };
	rc = capsule_cgroup_delegate(root, own, "daemon", base, sizeof base, &e);
	is_int(rc, 1, "no memory/pids offered: nothing to do");
	ok(strstr(e.msg, "offers no memory or pids controller") != NULL, "... says which are missing (%s)", e.msg);
	ok(!leaf_exists(), "... and made no leaf");
	is_str(get("cgroup.subtree_control"), "", "... and enabled nothing");

	/* 4. another process shares the group: not moved */
	char two[64];
	snprintf(two, sizeof two, "%s1\n", me);
	fresh("memory pids\n", two, false);
	e = (struct world_err){ 0, "" };
	rc = capsule_cgroup_delegate(root, own, "daemon", base, sizeof base, &e);
	is_int(rc, 1, "another process in the group: nothing to do");
	ok(strstr(e.msg, "holds process 1 besides this one") != NULL, "... named (%s)", e.msg);
	ok(!leaf_exists(), "... and made no leaf");

	/* 5. a step fails (the new leaf's cgroup.procs cannot be written: a
	 * plain directory has none): the leaf is removed, nothing enabled */
	fresh("memory pids\n", me, false);
	e = (struct world_err){ 0, "" };
	rc = capsule_cgroup_delegate(root, own, "daemon", base, sizeof base, &e);
	is_int(rc, -1, "the move fails: an error");
	ok(strstr(e.msg, "cgroup delegation: move into ") != NULL && strstr(e.msg, "daemon/cgroup.procs"),
	   "... naming the file (%s)", e.msg);
	ok(!leaf_exists(), "... the leaf it made is removed");
	is_str(get("cgroup.subtree_control"), "", "... and nothing enabled");

	/* 6. no such group */
	e = (struct world_err){ 0, "" };
	rc = capsule_cgroup_delegate(root, "/absent", "daemon", base, sizeof base, &e);
	is_int(rc, -1, "an absent group: an error");
	ok(strstr(e.msg, "/absent/cgroup.subtree_control") != NULL, "... naming the path (%s)", e.msg);

	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0) diag("could not remove %s", root);
	return tap_done();
}
