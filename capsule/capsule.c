/* capsule/capsule.c: the pin, the setup sequence, the denial listener and
 * reaping (see capsule.h). The child side uses only memory prepared before
 * the clone and reports any failure as one line on the setup pipe. */
#include "capsule/capsule.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <dirent.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>
#include <linux/securebits.h>
#include <linux/openat2.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef SECCOMP_GET_NOTIF_SIZES
#define SECCOMP_GET_NOTIF_SIZES 3
#endif
#ifndef PIDFD_GET_MNT_NAMESPACE
#define PIDFD_GET_MNT_NAMESPACE _IO(0xFF, 3) /* linux/pidfd.h, 6.11 */
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#include "capsule/capsule_int.h"
#include "capsule/exec_capsule.h"

#define SETUP_EXIT 125        /* exit status of a capsule whose setup failed */
#define GO_FD 11              /* parent -> child sync pipe inside the child */
#define ERR_FD CAPSULE_SETUP_FD /* child -> parent setup channel inside the child */
#define SETUP_TIMEOUT_MS 10000

/* ---- small helpers -------------------------------------------------------- */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) return -1;
	size_t len = strlen(text);
	ssize_t w = write(fd, text, len);
	int e = errno;
	if (close(fd) < 0 && w >= 0) return -1;
	if (w != (ssize_t)len) {
		errno = w < 0 ? e : EIO;
		return -1;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Copy src into dst (cap bytes); -1 when it does not fit. */
static int copy_str(char *dst, size_t cap, const char *src)
{
	size_t l = strlen(src);
	if (l >= cap) return -1;
	memcpy(dst, src, l + 1);
	return 0;
}

static int read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return -1;
	ssize_t n = read(fd, buf, cap - 1);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	buf[n] = 0;
	return (int)n;
}

/* ---- cgroups (parent side) ------------------------------------------------ */

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
static void cg_take(struct capsule_handle *h, const struct capsule_limits *lim, int ci)
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

static void mntns_wait(struct capsule_handle *h);

/* After the capsule is reaped: back to the pool when empty, else removed. */
static void cg_put(struct capsule_handle *h, int ci)
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
		 * group that looks full is judged again once it is, as before. */
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

static void handle_init(struct capsule_handle *h);

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
 * RCU grace period (rcu_sync leaving its fast path): a median ~9 ms here,
 * up to 30, against 10 us back to back. The keeper thread writes this
 * process's own pid into the group it already is in (a move to where it
 * is: nothing changes place) every 5 ms, so the rwsem stays on its slow
 * path and a capsule's attach does not wait. For a long-lived process (the
 * daemon): in a short-lived one (a `worldd run`) the keeper's own first
 * write pays the grace period and delays the exit (measured: a whole run
 * 13 ms instead of 7.6), so the CLI does not start it. Not needed where
 * the host has favordynmods on (v1_paths: the kernel then takes a
 * per-process lock and never waits; this is what makes a sparse CLI run as
 * fast as a back-to-back one) or on v2 (CLONE_INTO_CGROUP places the child
 * at clone). The cost: 200 tiny writes
 * a second, and forks on the host take the rwsem's slower read path while
 * it runs (as with favordynmods). */
static void close_fd(int *fd);
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
 * processes in them may be another container's live capsules). The names
 * of earlier versions carry no namespace, world-capsule-<pid>-<start>-<n>
 * and world-capsule-<pid>-<n>: one whose pid looks gone is removed only if
 * it is empty already (rmdir refuses a busy group); nothing in it is
 * killed. */
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

/* ---- the child ---------------------------------------------------------- */

struct child_plan {
	const struct capsule_spec *spec;
	const struct capsule_profile *p;
	struct sock_fprog prog;
	int ll_abi;
	bool root_mode;
	const char *mnt;        /* where the new root is mounted before pivot_root (or the move, in the template) */
	bool in_template;       /* cloned from the template mount namespace: move + chroot, nothing to detach */
	int go_fd, err_fd;      /* as inherited, before renumbering */
	int go_peer, ep_peer;   /* the parent's ends, closed first thing in the child */
	char opts_root[64], opts_cache[64];
	const char *argv[64];
	struct capsule_ctx ctx;
	int kept[CAPSULE_MAX_KEEP_FDS];
	uint64_t ts[6];
	/* The worktree (spec->worktree): its canonical path as the caller's fd
	 * names it, and the identity the child must find there. */
	bool has_worktree;
	int wt_tree;            /* as root: the caller's detached clone of the worktree, or -1 */
	char worktree[PATH_MAX];
	dev_t wt_dev;
	ino_t wt_ino;
	uid_t wt_uid;           /* the worktree's owner, mapped to the capsule user (as root) */
	gid_t wt_gid;
	struct exec_plan *ex;   /* an exec capsule's plan (exec_capsule.h), or NULL */
	bool ex_script;         /* its command is a #! script: fd 10 crosses the exec */
	struct capsule_limits lim; /* the limits applied (the spec's, else the profile's) */
};

/* Report "capsule setup: STEP: strerror" on the setup pipe and exit. */
static void __attribute__((noreturn)) child_fail(int fd, const char *step, int e)
{
	char msg[400];
	/* strerrordesc_np: no locale lookup (no lock another thread may hold) */
	const char *desc = strerrordesc_np(e);
	int n = snprintf(msg, sizeof msg, "Ecapsule setup: %s: %s", step, desc ? desc : "unknown error");
	if (n > 0) {
		ssize_t w = write(fd, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1));
		(void)w;
	}
	_exit(SETUP_EXIT);
}

#define CHECK(cond, step) do { if (!(cond)) child_fail(errfd, (step), errno); } while (0)

static bool is_writable(const struct capsule_profile *p, const char *name)
{
	for (const char *const *w = p->writable; w && *w; w++)
		if (strcmp(*w, name) == 0) return true;
	return false;
}

/* The spec stages an entry of exactly this name (a file, or "dir/"). */
static bool is_staged(const struct capsule_spec *s, const char *name)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (strcmp(s->files[i].name, name) == 0) return true;
	return false;
}

static int stage_file(const struct capsule_file *f, bool writable)
{
	char path[PATH_MAX];
	size_t l = strlen(f->name);
	if (l == 0 || l >= sizeof path || f->name[0] == '/' || strstr(f->name, "..")) {
		errno = EINVAL;
		return -1;
	}
	memcpy(path, f->name, l + 1);
	/* make the parent directories */
	for (char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		if (mkdir(path, 0755) < 0 && errno != EEXIST) return -1;
		*s = '/';
	}
	if (path[l - 1] == '/') return 0; /* a directory: made above */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, writable ? 0600 : 0444);
	if (fd < 0) return -1;
	const char *d = f->data;
	for (size_t off = 0; off < f->len;) {
		ssize_t w = write(fd, d + off, f->len - off);
		if (w < 0 && errno == EINTR) continue;
		if (w < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		off += (size_t)w;
	}
	return close(fd);
}

static int landlock_apply(const struct child_plan *c)
{
	const struct capsule_profile *p = c->p;
	uint64_t fs = capsule_landlock_fs_rights(c->ll_abi);
	struct world_ll_ruleset_attr attr = { .handled_access_fs = fs };
	size_t size = 8;
	if (c->ll_abi >= 4) {
		attr.handled_access_net = CAPSULE_LL_NET_BIND_TCP | CAPSULE_LL_NET_CONNECT_TCP;
		size = 16;
	}
	if (c->ll_abi >= 6) {
		attr.scoped = CAPSULE_LL_SCOPE_ABSTRACT_UNIX | CAPSULE_LL_SCOPE_SIGNAL;
		size = 24;
	}
	int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0) return -1;
	/* The rules of the profile's table (capsule_landlock_rules, which
	 * `profile show` prints). What each path is, known from the setup (no
	 * fstat): the root, the cache and the worktree are directories (made
	 * here, or opened O_DIRECTORY); a device is bound onto a file made for
	 * it (a bind of a directory onto a file fails); a writable file was
	 * opened O_WRONLY (which a directory refuses). */
	struct capsule_ll_rule rules[CAPSULE_LL_MAX_RULES];
	size_t n = capsule_landlock_rules(p, c->has_worktree, rules);
	for (size_t i = 0; i < n; i++) {
		int fd = open(rules[i].path, O_PATH | O_CLOEXEC);
		if (fd < 0) {
			close(rs);
			return -1;
		}
		struct world_ll_path_beneath_attr pb = { .allowed_access = capsule_landlock_rule_rights(&rules[i], c->ll_abi),
		                                         .parent_fd = fd };
		long rc = syscall(__NR_landlock_add_rule, rs, WORLD_LL_RULE_PATH_BENEATH, &pb, 0);
		int e = errno;
		close(fd);
		if (rc < 0) {
			close(rs);
			errno = e;
			return -1;
		}
	}
	long rc = syscall(__NR_landlock_restrict_self, rs, 0);
	int e = errno;
	close(rs);
	errno = e;
	return rc < 0 ? -1 : 0;
}

/* The worktree, in the child, unprivileged (as root the caller already
 * cloned it: open_worktree), before anything is mounted over the old
 * root's paths (the new root goes on /tmp). The caller's O_PATH fd names a mount of the
 * caller's namespace, which the kernel will not bind into this one
 * (open_tree and bind mounts require a mount of the caller's own
 * namespace), so the directory is resolved again here, from its canonical
 * path, refusing every symlink and magic link on the way, and must be the
 * directory the caller opened (same device and inode; the caller holds its
 * fd until setup is done, so the inode cannot be reused meanwhile). The
 * mount is a detached, non-recursive clone of that fd, made read-only,
 * nosuid, nodev and noexec before it is attached at worktree_mount. */
