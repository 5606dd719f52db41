/* supervisor/spawner.c: the capsule spawner (see spawner.h).
 *
 * Messages (all on AF_UNIX SOCK_SEQPACKET, one struct per message, checked
 * for magic, type and exact size; fds ride along with SCM_RIGHTS):
 *
 *   control socket, supervisor -> spawner
 *     SP_START   struct sp_start; fds: call channel, interpreter memfd,
 *                blob memfd (staged files, argv, worktree), then the
 *                capsule's stdin/stdout/stderr (those present) and kept fds
 *     SP_NETNS   struct sp_netns; fds: call channel
 *   control socket, spawner -> supervisor (once, at start)
 *     SP_HELLO   struct sp_hello
 *   call channel
 *     SP_STARTED spawner -> supervisor: struct sp_started; fds: pidfd, and
 *                the seccomp listener when the capsule has one
 *     SP_FINISH  supervisor -> spawner: struct sp_finish
 *     SP_DONE    spawner -> supervisor: struct sp_done (also the answer to
 *                SP_NETNS)
 *
 * The spawner's threads wait in one epoll set: the control socket and each
 * live capsule's call channel are armed one-shot, so exactly one thread
 * takes each message. A capsule is started by whichever thread took its
 * SP_START; the threads live as long as the spawner, so the capsule's
 * PR_SET_PDEATHSIG (it dies with the thread that made it) means "with the
 * spawner". End of stream on a call channel before SP_FINISH (the calling
 * thread or process died) kills and reaps that capsule. */
#include "supervisor/spawner.h"
#include "supervisor/agent.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define SP_MAGIC 0x57535031u /* "WSP1" */
enum sp_type { SP_START = 1, SP_NETNS, SP_HELLO, SP_STARTED, SP_FINISH, SP_DONE };
enum { SPF_STDIN = 1, SPF_STDOUT = 2, SPF_STDERR = 4, SPF_AGENT = 8, SPF_ARGV = 16, SPF_WORKTREE = 32, SPF_BLOBFD = 64 };
/* A blob up to this size rides in the start message itself; a larger one
 * (a source near its 1 MiB cap) in a memfd the spawner maps. */
#define SP_INLINE_MAX 16384
#define SP_AGENT_ARG_MAX 64
#define SP_MAX_FDS (6 + CAPSULE_MAX_KEEP_FDS)
#define SP_BLOB_MAX ((size_t)64 << 20)

struct sp_start {
	uint32_t magic, type;
	char profile[32];
	uint32_t flags;
	uint32_t nkeep, nfiles, nargv;
	uint64_t agent_fn; /* the launch-level inside callback: same image on both sides (a fork) */
	uint32_t agent_arg_len;
	/* the agent reads its argument in place: aligned for any type */
	_Alignas(max_align_t) unsigned char agent_arg[SP_AGENT_ARG_MAX];
	uint64_t blob_len;
	unsigned char blob[SP_INLINE_MAX]; /* the first blob_len bytes are sent, unless SPF_BLOBFD */
};
#define SP_START_HDR offsetof(struct sp_start, blob)
struct sp_netns { uint32_t magic, type; uint32_t on; };
struct sp_hello {
	uint32_t magic, type;
	int32_t pid;
	uint32_t swept;
	int32_t keepwarm;
	uint32_t shared_netns;
	uint32_t mount_template;
	char template_error[256];
	char sweep_error[256];
	char error[256]; /* the spawner could not set itself up ("STEP: strerror"); it then exits */
};
struct sp_started { uint32_t magic, type; int32_t rc; uint32_t has_notify; struct world_err err; struct capsule_handle h; };
struct sp_finish { uint32_t magic, type; uint32_t killed; char denied[96]; struct capsule_denial denial; };
struct sp_done { uint32_t magic, type; int32_t rc; struct world_err err; struct capsule_report rep; struct capsule_timing timing; };

/* ---- message transport ---------------------------------------------------- */

static int send_msg(int sock, const void *msg, size_t len, const int *fds, size_t nfds)
{
	struct iovec iov = { (void *)msg, len };
	union { char buf[CMSG_SPACE(sizeof(int) * SP_MAX_FDS)]; struct cmsghdr align; } u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds) {
		memset(&u, 0, sizeof u);
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	for (;;) {
		ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (n == (ssize_t)len) return 0;
		if (n < 0 && errno == EINTR) continue;
		if (n >= 0) errno = EPROTO;
		return -1;
	}
}

static void close_all(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0) close(fds[i]);
}

/* One message of exactly len bytes and type `type`, with up to maxfds fds
 * (*nfds of them received, close-on-exec). Returns 1, 0 at end of stream,
 * -1 with errno (EPROTO: a malformed message; any fds it carried are
 * closed). */
