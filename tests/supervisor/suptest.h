/* tests/supervisor/suptest.h: helpers shared by the supervisor tests:
 * which launcher to test, the stub interpreter, and the leak probes
 * (open fds, child processes, leftover scratch directories). */
#ifndef WORLD_TESTS_SUPTEST_H
#define WORLD_TESTS_SUPTEST_H
#include "supervisor/spawner.h"
#include "supervisor/supervisor.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline int count_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d) return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
	closedir(d);
	return n;
}

/* ---- the capsule spawner (supervisor/spawner.h) ----------------------------
 * With SUPTEST_SPAWNER=1 the suites run against the spawner: it is started
 * (once) before the first launcher, and the process-tree probes below look
 * for capsules under the spawner, whose children they are (this process's
 * only child is then the spawner itself). */
static inline int suptest_spawner(void)
{
	const char *e = getenv("SUPTEST_SPAWNER");
	return e && strcmp(e, "1") == 0;
}

/* Start this process's spawner when SUPTEST_SPAWNER=1 asks for one (before
 * any launcher: the fork is of a small, single-threaded process). */
static inline void suptest_spawner_ensure(void)
{
	static int started;
	if (started || !suptest_spawner()) return;
	started = 1;
	struct world_err err = { 0, "" };
	struct sup_spawner_info info;
	if (sup_spawner_start(NULL, &info, &err) < 0) {
		printf("Bail out! sup_spawner_start: %s\n", err.msg);
		fflush(stdout);
		exit(1);
	}
}

/* The running spawner's pid, or 0 (none, or it is gone). */
static inline int suptest_spawner_pid(void)
{
	if (!sup_spawner_running()) return 0;
	struct sup_spawner_info info;
	struct world_err err;
	return sup_spawner_start(NULL, &info, &err) == 0 ? (int)info.pid : 0;
}

/* Open fds of this process (minus the one opendir uses). The spawner's
 * control socket is counted from the start: it is started first. */
static inline int count_fds(void)
{
	suptest_spawner_ensure();
	return count_dir("/proc/self/fd") - 1;
}

/* The children of every thread of process pid (0: this one), zombies
 * included, except `except`; up to max pids in out (may be NULL). Returns
 * how many there are (even beyond max), or -1. */
static inline int children_of(int pid, int except, int *out, int max)
{
	char dir[64];
	if (pid) snprintf(dir, sizeof dir, "/proc/%d/task", pid);
	else snprintf(dir, sizeof dir, "/proc/self/task");
	DIR *d = opendir(dir);
	if (!d) return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.') continue;
		char p[400];
		snprintf(p, sizeof p, "%s/%s/children", dir, e->d_name);
		FILE *f = fopen(p, "r");
		if (!f) continue;
		int c;
		while (fscanf(f, "%d", &c) == 1) {
			if (c == except) continue;
			if (out && n < max) out[n] = c;
			n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* Where capsules are: the children of the spawner when one runs, else of
 * this process; up to max pids in out. Returns how many. */
static inline int capsule_pids(int *out, int max)
{
	int sp = suptest_spawner_pid();
	int n = children_of(sp, 0, out, max);
	return n < 0 ? 0 : n;
}

/* Children of any thread of this process (zombies included); with a
 * spawner, this process's children but the spawner plus the spawner's
 * children (the capsules). */
static inline int count_children(void)
{
	int sp = suptest_spawner_pid();
	int n = children_of(0, sp, NULL, 0);
	if (n < 0) return -1;
	if (sp) {
		int k = children_of(sp, 0, NULL, 0);
		if (k < 0) return -1;
		n += k;
	}
	return n;
}

/* First capsule pid (a child of the spawner, or of any thread), or 0. */
static inline int first_child(void)
{
	int pid = 0;
	return capsule_pids(&pid, 1) > 0 ? pid : 0;
}

/* The network namespaces ("net:[N]") of up to max capsules (children of
 * the spawner, or of any thread); returns how many were read. */
static inline int children_netns(char ns[][64], int max)
{
	int pids[64];
	int k = capsule_pids(pids, max < 64 ? max : 64);
	if (k > max) k = max;
	if (k > 64) k = 64;
	int n = 0;
	for (int i = 0; i < k; i++) {
		char l[64];
		snprintf(l, sizeof l, "/proc/%d/ns/net", pids[i]);
		ssize_t r = readlink(l, ns[n], 63);
		if (r > 0) ns[n++][r] = '\0';
	}
	return n;
}

/* Processes anywhere whose executable is path (capsules exec from a memfd,
 * so this finds only unconfined leftovers; see count_named). */
static inline int count_running(const char *path)
{
	DIR *d = opendir("/proc");
	if (!d) return -1;
	int n = 0;
	struct dirent *e;
	char want[4096];
	if (!realpath(path, want)) { closedir(d); return -1; }
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
		char p[300], exe[4096];
		snprintf(p, sizeof p, "/proc/%s/exe", e->d_name);
		ssize_t k = readlink(p, exe, sizeof exe - 1);
		if (k <= 0) continue;
		exe[k] = '\0';
		if (strcmp(exe, want) == 0) n++;
	}
	closedir(d);
	return n;
}

/* Processes anywhere whose name (comm) is name. */
static inline int count_named(const char *name)
{
	DIR *d = opendir("/proc");
	if (!d) return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
		char p[300], comm[64] = "";
		snprintf(p, sizeof p, "/proc/%s/comm", e->d_name);
		FILE *f = fopen(p, "r");
		if (!f) continue;
		if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
		if (strcmp(comm, name) == 0) n++;
	}
	closedir(d);
	return n;
}

static inline char *stub_path(void)
{
	static char p[4096];
	const char *b = getenv("top_builddir");
	snprintf(p, sizeof p, "%s/tests/supervisor/stub-interp", b ? b : ".");
	return p;
}

/* A private TMPDIR, so that leftover scratch directories can be counted. */
static inline const char *private_tmpdir(void)
{
	static char dir[256];
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/world-suptest.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) return NULL;
	setenv("TMPDIR", dir, 1);
	return dir;
}

/* The launcher the tests exercise: the product (capsule) launcher, unless
 * SUPTEST_LAUNCHER=unconfined asks for the test double; with
 * SUPTEST_SPAWNER=1 its capsules are made by the spawner. */
static inline int suptest_unconfined(void)
{
	const char *e = getenv("SUPTEST_LAUNCHER");
	return e && strcmp(e, "unconfined") == 0;
}
static inline const char *suptest_launcher_name(void)
{
	return suptest_unconfined() ? "unconfined (test double)"
	       : suptest_spawner()  ? "capsule, made by the capsule spawner"
	                            : "capsule";
}
/* The capsule launcher (launcher_capsule_new) of the suites: with
 * SUPTEST_SPAWNER=1 the spawner is started first, and makes its capsules. */
static inline struct launcher *suptest_capsule_launcher(const char *interp, struct world_err *err)
{
	suptest_spawner_ensure();
	return launcher_capsule_new(interp, NULL, err);
}
static inline struct launcher *suptest_launcher(const char *interp, struct world_err *err)
{
	return suptest_unconfined() ? launcher_unconfined_new(interp, err) : suptest_capsule_launcher(interp, err);
}
#endif