static int open_worktree_tree(const struct child_plan *c)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, c->worktree, &how, sizeof how);
	if (fd < 0) return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_dev != c->wt_dev || st.st_ino != c->wt_ino) {
		close(fd);
		errno = ESTALE; /* another directory is there now */
		return -1;
	}
	int tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	int e = errno;
	close(fd);
	errno = e;
	return tree;
}

/* Attach the detached clone at worktree_mount (relative to the new root,
 * the cwd), read-only, nosuid, nodev, noexec. Consumes tree. */
static int mount_worktree(const struct child_plan *c, int tree)
{
	const char *at = c->p->worktree_mount + 1;
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	                                       MOUNT_ATTR_NOEXEC };
	if (mkdir(at, 0755) < 0 || syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0 ||
	    syscall(SYS_move_mount, tree, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		int e = errno;
		close(tree);
		errno = e;
		return -1;
	}
	return close(tree);
}

static int dup_high(int fd)
{
	return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 100);
}

static void __attribute__((noreturn)) child_run(struct child_plan *c)
{
	int errfd = c->err_fd;
	const struct capsule_spec *s = c->spec;
	const struct capsule_profile *p = c->p;
	char go;

	/* A clean process state, whatever the caller had: default signal
	 * dispositions (ignored signals would survive the exec), an empty
	 * signal mask, umask 022. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	CHECK(sigprocmask(SIG_SETMASK, &none, NULL) == 0, "reset the signal mask");
	umask(022);
	/* A session (and process group) of its own, without a controlling
	 * terminal: a terminal's ^C, ^\ or hangup goes to the caller's
	 * foreground group only, never to the untrusted interpreter (the caller
	 * decides, and kills the capsule: capsule_exit_on_interrupt), and the
	 * capsule can never read from or write to the caller's terminal by
	 * reopening it. */
	CHECK(setsid() >= 0, "setsid");

	/* 0. die with the caller: the parent's ends of both channels go at
	 * once (so a parent that dies before 'G' gives EOF, not a wait
	 * forever), and the death signal is set now (the id change in step 1
	 * clears it; it is set again there). */
	close(c->go_peer);
	close(c->ep_peer);
	CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0, "prctl PR_SET_PDEATHSIG");

	/* 0. wait until the parent has written the id maps */
	CHECK(read(c->go_fd, &go, 1) == 1 && go == 'G', "wait for the parent");

	/* 1. the capsule user (inside id 1000, mapped by the parent). Raw
	 * syscalls: glibc's wrappers broadcast the change to every thread it
	 * believes exists ("setxid"), and a raw clone of a threaded caller
	 * inherits that list and can wait forever for a thread that is not
	 * here. This child has exactly one thread. */
	if (c->root_mode) CHECK(syscall(SYS_setgroups, 0, NULL) == 0, "setgroups");
	CHECK(syscall(SYS_setresgid, CAPSULE_INSIDE_ID, CAPSULE_INSIDE_ID, CAPSULE_INSIDE_ID) == 0, "setresgid");
	CHECK(syscall(SYS_setresuid, CAPSULE_INSIDE_ID, CAPSULE_INSIDE_ID, CAPSULE_INSIDE_ID) == 0, "setresuid");
	CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0, "prctl PR_SET_PDEATHSIG");
	/* The cgroup namespace is rooted at the caller's group, above the
	 * capsule's own (the parent attaches us meanwhile; see 'C' below). */
	if (p->namespaces & CLONE_NEWCGROUP) CHECK(unshare(CLONE_NEWCGROUP) == 0, "unshare cgroup namespace");
	c->ts[0] = now_ns();
	/* 2. mounts: private; tmpfs root with the staged files; pivot_root (or,
	 * from the template mount namespace, a move over its root) */
	if (!c->in_template) /* the template's one mount is private already */
		CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "make mounts private");
	if (c->ex) {
		/* The exec capsule's root: host system directories, read roots,
		 * worktree, cache, /tmp, /dev, /proc (exec_capsule.c), then the
		 * same pivot_root and read-only root as below. */
		const char *step = "exec root";
		if (exec_plan_mount(c->ex, c->mnt, c->opts_root, &step) < 0) child_fail(errfd, step, errno);
		CHECK(syscall(SYS_pivot_root, ".", ".") == 0, "pivot_root");
		CHECK(umount2(".", MNT_DETACH) == 0, "detach old root");
		CHECK(chdir("/") == 0, "chdir /");
		CHECK(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		            NULL) == 0, "remount root read-only");
		CHECK(exec_plan_loopback() == 0, "bring up loopback");
		goto mounted;
	}
	int wt_tree = c->wt_tree;
	if (c->has_worktree && wt_tree < 0) CHECK((wt_tree = open_worktree_tree(c)) >= 0, "open worktree");
	CHECK(mount("capsule", c->mnt, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, c->opts_root) == 0,
	      "mount tmpfs root");
	CHECK(chdir(c->mnt) == 0, "chdir new root");
	for (size_t i = 0; i < s->nfiles; i++)
		CHECK(stage_file(&s->files[i], is_writable(p, s->files[i].name)) == 0, "stage file");
	/* The profile's writable files: each its own rw mount of the file onto
	 * itself, so the read-only remount of the root below spares it (mount
	 * flags are per mount) and it can be rewritten in place but never
	 * renamed, unlinked or joined by a new file. Created empty if not staged. */
	for (const char *const *w = p->writable; w && *w; w++) {
		if (!is_staged(s, *w)) { /* staged: stage_file made it, O_EXCL */
			int fd = open(*w, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
			CHECK(fd >= 0 && close(fd) == 0, "create writable file");
		}
		CHECK(mount(*w, *w, NULL, MS_BIND, NULL) == 0, "bind writable file");
		CHECK(mount(NULL, *w, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0,
		      "remount writable file nosuid,nodev,noexec");
	}
	if (!is_staged(s, ".capsule-cache/"))
		CHECK(mkdir(".capsule-cache", 0700) == 0 || errno == EEXIST, "mkdir .capsule-cache");
	CHECK(mount("capsule-cache", ".capsule-cache", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	            c->opts_cache) == 0, "mount tmpfs .capsule-cache");
	if (c->has_worktree) CHECK(mount_worktree(c, wt_tree) == 0, "mount worktree");
	for (const char *const *d = p->devices; d && *d; d++) {
		const char *rel = *d + 1;
		CHECK(mkdir("dev", 0755) == 0 || errno == EEXIST, "mkdir dev");
		int fd = open(rel, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
		CHECK(fd >= 0 && close(fd) == 0, "create device mount point");
		CHECK(mount(*d, rel, NULL, MS_BIND, NULL) == 0, "bind device");
		CHECK(mount(NULL, rel, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NOEXEC, NULL) == 0,
		      "remount device nosuid,noexec");
	}
	if (c->in_template) {
		/* The namespace holds only the template's empty read-only root:
		 * the new root goes over it and becomes this process's root. No
		 * host mount was ever here, so nothing is detached (and no RCU
		 * grace period waited for). */
		CHECK(mount(".", "/", NULL, MS_MOVE, NULL) == 0, "move the new root over the template's");
		CHECK(chroot(".") == 0, "chroot new root");
	} else {
		CHECK(syscall(SYS_pivot_root, ".", ".") == 0, "pivot_root");
		CHECK(umount2(".", MNT_DETACH) == 0, "detach old root");
	}
	CHECK(chdir("/") == 0, "chdir /");
	CHECK(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
	            NULL) == 0, "remount root read-only");
mounted:
	if (p->namespaces & CLONE_NEWUTS)
		CHECK(sethostname(p->hostname, strlen(p->hostname)) == 0, "sethostname");

	c->ts[1] = now_ns();
	/* 4 (fds first: renumbering needs room above RLIMIT_NOFILE). Every fd
	 * but 0-2, the kept fds (3..), the pinned interpreter (10) and the two
	 * setup pipes (11, 12; close-on-exec) is closed. */
	int t_in = dup_high(s->stdin_fd), t_out = dup_high(s->stdout_fd), t_err = dup_high(s->stderr_fd);
	int t_keep[CAPSULE_MAX_KEEP_FDS];
	for (size_t i = 0; i < s->nkeep; i++) CHECK((t_keep[i] = dup_high(s->keep_fds[i])) >= 0, "dup kept fd");
	int t_interp = dup_high(s->interp_fd), t_go = dup_high(c->go_fd), t_errp = dup_high(errfd);
	CHECK(t_interp >= 0 && t_go >= 0 && t_errp >= 0 && (s->stdin_fd < 0 || t_in >= 0) &&
	      (s->stdout_fd < 0 || t_out >= 0) && (s->stderr_fd < 0 || t_err >= 0), "dup fds");
	CHECK(dup3(t_errp, ERR_FD, O_CLOEXEC) == ERR_FD, "dup setup pipe");
	errfd = ERR_FD;
	CHECK(dup3(t_go, GO_FD, O_CLOEXEC) == GO_FD, "dup sync pipe");
	/* A #! command is run by its interpreter from /dev/fd/10: that fd
	 * crosses the exec (and only then). */
	CHECK(dup3(t_interp, CAPSULE_INTERP_FD, c->ex_script ? 0 : O_CLOEXEC) == CAPSULE_INTERP_FD,
	      "dup interpreter fd");
	int stdio_t[3] = { t_in, t_out, t_err };
	for (int i = 0; i < 3; i++) {
		if (stdio_t[i] >= 0) CHECK(dup2(stdio_t[i], i) == i, "dup stdio");
		else if (close(i) < 0 && errno != EBADF) child_fail(errfd, "close stdio", errno);
	}
	for (size_t i = 0; i < s->nkeep; i++) {
		CHECK(dup2(t_keep[i], 3 + (int)i) == 3 + (int)i, "renumber kept fd");
		c->kept[i] = 3 + (int)i;
	}
	CHECK(syscall(SYS_close_range, 3 + (unsigned)s->nkeep, CAPSULE_INTERP_FD - 1, 0) == 0, "close_range");
	CHECK(syscall(SYS_close_range, ERR_FD + 1, ~0U, 0) == 0, "close_range");

	/* 3. rlimits: the profile's table (capsule_profile_rlimits, which
	 * `profile show` prints), RLIMIT_NOFILE after the listener's handover,
	 * below */
	struct capsule_rlimit rl[CAPSULE_NRLIMITS];
	struct capsule_profile with_lim = *p; /* this child's copy: the limits applied */
	with_lim.limits = c->lim;
	size_t nrl = capsule_profile_rlimits(&with_lim, rl);
	for (size_t i = 0; i < nrl; i++) {
		if (rl[i].resource == RLIMIT_NOFILE) continue;
		struct rlimit r = { rl[i].soft, rl[i].hard };
		char step[40];
		snprintf(step, sizeof step, "setrlimit %s", rl[i].name);
		CHECK(setrlimit(rl[i].resource, &r) == 0, step);
	}

	c->ts[2] = now_ns();

	/* 4. capabilities: lock root semantics off, empty bounding and ambient
	 * sets, then clear effective/permitted/inheritable; no_new_privs. */
	CHECK(prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
	            SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
	            SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) == 0,
	      "prctl PR_SET_SECUREBITS");
	/* The kernel's capabilities are 0..CAP_LAST_CAP without a gap, and a
	 * number past the last gives EINVAL (cap_valid): the first EINVAL ends
	 * the set, so the ~23 numbers above it are not asked one by one. */
	for (cap_value_t cv = 0; cv <= 63; cv++) {
		if (prctl(PR_CAPBSET_DROP, cv, 0, 0, 0) == 0) continue;
		if (errno == EINVAL && cv > 0) break;
		child_fail(errfd, "drop bounding set", errno);
	}
	CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == 0, "clear ambient capabilities");
	/* Empty effective, permitted and inheritable sets: what libcap's
	 * cap_set_proc of an empty cap_t does, without its cap_init (a capget
	 * and an allocation in the parent for every capsule). */
	struct __user_cap_header_struct caph = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct capd[_LINUX_CAPABILITY_U32S_3];
	memset(capd, 0, sizeof capd);
	CHECK(syscall(SYS_capset, &caph, capd) == 0, "clear capabilities");
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "prctl PR_SET_NO_NEW_PRIVS");
	/* Not dumpable: this process is a copy of the caller's memory (its
	 * environment, its heap, its fds), and an inside callback or an exec
	 * capsule's init runs on as that copy. Unprivileged, the capsule's
	 * processes share its uid: dumpable, its /proc/PID/{environ,maps,mem,fd}
	 * would be theirs to read (and its status pipe theirs to write). A
	 * non-dumpable process is ptrace-accessible only with CAP_SYS_PTRACE in
	 * the caller's user namespace. An exec of the interpreter or of the
	 * command sets its own new image dumpable again (only its own memory).
	 * Before seccomp, which does not allow PR_SET_DUMPABLE. */
	bool nodump = true;