static int recv_msg_n(int sock, void *msg, size_t minlen, size_t len, size_t *got_len, uint32_t type, int *fds,
                      size_t maxfds, size_t *nfds)
{
	struct iovec iov = { msg, len };
	union { char buf[CMSG_SPACE(sizeof(int) * SP_MAX_FDS)]; struct cmsghdr align; } u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
	ssize_t n;
	do n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0) return -1;
	size_t got = 0;
	bool extra = false; /* more fds than the message may carry */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
			if (got < maxfds) fds[got++] = fd;
			else close(fd), extra = true;
		}
	}
	uint32_t hdr[2] = { 0, 0 };
	if (n >= (ssize_t)sizeof hdr) memcpy(hdr, msg, sizeof hdr);
	bool bad = extra || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	           (n != 0 && ((size_t)n < minlen || (size_t)n > len || hdr[0] != SP_MAGIC || hdr[1] != type));
	if (bad || n == 0) {
		close_all(fds, got);
		if (nfds) *nfds = 0;
		if (n == 0 && !bad) return 0;
		errno = EPROTO;
		return -1;
	}
	if (nfds) *nfds = got;
	if (got_len) *got_len = (size_t)n;
	return 1;
}

static int recv_msg(int sock, void *msg, size_t len, uint32_t type, int *fds, size_t maxfds, size_t *nfds)
{
	return recv_msg_n(sock, msg, len, len, NULL, type, fds, maxfds, nfds);
}

/* ---- the blob: staged files, argv, worktree ------------------------------- */

struct blob { unsigned char *p; size_t len, cap; bool failed; };

static void blob_put(struct blob *b, const void *data, size_t len)
{
	if (b->failed) return;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + len) cap *= 2;
		unsigned char *q = realloc(b->p, cap);
		if (!q) { b->failed = true; return; }
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static void blob_put_bytes(struct blob *b, const void *data, size_t len)
{
	uint64_t l = len;
	blob_put(b, &l, sizeof l);
	blob_put(b, data, len);
}

/* The next length-prefixed item of the blob (bounds-checked). */
static const unsigned char *blob_get(const unsigned char *p, size_t len, size_t *off, size_t *item_len)
{
	uint64_t l;
	if (len - *off < sizeof l) return NULL;
	memcpy(&l, p + *off, sizeof l);
	*off += sizeof l;
	if (l > len - *off) return NULL;
	const unsigned char *r = p + *off;
	*off += (size_t)l;
	*item_len = (size_t)l;
	return r;
}

/* ---- the spawner process -------------------------------------------------- */

/* A live capsule: its handle and its call channel (the epoll data of the
 * channel). The capsule library itself knows every live capsule, which is
 * how sp_die kills them (capsule_cgroups_release). */
struct sp_cap {
	int chan;
	struct capsule_handle h;
};

static struct {
	int ctl;        /* the control socket (fd 3) */
	int ep;
} sp = { -1, -1 };

/* A malformed message from the supervisor, or the supervisor gone: kill
 * every capsule, remove the groups, exit (never the inherited atexit
 * handlers: they are the supervisor's). */
static _Noreturn void sp_die(void)
{
	capsule_cgroups_release();
	_exit(0);
}

static int rearm(int fd, void *ptr)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = ptr };
	return epoll_ctl(sp.ep, EPOLL_CTL_MOD, fd, &ev);
}

static const char *cstr(const unsigned char *p, size_t len, char *buf, size_t cap)
{
	if (len >= cap || memchr(p, 0, len)) return NULL;
	memcpy(buf, p, len);
	buf[len] = 0;
	return buf;
}

