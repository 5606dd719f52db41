/* capsule/cgroups.c: the cgroup manager of capsule/ (see capsule.h).
 *
 * Owns: where this process's memory and pids groups can go (a v2 group
 * delegating the controller, else the v1 hierarchy mounting it) and the
 * delegation of a v2 group to this process (capsule_cgroup_delegate); the
 * pool of capsule groups (made once, limits written, counters read, reused
 * once checked empty, removed at exit and on SIGINT/SIGTERM/SIGHUP); the
 * keep-warm thread that keeps a v1 attach from waiting; the sweep of the
 * groups a killed maker left; the host facts `profile show` prints.
 * capsule.c takes, attaches, counts and puts back a handle's groups through
 * capsule_int.h; nothing here starts a capsule. */
#include "capsule/capsule.h"
#include "capsule/capsule_int.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* ---- where a capsule's groups go ---------------------------------------- */

static unsigned long capsule_seq;

/* The v1 hierarchy mounting `controller`, and the caller's group in it.
 * *fdm: some cgroup root (v1 or v2) is mounted with favordynmods. The
 * option is per root, but what it changes is global: the kernel then takes
 * a per-process lock for a cgroup.procs write instead of leaving the global
 * percpu rwsem's fast path (an RCU grace period, ~10 ms, after a quiet
 * spell). A v1 root cannot be remounted with it (EINVAL): the host sets it
 * on the v2 mount or with the boot parameter cgroup_favordynmods=1
 * (docs/security.md). */
static int v1_paths(const char *controller, char *mnt, size_t mlen, char *grp, size_t glen, bool *fdm)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f) return -1;
	char line[1024];
	int found = 0;
	*fdm = false;
	while (fgets(line, sizeof line, f)) {
		/* ... mountpoint ... - cgroup cgroup rw,memory  (or - cgroup2 cgroup2 rw,favordynmods) */
		char *dash = strstr(line, " - ");
		bool v2 = dash && strncmp(dash, " - cgroup2 ", 11) == 0;
		if (!dash || (!v2 && strncmp(dash, " - cgroup ", 10) != 0)) continue;
		char *opts = strrchr(dash, ' ');
		if (!opts) continue;
		opts++;
		opts[strcspn(opts, "\n")] = 0;
		int has = 0;
		for (char *save = NULL, *t = strtok_r(opts, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			if (!v2 && strcmp(t, controller) == 0) has = 1;
			if (strcmp(t, "favordynmods") == 0) *fdm = true;
		}
		if (!has || found) continue;
		char *p = line;
		for (int i = 0; i < 4 && p; i++) {
			p = strchr(p, ' ');
			if (p) p++;
		}
		if (!p) continue;
		size_t l = strcspn(p, " ");
		if (l >= mlen) continue;
		memcpy(mnt, p, l);
		mnt[l] = 0;
		found = 1;
	}
	fclose(f);
	if (!found) return -1;
	f = fopen("/proc/self/cgroup", "re");
	if (!f) return -1;
	found = 0;
	while (fgets(line, sizeof line, f)) {
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2) continue;
		*c2 = 0;
		int has = 0;
		for (char *save = NULL, *t = strtok_r(c1 + 1, ",", &save); t; t = strtok_r(NULL, ",", &save))
			if (strcmp(t, controller) == 0) has = 1;
		if (!has) continue;
		char *path = c2 + 1;
		path[strcspn(path, "\n")] = 0;
		found = copy_str(grp, glen, strcmp(path, "/") == 0 ? "" : path) == 0;
		break;
	}
	fclose(f);
	return found ? 0 : -1;
}

/* The delegated v2 group capsule groups go in when capsule_cgroup_delegate
 * moved this process into a leaf of it ("" = the caller's own group). A
 * forked spawner inherits it. */
static char cg_v2_delegated[800];

