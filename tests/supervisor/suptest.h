/* tests/supervisor/suptest.h: helpers shared by the supervisor tests:
 * which launcher to test, the stub interpreter, and the leak probes
 * (open fds, child processes, leftover scratch directories). */
#ifndef WORLD_TESTS_SUPTEST_H
#define WORLD_TESTS_SUPTEST_H
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

/* Open fds of this process (minus the one opendir uses). */
static inline int count_fds(void) { return count_dir("/proc/self/fd") - 1; }

/* Children of any thread of this process (zombies included). */
static inline int count_children(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d) return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.') continue;
		char p[300], buf[4096];
		snprintf(p, sizeof p, "/proc/self/task/%s/children", e->d_name);
		FILE *f = fopen(p, "r");
		if (!f) continue;
		size_t k = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[k] = '\0';
		for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n")) n++;
	}
	closedir(d);
	return n;
}

/* First child pid of any thread, or 0. */
static inline int first_child(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d) return 0;
	int pid = 0;
	struct dirent *e;
	while (!pid && (e = readdir(d))) {
		if (e->d_name[0] == '.') continue;
		char p[300];
		snprintf(p, sizeof p, "/proc/self/task/%s/children", e->d_name);
		FILE *f = fopen(p, "r");
		if (!f) continue;
		if (fscanf(f, "%d", &pid) != 1) pid = 0;
		fclose(f);
	}
	closedir(d);
	return pid;
}

/* The network namespaces ("net:[N]") of up to max children of any thread;
 * returns how many were read. */
static inline int children_netns(char ns[][64], int max)
{
	DIR *d = opendir("/proc/self/task");
	if (!d) return 0;
	int n = 0;
	struct dirent *e;
	while (n < max && (e = readdir(d))) {
		if (e->d_name[0] == '.') continue;
		char p[300];
		snprintf(p, sizeof p, "/proc/self/task/%s/children", e->d_name);
		FILE *f = fopen(p, "r");
		if (!f) continue;
		int pid;
		while (n < max && fscanf(f, "%d", &pid) == 1) {
			char l[64];
			snprintf(l, sizeof l, "/proc/%d/ns/net", pid);
			ssize_t k = readlink(l, ns[n], 63);
			if (k > 0) ns[n++][k] = '\0';
		}
		fclose(f);
	}
	closedir(d);
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
 * SUPTEST_LAUNCHER=unconfined asks for the test double. */
static inline int suptest_unconfined(void)
{
	const char *e = getenv("SUPTEST_LAUNCHER");
	return e && strcmp(e, "unconfined") == 0;
}
static inline const char *suptest_launcher_name(void)
{
	return suptest_unconfined() ? "unconfined (test double)" : "capsule";
}
static inline struct launcher *suptest_launcher(const char *interp, struct world_err *err)
{
	return suptest_unconfined() ? launcher_unconfined_new(interp, err) : launcher_capsule_new(interp, NULL, err);
}
#endif