/* One SP_START: parse, capsule_start, answer on the call channel. */
static void sp_do_start(const struct sp_start *m, size_t mlen, int *fds, size_t nfds)
{
	struct sp_started *ans = calloc(1, sizeof *ans);
	struct sp_cap *cap = calloc(1, sizeof *cap);
	if (!ans || !cap) sp_die();
	ans->magic = SP_MAGIC;
	ans->type = SP_STARTED;
	bool blobfd_sent = m->flags & SPF_BLOBFD;
	size_t want = 2 + blobfd_sent + !!(m->flags & SPF_STDIN) + !!(m->flags & SPF_STDOUT) + !!(m->flags & SPF_STDERR) + m->nkeep;
	if (m->nkeep > CAPSULE_MAX_KEEP_FDS || nfds != want || m->agent_arg_len > SP_AGENT_ARG_MAX ||
	    m->nfiles > 64 || m->nargv > 63 || m->blob_len > SP_BLOB_MAX || memchr(m->profile, 0, sizeof m->profile) == NULL ||
	    (!blobfd_sent && mlen != SP_START_HDR + m->blob_len) || (blobfd_sent && mlen != SP_START_HDR))
		sp_die(); /* the supervisor's own bug: fatal */
	int chan = fds[0], interp = fds[1], blobfd = blobfd_sent ? fds[2] : -1;
	size_t k = 2 + blobfd_sent;
	int in = m->flags & SPF_STDIN ? fds[k++] : -1;
	int out = m->flags & SPF_STDOUT ? fds[k++] : -1;
	int errfd = m->flags & SPF_STDERR ? fds[k++] : -1;
	const int *keep = fds + k;
	const unsigned char *blob = m->blob;
	unsigned char *mapped = NULL;
	if (blobfd_sent && m->blob_len) {
		mapped = mmap(NULL, m->blob_len, PROT_READ, MAP_PRIVATE, blobfd, 0);
		blob = mapped = mapped == MAP_FAILED ? NULL : mapped;
	}
	struct capsule_file files[64];
	const char *argv[64];
	char names[64][128];
	char argbuf[64][256], wt[PATH_MAX];
	const char *worktree = NULL;
	int rc = -1;
	if (m->blob_len && !blob) {
		werr(&ans->err, WX_SETUP, "capsule spawner: map the staged files: %s", strerror(errno));
		goto answer;
	}
	size_t off = 0, l;
	const unsigned char *item;
	for (uint32_t i = 0; i < m->nfiles; i++) {
		if (!(item = blob_get(blob, m->blob_len, &off, &l)) || !cstr(item, l, names[i], sizeof names[i])) sp_die();
		if (!(item = blob_get(blob, m->blob_len, &off, &l))) sp_die();
		files[i] = (struct capsule_file){ names[i], item, l };
	}
	for (uint32_t i = 0; i < m->nargv; i++) {
		if (!(item = blob_get(blob, m->blob_len, &off, &l)) || !cstr(item, l, argbuf[i], sizeof argbuf[i])) sp_die();
		argv[i] = argbuf[i];
	}
	argv[m->nargv] = NULL;
	if (m->flags & SPF_WORKTREE) {
		if (!(item = blob_get(blob, m->blob_len, &off, &l)) || !(worktree = cstr(item, l, wt, sizeof wt))) sp_die();
	}
	if (off != m->blob_len) sp_die();
	const struct capsule_profile *p = capsule_profile_find(m->profile);
	if (!p) {
		werr(&ans->err, WX_SETUP, "capsule spawner: no profile %s", m->profile);
		goto answer;
	}
	struct sup_spawner_agent agent = { NULL, m->agent_arg, m->agent_arg_len };
	memcpy(&agent.inside, &m->agent_fn, sizeof agent.inside);
	struct capsule_spec cs = {
		.profile = p,
		.interp_fd = interp,
		.files = files,
		.nfiles = m->nfiles,
		.argv = m->flags & SPF_ARGV ? argv : NULL,
		.stdin_fd = in,
		.stdout_fd = out,
		.stderr_fd = errfd,
		.keep_fds = keep,
		.nkeep = m->nkeep,
		.inside = m->flags & SPF_AGENT ? capl_spawner_inside : NULL,
		.inside_arg = m->flags & SPF_AGENT ? &agent : NULL,
		.worktree = worktree,
	};
	rc = capsule_start(&cs, &cap->h, &ans->err);
answer:
	if (mapped && munmap(mapped, m->blob_len) < 0) sp_die(); /* cannot fail for our own mapping */
	for (size_t i = 1; i < nfds; i++) close(fds[i]); /* our copies: the capsule has its own */
	ans->rc = rc;
	int pass[2];
	size_t npass = 0;
	if (rc == 0) {
		ans->h = cap->h;
		pass[npass++] = cap->h.pidfd;
		if (cap->h.notify_fd >= 0) pass[npass++] = cap->h.notify_fd, ans->has_notify = 1;
	}
	if (send_msg(chan, ans, sizeof *ans, pass, npass) < 0 || rc < 0) {
		/* the caller is gone (or nothing started): undo at once */
		if (rc == 0) {
			struct capsule_report r;
			struct world_err e;
			capsule_kill(&cap->h);
			(void)capsule_finish(&cap->h, &r, &e);
		}
		close(chan);
		free(cap);
		free(ans);
		return;
	}
	free(ans);
	cap->chan = chan;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = cap };
	if (epoll_ctl(sp.ep, EPOLL_CTL_ADD, chan, &ev) < 0) sp_die();
}

/* The call channel of a live capsule is readable: SP_FINISH, or the caller
 * is gone. Either way the capsule is reaped and forgotten. */
static void sp_do_finish(struct sp_cap *cap)
{
	struct sp_finish m;
	int r = recv_msg(cap->chan, &m, sizeof m, SP_FINISH, NULL, 0, NULL);
	if (r == 1) {
		if (m.killed) cap->h.killed = true;
		if (!cap->h.denied[0] && memchr(m.denied, 0, sizeof m.denied)) {
			snprintf(cap->h.denied, sizeof cap->h.denied, "%s", m.denied);
			/* the caller's listener read these; the strings end inside their arrays */
			cap->h.denial = m.denial;
			cap->h.denial.syscall[sizeof cap->h.denial.syscall - 1] = 0;
			cap->h.denial.arch[sizeof cap->h.denial.arch - 1] = 0;
			cap->h.denial.cmd_name[sizeof cap->h.denial.cmd_name - 1] = 0;
		}
	} else {
		capsule_kill(&cap->h); /* the caller died with its capsule running */
	}
	if (epoll_ctl(sp.ep, EPOLL_CTL_DEL, cap->chan, NULL) < 0) sp_die(); /* it is registered: a bug */
	struct sp_done *d = calloc(1, sizeof *d);
	if (!d) sp_die();
	d->magic = SP_MAGIC;
	d->type = SP_DONE;
	d->rc = capsule_finish(&cap->h, &d->rep, &d->err);
	d->timing = cap->h.timing;
	if (r == 1) (void)send_msg(cap->chan, d, sizeof *d, NULL, 0);
	free(d);
	close(cap->chan);
	free(cap);
}