static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == '\n' || p[-1] == '+') && (p[n] == 0 || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

int capsule_cgroup_delegate(const char *root, const char *own, const char *leaf, char *base, size_t blen,
                            struct world_err *err)
{
	char dir[900], path[1100], buf[4096];
	if ((size_t)snprintf(dir, sizeof dir, "%s%s", root, strcmp(own, "/") == 0 ? "" : own) >= sizeof dir)
		return werr(err, WX_SETUP, "cgroup delegation: path too long: %s%s", root, own);
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
	if (read_small(path, buf, sizeof buf) < 0)
		return werr(err, WX_SETUP, "cgroup delegation: read %s: %s", path, strerror(errno));
	if (has_word(buf, "memory") && has_word(buf, "pids")) { /* enabled already (a restart, or the host) */
		snprintf(base, blen, "%s", dir);
		return 0;
	}
	snprintf(path, sizeof path, "%s/cgroup.controllers", dir);
	if (read_small(path, buf, sizeof buf) < 0)
		return werr(err, WX_SETUP, "cgroup delegation: read %s: %s", path, strerror(errno));
	if (!has_word(buf, "memory") || !has_word(buf, "pids"))
		return werr(err, WX_SETUP, "cgroup delegation: %s offers no %s%s%s controller (cgroup.controllers: %.*s)", dir,
		            has_word(buf, "memory") ? "" : "memory", !has_word(buf, "memory") && !has_word(buf, "pids") ? " or " : "",
		            has_word(buf, "pids") ? "" : "pids", (int)strcspn(buf, "\n"), buf), 1;
	/* Only a group this process is alone in is rearranged: moving ourselves
	 * out of a group others share would leave them where controllers
	 * cannot be enabled anyway (the kernel refuses with EBUSY). */
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	if (read_small(path, buf, sizeof buf) < 0)
		return werr(err, WX_SETUP, "cgroup delegation: read %s: %s", path, strerror(errno));
	char me[32];
	snprintf(me, sizeof me, "%d", (int)getpid());
	for (char *save = NULL, *t = strtok_r(buf, "\n", &save); t; t = strtok_r(NULL, "\n", &save))
		if (strcmp(t, me) != 0)
			return werr(err, WX_SETUP, "cgroup delegation: %s holds process %s besides this one: not moved", dir, t), 1;
	/* cgroup v2's no-internal-process rule: a group with processes cannot
	 * enable controllers for its children. Move into the leaf first, then
	 * enable; on failure move back and remove the leaf (nothing changed). */
	char leafdir[1000];
	if ((size_t)snprintf(leafdir, sizeof leafdir, "%s/%s", dir, leaf) >= sizeof leafdir)
		return werr(err, WX_SETUP, "cgroup delegation: path too long: %s/%s", dir, leaf);
	bool made = mkdir(leafdir, 0755) == 0;
	if (!made && errno != EEXIST)
		return werr(err, WX_SETUP, "cgroup delegation: mkdir %s: %s", leafdir, strerror(errno));
	snprintf(path, sizeof path, "%s/cgroup.procs", leafdir);
	if (write_file(path, me) < 0) {
		int e = errno;
		if (made) rmdir(leafdir);
		return werr(err, WX_SETUP, "cgroup delegation: move into %s: %s", path, strerror(e));
	}
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
	if (write_file(path, "+memory +pids") < 0) {
		int e = errno;
		char back[1000];
		snprintf(back, sizeof back, "%s/cgroup.procs", dir);
		(void)write_file(back, me);
		if (made) rmdir(leafdir);
		return werr(err, WX_SETUP, "cgroup delegation: enable memory and pids in %s: %s", path, strerror(e));
	}
	snprintf(base, blen, "%s", dir);
	return 0;
}

/* v2: the unified mount, and the caller's group if `controller` is enabled
 * for its children (subtree_control); the delegated group instead once
 * capsule_cgroup_delegate moved this process into its leaf. */
static int v2_path(const char *controller, char *dir, size_t len)
{
	if (cg_v2_delegated[0]) {
		char path[900], ctl[512];
		snprintf(path, sizeof path, "%s/cgroup.subtree_control", cg_v2_delegated);
		if (read_small(path, ctl, sizeof ctl) < 0 || !has_word(ctl, controller)) return -1;
		return (size_t)snprintf(dir, len, "%s", cg_v2_delegated) < len ? 0 : -1;
	}
	const char *mnts[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	const char *mnt = NULL;
	for (size_t i = 0; i < 2 && !mnt; i++) {
		struct statfs sf;
		if (statfs(mnts[i], &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC) mnt = mnts[i];
	}
	if (!mnt) return -1;
	char line[1024], own[768] = "";
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f) return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = 0;
			if (copy_str(own, sizeof own, strcmp(line + 3, "/") == 0 ? "" : line + 3) < 0) own[0] = 0;
		}
	fclose(f);
	char path[1100], ctl[512];
	snprintf(path, sizeof path, "%s%s/cgroup.subtree_control", mnt, own);
	if (read_small(path, ctl, sizeof ctl) < 0) return -1;
	int has = 0;
	for (char *save = NULL, *t = strtok_r(ctl, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
		if (strcmp(t, controller) == 0) has = 1;
	if (!has) return -1;
	if ((size_t)snprintf(dir, len, "%s%s", mnt, own) >= len) return -1;
	return 0;
}

/* Where each controller lives is looked up once per process: the caller's
 * own groups never change (the capsule never moves a process). */
struct cg_where {
	bool looked;
	int v2_rc, v1_rc;
	bool v1_favordynmods; /* favordynmods is on (some cgroup root has it: v1_paths) */
	char v2base[800], v1mnt[256], v1grp[768];
};
static struct cg_where cg_cache[2];

/* ---- the group pool --------------------------------------------------------
 * A group is made once and reused by later capsules of the same process
 * (a mkdir and an rmdir cost ~0.1 ms each on v1): when a capsule is reaped
 * its group goes back to the pool only if cgroup.procs is empty (every task
 * gone) and, for memory, its usage is small; otherwise it is removed. The
 * limit is rewritten when the next profile wants another one, and the
 * limit-hit counters (which cannot be reset) are read when a group is taken,
 * so a report compares against that baseline.
 *
 * Groups are named world-capsule-<pid>-<start>-<n>-ns<pidns> after the
 * process that made them (pid, its start time in clock ticks since boot
 * from /proc/PID/stat, and the inode of its pid namespace), so that a later
 * process can tell the groups of a dead maker (SIGKILL leaves them) from
 * those of a live one whose pid matches: capsule_cgroups_sweep. A pid means
 * something only in its own pid namespace, and a container in another one
 * may share the directory: such groups are never judged. The pool is
 * removed at exit (atexit) and, once capsule_cleanup_on_signals was
 * called, on SIGINT/SIGTERM/SIGHUP. */
enum { CG_FREE, CG_IDLE, CG_BUSY, CG_RELEASING };
/* The files of a group a capsule reads or writes, each opened at its first
 * use and kept while the capsule holds the group (read again with pread at
 * offset 0: kernfs regenerates the content), so that the counter read when
 * the group is taken and again at the reap, and cgroup.procs written at the
 * attach and read at the reap, each cost one open of a long cgroupfs path,
 * not two. Closed when the group goes back to the pool: the library holds
 * no fd between capsules. */
enum { CGF_PROCS, CGF_EVENTS, CGF_USAGE, CGF_N };
#define CG_POOL 128
#define CG_REUSE_MAX_USAGE (1u << 20) /* memory still charged after a run */
struct cg_slot {
	int state;                /* CG_*, atomic (read by the signal cleanup) */
	pid_t pid;                /* the capsule's init while busy, atomic */
	enum capsule_cg_kind kind;
	uint64_t limit;           /* the limit written last */
	int fd[CGF_N];            /* CGF_*, or -1 (while busy) */
	char dir[256];
};
static struct cg_slot cg_pool[2][CG_POOL];
static pthread_mutex_t cg_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t cg_owner;                  /* the process the pool belongs to (atomic) */
static unsigned long long cg_owner_start;
static unsigned long long cg_owner_pidns; /* its pid namespace's inode (0: unknown) */
static bool cg_swept;

/* Start time of pid (clock ticks since boot, field 22 of /proc/PID/stat),
 * 0 when there is no such process. */
static unsigned long long proc_start_time(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof buf) <= 0) return 0;
	char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p) return 0;
	int field = 2;
	for (char *save = NULL, *t = strtok_r(p + 1, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (++field == 22) return strtoull(t, NULL, 10);
	return 0;
}

static void capsule_cg_drop(struct cg_slot *s);

/* Async-signal-safe (close only). */
static void cg_close_fds(struct cg_slot *s)
{
	for (int k = 0; k < CGF_N; k++) {
		if (s->fd[k] >= 0) close(s->fd[k]);
		s->fd[k] = -1;
	}
}

/* The kept fd `which` of slot s, opening s->dir/name at its first use; -1
 * with errno when it cannot be opened. */
static int cg_fd(struct cg_slot *s, int which, const char *name, int flags)
{
	if (s->fd[which] >= 0) return s->fd[which];
	char path[300];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", s->dir, name) >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return s->fd[which] = open(path, flags | O_CLOEXEC);
}

/* Read a kept file of slot s from its start, like read_small. */
static int cg_read(struct cg_slot *s, int which, const char *name, char *buf, size_t cap)
{
	int fd = cg_fd(s, which, name, O_RDONLY);
	if (fd < 0) return -1;
	ssize_t n = pread(fd, buf, cap - 1, 0);
	if (n < 0) return -1;
	buf[n] = 0;
	return (int)n;
}

static void cg_release_atexit(void) { capsule_cgroups_release(); }

/* Under cg_mu: the pool belongs to this process (a forked copy forgets the
 * parent's groups: they are not its own to reuse or remove). */
static void cg_own_locked(void)
{
	pid_t me = getpid();
	if (__atomic_load_n(&cg_owner, __ATOMIC_ACQUIRE) == me) return;
	static bool registered;
	/* A forked copy closes its copies of the parent's kept fds. */
	if (__atomic_load_n(&cg_owner, __ATOMIC_ACQUIRE) != 0)
		for (int ci = 0; ci < 2; ci++)
			for (int i = 0; i < CG_POOL; i++) cg_close_fds(&cg_pool[ci][i]);
	memset(cg_pool, 0, sizeof cg_pool);
	for (int ci = 0; ci < 2; ci++)
		for (int i = 0; i < CG_POOL; i++)
			for (int k = 0; k < CGF_N; k++) cg_pool[ci][i].fd[k] = -1;
	cg_owner_start = proc_start_time(me);
	struct stat ns;
	cg_owner_pidns = stat("/proc/self/ns/pid", &ns) == 0 ? (unsigned long long)ns.st_ino : 0;
	cg_swept = false;
	__atomic_store_n(&cg_owner, me, __ATOMIC_RELEASE);
	if (!registered && atexit(cg_release_atexit) == 0) registered = true;
}

static struct cg_where *cg_lookup_locked(int ci)
{
	struct cg_where *w = &cg_cache[ci];
	const char *controller = ci == 0 ? "memory" : "pids";
	if (!w->looked) {
		w->v2_rc = v2_path(controller, w->v2base, sizeof w->v2base);
		w->v1_rc = v1_paths(controller, w->v1mnt, sizeof w->v1mnt, w->v1grp, sizeof w->v1grp,
		                    &w->v1_favordynmods);
		w->looked = true;
	}
	return w;
}

int capsule_cgroup_delegate_self(char *note, size_t len)
{
	struct statfs sf;
	if (statfs("/sys/fs/cgroup", &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(note, len, "no cgroup v2 mount at /sys/fs/cgroup: nothing delegated");
		return 1;
	}
	char line[1024], own[768] = "";
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f) {
		snprintf(note, len, "/proc/self/cgroup: %s", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = 0;
			(void)copy_str(own, sizeof own, line + 3);
		}
	fclose(f);
	struct world_err e = { 0, "" };
	char base[800];
	int rc = capsule_cgroup_delegate("/sys/fs/cgroup", own[0] ? own : "/", "daemon", base, sizeof base, &e);
	if (rc == 0) {
		pthread_mutex_lock(&cg_mu);
		snprintf(cg_v2_delegated, sizeof cg_v2_delegated, "%s", base);
		cg_cache[0].looked = cg_cache[1].looked = false;
		pthread_mutex_unlock(&cg_mu);
		snprintf(note, len, "capsule groups go below %s (memory and pids enabled for its children)", base);
	} else {
		snprintf(note, len, "%s", e.msg);
	}
	return rc;
}

static void note_append(struct capsule_handle *h, const char *fmt, const char *a, const char *b)
{
	size_t l = strlen(h->cg_note);
	if (l) snprintf(h->cg_note + l, sizeof h->cg_note - l, "; ");
	l = strlen(h->cg_note);
	snprintf(h->cg_note + l, sizeof h->cg_note - l, fmt, a, b);
}

/* Write the limit of slot s (memory when mem); 0 or -1 with errno. */
static int cg_set_limit(struct cg_slot *s, bool mem, uint64_t v)
{
	char file[300], val[32];
	snprintf(val, sizeof val, "%llu", (unsigned long long)v);
	if (s->kind == CAPSULE_CG_V2) {
		snprintf(file, sizeof file, "%s/%s", s->dir, mem ? "memory.max" : "pids.max");
		return write_file(file, val);
	}
	if (!mem) {
		snprintf(file, sizeof file, "%s/pids.max", s->dir);
		return write_file(file, val);
	}
	/* Where swap accounting exists, memory+swap is bound to the same value;
	 * it may never be below the memory limit, so order the two writes. */
	char memsw[300];
	snprintf(file, sizeof file, "%s/memory.limit_in_bytes", s->dir);
	snprintf(memsw, sizeof memsw, "%s/memory.memsw.limit_in_bytes", s->dir);
	bool has_sw = access(memsw, F_OK) == 0;
	if (has_sw && s->limit && v > s->limit) (void)write_file(memsw, val);
	if (write_file(file, val) < 0) return -1;
	if (has_sw) (void)write_file(memsw, val);
	return 0;
}

/* Make a new group for slot s below the caller's own; 0, or -1 with a note. */
/* s->dir = BASE SUB/world-capsule-<pid>-<start>-<seq>-ns<pidns> (the
 * name the sweep parses); false when it does not fit. */
static bool cg_name(struct cg_slot *s, const char *base, const char *sub, unsigned long seq)
{
	return (size_t)snprintf(s->dir, sizeof s->dir, "%s%s/world-capsule-%d-%llu-%lu-ns%llu", base, sub, (int)cg_owner,
	                        cg_owner_start, seq, cg_owner_pidns) < sizeof s->dir;
}

static int cg_make(struct capsule_handle *h, struct cg_slot *s, const struct cg_where *w, int ci, uint64_t limit)
{
	bool mem = ci == 0;
	const char *controller = mem ? "memory" : "pids";
	unsigned long seq = __atomic_add_fetch(&capsule_seq, 1, __ATOMIC_RELAXED);
	s->limit = 0;
	if (w->v2_rc == 0 && cg_name(s, w->v2base, "", seq) && mkdir(s->dir, 0755) == 0) {
		s->kind = CAPSULE_CG_V2;
		if (cg_set_limit(s, mem, limit) == 0) {
			s->limit = limit;
			return 0;
		}
		note_append(h, "%s v2: %s", controller, strerror(errno));
		rmdir(s->dir);
	}
	if (w->v1_rc < 0) {
		note_append(h, "%s: %s", controller, "no usable cgroup hierarchy");
		return -1;
	}
	if (!cg_name(s, w->v1mnt, w->v1grp, seq)) {
		note_append(h, "%s: %s", controller, "cgroup path too long");
		return -1;
	}
	if (mkdir(s->dir, 0755) < 0) {
		note_append(h, "%s: mkdir: %s", controller, strerror(errno));
		return -1;
	}
	s->kind = CAPSULE_CG_V1;
	if (cg_set_limit(s, mem, limit) < 0) {
		note_append(h, "%s: set limit: %s", controller, strerror(errno));
		rmdir(s->dir);
		return -1;
	}
	s->limit = limit;
	return 0;
}

/* The limit-hit counter of slot s (memory when mem). */
static long cg_event(struct cg_slot *s, bool mem)
{
	char path[400], buf[2048];
	enum capsule_cg_kind k = s->kind;
	const char *file = mem ? (k == CAPSULE_CG_V2 ? "memory.events" : "memory.oom_control") : "pids.events";
	const char *key = mem ? "oom_kill " : "max ";
	if (cg_read(s, CGF_EVENTS, file, buf, sizeof buf) < 0) return 0;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, strlen(key)) == 0) return atol(l + strlen(key));
	if (mem && k == CAPSULE_CG_V1) { /* kernels before oom_kill in oom_control */
		snprintf(path, sizeof path, "%s/memory.failcnt", s->dir);
		if (read_small(path, buf, sizeof buf) > 0) return atol(buf);
	}
	return 0;
}

/* Take a group for one controller (ci: 0 memory, 1 pids) from the pool, or
 * make one. Without one the capsule runs with rlimits only (h->cg_note). */
void cg_take(struct capsule_handle *h, const struct capsule_limits *lim, int ci)
{
	bool mem = ci == 0;
	uint64_t limit = mem ? lim->cg_memory : lim->cg_pids;
	enum capsule_cg_kind *kind = mem ? &h->cg_memory : &h->cg_pids;
	char *dir = mem ? h->cg_memory_dir : h->cg_pids_dir;
	*kind = CAPSULE_CG_NONE;
	dir[0] = 0;
	h->cg_slot[ci] = -1;
	pthread_mutex_lock(&cg_mu);
	cg_own_locked();
	const struct cg_where *w = cg_lookup_locked(ci);
	h->cg_favordynmods = w->v1_favordynmods;
	int idle = -1, free_slot = -1;
	for (int i = 0; i < CG_POOL && idle < 0; i++) {
		int st = __atomic_load_n(&cg_pool[ci][i].state, __ATOMIC_ACQUIRE);
		if (st == CG_IDLE) idle = i;
		else if (st == CG_FREE && free_slot < 0) free_slot = i;
	}
	int i = idle >= 0 ? idle : free_slot;
	if (i >= 0) __atomic_store_n(&cg_pool[ci][i].state, CG_BUSY, __ATOMIC_RELEASE);
	bool swept = cg_swept;
	pthread_mutex_unlock(&cg_mu);
	/* The first capsule of a process removes the groups a killed maker
	 * left (capsule_cgroups_sweep); a group that will not go is harmless. */
	if (!swept) (void)capsule_cgroups_sweep(NULL, NULL);
	if (i < 0) {
		note_append(h, "%s: %s", mem ? "memory" : "pids", "more than 128 capsules alive in this process");
		return;
	}
	struct cg_slot *s = &cg_pool[ci][i];
	if (idle >= 0) {
		if (s->limit != limit) {
			if (cg_set_limit(s, mem, limit) < 0) {
				note_append(h, "%s: set limit: %s", mem ? "memory" : "pids", strerror(errno));
				capsule_cg_drop(s);
				return;
			}
			s->limit = limit;
		}
		/* A v1 group's counter is read by capsule_start right before the
		 * attach (nothing of the capsule is in the group until then), off
		 * the path to the clone; a v2 group has the child from the clone. */
		h->cg_base[ci] = s->kind == CAPSULE_CG_V1 ? -1 : cg_event(s, mem);
	} else {
		if (cg_make(h, s, w, ci, limit) < 0) {
			__atomic_store_n(&s->state, CG_FREE, __ATOMIC_RELEASE);
			return;
		}
		h->cg_base[ci] = 0;
	}
	h->cg_slot[ci] = i;
	*kind = s->kind;
	memcpy(dir, s->dir, sizeof s->dir);
}

/* Remove a busy slot's group (waiting briefly while exiting tasks are
 * released) and free the slot. */
static void capsule_cg_drop(struct cg_slot *s)
{
	cg_close_fds(s);
	for (int i = 0; i < 200; i++) {
		if (rmdir(s->dir) == 0 || errno == ENOENT) break;
		if (errno != EBUSY) break;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	__atomic_store_n(&s->pid, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->state, CG_FREE, __ATOMIC_RELEASE);
}

/* After the capsule is reaped: back to the pool when empty, else removed. */
void cg_put(struct capsule_handle *h, int ci)
{
	char *dir = ci == 0 ? h->cg_memory_dir : h->cg_pids_dir;
	int i = h->cg_slot[ci];
	h->cg_slot[ci] = -1;
	dir[0] = 0;
	if (i < 0) return;
	struct cg_slot *s = &cg_pool[ci][i];
	__atomic_store_n(&s->pid, 0, __ATOMIC_RELEASE);
	char buf[64];
	bool empty = false;
	/* The pid namespace is gone when init is reaped; a v1 group may list a
	 * task for a moment while it is released. */
	for (int k = 0; k < 1000; k++) { /* at most ~100 ms, in 100 us steps */
		int n = cg_read(s, CGF_PROCS, "cgroup.procs", buf, sizeof buf);
		if (n < 0) break;
		if (n == 0) {
			empty = true;
			break;
		}
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	if (empty && ci == 0) {
		const char *usage = s->kind == CAPSULE_CG_V2 ? "memory.current" : "memory.usage_in_bytes";
		empty = cg_read(s, CGF_USAGE, usage, buf, sizeof buf) > 0 && strtoull(buf, NULL, 10) <= CG_REUSE_MAX_USAGE;
		/* The capsule's tmpfs files stay charged here until its mount
		 * namespace is gone (mntns_release hands that to the closer): a
		 * group that looks full is judged again once the namespace is. */
		if (!empty && h->mntns_req >= 0) {
			mntns_wait(h);
			empty = cg_read(s, CGF_USAGE, usage, buf, sizeof buf) > 0 &&
			        strtoull(buf, NULL, 10) <= CG_REUSE_MAX_USAGE;
		}
	}
	cg_close_fds(s);
	if (empty && __atomic_load_n(&cg_owner, __ATOMIC_ACQUIRE) == getpid())
		__atomic_store_n(&s->state, CG_IDLE, __ATOMIC_RELEASE);
	else
		capsule_cg_drop(s);
}

void cg_publish(struct capsule_handle *h)
{
	for (int ci = 0; ci < 2; ci++)
		if (h->cg_slot[ci] >= 0) __atomic_store_n(&cg_pool[ci][h->cg_slot[ci]].pid, h->pid, __ATOMIC_RELEASE);
}

/* Read-write: cg_put reads the same fd. */
int cg_attach(struct capsule_handle *h, int ci)
{
	struct cg_slot *s = &cg_pool[ci][h->cg_slot[ci]];
	char val[32];
	int fd = cg_fd(s, CGF_PROCS, "cgroup.procs", O_RDWR);
	if (fd < 0) return -1;
	int len = snprintf(val, sizeof val, "%d", (int)h->pid);
	ssize_t w = write(fd, val, (size_t)len);
	if (w != len) {
		if (w >= 0) errno = EIO;
		return -1;
	}
	return 0;
}

long cg_hits(struct capsule_handle *h, int ci)
{
	return cg_event(&cg_pool[ci][h->cg_slot[ci]], ci == 0);
}

int capsule_prepare(const struct capsule_profile *p)
{
	struct capsule_handle h;
	handle_init(&h);
	int made = 0;
	for (int ci = 0; ci < 2; ci++) {
		cg_take(&h, &p->limits, ci);
		int i = h.cg_slot[ci];
		if (i < 0) continue;
		/* new or just taken idle, and never attached to: idle again */
		cg_close_fds(&cg_pool[ci][i]);
		__atomic_store_n(&cg_pool[ci][i].state, CG_IDLE, __ATOMIC_RELEASE);
		made++;
	}
	return made;
}

int capsule_cgroup_probe(const struct capsule_profile *p, char *why, size_t len)
{
	struct capsule_handle h;
	handle_init(&h);
	int missing = 0;
	for (int ci = 0; ci < 2; ci++) {
		cg_take(&h, &p->limits, ci);
		int i = h.cg_slot[ci];
		if (i < 0) {
			missing |= 1 << ci;
			continue;
		}
		/* made or taken idle, never attached to: idle again (as capsule_prepare) */
		cg_close_fds(&cg_pool[ci][i]);
		__atomic_store_n(&cg_pool[ci][i].state, CG_IDLE, __ATOMIC_RELEASE);
	}
	if (why && len) snprintf(why, len, "%s", h.cg_note);
	return missing;
}

/* Kill every live capsule of the pool and remove every group, within about
 * two seconds. Async-signal-safe: atomics, kill, rmdir and nanosleep only. */
static void cg_release_all(void)
{
	if ((pid_t)syscall(SYS_getpid) != __atomic_load_n(&cg_owner, __ATOMIC_ACQUIRE)) return;
	for (int ci = 0; ci < 2; ci++)
		for (int i = 0; i < CG_POOL; i++) {
			pid_t pid = __atomic_load_n(&cg_pool[ci][i].pid, __ATOMIC_ACQUIRE);
			if (pid > 0 && __atomic_load_n(&cg_pool[ci][i].state, __ATOMIC_ACQUIRE) == CG_BUSY)
				kill(pid, SIGKILL);
		}
	for (int round = 0; round < 2000; round++) {
		int left = 0;
		for (int ci = 0; ci < 2; ci++)
			for (int i = 0; i < CG_POOL; i++) {
				struct cg_slot *s = &cg_pool[ci][i];
				int st = CG_IDLE;
				/* An idle group is ours to remove; a busy one is removed but
				 * stays busy: its capsule_finish frees the slot. */
				if (__atomic_compare_exchange_n(&s->state, &st, CG_RELEASING, false, __ATOMIC_ACQ_REL,
				                                __ATOMIC_ACQUIRE)) {
					cg_close_fds(s);
					if (rmdir(s->dir) == 0 || errno != EBUSY) {
						__atomic_store_n(&s->state, CG_FREE, __ATOMIC_RELEASE);
					} else {
						__atomic_store_n(&s->state, CG_IDLE, __ATOMIC_RELEASE);
						left++;
					}
				} else if (st == CG_BUSY && s->dir[0]) {
					if (rmdir(s->dir) < 0 && errno == EBUSY) left++;
				}
			}
		if (!left) break;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

/* ---- keeping the v1 attach fast -------------------------------------------
 * A write to a v1 cgroup.procs takes the kernel's cgroup_threadgroup_rwsem
 * for writing; when no writer came for a while, that first waits for an
 * RCU grace period (rcu_sync leaving its fast path): milliseconds, against
 * microseconds back to back. The keeper thread writes this process's own
 * pid into the group it already is in (a move to where it is: nothing
 * changes place) every 5 ms, so the rwsem stays on its slow path and a
 * capsule's attach does not wait. For a long-lived process (the daemon):
 * in a short-lived one (a `worldd run`) the keeper's own first write pays
 * the grace period and delays the exit, so the CLI does not start it. Not
 * needed where the host has favordynmods on (v1_paths: the kernel then
 * takes a per-process lock and never waits, so a sparse CLI run is as fast
 * as a back-to-back one) or on v2 (CLONE_INTO_CGROUP places the child at
 * clone). The cost: 200 tiny writes a second, and forks on the host take
 * the rwsem's slower read path while it runs (as with favordynmods). */
static pthread_mutex_t keep_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned keep_users;
static bool keep_stop, keep_running;
static pthread_t keep_thread;
static char keep_file[1100];
static int keep_fd = -1; /* held while the keeper runs: no fd comes and goes */

static void *keeper(void *arg)
{
	(void)arg;
	/* A filesystem context of its own, so that the thread that starts
	 * capsules still shares its own with nobody (capsule_mount_template). */
	(void)capsule_thread_private_fs();
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	for (;;) {
		pthread_mutex_lock(&keep_mu);
		bool stop = keep_stop;
		pthread_mutex_unlock(&keep_mu);
		if (stop) break;
		if (write(keep_fd, pid, strlen(pid)) < 0) break; /* refused: nothing to keep */
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

bool capsule_cgroup_favordynmods(void)
{
	pthread_mutex_lock(&cg_mu);
	bool on = cg_lookup_locked(0)->v1_favordynmods;
	pthread_mutex_unlock(&cg_mu);
	return on;
}

/* For `profile show` and `worldd audit`: what cg_make would find for this
 * process now (it makes nothing). A group is made where the directory is
 * writable by this process's euid; else the capsule has rlimits only. */
void capsule_host_facts_read(struct capsule_host_facts *f)
{
	memset(f, 0, sizeof *f);
	f->landlock_abi = capsule_landlock_abi();
	pthread_mutex_lock(&cg_mu);
	struct cg_where w[2] = { *cg_lookup_locked(0), *cg_lookup_locked(1) };
	pthread_mutex_unlock(&cg_mu);
	for (int ci = 0; ci < 2; ci++) {
		const char *ctl = ci == 0 ? "memory" : "pids";
		char v1[1030];
		snprintf(v1, sizeof v1, "%s%s", w[ci].v1mnt, w[ci].v1grp);
		if (w[ci].v2_rc == 0 && access(w[ci].v2base, W_OK) == 0) {
			f->cgroup_ok[ci] = 1;
			snprintf(f->cgroup[ci], sizeof f->cgroup[ci], "v2, a group below %s", w[ci].v2base);
		} else if (w[ci].v1_rc == 0 && access(v1, W_OK) == 0) {
			f->cgroup_ok[ci] = 1;
			snprintf(f->cgroup[ci], sizeof f->cgroup[ci], "v1, a group below %s", v1);
		} else if (w[ci].v2_rc == 0 || w[ci].v1_rc == 0) {
			snprintf(f->cgroup[ci], sizeof f->cgroup[ci], "none: %s is not writable by uid %u (%s); rlimits remain",
			         w[ci].v2_rc == 0 ? w[ci].v2base : v1, (unsigned)geteuid(), strerror(errno));
		} else {
			snprintf(f->cgroup[ci], sizeof f->cgroup[ci],
			         "none: no v2 hierarchy delegates %s to this process's group and no v1 hierarchy has it; "
			         "rlimits remain", ctl);
		}
	}
}

int capsule_cgroup_keepwarm(bool on)
{
	pthread_mutex_lock(&keep_mu);
	int rc = 0;
	if (on) {
		if (keep_users++ == 0 && !keep_running) {
			pthread_mutex_lock(&cg_mu);
			cg_own_locked();
			const struct cg_where *w = cg_lookup_locked(1);
			if (w->v1_rc != 0) w = cg_lookup_locked(0);
			bool v1 = w->v1_rc == 0 && !w->v1_favordynmods;
			if (v1) snprintf(keep_file, sizeof keep_file, "%s%s/cgroup.procs", w->v1mnt, w->v1grp);
			pthread_mutex_unlock(&cg_mu);
			sigset_t all, old;
			sigfillset(&all);
			/* the thread takes no signal (the caller's handlers stay the caller's) */
			pthread_sigmask(SIG_BLOCK, &all, &old);
			if (v1 && (keep_fd = open(keep_file, O_WRONLY | O_CLOEXEC)) >= 0) {
				keep_stop = false;
				keep_running = pthread_create(&keep_thread, NULL, keeper, NULL) == 0;
				if (!keep_running) close_fd(&keep_fd);
				rc = keep_running ? 1 : 0;
			}
			pthread_sigmask(SIG_SETMASK, &old, NULL);
		} else {
			rc = keep_running ? 1 : 0;
		}
	} else if (keep_users > 0 && --keep_users == 0 && keep_running) {
		keep_stop = true;
		pthread_mutex_unlock(&keep_mu);
		pthread_join(keep_thread, NULL);
		pthread_mutex_lock(&keep_mu);
		keep_running = false;
		close_fd(&keep_fd);
	}
	pthread_mutex_unlock(&keep_mu);
	return rc;
}

void capsule_cgroups_release(void)
{
	cg_release_all();
}

/* ---- the cleanup at a fatal signal, and the sweep ------------------------ */

/* Set by capsule_exit_on_interrupt: the one line's prefix ("worldd run"). */
static char interrupt_who[64];

static void on_fatal_signal(int sig)
{
	int saved = errno;
	cg_release_all();
	if (interrupt_who[0]) {
		/* write(2) of a line built by hand: snprintf is not async-signal-safe. */
		const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
		const char *parts[] = { interrupt_who, ": interrupted by ", name,
			                ": its capsules were killed and their cgroups removed\n" };
		char line[256];
		size_t n = 0;
		for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
			for (const char *c = parts[i]; *c && n < sizeof line - 1; c++) line[n++] = *c;
		ssize_t w = write(STDERR_FILENO, line, n);
		(void)w; /* nobody to tell if stderr is gone */
		_exit(128 + sig);
	}
	/* Then die of the signal, as without this handler (SA_RESETHAND put
	 * the default action back). */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
	errno = saved;
}

void capsule_exit_on_interrupt(const char *who)
{
	snprintf(interrupt_who, sizeof interrupt_who, "%s", who ? who : "");
}

int capsule_cleanup_on_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	int installed = 0;
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old, sa;
		if (sigaction(sigs[i], NULL, &old) < 0) return -1;
		/* A handler of the caller's own, or an ignored signal, stays. */
		if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_fatal_signal;
		/* The other fatal signals wait; the same one again (a second
		 * Ctrl-C during the cleanup) kills at once: reset on entry, not
		 * deferred. */
		sigfillset(&sa.sa_mask);
		sigdelset(&sa.sa_mask, sigs[i]);
		sa.sa_flags = SA_RESETHAND | SA_NODEFER;
		if (sigaction(sigs[i], &sa, NULL) < 0) return -1;
		installed++;
	}
	return installed;
}

/* Remove the stale groups in one directory: world-capsule-<pid>-<start>-
 * <n>-ns<pidns> of this pid namespace whose maker (pid with that start
 * time) is gone, killing what is left in them; groups of another pid
 * namespace are not touched (their pids are not ours to look up, and the
 * processes in them may be another container's live capsules). Names
 * without a namespace, world-capsule-<pid>-<start>-<n> and
 * world-capsule-<pid>-<n> (made by older builds), cannot be judged that
 * way: one whose pid looks gone is removed only if it is empty already
 * (rmdir refuses a busy group); nothing in it is killed. */
static void sweep_dir(const char *base, unsigned *removed, struct world_err *err)
{
	DIR *d = opendir(base);
	if (!d) return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "world-capsule-", 14) != 0) continue;
		int pid = 0, used = 0;
		unsigned long long start = 0, pidns = 0;
		unsigned long seq = 0;
		const char *rest = e->d_name + 14;
		bool alive, this_ns = false;
		if (sscanf(rest, "%d-%llu-%lu-ns%llu%n", &pid, &start, &seq, &pidns, &used) == 4 && rest[used] == 0 &&
		    pid > 0) {
			if (cg_owner_pidns == 0 || pidns != cg_owner_pidns) continue; /* another pid namespace's */
			if (pid == (int)cg_owner && start == cg_owner_start) continue; /* ours */
			this_ns = true;
			alive = proc_start_time(pid) == start;
		} else if (sscanf(rest, "%d-%llu-%lu%n", &pid, &start, &seq, &used) == 3 && rest[used] == 0 && pid > 0) {
			alive = proc_start_time(pid) == start;
		} else if (sscanf(rest, "%d-%lu%n", &pid, &seq, &used) == 2 && rest[used] == 0 && pid > 0) {
			alive = kill(pid, 0) == 0 || errno == EPERM;
		} else {
			continue;
		}
		if (alive) continue;
		char path[1100];
		if ((size_t)snprintf(path, sizeof path, "%s/%s", base, e->d_name) >= sizeof path) continue;
		if (!this_ns) {
			/* No namespace in the name: remove it only if empty. */
			if (rmdir(path) == 0) (*removed)++;
			continue;
		}
		/* Its capsules die with their maker (PR_SET_PDEATHSIG) but may
		 * still be exiting: kill whatever is left in the group (orphans of
		 * a dead maker of this pid namespace) and wait up to half a second
		 * for it to empty. */
		int rc = -1;
		for (int k = 0; k < 100; k++) {
			if ((rc = rmdir(path)) == 0 || errno != EBUSY) break;
			char procs[1200], list[4096];
			snprintf(procs, sizeof procs, "%s/cgroup.procs", path);
			if (read_small(procs, list, sizeof list) > 0)
				for (char *q = list; *q;) {
					long tp = strtol(q, &q, 10);
					if (tp > 0) kill((pid_t)tp, SIGKILL);
					while (*q == '\n') q++;
					if (tp <= 0) break;
				}
			struct timespec ts = { 0, 5000000 };
			nanosleep(&ts, NULL);
		}
		if (rc == 0) (*removed)++;
		else if (errno != ENOENT && err && !err->code)
			werr(err, WX_IO, "capsule: stale cgroup %s: rmdir: %s", path, strerror(errno));
	}
	closedir(d);
}

int capsule_cgroups_sweep(unsigned *removed, struct world_err *err)
{
	unsigned n = 0;
	struct world_err local = { 0, "" };
	pthread_mutex_lock(&cg_mu);
	cg_own_locked();
	for (int ci = 0; ci < 2; ci++) {
		const struct cg_where *w = cg_lookup_locked(ci);
		if (w->v2_rc == 0) sweep_dir(w->v2base, &n, &local);
		if (w->v1_rc == 0) {
			char base[1100];
			snprintf(base, sizeof base, "%s%s", w->v1mnt, w->v1grp);
			sweep_dir(base, &n, &local);
		}
	}
	cg_swept = true;
	pthread_mutex_unlock(&cg_mu);
	if (removed) *removed = n;
	if (local.code) {
		if (err) *err = local;
		return -1;
	}
	return 0;
}