#ifdef WORLD_TEST_HOOKS
	/* TEST HOOK: WORLD_TEST_CAPSULE_DUMPABLE=1 leaves it dumpable (the
	 * control of tests/supervisor/exec.sh). */
	const char *td = getenv("WORLD_TEST_CAPSULE_DUMPABLE");
	if (td && strcmp(td, "1") == 0) nodump = false;
#endif
	if (nodump) CHECK(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0, "prctl PR_SET_DUMPABLE 0");

	c->ts[3] = now_ns();
	/* 5. landlock, then seccomp (the listener goes to the parent) */
	if (c->ll_abi > 0 && p->landlock)
		CHECK((c->ex ? exec_plan_landlock(c->ex, c->ll_abi) : landlock_apply(c)) == 0, "landlock");
	c->ts[4] = now_ns();
	int lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &c->prog);
	CHECK(lfd >= 0, "seccomp filter");
	c->ts[5] = now_ns();
	/* Hand the listener to the parent (SCM_RIGHTS; the filter allows
	 * sendmsg on this fd number only) and close our copy: the capsule
	 * must never hold its own listener. No reply is awaited. */
	char msg[160];
	int n = snprintf(msg, sizeof msg, "L %llu %llu %llu %llu %llu %llu", (unsigned long long)c->ts[0],
	                 (unsigned long long)c->ts[1], (unsigned long long)c->ts[2], (unsigned long long)c->ts[3],
	                 (unsigned long long)c->ts[4], (unsigned long long)c->ts[5]);
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } cbuf;
	memset(&cbuf, 0, sizeof cbuf);
	struct iovec iov = { msg, (size_t)n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.b, .msg_controllen = sizeof cbuf.b };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &lfd, sizeof(int));
	CHECK(sendmsg(errfd, &mh, MSG_NOSIGNAL) == n, "hand over the seccomp listener");
	CHECK(close(lfd) == 0, "close the listener");
	/* Only now: an unprivileged sender of SCM_RIGHTS may have no more fds
	 * in flight, summed over every socket of its user, than its own
	 * RLIMIT_NOFILE (the kernel's too_many_unix_fds; ETOOMANYREFS), and a
	 * capsule spawner's queued start messages carry that user's fds. Still
	 * before anything untrusted runs; lowering needs no privilege. */
	for (size_t i = 0; i < nrl; i++) {
		if (rl[i].resource != RLIMIT_NOFILE) continue;
		struct rlimit r = { rl[i].soft, rl[i].hard };
		CHECK(setrlimit(RLIMIT_NOFILE, &r) == 0, "setrlimit RLIMIT_NOFILE");
	}
	/* The parent attaches us to the capsule's cgroups while we set up (a v1
	 * attach waits for an RCU grace period); nothing untrusted runs before
	 * the placement is done. */
	CHECK(read(GO_FD, &go, 1) == 1 && go == 'C', "wait for the cgroup placement");
	CHECK(close(GO_FD) == 0, "close the sync channel");

	/* 6. exec the pinned interpreter, or run the inside callback (an exec
	 * capsule: its init) */
	if (s->inside || c->ex) {
		close(errfd);
		c->ctx.kept_fds = c->kept;
		c->ctx.nkept = s->nkeep;
		int rc = c->ex ? exec_plan_init(&c->ctx, c->ex) : s->inside(&c->ctx, s->inside_arg);
		_exit(rc & 0xff);
	}
	if (!capsule_interp_sealed(CAPSULE_INTERP_FD)) child_fail(errfd, "the pinned interpreter is not sealed", EPERM);
	syscall(SYS_execveat, CAPSULE_INTERP_FD, "", (char *const *)c->argv, (char *const *)capsule_env,
	        AT_EMPTY_PATH);
	child_fail(errfd, "execveat pinned interpreter", errno);
}

int capsule_apply_interpreter_limits(const struct capsule_ctx *ctx)
{
	/* An unsealed memfd is a pin that failed or has not finished: never
	 * exec it (pin.h). */
	if (!capsule_interp_sealed(ctx->interp_fd)) {
		errno = EPERM;
		return -1;
	}
	const struct capsule_limits *l = &ctx->profile->limits;
	struct rlimit as = { l->rlim_as, l->rlim_as }, data = { l->rlim_data, l->rlim_data };
	if (setrlimit(RLIMIT_AS, &as) < 0 || setrlimit(RLIMIT_DATA, &data) < 0) return -1;
	return 0;
}

pid_t capsule_spawn_interpreter(const struct capsule_ctx *ctx, const char *const argv[],
                                int in_fd, int out_fd, int err_fd)
{
	/* A raw clone, not fork(): glibc's fork takes its own locks and runs
	 * atfork handlers, which can wait forever in a copy of a threaded
	 * caller. The child only dups fds, sets limits and execs. */
	pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, NULL, NULL, 0UL);
	if (pid != 0) return pid;
	int src[3] = { in_fd, out_fd, err_fd }, tmp[3];
	for (int i = 0; i < 3; i++) tmp[i] = src[i] < 0 ? -1 : fcntl(src[i], F_DUPFD_CLOEXEC, 20);
	for (int i = 0; i < 3; i++) {
		if (tmp[i] >= 0) {
			if (dup2(tmp[i], i) != i) _exit(127);
		} else {
			close(i);
		}
	}
	if (capsule_apply_interpreter_limits(ctx) < 0) _exit(127);
	/* Only 0-2 cross the exec: protocol fds stay with the agent. */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) _exit(127);
	syscall(SYS_execveat, ctx->interp_fd, "", (char *const *)argv, (char *const *)capsule_env,
	        AT_EMPTY_PATH);
	_exit(127);
}

/* ---- the parent ----------------------------------------------------------- */

static int write_id_maps(pid_t pid, bool root_mode, unsigned host_id, struct world_err *err)
{
	char path[64], map[64];
	if (!root_mode) {
		snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
		if (write_file(path, "deny") < 0)
			return werr(err, WX_SETUP, "capsule setup: write %s: %s", path, strerror(errno));
	}
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof map, "%d %u 1\n", CAPSULE_INSIDE_ID, root_mode ? host_id : (unsigned)geteuid());
	if (write_file(path, map) < 0)
		return werr(err, WX_SETUP, "capsule setup: write uid_map: %s", strerror(errno));
	snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
	snprintf(map, sizeof map, "%d %u 1\n", CAPSULE_INSIDE_ID, root_mode ? host_id : (unsigned)getegid());
	if (write_file(path, map) < 0)
		return werr(err, WX_SETUP, "capsule setup: write gid_map: %s", strerror(errno));
	return 0;
}

/* Move pid into the v1 group of slot s. Read-write: cg_put reads the
 * same fd. */
static int cg_attach(struct cg_slot *s, pid_t pid)
{
	char val[32];
	int fd = cg_fd(s, CGF_PROCS, "cgroup.procs", O_RDWR);
	if (fd < 0) return -1;
	int len = snprintf(val, sizeof val, "%d", (int)pid);
	ssize_t w = write(fd, val, (size_t)len);
	if (w != len) {
		if (w >= 0) errno = EIO;
		return -1;
	}
	return 0;
}