static void sp_do_control(void)
{
	union sp_ctl_msg { struct sp_start s; struct sp_netns n; uint32_t hdr[2]; };
	union sp_ctl_msg *mp = malloc(sizeof *mp); /* 16 KiB: not on a small stack */
	if (!mp) sp_die();
	size_t mlen = 0;
	int fds[SP_MAX_FDS];
	size_t nfds = 0;
	/* Peek at the type, then take the whole message with its fds. */
	ssize_t n;
	do n = recv(sp.ctl, mp->hdr, sizeof mp->hdr, MSG_PEEK);
	while (n < 0 && errno == EINTR);
	if (n <= 0) sp_die(); /* the supervisor is gone */
	if (n != sizeof mp->hdr || mp->hdr[0] != SP_MAGIC) sp_die();
	uint32_t type = mp->hdr[1];
	int r = type == SP_START ? recv_msg_n(sp.ctl, &mp->s, SP_START_HDR, sizeof mp->s, &mlen, SP_START, fds, SP_MAX_FDS, &nfds)
	        : type == SP_NETNS ? recv_msg(sp.ctl, &mp->n, sizeof mp->n, SP_NETNS, fds, 1, &nfds)
	                           : -1;
	if (r <= 0) sp_die();
	if (rearm(sp.ctl, NULL) < 0) sp_die();
	if (type == SP_START) {
		if (nfds < 2) sp_die();
		sp_do_start(&mp->s, mlen, fds, nfds);
		free(mp);
		return;
	}
	if (nfds != 1) sp_die();
	struct sp_done *d = calloc(1, sizeof *d);
	if (!d) sp_die();
	d->magic = SP_MAGIC;
	d->type = SP_DONE;
	d->rc = capsule_netns_share(mp->n.on != 0, &d->err);
	(void)send_msg(fds[0], d, sizeof *d, NULL, 0);
	free(d);
	free(mp);
	close(fds[0]);
}

static void *sp_worker(void *arg)
{
	(void)arg;
	/* A filesystem context of its own: a start may then enter the template
	 * mount namespace around its clone (capsule_mount_template). Without
	 * it (it cannot fail but for memory) capsules start the old way. */
	(void)capsule_thread_private_fs();
	for (;;) {
		struct epoll_event ev;
		int n = epoll_wait(sp.ep, &ev, 1, -1);
		if (n < 0 && errno == EINTR) continue;
		if (n < 0) sp_die();
		if (n == 0) continue;
		if (!ev.data.ptr) sp_do_control();
		else sp_do_finish(ev.data.ptr);
	}
	return NULL;
}

/* A set-up step failed: say which on the control socket, and exit. */
static _Noreturn void sp_setup_fail(int ctl, const char *step, int e)
{
	struct sp_hello h;
	memset(&h, 0, sizeof h);
	h.magic = SP_MAGIC;
	h.type = SP_HELLO;
	h.pid = (int32_t)getpid();
	snprintf(h.error, sizeof h.error, "%s: %s", step, strerror(e));
	(void)send_msg(ctl, &h, sizeof h, NULL, 0);
	_exit(1);
}

