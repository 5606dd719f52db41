/* capsule/namespaces.c: the namespace lifecycle of capsule/ (see capsule.h).
 *
 * Owns: the capsule's mount namespace released off the reaping path (a
 * reference taken after the clone, dropped by a closer thread with a file
 * table of its own); the shared empty network namespace root capsules join
 * (capsule_netns_share); the template mount namespace root capsules are
 * cloned from (capsule_mount_template), and a thread's private filesystem
 * context that entering it needs. capsule.c enters the shared network
 * namespace and the template around its clone3 and holds and releases a
 * capsule's mount namespace through capsule_int.h; nothing here starts a
 * capsule. */
#include "capsule/capsule.h"
#include "capsule/capsule_int.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PIDFD_GET_MNT_NAMESPACE
#define PIDFD_GET_MNT_NAMESPACE _IO(0xFF, 3) /* linux/pidfd.h, 6.11 */
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* ---- the capsule's mount namespace, released off the reaping path ------
 * The last reference to a mount namespace unmounts its tree and waits for
 * an expedited RCU grace period (namespace_unlock): tens of microseconds.
 * Held by the capsule's init alone, that wait falls in its exit, before the
 * parent can reap it. So the parent takes a reference of its own right after the clone
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
 * over to be closed. Anything that does not work out falls back to the
 * plain way: the last close where it happens. The capsule's tmpfs pages stay charged
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

void mntns_hold(struct capsule_handle *h)
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
void mntns_release(struct capsule_handle *h)
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
void mntns_wait(struct capsule_handle *h)
{
	if (h->mntns_req < 0) return;
	struct ns_req *r = &nsc.req[h->mntns_req];
	pthread_mutex_lock(&nsc.mu);
	while (r->gen == h->mntns_gen) pthread_cond_wait(&nsc.done, &nsc.mu);
	pthread_mutex_unlock(&nsc.mu);
	h->mntns_req = -1;
}

/* ---- the shared network namespace ---------------------------------------- */

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

int netns_enter_shared(void)
{
	int own = -1;
	pthread_rwlock_rdlock(&shared_net_rw);
	if (shared_net_fd >= 0) {
		own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (own >= 0 && setns(shared_net_fd, CLONE_NEWNET) < 0) close_fd(&own);
	}
	pthread_rwlock_unlock(&shared_net_rw);
	return own;
}

/* ---- the template mount namespace --------------------------------------
 * CLONE_NEWNS copies the whole mount table of the thread that clones (tens
 * of mounts, hundreds on a container host), and the old root that
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
int tmpl_enter(struct tmpl_stay *t)
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
int tmpl_leave(struct tmpl_stay *t)
{
	int rc = setns(t->own_ns, CLONE_NEWNS) == 0 && fchdir(t->own_cwd) == 0 ? 0 : -1;
	int e = errno;
	close_fd(&t->own_ns);
	close_fd(&t->own_cwd);
	pthread_sigmask(SIG_SETMASK, &t->mask, NULL);
	errno = e;
	return rc;
}