static const char *pick_mount_point(void)
{
	static const char *const cands[] = { "/tmp", "/mnt", "/var/tmp", NULL };
	for (size_t i = 0; cands[i]; i++) {
		struct stat st;
		if (lstat(cands[i], &st) == 0 && S_ISDIR(st.st_mode)) return cands[i];
	}
	return NULL;
}

static void handle_init(struct capsule_handle *h)
{
	memset(h, 0, sizeof *h);
	h->pid = -1;
	h->pidfd = h->notify_fd = h->setup_fd = h->mntns_fd = h->mntns_req = -1;
	h->cg_slot[0] = h->cg_slot[1] = -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) close(*fd);
	*fd = -1;
}

/* The worktree, in the caller: open it without following a symlink at its
 * last component, and record what the child must find (the canonical path
 * of that fd, its device and inode). */
static int open_worktree(struct child_plan *c, const char *dir, int *fd_out, struct world_err *err)
{
	if (!c->p->worktree_mount)
		return werr(err, WX_USAGE, "capsule: profile %s mounts no worktree", c->p->name);
	int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return werr(err, e == ENOENT ? WX_NOT_FOUND : WX_BAD_INPUT, "capsule: worktree %s: %s", dir,
		            e == ENOTDIR ? "not a directory (or a symlink, which is refused)" : strerror(e));
	}
	struct stat st;
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = fstat(fd, &st) < 0 ? -1 : readlink(link, c->worktree, sizeof c->worktree - 1);
	if (n < 0 || (size_t)n >= sizeof c->worktree - 1 || c->worktree[0] != '/') {
		int e = n < 0 ? errno : ENAMETOOLONG;
		close(fd);
		return werr(err, WX_SETUP, "capsule setup: worktree %s: canonical path: %s", dir, strerror(e));
	}
	c->worktree[n] = '\0';
	c->wt_dev = st.st_dev;
	c->wt_ino = st.st_ino;
	c->wt_uid = st.st_uid;
	c->wt_gid = st.st_gid;
	c->has_worktree = true;
	c->wt_tree = -1;
	/* As root, clone the mount right here from this very fd (a detached
	 * tree the child attaches): nothing is resolved again, and the path to
	 * the worktree need not be searchable by the capsule's user. */
	if (c->root_mode) {
		int tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (tree < 0) {
			int e = errno;
			close(fd);
			return werr(err, WX_SETUP, "capsule setup: worktree %s: open_tree: %s", dir, strerror(e));
		}
		close(fd);
		struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		                                       MOUNT_ATTR_NOEXEC };
		if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
			int e = errno;
			close(tree);
			return werr(err, WX_SETUP, "capsule setup: worktree %s: mount_setattr: %s", dir, strerror(e));
		}
		fd = tree;
		c->wt_tree = tree;
	}
	*fd_out = fd;
	return 0;
}

/* As root the capsule's user (host id base + pid) owns nothing in the
 * worktree, which the workspace keeps 0700: the detached clone is
 * idmapped (MOUNT_ATTR_IDMAP) through a user namespace that maps the
 * worktree's owner (uid and gid) to the capsule's host id, so the capsule
 * reads the worktree as its owner would, through a read-only mount (no
 * chmod, chown or write can reach the files). Files of other owners keep
 * their "others" permissions. Best effort: a filesystem without idmapped
 * mounts leaves the plain clone, and capsule_describe says so. The user
 * namespace comes from a helper sharing our memory (clone CLONE_VM, on a
 * stack of this call's own: capsule_start may run in many threads at once)
 * that only waits to be killed once its namespace is open. */
static int idmap_helper(void *arg)
{
	(void)arg;
	for (;;) pause();
	return 0;
}

int capsule_idmap_tree(int tree, uid_t uid, gid_t gid, unsigned host_id, char *note, size_t len)
{
	return capsule_idmap_trees(&tree, 1, uid, gid, host_id, note, len);
}

int capsule_idmap_trees(const int *trees, size_t ntrees, uid_t uid, gid_t gid, unsigned host_id, char *note,
                        size_t len)
{
	/* The helper runs on this array while we wait for it below; it is
	 * killed and reaped before this frame goes. */
	char idmap_stack[16384] __attribute__((aligned(16)));
	pid_t pid = clone(idmap_helper, idmap_stack + sizeof idmap_stack, CLONE_VM | CLONE_NEWUSER | SIGCHLD, NULL);
	if (pid < 0) {
		snprintf(note, len, "not idmapped (clone: %s)", strerror(errno));
		return -1;
	}
	char path[64], map[64];
	int fd = -1;
	const char *step = "uid_map";
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, host_id);
	if (write_file(path, map) == 0) {
		step = "gid_map";
		snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, host_id);
		if (write_file(path, map) == 0) {
			step = "open the user namespace";
			snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
	}
	int e = errno;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
	if (fd < 0) {
		snprintf(note, len, "not idmapped (%s: %s)", step, strerror(e));
		return -1;
	}
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)fd };
	int rc = 0;
	for (size_t i = 0; i < ntrees && rc == 0; i++)
		if (syscall(SYS_mount_setattr, trees[i], "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) rc = -1;
	if (rc < 0) {
		snprintf(note, len, "not idmapped (mount_setattr: %s); others' permissions apply", strerror(errno));
	} else {
		snprintf(note, len, "idmapped: owner %u:%u reads as the capsule user", (unsigned)uid, (unsigned)gid);
	}
	close(fd);
	return rc;
}

static void worktree_idmap(struct child_plan *c, struct capsule_handle *h)
{
	(void)capsule_idmap_tree(c->wt_tree, c->wt_uid, c->wt_gid, h->host_id, h->wt_note, sizeof h->wt_note);
}

/* The filter of a profile of the table is the program embedded at build
 * time (capsule/seccomp_gen); any other profile's is built once per process
 * (libseccomp is deterministic; building costs about half a millisecond). */
static int bpf_for(const struct capsule_profile *p, const unsigned char **bpf, size_t *len,
                   struct world_err *err)
{
	const struct capsule_seccomp_program *e = capsule_seccomp_embedded(p);
	if (e) {
		*bpf = e->bpf;
		*len = e->bpf_len;
		return 0;
	}
	static struct { const struct capsule_profile *p; unsigned char *bpf; size_t len; } cache[8];
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mu);
	int rc = 0;
	for (size_t i = 0; i < 8; i++)
		if (cache[i].p == p) {
			*bpf = cache[i].bpf;
			*len = cache[i].len;
			goto out;
		}
	unsigned char *b;
	size_t l;
	if (capsule_seccomp_bpf(p, &b, &l, err) < 0) {
		rc = -1;
		goto out;
	}
	*bpf = b;
	*len = l;
	for (size_t i = 0; i < 8; i++)
		if (!cache[i].p) {
			cache[i].p = p;
			cache[i].bpf = b;
			cache[i].len = l;
			break;
		}
	/* More profiles than slots: this copy is used once (and kept). */
out:
	pthread_mutex_unlock(&mu);
	return rc;
}

const char *const capsule_phase_names[CAPSULE_T_COUNT] = {
	"prepare (filter, cgroup groups)", "clone3 (namespaces, pidfd)", "id maps",
	"cgroup attach (overlaps child setup)", "child: identity, cgroup ns", "child: mounts, tmpfs root, new root",
	"child: fds, rlimits", "child: capabilities, no_new_privs", "child: landlock",
	"child: seccomp", "listener handover", "exit and reap (in capsule_finish)",
	"finish (cgroup check and release)",
};

/* ---- the capsule's mount namespace, released off the reaping path ------
 * The last reference to a mount namespace unmounts its tree and waits for an
 * expedited RCU grace period (namespace_unlock): ~50 us here. Held by the
 * capsule's init alone, that wait falls in its exit, before the parent can
 * reap it. So the parent takes a reference of its own right after the clone
 * (PIDFD_GET_MNT_NAMESPACE) and, once the capsule is reaped, the closer
 * thread drops the last one: the namespace, with no process left in it,
 * goes a moment later and nobody waits for it.
 *
 * The closer keeps its references in a file table of its own
 * (close_range CLOSE_RANGE_UNSHARE: it starts empty and shares nothing), so
 * the caller's table holds no fd of this library between capsules: while
 * the capsule is set up the closer copies the parent's reference
 * (pidfd_getfd on this process: /proc/self/fd, the leader's table, is the
 * one it copies from, so the copy is checked to be the same namespace
 * inode), and capsule_finish closes the parent's before handing the copy
 * over to be closed. Anything that does not work out leaves the old way:
 * the last close where it happens. The capsule's tmpfs pages stay charged
 * to its memory group until then: cg_put waits for the closer before it
 * removes a group that looks too full to reuse (mntns_wait). */
enum { NSR_FREE, NSR_TAKE, NSR_HELD, NSR_CLOSE, NSR_CLOSING };
#define NS_REQS 256
struct ns_req {
	int state;        /* NSR_* */
	int main_fd;      /* the reference in the caller's table (NSR_TAKE) */
	dev_t dev;        /* its identity, for the check of the copy */
	ino_t ino;
	int priv_fd;      /* the copy in the closer's table, or -1 */
	unsigned gen;     /* closes done in this slot (mntns_wait) */
};
static struct {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	pid_t owner;      /* the process whose closer runs (a forked copy has none) */
	int ready;        /* 0 starting, 1 running, -1 failed */
	struct ns_req req[NS_REQS];
} nsc = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, { { 0 } } };