static _Noreturn void sp_main(int ctl, const struct sup_spawner_opts *o)
{
	/* The name shows in ps and in the tests' process checks. */
	if (prctl(PR_SET_NAME, "world-spawner", 0, 0, 0) < 0) sp_setup_fail(ctl, "prctl PR_SET_NAME", errno);
	/* Signals: the supervisor's handlers and mask are not ours. */
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP && signal(s, SIG_DFL) == SIG_ERR && errno != EINVAL)
			sp_setup_fail(ctl, "reset signal dispositions", errno);
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR || signal(SIGINT, SIG_IGN) == SIG_ERR || /* ^C: the supervisor's */
	    signal(SIGHUP, SIG_IGN) == SIG_ERR)
		sp_setup_fail(ctl, "ignore SIGPIPE, SIGINT, SIGHUP", errno);
	sigset_t none;
	sigemptyset(&none);
	int me = pthread_sigmask(SIG_SETMASK, &none, NULL);
	if (me != 0) sp_setup_fail(ctl, "reset the signal mask", me);
	/* The supervisor's fds are not ours either: keep 0-2 (diagnostics) and
	 * the control socket, as fd 3. A shared network namespace the
	 * supervisor held goes with them (the spawner makes its own). */
	(void)capsule_netns_share(false, NULL);
	if (ctl != 3) {
		if (dup2(ctl, 3) < 0) sp_setup_fail(ctl, "dup2 the control socket", errno);
		ctl = 3;
	}
	if (syscall(SYS_close_range, 4U, ~0U, 0U) < 0) sp_setup_fail(ctl, "close_range", errno);
	if (fcntl(ctl, F_SETFD, FD_CLOEXEC) < 0) sp_setup_fail(ctl, "fcntl FD_CLOEXEC", errno);
	sp.ctl = ctl;
	struct sp_hello hello;
	memset(&hello, 0, sizeof hello);
	hello.magic = SP_MAGIC;
	hello.type = SP_HELLO;
	hello.pid = (int32_t)getpid();
	struct world_err e = { 0, "" };
	if (capsule_cgroups_sweep(&hello.swept, &e) < 0) snprintf(hello.sweep_error, sizeof hello.sweep_error, "%.*s", (int)sizeof hello.sweep_error - 1, e.msg);
	(void)capsule_cleanup_on_signals(); /* SIGTERM: groups removed, then die */
	/* The agent's arena is reserved in the maker of the capsules, before
	 * the clone (supervisor/agent.h): here, not in the supervisor. */
	(void)sup_agent_reserve();
	(void)capsule_prepare(capsule_profile_find("transition"));
	hello.keepwarm = o->keepwarm ? capsule_cgroup_keepwarm(true) : 0;
	hello.shared_netns = geteuid() == 0 && capsule_netns_share(true, &e) == 0;
	if (geteuid() == 0) {
		e = (struct world_err){ 0, "" };
		hello.mount_template = capsule_mount_template(true, &e) == 0;
		if (!hello.mount_template)
			snprintf(hello.template_error, sizeof hello.template_error, "%.*s", (int)sizeof hello.template_error - 1, e.msg);
	}
	sp.ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = NULL };
	if (sp.ep < 0 || epoll_ctl(sp.ep, EPOLL_CTL_ADD, ctl, &ev) < 0) sp_setup_fail(ctl, "epoll", errno);
	/* A fixed pool: the spawner's size must not grow with the calls in
	 * flight (that is its point). 8 MiB stacks, as a default thread's: the
	 * agent runs on a copy of its maker's stack (only touched pages cost a
	 * clone anything). */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nthreads = ncpu < 1 ? 2 : ncpu > 4 ? 8 : (int)ncpu * 2;
	pthread_attr_t at;
	int ae = pthread_attr_init(&at);
	if (ae == 0) ae = pthread_attr_setstacksize(&at, (size_t)8 << 20);
	if (ae != 0) sp_setup_fail(ctl, "pthread_attr", ae);
	int made = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_t t;
		if (pthread_create(&t, &at, sp_worker, NULL) != 0) break; /* fewer threads, still correct */
		(void)pthread_detach(t); /* cannot fail for a thread just made */
		made++;
	}
	(void)pthread_attr_destroy(&at); /* cannot fail on glibc */
	if (send_msg(ctl, &hello, sizeof hello, NULL, 0) < 0) sp_die();
	/* The main thread makes no capsule unless it must: a capsule's child
	 * runs on a copy of its maker's stack, and this one may be a process's
	 * growable main stack, which the child's RLIMIT_AS could keep from
	 * growing (under a sanitizer's shadow); a pool thread's is one fixed
	 * mapping. */
	if (made == 0) sp_worker(NULL);
	for (;;) pause();
}

/* ---- the supervisor's side ------------------------------------------------ */

static struct {
	pthread_mutex_t mu;
	int ctl;      /* -1: no spawner */
	pid_t pid;
	bool broken;  /* a malformed answer or the spawner gone: not used again */
	pid_t owner;  /* the process that started it (a forked copy has none) */
	int pidfd;    /* the spawner's pidfd: readable once it exited */
	struct sup_spawner_info info;
} cl = { PTHREAD_MUTEX_INITIALIZER, -1, -1, false, 0, -1, { 0 } };

/* Under cl.mu: a forked copy of the supervisor forgets its parent's
 * spawner (it is not this process's: its capsules would be made with the
 * parent's credentials and die with the parent's spawner), closing its copy
 * of the control socket. */
static void cl_own_locked(void)
{
	if (cl.ctl < 0 || cl.owner == getpid()) return;
	close(cl.ctl);
	if (cl.pidfd >= 0) close(cl.pidfd);
	cl.ctl = cl.pidfd = -1;
	cl.pid = -1;
	cl.broken = false;
}

int sup_spawner_start(const struct sup_spawner_opts *o, struct sup_spawner_info *info, struct world_err *err)
{
	static const struct sup_spawner_opts defaults = { false };
	if (!o) o = &defaults;
	pthread_mutex_lock(&cl.mu);
	cl_own_locked();
	if (cl.ctl >= 0) {
		if (info) *info = cl.info;
		pthread_mutex_unlock(&cl.mu);
		return 0;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		pthread_mutex_unlock(&cl.mu);
		return werr(err, WX_SETUP, "capsule spawner: socketpair: %s", strerror(errno));
	}
	fflush(NULL); /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		pthread_mutex_unlock(&cl.mu);
		return werr(err, WX_SETUP, "capsule spawner: fork: %s", strerror(e));
	}
	if (pid == 0) {
		close(sv[0]);
		sp_main(sv[1], o);
	}
	close(sv[1]);
	struct sp_hello h;
	char why[300] = "";
	int pidfd = -1;
	int r = recv_msg(sv[0], &h, sizeof h, SP_HELLO, NULL, 0, NULL);
	if (r != 1)
		snprintf(why, sizeof why, "%s", r == 0 ? "ended before its first message" : strerror(errno));
	else if (h.error[0])
		snprintf(why, sizeof why, "%.*s", (int)sizeof h.error - 1, h.error);
	else if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) /* close-on-exec, as every pidfd */
		snprintf(why, sizeof why, "pidfd_open: %s", strerror(errno));
	if (why[0]) {
		close(sv[0]); /* a spawner still running ends at end of stream */
		(void)waitpid(pid, NULL, 0);
		pthread_mutex_unlock(&cl.mu);
		return werr(err, WX_SETUP, "capsule spawner: %s", why);
	}
	cl.pidfd = pidfd;
	cl.ctl = sv[0];
	cl.pid = pid;
	cl.broken = false;
	cl.owner = getpid();
	memset(&cl.info, 0, sizeof cl.info);
	cl.info.pid = pid;
	cl.info.swept = h.swept;
	cl.info.keepwarm = h.keepwarm;
	cl.info.shared_netns = h.shared_netns != 0;
	cl.info.mount_template = h.mount_template != 0;
	h.template_error[sizeof h.template_error - 1] = 0;
	snprintf(cl.info.template_error, sizeof cl.info.template_error, "%s", h.template_error);
	h.sweep_error[sizeof h.sweep_error - 1] = 0;
	snprintf(cl.info.sweep_error, sizeof cl.info.sweep_error, "%s", h.sweep_error);
	if (info) *info = cl.info;
	pthread_mutex_unlock(&cl.mu);
	return 0;
}

/* Under cl.mu: the spawner process is gone (its pidfd is readable once
 * every thread of it exited). Its socket may outlive it for a moment in a
 * process that inherited it (a capsule cloned from it, still in its
 * setup), so its end of stream comes late; the process itself is the
 * truth. A spawner that exited is reaped here. */
static bool cl_dead_locked(void)
{
	if (cl.pidfd < 0) return true;
	struct pollfd p = { cl.pidfd, POLLIN, 0 };
	if (poll(&p, 1, 0) <= 0) return false;
	(void)waitpid(cl.pid, NULL, WNOHANG); /* ours to reap, if nobody did */
	close(cl.pidfd);
	cl.pidfd = -1;
	cl.pid = -1;
	return true;
}

/* Wait for an answer on a call channel: readable, or the spawner gone
 * (checked every 100 ms). Returns 1 when readable, 0 when gone. */
static int await_answer(int chan)
{
	for (;;) {
		struct pollfd p = { chan, POLLIN, 0 };
		int n = poll(&p, 1, 100);
		if (n > 0) return 1;
		if (n < 0 && errno != EINTR) return 1; /* let recvmsg report it */
		pthread_mutex_lock(&cl.mu);
		bool dead = cl_dead_locked();
		if (dead) cl.broken = true;
		pthread_mutex_unlock(&cl.mu);
		if (dead) return 0;
	}
}

bool sup_spawner_running(void)
{
	pthread_mutex_lock(&cl.mu);
	cl_own_locked();
	/* Either sign: the spawner never writes on the control socket after its
	 * hello, so anything readable there is its end of stream (its fds go
	 * early in its exit, before its pidfd turns readable); and its pidfd,
	 * for when another process still holds that socket. */
	if (cl.ctl >= 0 && !cl.broken) {
		struct pollfd p = { cl.ctl, POLLIN | POLLRDHUP, 0 };
		if ((poll(&p, 1, 0) > 0 && p.revents) || cl_dead_locked()) cl.broken = true;
	}
	bool on = cl.ctl >= 0 && !cl.broken;
	pthread_mutex_unlock(&cl.mu);
	return on;
}

void sup_spawner_stop(void)
{
	pthread_mutex_lock(&cl.mu);
	cl_own_locked();
	if (cl.ctl >= 0) {
		close(cl.ctl);
		while (cl.pid > 0 && waitpid(cl.pid, NULL, 0) < 0 && errno == EINTR) {}
	}
	if (cl.pidfd >= 0) close(cl.pidfd);
	cl.ctl = cl.pidfd = -1;
	cl.pid = -1;
	pthread_mutex_unlock(&cl.mu);
}

/* The control socket, or -1 with the error set. */
static int ctl_fd(struct world_err *err)
{
	pthread_mutex_lock(&cl.mu);
	cl_own_locked();
	int fd = cl.broken ? -1 : cl.ctl;
	pthread_mutex_unlock(&cl.mu);
	if (fd < 0) werr(err, WX_SETUP, "capsule spawner: not running");
	return fd;
}