static void *ns_closer(void *arg)
{
	(void)arg;
	int self = -1;
	/* Its own filesystem context too: a thread sharing the starter's would
	 * keep it out of the template mount namespace (capsule_mount_template).
	 * Done before it says it is ready, so the next start finds it done. */
	bool ok = capsule_thread_private_fs() == 0 && syscall(SYS_close_range, 0U, ~0U, CLOSE_RANGE_UNSHARE) == 0 &&
	          (self = (int)syscall(SYS_pidfd_open, getpid(), 0)) >= 0;
	pthread_mutex_lock(&nsc.mu);
	nsc.ready = ok ? 1 : -1;
	pthread_cond_broadcast(&nsc.done);
	while (ok) {
		struct ns_req *r = NULL;
		for (int i = 0; i < NS_REQS && !r; i++)
			if (nsc.req[i].state == NSR_TAKE || nsc.req[i].state == NSR_CLOSE) r = &nsc.req[i];
		if (!r) {
			pthread_cond_wait(&nsc.work, &nsc.mu);
			continue;
		}
		if (r->state == NSR_CLOSE) {
			int fd = r->priv_fd;
			r->priv_fd = -1;
			r->state = NSR_CLOSING;
			pthread_mutex_unlock(&nsc.mu);
			close(fd); /* the grace period is waited here */
			pthread_mutex_lock(&nsc.mu);
			r->state = NSR_FREE;
			r->gen++;
			pthread_cond_broadcast(&nsc.done);
			continue;
		}
		int main_fd = r->main_fd;
		dev_t dev = r->dev;
		ino_t ino = r->ino;
		pthread_mutex_unlock(&nsc.mu);
		int fd = (int)syscall(SYS_pidfd_getfd, self, main_fd, 0);
		struct stat st;
		if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino)) {
			close(fd); /* not the namespace: the caller's own table is another */
			fd = -1;
		}
		pthread_mutex_lock(&nsc.mu);
		r->priv_fd = fd;
		r->state = NSR_HELD;
		pthread_cond_broadcast(&nsc.done);
	}
	pthread_mutex_unlock(&nsc.mu);
	return NULL;
}

/* fork() while the closer holds nsc.mu would leave the copy a lock nobody
 * releases: the lock is taken across the fork and the copy starts afresh
 * (it has no closer; its first capsule starts one). */
static void ns_atfork_prepare(void) { pthread_mutex_lock(&nsc.mu); }
static void ns_atfork_parent(void) { pthread_mutex_unlock(&nsc.mu); }
static void ns_atfork_child(void)
{
	pthread_mutex_init(&nsc.mu, NULL);
	pthread_cond_init(&nsc.work, NULL);
	pthread_cond_init(&nsc.done, NULL);
	nsc.owner = 0;
}

/* Under nsc.mu: the closer of this process runs (started at the first
 * capsule). */
static bool ns_closer_locked(void)
{
	if (nsc.owner == getpid()) return nsc.ready == 1;
	static bool atfork;
	if (!atfork) {
		if (pthread_atfork(ns_atfork_prepare, ns_atfork_parent, ns_atfork_child) != 0) return false;
		atfork = true;
	}
	/* A forked copy: the parent's closer and its references are not here. */
	memset(nsc.req, 0, sizeof nsc.req);
	nsc.owner = getpid();
	nsc.ready = 0;
	sigset_t all, old;
	sigfillset(&all);
	/* the thread takes no signal (the caller's handlers stay the caller's) */
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_t a;
	pthread_t t;
	bool ok = pthread_attr_init(&a) == 0;
	if (ok) {
		ok = pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0 &&
		     pthread_create(&t, &a, ns_closer, NULL) == 0;
		pthread_attr_destroy(&a);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ok) nsc.ready = -1;
	while (nsc.ready == 0) pthread_cond_wait(&nsc.done, &nsc.mu);
	return nsc.ready == 1;
}

/* After the clone: a reference of our own to the capsule's mount namespace,
 * copied by the closer while the child sets up. Without one (an older
 * kernel, the child already gone, no closer) the capsule's exit drops it. */
static bool mntns_deferred = true; /* capsule_defer_mntns_release */

void capsule_defer_mntns_release(bool on)
{
	__atomic_store_n(&mntns_deferred, on, __ATOMIC_RELEASE);
}

static void mntns_hold(struct capsule_handle *h)
{
	if (!__atomic_load_n(&mntns_deferred, __ATOMIC_ACQUIRE)) return;
	int fd = (int)ioctl(h->pidfd, PIDFD_GET_MNT_NAMESPACE, 0);
	if (fd < 0) return;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	pthread_mutex_lock(&nsc.mu);
	int slot = -1;
	if (ns_closer_locked())
		for (int i = 0; i < NS_REQS && slot < 0; i++)
			if (nsc.req[i].state == NSR_FREE) slot = i;
	if (slot >= 0) {
		/* gen is kept: it counts the slot's closes */
		nsc.req[slot] = (struct ns_req){ NSR_TAKE, fd, st.st_dev, st.st_ino, -1, nsc.req[slot].gen };
		pthread_cond_signal(&nsc.work);
	}
	pthread_mutex_unlock(&nsc.mu);
	if (slot < 0) {
		close(fd); /* the child still holds it: not the last reference */
		return;
	}
	h->mntns_fd = fd;
	h->mntns_req = slot;
}

/* After the reap: close our reference, then let the closer drop the last
 * (h->mntns_req stays set while that is pending: mntns_wait). */
static void mntns_release(struct capsule_handle *h)
{
	if (h->mntns_fd < 0) return;
	struct ns_req *r = &nsc.req[h->mntns_req];
	pthread_mutex_lock(&nsc.mu);
	while (r->state == NSR_TAKE) pthread_cond_wait(&nsc.done, &nsc.mu);
	pthread_mutex_unlock(&nsc.mu);
	/* Not the last reference when the closer holds its copy (else it is,
	 * and this close waits as the capsule's exit would have). */
	close_fd(&h->mntns_fd);
	pthread_mutex_lock(&nsc.mu);
	if (r->priv_fd >= 0) {
		r->state = NSR_CLOSE;
		h->mntns_gen = r->gen;
		pthread_cond_signal(&nsc.work);
	} else {
		r->state = NSR_FREE;
		h->mntns_req = -1;
	}
	pthread_mutex_unlock(&nsc.mu);
}

/* Wait until the closer has dropped the namespace mntns_release handed it
 * (its tmpfs pages are uncharged then). */
static void mntns_wait(struct capsule_handle *h)
{
	if (h->mntns_req < 0) return;
	struct ns_req *r = &nsc.req[h->mntns_req];
	pthread_mutex_lock(&nsc.mu);
	while (r->gen == h->mntns_gen) pthread_cond_wait(&nsc.done, &nsc.mu);
	pthread_mutex_unlock(&nsc.mu);
	h->mntns_req = -1;
}

/* The shared empty network namespace (see capsule_netns_share), or -1. */
static int shared_net_fd = -1;
/* Written by capsule_netns_share, read by every start (only around its
 * setns: once there, the thread holds the namespace itself). */
static pthread_rwlock_t shared_net_rw = PTHREAD_RWLOCK_INITIALIZER;

static int netns_share_locked(bool on, struct world_err *err);

int capsule_netns_share(bool on, struct world_err *err)
{
	pthread_rwlock_wrlock(&shared_net_rw);
	int rc = netns_share_locked(on, err);
	pthread_rwlock_unlock(&shared_net_rw);
	return rc;
}

static int netns_share_locked(bool on, struct world_err *err)
{
	if (!on) {
		if (shared_net_fd >= 0) close(shared_net_fd);
		shared_net_fd = -1;
		return 0;
	}
	if (shared_net_fd >= 0) return 0;
	if (geteuid() != 0) return werr(err, WX_SETUP, "capsule: a shared network namespace needs root");
	/* Enter a new namespace on this thread, keep an fd to it, come back. */
	int own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (own < 0) return werr(err, WX_SETUP, "capsule: open /proc/thread-self/ns/net: %s", strerror(errno));
	if (unshare(CLONE_NEWNET) < 0) {
		int e = errno;
		close(own);
		return werr(err, WX_SETUP, "capsule: unshare network namespace: %s", strerror(e));
	}
	int empty = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int e = errno;
	if (setns(own, CLONE_NEWNET) < 0) {
		int e2 = errno;
		close(own);
		if (empty >= 0) close(empty);
		return werr(err, WX_SETUP, "capsule: return to the caller's network namespace: %s (this thread is now "
		            "in an empty one)", strerror(e2));
	}
	close(own);
	if (empty < 0) return werr(err, WX_SETUP, "capsule: open the new network namespace: %s", strerror(e));
	shared_net_fd = empty;
	return 0;
}

/* ---- the template mount namespace --------------------------------------
 * CLONE_NEWNS copies the whole mount table of the thread that clones (21
 * mounts here, hundreds on a container host), and the old root that
 * pivot_root leaves on top then has to be detached, which waits for an
 * expedited RCU grace period (namespace_unlock). A long-lived root maker of
 * capsules keeps instead one template namespace whose only mount is an
 * empty read-only tmpfs with one directory, /r: a start enters it around
 * clone3 (setns, on the calling thread only), so the capsule's namespace is
 * a copy of that one mount; the child mounts its tmpfs root on /r, moves it
 * over / and chroots into it. Nothing is unmounted, and no host mount is
 * ever in a capsule's namespace, not even during its setup.
 *
 * setns(CLONE_NEWNS) resets the thread's root and working directory and
 * needs a filesystem context the thread shares with nobody (EINVAL
 * otherwise: a caller's pool thread, which then starts the old way). The
 * working directory is put back from an fd; the root cannot be, so the
 * template is refused to a process whose root is not its namespace's
 * (chrooted): the helper that makes it reports the namespace's root. All
 * signals are blocked while the thread is in the template, so that no
 * handler of the caller runs without the host's files. Profiles with
 * device nodes or a worktree start the old way: both are host paths. */
static int tmpl_fd = -1;
static pthread_rwlock_t tmpl_rw = PTHREAD_RWLOCK_INITIALIZER;