static int broken(struct world_err *err, const char *what)
{
	int e = errno;
	pthread_mutex_lock(&cl.mu);
	cl.broken = true;
	(void)cl_dead_locked(); /* a spawner that died is reaped now, not left a zombie */
	pthread_mutex_unlock(&cl.mu);
	return werr(err, WX_SETUP, "capsule spawner: %s: %s", what, e == EPROTO                          ? "malformed message"
	            : e && e != EPIPE && e != ECONNRESET ? strerror(e)
	                                                 : "gone");
}

/* Send msg on the control socket with a new call channel as its first fd
 * (fds[0] is filled in; the far end goes with the message); *chan is our
 * end, on which the spawner answers. */
static int ask(int ctl, const void *msg, size_t len, int *fds, size_t nfds, int *chan, struct world_err *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return werr(err, WX_SETUP, "capsule spawner: socketpair: %s", strerror(errno));
	fds[0] = sv[1];
	int rc = send_msg(ctl, msg, len, fds, nfds);
	int e = errno;
	close(sv[1]);
	if (rc < 0) {
		close(sv[0]);
		errno = e;
		return broken(err, "send");
	}
	*chan = sv[0];
	return 0;
}

int sup_spawner_netns_share(bool on, struct world_err *err)
{
	int ctl = ctl_fd(err);
	if (ctl < 0) return -1;
	struct sp_netns m = { SP_MAGIC, SP_NETNS, on };
	int fds[1], chan;
	if (ask(ctl, &m, sizeof m, fds, 1, &chan, err) < 0) return -1;
	struct sp_done *d = calloc(1, sizeof *d);
	if (!d) return close(chan), werr(err, WX_FAIL, "capsule spawner: out of memory");
	int r = await_answer(chan) ? recv_msg(chan, d, sizeof *d, SP_DONE, NULL, 0, NULL) : 0;
	close(chan);
	if (r == 0) errno = 0;
	int rc = r == 1 ? d->rc : broken(err, "network namespace");
	if (r == 1 && rc < 0 && err) *err = d->err;
	free(d);
	return rc;
}

/* A memfd holding the blob (the spawner maps it). */
static int blob_fd(const struct blob *b, struct world_err *err)
{
	int fd = memfd_create("world-spawn", MFD_CLOEXEC);
	if (fd < 0) return werr(err, WX_SETUP, "capsule spawner: memfd_create: %s", strerror(errno));
	size_t done = 0;
	while (done < b->len) {
		ssize_t n = write(fd, b->p + done, b->len - done);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(fd);
			return werr(err, WX_SETUP, "capsule spawner: write the staged files: %s", strerror(e));
		}
		done += (size_t)n;
	}
	return fd;
}