struct tmpl_report { int step; int err; dev_t root_dev; ino_t root_ino; };
static const char *const tmpl_steps[] = {
	"enter this process's mount namespace", "stat its root", "unshare mount namespace", "make mounts private",
	"mount tmpfs", "chdir", "mkdir r", "pivot_root", "detach old root", "chdir /", "remount read-only",
};

/* The helper: a fork that makes the namespace, reports, and waits for EOF
 * (its parent opens the namespace meanwhile). Raw system calls only. */
static void __attribute__((noreturn)) tmpl_helper(int fd, int self_ns, const char *mnt)
{
	struct tmpl_report r = { 0, 0, 0, 0 };
	struct stat st;
#define TSTEP(n, x) do { r.step = (n); if (!(x)) { r.err = errno; goto out; } } while (0)
	TSTEP(0, setns(self_ns, CLONE_NEWNS) == 0); /* the root as the namespace has it */
	TSTEP(1, stat("/", &st) == 0);
	r.root_dev = st.st_dev;
	r.root_ino = st.st_ino;
	TSTEP(2, unshare(CLONE_NEWNS) == 0);
	TSTEP(3, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	TSTEP(4, mount("capsule-template", mnt, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	               "size=4k,nr_inodes=4,mode=0755") == 0);
	TSTEP(5, chdir(mnt) == 0);
	TSTEP(6, mkdir("r", 0755) == 0);
	TSTEP(7, syscall(SYS_pivot_root, ".", ".") == 0);
	TSTEP(8, umount2(".", MNT_DETACH) == 0);
	TSTEP(9, chdir("/") == 0);
	TSTEP(10, mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0);
	r.step = -1;
#undef TSTEP
out:
	if (write(fd, &r, sizeof r) == (ssize_t)sizeof r) {
		char c;
		while (read(fd, &c, 1) < 0 && errno == EINTR) {}
	}
	_exit(0);
}

static int tmpl_make_locked(struct world_err *err)
{
	if (geteuid() != 0) return werr(err, WX_SETUP, "capsule: a template mount namespace needs root");
	const char *mnt = pick_mount_point();
	if (!mnt) return werr(err, WX_SETUP, "capsule: template mount namespace: no /tmp or /mnt directory");
	struct stat root;
	if (stat("/", &root) < 0) return werr(err, WX_SETUP, "capsule: template mount namespace: stat /: %s", strerror(errno));
	int self_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (self_ns < 0) return werr(err, WX_SETUP, "capsule: open /proc/self/ns/mnt: %s", strerror(errno));
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		int e = errno;
		close(self_ns);
		return werr(err, WX_SETUP, "capsule: template mount namespace: socketpair: %s", strerror(e));
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		tmpl_helper(sv[1], self_ns, mnt);
	}
	int fork_errno = errno;
	close(sv[1]);
	close(self_ns);
	int rc = 0;
	if (pid < 0) {
		rc = werr(err, WX_SETUP, "capsule: template mount namespace: fork: %s", strerror(fork_errno));
	} else {
		struct tmpl_report r;
		ssize_t got;
		while ((got = read(sv[0], &r, sizeof r)) < 0 && errno == EINTR) {}
		if (got != (ssize_t)sizeof r) {
			rc = werr(err, WX_SETUP, "capsule: template mount namespace: the helper ended without a report");
		} else if (r.step >= 0) {
			rc = werr(err, WX_SETUP, "capsule: template mount namespace: %s: %s", tmpl_steps[r.step], strerror(r.err));
		} else if (r.root_dev != root.st_dev || r.root_ino != root.st_ino) {
			rc = werr(err, WX_SETUP, "capsule: template mount namespace: this process's root is not its mount "
			          "namespace's (chrooted); entering the template would lose it");
		} else {
			char path[64];
			snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
			tmpl_fd = open(path, O_RDONLY | O_CLOEXEC);
			if (tmpl_fd < 0) rc = werr(err, WX_SETUP, "capsule: open %s: %s", path, strerror(errno));
		}
		close(sv[0]); /* EOF: the helper exits */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
	}
	if (pid < 0) close(sv[0]);
	return rc;
}

int capsule_mount_template(bool on, struct world_err *err)
{
	pthread_rwlock_wrlock(&tmpl_rw);
	int rc = 0;
	if (!on && tmpl_fd >= 0) {
		close(tmpl_fd);
		tmpl_fd = -1;
	} else if (on && tmpl_fd < 0) {
		rc = tmpl_make_locked(err);
	}
	pthread_rwlock_unlock(&tmpl_rw);
	return rc;
}

int capsule_thread_private_fs(void)
{
	return unshare(CLONE_FS);
}

/* The calling thread, with its signals blocked, in the template namespace
 * (1), or as it was (0: no template, or this thread may not enter it).
 * Undone by tmpl_leave. */
struct tmpl_stay { int own_ns, own_cwd; sigset_t mask; };

static int tmpl_enter(struct tmpl_stay *t)
{
	t->own_ns = t->own_cwd = -1;
	pthread_rwlock_rdlock(&tmpl_rw);
	int in = 0;
	if (tmpl_fd >= 0) {
		sigset_t all;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &t->mask);
		t->own_ns = open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
		t->own_cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (t->own_ns >= 0 && t->own_cwd >= 0 && setns(tmpl_fd, CLONE_NEWNS) == 0) {
			in = 1;
		} else {
			close_fd(&t->own_ns);
			close_fd(&t->own_cwd);
			pthread_sigmask(SIG_SETMASK, &t->mask, NULL);
		}
	}
	pthread_rwlock_unlock(&tmpl_rw);
	return in;
}

/* Back to the thread's own namespace and working directory; -1 with errno
 * if that failed (the thread is stranded in the template: the caller says
 * so loudly). */
static int tmpl_leave(struct tmpl_stay *t)
{
	int rc = setns(t->own_ns, CLONE_NEWNS) == 0 && fchdir(t->own_cwd) == 0 ? 0 : -1;
	int e = errno;
	close_fd(&t->own_ns);
	close_fd(&t->own_cwd);
	pthread_sigmask(SIG_SETMASK, &t->mask, NULL);
	errno = e;
	return rc;
}