int sup_spawner_capsule_start(const struct capsule_spec *spec, const struct sup_spawner_agent *agent,
                              struct capsule_handle *h, int *chan, struct world_err *err)
{
	memset(h, 0, sizeof *h);
	h->pid = -1;
	h->pidfd = h->notify_fd = h->setup_fd = h->mntns_fd = h->mntns_req = -1;
	*chan = -1;
	if (spec->nkeep > CAPSULE_MAX_KEEP_FDS || spec->nfiles > 64 || (agent && agent->arg_len > SP_AGENT_ARG_MAX) ||
	    strlen(spec->profile->name) >= sizeof ((struct sp_start *)0)->profile)
		return werr(err, WX_USAGE, "capsule spawner: start request out of range");
	int ctl = ctl_fd(err);
	if (ctl < 0) return -1;
	struct sp_start *m = calloc(1, sizeof *m);
	struct sp_started *ans = calloc(1, sizeof *ans);
	struct blob b = { NULL, 0, 0, false };
	int fds[SP_MAX_FDS], nfds = 0, bfd = -1, c = -1, rc = -1;
	if (!m || !ans) {
		werr(err, WX_FAIL, "capsule spawner: out of memory");
		goto out;
	}
	m->magic = SP_MAGIC;
	m->type = SP_START;
	snprintf(m->profile, sizeof m->profile, "%s", spec->profile->name);
	for (size_t i = 0; i < spec->nfiles; i++) {
		blob_put_bytes(&b, spec->files[i].name, strlen(spec->files[i].name));
		blob_put_bytes(&b, spec->files[i].data, spec->files[i].len);
	}
	m->nfiles = (uint32_t)spec->nfiles;
	if (spec->argv) {
		m->flags |= SPF_ARGV;
		for (; spec->argv[m->nargv]; m->nargv++) {
			if (m->nargv == 63 || strlen(spec->argv[m->nargv]) >= 256) {
				werr(err, WX_USAGE, "capsule spawner: interpreter arguments out of range");
				goto out;
			}
			blob_put_bytes(&b, spec->argv[m->nargv], strlen(spec->argv[m->nargv]));
		}
	}
	if (spec->worktree) {
		/* The spawner resolves paths in its own working directory, which
		 * is the supervisor's at the fork: make a relative one absolute
		 * here (no symlink is resolved: capsule_start refuses one). */
		char abs[PATH_MAX], cwd[PATH_MAX];
		const char *wt = spec->worktree;
		if (wt[0] != '/') {
			if (!getcwd(cwd, sizeof cwd) || (size_t)snprintf(abs, sizeof abs, "%s/%s", cwd, wt) >= sizeof abs) {
				werr(err, WX_BAD_INPUT, "worktree %s: cannot make the path absolute", wt);
				goto out;
			}
			wt = abs;
		}
		m->flags |= SPF_WORKTREE;
		blob_put_bytes(&b, wt, strlen(wt));
	}
	if (b.failed) {
		werr(err, WX_FAIL, "capsule spawner: out of memory");
		goto out;
	}
	m->blob_len = b.len;
	size_t mlen = SP_START_HDR;
	if (b.len <= SP_INLINE_MAX) {
		if (b.len) memcpy(m->blob, b.p, b.len);
		mlen += b.len;
	} else {
		if ((bfd = blob_fd(&b, err)) < 0) goto out;
		m->flags |= SPF_BLOBFD;
	}
	if (agent && agent->inside) {
		m->flags |= SPF_AGENT;
		memcpy(&m->agent_fn, &agent->inside, sizeof agent->inside);
		m->agent_arg_len = (uint32_t)agent->arg_len;
		if (agent->arg_len) memcpy(m->agent_arg, agent->arg, agent->arg_len);
	}
	fds[nfds++] = -1; /* the call channel (ask) */
	fds[nfds++] = spec->interp_fd;
	if (bfd >= 0) fds[nfds++] = bfd;
	if (spec->stdin_fd >= 0) m->flags |= SPF_STDIN, fds[nfds++] = spec->stdin_fd;
	if (spec->stdout_fd >= 0) m->flags |= SPF_STDOUT, fds[nfds++] = spec->stdout_fd;
	if (spec->stderr_fd >= 0) m->flags |= SPF_STDERR, fds[nfds++] = spec->stderr_fd;
	for (size_t i = 0; i < spec->nkeep; i++) fds[nfds++] = spec->keep_fds[i];
	m->nkeep = (uint32_t)spec->nkeep;
	if (ask(ctl, m, mlen, fds, (size_t)nfds, &c, err) < 0) goto out;
	int got[2] = { -1, -1 };
	size_t ngot = 0;
	int r = await_answer(c) ? recv_msg(c, ans, sizeof *ans, SP_STARTED, got, 2, &ngot) : 0;
	if (r != 1) {
		if (r == 0) errno = 0; /* end of stream: the spawner is gone */
		broken(err, "start");
		goto out;
	}
	if (ans->rc < 0) {
		close_all(got, ngot);
		if (err) *err = ans->err;
		goto out;
	}
	if (ngot != 1u + (ans->has_notify != 0)) {
		close_all(got, ngot);
		errno = EPROTO;
		broken(err, "start");
		goto out;
	}
	*h = ans->h;
	h->pidfd = got[0];
	h->notify_fd = ans->has_notify ? got[1] : -1;
	h->setup_fd = h->mntns_fd = h->mntns_req = -1; /* the spawner's */
	*chan = c;
	c = -1;
	rc = 0;
out:
	if (c >= 0) close(c);
	if (bfd >= 0) close(bfd);
	free(b.p);
	free(m);
	free(ans);
	return rc;
}

int sup_spawner_finish(int chan, struct capsule_handle *h, struct capsule_report *r, struct world_err *err)
{
	memset(r, 0, sizeof *r);
	struct sp_finish m;
	memset(&m, 0, sizeof m);
	m.magic = SP_MAGIC;
	m.type = SP_FINISH;
	m.killed = h->killed;
	snprintf(m.denied, sizeof m.denied, "%s", h->denied);
	m.denial = h->denial;
	int rc = -1;
	struct sp_done *d = calloc(1, sizeof *d);
	if (!d) {
		werr(err, WX_FAIL, "capsule spawner: out of memory");
	} else if (send_msg(chan, &m, sizeof m, NULL, 0) < 0) {
		broken(err, "finish");
	} else {
		int rr = await_answer(chan) ? recv_msg(chan, d, sizeof *d, SP_DONE, NULL, 0, NULL) : 0;
		if (rr != 1) {
			if (rr == 0) errno = 0;
			broken(err, "finish");
		} else {
			*r = d->rep;
			h->timing.ns[CAPSULE_T_REAP] = d->timing.ns[CAPSULE_T_REAP];
			h->timing.ns[CAPSULE_T_FINISH] = d->timing.ns[CAPSULE_T_FINISH];
			rc = d->rc;
			if (rc < 0 && err) *err = d->err;
		}
	}
	free(d);
	close(chan);
	if (h->pidfd >= 0) close(h->pidfd);
	if (h->notify_fd >= 0) close(h->notify_fd);
	h->pidfd = h->notify_fd = -1;
	h->reaped = true;
	return rc;
}