int capsule_start(const struct capsule_spec *spec, struct capsule_handle *h, struct world_err *err)
{
	uint64_t t_mark = now_ns();
	handle_init(h);
	const struct capsule_profile *p = spec->profile;
	if (!p) return werr(err, WX_USAGE, "capsule: no profile");
	if (spec->nkeep > CAPSULE_MAX_KEEP_FDS)
		return werr(err, WX_USAGE, "capsule: at most %d kept fds", CAPSULE_MAX_KEEP_FDS);
	if (spec->interp_fd < 0) return werr(err, WX_USAGE, "capsule: no pinned interpreter fd");
	if (!spec->exec != !p->exec || (spec->exec && (spec->inside || spec->worktree || spec->nfiles || spec->nkeep != 1)))
		return werr(err, WX_USAGE, "capsule: an exec capsule needs the exec profile, one kept fd and nothing staged");

	/* Prepared here, per call: the child reads its copy, so concurrent
	 * starts from several threads share nothing. On the heap, not in this
	 * frame: the child runs on the caller's stack below this frame, and
	 * under a sanitizer's terabytes of shadow the capsule's RLIMIT_AS
	 * forbids growing the stack, so the frame stays small. */
	struct child_plan *cp = calloc(1, sizeof *cp);
	if (!cp) return werr(err, WX_SETUP, "capsule setup: out of memory");
	cp->spec = spec;
	cp->p = p;
	cp->lim = spec->limits ? *spec->limits : p->limits;
	cp->root_mode = geteuid() == 0;
	cp->mnt = pick_mount_point();
	if (!cp->mnt) return free(cp), werr(err, WX_SETUP, "capsule setup: no /tmp or /mnt directory to mount the new root on");
	snprintf(cp->opts_root, sizeof cp->opts_root, "size=%llu,nr_inodes=256,mode=0755",
	         (unsigned long long)p->limits.root_size);
	snprintf(cp->opts_cache, sizeof cp->opts_cache, "size=%llu,nr_inodes=4096,mode=0700",
	         (unsigned long long)p->limits.cache_size);
	size_t ac = 0;
	if (spec->exec) {
		cp->ex = exec_plan_new(p, spec->exec, spec->interp_fd, cp->root_mode, &cp->ex_script, err);
		if (!cp->ex) return free(cp), -1;
		cp->ctx.profile = p;
		cp->ctx.interp_fd = CAPSULE_INTERP_FD;
	} else if (spec->argv) {
		for (; spec->argv[ac] && ac < 63; ac++) cp->argv[ac] = spec->argv[ac];
	} else {
		if (!p->argv) return free(cp), werr(err, WX_USAGE, "capsule: profile %s needs a caller-given argv", p->name);
		cp->argv[ac++] = "ailang";
		for (size_t i = 0; p->argv[i] && ac < 63; i++) cp->argv[ac++] = p->argv[i];
	}
	cp->argv[ac] = NULL;
	cp->ctx.profile = p;
	cp->ctx.interp_fd = CAPSULE_INTERP_FD;
	/* The kernel's landlock ABI is fixed at boot: asked once per process. */
	static int ll_abi = -1;
	int abi = __atomic_load_n(&ll_abi, __ATOMIC_RELAXED);
	if (p->landlock && abi < 0) __atomic_store_n(&ll_abi, abi = capsule_landlock_abi(), __ATOMIC_RELAXED);
	cp->ll_abi = p->landlock ? abi : 0;
	h->landlock_abi = cp->ll_abi;
	h->root_mode = cp->root_mode;

	const unsigned char *bpf = NULL;
	size_t bpf_len = 0;
	if (bpf_for(p, &bpf, &bpf_len, err) < 0) return exec_plan_free(cp->ex), free(cp), werr_prefix(err, "capsule setup");
	cp->prog.len = (unsigned short)(bpf_len / sizeof(struct sock_filter));
	cp->prog.filter = (struct sock_filter *)bpf;
	/* Held until setup is done: the child requires this very directory. */
	int wt_fd = -1;
	if (spec->worktree && open_worktree(cp, spec->worktree, &wt_fd, err) < 0) {
		free(cp);
		return -1;
	}

	cg_take(h, &cp->lim, 0);
	cg_take(h, &cp->lim, 1);

	int go[2] = { -1, -1 }, ep[2] = { -1, -1 }, cgfd = -1;
	/* go: parent -> child ('G' id maps written, 'C' cgroups attached);
	 * ep: child -> parent datagrams (setup error, or the listener). */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, go) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ep) < 0) {
		werr(err, WX_SETUP, "capsule setup: pipe: %s", strerror(errno));
		goto fail;
	}
	cp->go_fd = go[0];
	cp->err_fd = ep[1];
	cp->go_peer = go[1];
	cp->ep_peer = ep[0];

	struct clone_args ca;
	memset(&ca, 0, sizeof ca);
	int pidfd = -1;
	ca.flags = (p->namespaces & ~(unsigned long)CLONE_NEWCGROUP) | CLONE_NEWUSER | CLONE_PIDFD;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	const char *v2dir = h->cg_memory == CAPSULE_CG_V2 ? h->cg_memory_dir
	                  : h->cg_pids == CAPSULE_CG_V2 ? h->cg_pids_dir : NULL;
	if (v2dir) {
		cgfd = open(v2dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgfd < 0) {
			werr(err, WX_SETUP, "capsule setup: open cgroup %s: %s", v2dir, strerror(errno));
			goto fail;
		}
		ca.flags |= CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)cgfd;
	}
	/* As root, the capsule joins the shared empty network namespace (this
	 * thread enters it just for the clone) instead of creating one. */
	int own_net = -1;
	pthread_rwlock_rdlock(&shared_net_rw);
	/* Never an exec capsule: its loopback is up, and a shared one would
	 * join two runs' loopbacks. */
	if (cp->root_mode && (p->namespaces & CLONE_NEWNET) && shared_net_fd >= 0 && !cp->ex) {
		own_net = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (own_net >= 0 && setns(shared_net_fd, CLONE_NEWNET) == 0) {
			ca.flags &= ~(uint64_t)CLONE_NEWNET;
			h->shared_netns = true;
		} else {
			close_fd(&own_net);
		}
	}
	pthread_rwlock_unlock(&shared_net_rw);
	/* As root, the capsule's mount namespace is a copy of the template's
	 * one mount when this thread may enter it (see tmpl_enter). */
	struct tmpl_stay stay;
	if (cp->root_mode && !p->devices && !spec->worktree && !cp->ex && tmpl_enter(&stay)) {
		cp->in_template = true;
		cp->mnt = "/r";
		h->mount_template = true;
	}
	h->timing.ns[CAPSULE_T_PREPARE] = now_ns() - t_mark;
	t_mark = now_ns();
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid == 0) child_run(cp);
	int clone_errno = errno;
	int tmpl_back = cp->in_template ? tmpl_leave(&stay) : 0, tmpl_errno = errno;
	if (own_net >= 0) {
		int back = setns(own_net, CLONE_NEWNET);
		int e = errno;
		close_fd(&own_net);
		if (back < 0) {
			/* Should never happen: we came from there. The calling thread is
			 * now in the empty namespace; say so loudly. */
			werr(err, WX_SETUP, "capsule setup: return to the caller's network namespace: %s", strerror(e));
			if (pid > 0) {
				h->pid = (pid_t)pid;
				h->pidfd = pidfd;
				goto fail_child;
			}
			goto fail;
		}
	}
	if (tmpl_back < 0) {
		/* Should never happen either. */
		werr(err, WX_SETUP, "capsule setup: return to the caller's mount namespace: %s (this thread is left "
		     "in the capsules' template)", strerror(tmpl_errno));
		if (pid > 0) {
			h->pid = (pid_t)pid;
			h->pidfd = pidfd;
			goto fail_child;
		}
		goto fail;
	}
	if (pid < 0) {
		werr(err, WX_SETUP, "capsule setup: clone3: %s", strerror(clone_errno));
		goto fail;
	}

	h->timing.ns[CAPSULE_T_CLONE] = now_ns() - t_mark;
	t_mark = now_ns();
	h->pid = (pid_t)pid;
	/* Known to the exit and signal cleanup from here on (cg_release_all). */
	for (int ci = 0; ci < 2; ci++)
		if (h->cg_slot[ci] >= 0) __atomic_store_n(&cg_pool[ci][h->cg_slot[ci]].pid, h->pid, __ATOMIC_RELEASE);
	h->pidfd = pidfd;
	close_fd(&go[0]);
	close_fd(&ep[1]);
	close_fd(&cgfd);
	h->host_id = cp->root_mode ? CAPSULE_HOST_ID_BASE + ((unsigned)pid % CAPSULE_HOST_ID_SPAN) : (unsigned)geteuid();
	if (write_id_maps(h->pid, cp->root_mode, h->host_id, err) < 0) goto fail_child;
	/* Before 'G': the child attaches the worktree only after it. */
	if (cp->has_worktree && cp->wt_tree >= 0) worktree_idmap(cp, h);
	if (cp->ex && cp->root_mode) exec_plan_idmap(cp->ex, h->host_id, h->wt_note, sizeof h->wt_note);
	/* The go channel is a socket written with MSG_NOSIGNAL: if the child
	 * already failed (it exits right after reporting), sending gives EPIPE
	 * rather than killing the caller, and its report is read below. */
	bool child_gone = send(go[1], "G", 1, MSG_NOSIGNAL) != 1;
	if (child_gone && errno != EPIPE && errno != ECONNRESET) {
		werr(err, WX_SETUP, "capsule setup: signal the child: %s", strerror(errno));
		goto fail_child;
	}
	uint64_t t_go = now_ns();
	h->timing.ns[CAPSULE_T_IDMAP] = t_go - t_mark;
	/* v1 attach is slow (the kernel waits for an RCU grace period): the
	 * child does its whole setup meanwhile and waits for 'C' only right
	 * before the exec (or the inside callback). */
	const char *cgdirs[2] = { h->cg_memory == CAPSULE_CG_V1 ? h->cg_memory_dir : NULL,
	                          h->cg_pids == CAPSULE_CG_V1 ? h->cg_pids_dir : NULL };
	for (int i = 0; i < 2; i++)
		if (cgdirs[i] && h->cg_base[i] < 0) h->cg_base[i] = cg_event(&cg_pool[i][h->cg_slot[i]], i == 0);
	for (int i = 0; i < 2 && !child_gone; i++) {
		if (!cgdirs[i] || cg_attach(&cg_pool[i][h->cg_slot[i]], h->pid) == 0) continue;
		if (errno == ESRCH) {
			child_gone = true; /* it failed already: its report says why */
			break;
		}
		werr(err, WX_SETUP, "capsule setup: attach to %s: %s", cgdirs[i], strerror(errno));
		goto fail_child;
	}
	if (!child_gone && spec->place && spec->place(h->pid, spec->place_arg) < 0) {
		if (errno == ESRCH) {
			child_gone = true; /* it failed already: its report says why */
		} else {
			werr(err, WX_SETUP, "capsule setup: place the capsule: %s", strerror(errno));
			goto fail_child;
		}
	}
	if (!child_gone && send(go[1], "C", 1, MSG_NOSIGNAL) != 1 && errno != EPIPE && errno != ECONNRESET) {
		werr(err, WX_SETUP, "capsule setup: signal the child: %s", strerror(errno));
		goto fail_child;
	}
	t_mark = now_ns();
	h->timing.ns[CAPSULE_T_CGATTACH] = t_mark - t_go;
	/* Here, not earlier: the child waits for nothing from us any more, and
	 * the closer copies the reference while this thread sleeps below. */
	mntns_hold(h);

	/* Wait for the listener (setup done) or a setup error: one datagram,
	 * "L<timestamps>" with the listener as SCM_RIGHTS, or "E<line>". */
	char msg[512];
	ssize_t got = -1;
	int lfd = -1;
	for (;;) {
		struct pollfd pf = { ep[0], POLLIN, 0 };
		int pr = poll(&pf, 1, SETUP_TIMEOUT_MS);
		if (pr < 0 && errno == EINTR) continue;
		if (pr <= 0) {
			werr(err, WX_SETUP, "capsule setup: %s", pr == 0 ? "timed out waiting for the child" : strerror(errno));
			goto fail_child;
		}
		union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } cbuf;
		struct iovec iov = { msg, sizeof msg - 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.b,
		                     .msg_controllen = sizeof cbuf.b };
		got = recvmsg(ep[0], &mh, MSG_CMSG_CLOEXEC);
		if (got < 0 && errno == EINTR) continue;
		if (got < 0) {
			werr(err, WX_SETUP, "capsule setup: read setup channel: %s", strerror(errno));
			goto fail_child;
		}
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
			    cm->cmsg_len == CMSG_LEN(sizeof(int)))
				memcpy(&lfd, CMSG_DATA(cm), sizeof(int));
		msg[got] = 0;
		break;
	}
	if (got <= 0) {
		werr(err, WX_SETUP, "capsule setup: the child ended before reporting");
		goto fail_child;
	}
	if (msg[0] == 'E') {
		if (lfd >= 0) close(lfd);
		werr(err, WX_SETUP, "%s", msg + 1);
		goto fail_child;
	}
	h->notify_fd = lfd;
	/* "L <t_ids> <t_mounts> <t_fds> <t_caps> <t_landlock> <t_seccomp>" (monotonic ns) */
	unsigned long long ct[6] = { 0 };
	if (msg[0] != 'L' || lfd < 0 ||
	    sscanf(msg + 1, "%llu %llu %llu %llu %llu %llu", &ct[0], &ct[1], &ct[2], &ct[3], &ct[4], &ct[5]) != 6) {
		werr(err, WX_SETUP, "capsule setup: malformed setup message from the child");
		goto fail_child;
	}
	uint64_t prev = t_go;
	for (int i = 0; i < 6; i++) {
		h->timing.ns[CAPSULE_T_CHILD_IDS + i] = ct[i] > prev ? ct[i] - prev : 0;
		prev = ct[i];
	}
	close_fd(&go[1]);
	h->setup_fd = ep[0];
	/* From the child's last step (seccomp loaded) to the listener here:
	 * the child's steps are counted above, not again in this one. */
	uint64_t t_now = now_ns();
	h->timing.ns[CAPSULE_T_HANDOVER] = t_now > ct[5] ? t_now - ct[5] : 0;
	close_fd(&wt_fd);
	exec_plan_free(cp->ex);
	free(cp);
	return 0;

fail_child:
	if (h->pidfd >= 0) syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0);
	else kill(h->pid, SIGKILL);
	{
		siginfo_t si;
		while (waitid(P_PID, (id_t)h->pid, &si, WEXITED) < 0 && errno == EINTR) {}
	}
fail:
	close_fd(&go[0]);
	close_fd(&go[1]);
	close_fd(&ep[0]);
	close_fd(&ep[1]);
	close_fd(&cgfd);
	mntns_release(h);
	close_fd(&h->pidfd);
	close_fd(&h->notify_fd);
	cg_put(h, 0);
	cg_put(h, 1);
	h->mntns_req = -1;
	close_fd(&wt_fd);
	exec_plan_free(cp->ex);
	free(cp);
	h->pid = -1;
	return -1;
}

int capsule_kill(struct capsule_handle *h)
{
	if (h->reaped || h->pidfd < 0) return 0;
	h->killed = true;
	if (syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH) return -1;
	return 0;
}

/* The ABI of a notified call, by the kernel's AUDIT_ARCH_* word: the
 * filter lets only the native one reach the listener, so this is normally
 * "x86_64"; the word is kept (as hex) for any other. */
static void denial_arch(uint32_t arch, char *out, size_t len)
{
	switch (arch) {
	case AUDIT_ARCH_X86_64: snprintf(out, len, "x86_64"); break;
	case AUDIT_ARCH_I386: snprintf(out, len, "i386"); break;
	case AUDIT_ARCH_AARCH64: snprintf(out, len, "aarch64"); break;
	default: snprintf(out, len, "0x%x", (unsigned)arch); break;
	}
}

int capsule_on_notify(struct capsule_handle *h)
{
	if (h->notify_fd < 0) return 0;
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0) {
		capsule_kill(h);
		return -1;
	}
	/* The kernel's structs may be larger than this build's headers. */
	size_t rq = sz.seccomp_notif > sizeof(struct seccomp_notif) ? sz.seccomp_notif : sizeof(struct seccomp_notif);
	size_t rs = sz.seccomp_notif_resp > sizeof(struct seccomp_notif_resp) ? sz.seccomp_notif_resp
	                                                                      : sizeof(struct seccomp_notif_resp);
	struct seccomp_notif *req = calloc(1, rq);
	struct seccomp_notif_resp *resp = calloc(1, rs);
	int ret = 0;
	if (!req || !resp) {
		ret = -1;
		capsule_kill(h);
		goto out;
	}
	if (ioctl(h->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		/* ENOENT: the caller died meanwhile; EINTR: retry on next readiness. */
		if (errno != ENOENT && errno != EINTR) {
			ret = -1;
			capsule_kill(h);
		}
		goto out;
	}
	resp->id = req->id;
	resp->val = 0;
	char *name = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);
	if (!name) {
		/* Newer than this libseccomp knows: ENOSYS lets runtimes fall back. */
		resp->error = -ENOSYS;
	} else {
		resp->error = -EPERM;
		if (!h->denied[0]) {
			struct capsule_denial *d = &h->denial;
			memset(d, 0, sizeof *d);
			snprintf(d->syscall, sizeof d->syscall, "%s", name);
			d->nr = req->data.nr;
			denial_arch(req->data.arch, d->arch, sizeof d->arch);
			if (strcmp(name, "ioctl") == 0) {
				const char *cn = capsule_ioctl_name((unsigned long)req->data.args[1]);
				d->has_cmd = 1;
				d->cmd = (unsigned)(req->data.args[1] & 0xffffffffULL);
				if (cn) snprintf(d->cmd_name, sizeof d->cmd_name, "%s", cn);
				if (cn) snprintf(h->denied, sizeof h->denied, "ioctl(%s)", cn);
				else snprintf(h->denied, sizeof h->denied, "ioctl(0x%llx)",
				              (unsigned long long)(req->data.args[1] & 0xffffffffULL));
			} else {
				snprintf(h->denied, sizeof h->denied, "%s", name);
			}
			ret = 1;
		}
		free(name);
	}
	/* A denial kills the capsule and is never answered: the denied call
	 * does not return into the capsule (its thread dies in the wait, as
	 * does every process of the pid namespace). */
	if (resp->error == -EPERM) {
		if (capsule_kill(h) < 0) (void)ioctl(h->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
	} else {
		/* ENOENT: the caller died meanwhile; nothing to answer. */
		(void)ioctl(h->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
	}
out:
	free(req);
	free(resp);
	return ret;
}

int capsule_finish(struct capsule_handle *h, struct capsule_report *r, struct world_err *err)
{
	memset(r, 0, sizeof *r);
	if (h->pid < 0) return werr(err, WX_FAIL, "capsule: finish without a started capsule");
	uint64_t t_fin = now_ns();
	siginfo_t si;
	memset(&si, 0, sizeof si);
	/* Answer denials that raced with the exit, then reap. */
	while (h->notify_fd >= 0) {
		struct pollfd pf = { h->notify_fd, POLLIN, 0 };
		if (poll(&pf, 1, 0) <= 0 || !(pf.revents & POLLIN)) break;
		if (capsule_on_notify(h) < 0) break;
	}
	for (;;) {
		if (waitid((idtype_t)P_PIDFD, (id_t)h->pidfd, &si, WEXITED) == 0) break;
		if (errno == EINTR) continue;
		/* Older kernels: fall back to the pid (still our unreaped child). */
		if (errno == EINVAL && waitid(P_PID, (id_t)h->pid, &si, WEXITED) == 0) break;
		return werr(err, WX_FAIL, "capsule: waitid pid %d: %s", (int)h->pid, strerror(errno));
	}
	h->reaped = true;
	uint64_t t_reaped = now_ns();
	h->timing.ns[CAPSULE_T_REAP] = t_reaped - t_fin;
	mntns_release(h);
	r->killed = h->killed;
	if (si.si_code == CLD_EXITED) {
		r->exited = true;
		r->exit_status = si.si_status;
	} else {
		r->term_signal = si.si_status;
	}
	/* A late setup error (execveat failed) is on the setup pipe. */
	if (h->setup_fd >= 0) {
		char msg[512];
		size_t got = 0;
		for (;;) {
			ssize_t n = read(h->setup_fd, msg + got, sizeof msg - 1 - got);
			if (n < 0 && errno == EINTR) continue;
			if (n <= 0) break;
			got += (size_t)n;
			if (got == sizeof msg - 1) break;
		}
		msg[got] = 0;
		if (got > 1 && msg[0] == 'E') {
			r->setup_failed = true;
			snprintf(r->setup_error, sizeof r->setup_error, "%s", msg + 1);
		}
	}
	snprintf(r->denied, sizeof r->denied, "%s", h->denied);
	r->denial = h->denial;
	r->memory_limit_hit = h->cg_slot[0] >= 0 && cg_event(&cg_pool[0][h->cg_slot[0]], true) > h->cg_base[0];
	r->pids_limit_hit = h->cg_slot[1] >= 0 && cg_event(&cg_pool[1][h->cg_slot[1]], false) > h->cg_base[1];
	cg_put(h, 0);
	cg_put(h, 1);
	h->mntns_req = -1; /* the closer finishes on its own */
	close_fd(&h->pidfd);
	close_fd(&h->notify_fd);
	close_fd(&h->setup_fd);
	h->timing.ns[CAPSULE_T_FINISH] = now_ns() - t_reaped;
	return 0;
}

void capsule_describe(const struct capsule_handle *h, char *buf, size_t len)
{
	const char *kind[] = { "none", "v1", "v2" };
	char ids[96];
	if (h->root_mode)
		snprintf(ids, sizeof ids, "root mode: capsule uid/gid %d -> host %u", CAPSULE_INSIDE_ID, h->host_id);
	else
		snprintf(ids, sizeof ids, "unprivileged: capsule uid/gid %d -> host %u (own)", CAPSULE_INSIDE_ID, h->host_id);
	snprintf(buf, len, "%s; net: %s; mounts: %s; cgroups: memory %s, pids %s%s%s%s%s; landlock: %s%d; seccomp: allowlist + user-notif listener%s%s",
	         ids, h->shared_netns ? "shared empty namespace" : "own empty namespace",
	         h->mount_template ? "template (root moved over it)" : "caller's copied (old root detached)",
	         kind[h->cg_memory], kind[h->cg_pids],
	         h->cg_note[0] ? " (" : "", h->cg_note, h->cg_note[0] ? "; rlimits remain)" : "",
	         h->cg_memory != CAPSULE_CG_V1 && h->cg_pids != CAPSULE_CG_V1 ? ""
	         : h->cg_favordynmods ? " (favordynmods: attaches never wait)"
	                              : " (v1 without favordynmods: an attach after a quiet spell waits ~10 ms for an RCU "
	                                "grace period; docs/security.md)",
	         h->landlock_abi ? "ABI " : "unavailable", h->landlock_abi, h->wt_note[0] ? "; worktree: " : "",
	         h->wt_note);
}
