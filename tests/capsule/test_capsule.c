/* tests/capsule/test_capsule.c: the capsule API (capsule.h, run.h):
 * the pin and its seals, hash mismatch, static-ELF check, a run through
 * capsule_run, the `inside` callback spawning the interpreter twice and
 * speaking over a kept fd, kill, the denial report, setup errors, fd
 * hygiene and cleanup (no fd, cgroup or process left). */
#include "capsule/run.h"
#include "tests/tap.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


static char fixture[4096];

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d) return -1;
	struct dirent *e;
	while ((e = readdir(d))) if (e->d_name[0] != '.') n++;
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

/* This process's capsule groups (world-capsule-<pid>-*), sorted, one line each. */
static void own_groups(char *out, size_t n)
{
	char cmd[200];
	snprintf(cmd, sizeof cmd, "find /sys/fs/cgroup -maxdepth 7 -type d -name 'world-capsule-%d-*' 2>/dev/null | sort",
	         (int)getpid());
	out[0] = 0;
	FILE *p = popen(cmd, "r");
	if (!p) return;
	size_t len = fread(out, 1, n - 1, p);
	out[len] = 0;
	pclose(p);
}

static void sha256_of(const char *path, char *out)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
	FILE *p = popen(cmd, "r");
	out[0] = 0;
	if (!p) return;
	char hexs[65] = "";
	if (fscanf(p, "%64s", hexs) == 1) snprintf(out, 80, "sha256:%s", hexs);
	pclose(p);
}

/* Run the fixture with `cmd` as its source; returns the result. */
static int run_fixture(const char *cmd, int memfd, struct capsule_run_result *res, struct world_err *err)
{
	struct capsule_run_req req = {
		.profile = capsule_profile_find("transition"), .interp_fd = memfd,
		.source = cmd, .source_len = strlen(cmd), .input_json = "{\"k\":[1,2]}", .wall_ms = 3000,
	};
	return capsule_run(&req, res, err);
}

struct inside_arg { int dummy; };

/* One of many threads each starting and finishing 5 capsules at once. */
struct thr_arg { int memfd; int good; char err[1100]; };
static void *start_many(void *a)
{
	struct thr_arg *t = a;
	const struct capsule_profile *p = capsule_profile_find("transition");
	for (int i = 0; i < 5; i++) {
		struct capsule_run_req req = { .profile = p, .interp_fd = t->memfd, .source = "echo", .source_len = 4,
		                               .input_json = "{\"k\":1}", .wall_ms = 10000 };
		struct capsule_run_result res;
		struct world_err err = { 0, "" };
		if (capsule_run(&req, &res, &err) < 0) {
			snprintf(t->err, sizeof t->err, "%s", err.msg);
			continue;
		}
		if (res.report.exited && res.report.exit_status == 0 && res.out && strstr(res.out, "\"args\""))
			t->good++;
		else
			snprintf(t->err, sizeof t->err, "status %d signal %d: %.100s %.100s", res.report.exit_status,
			         res.report.term_signal, res.report.setup_error, res.errout ? res.errout : "");
		capsule_run_result_free(&res);
	}
	return NULL;
}

/* A thread that keeps creating and joining threads: a raw clone taken
 * meanwhile inherits glibc's thread list mid-change (the "setxid" hang). */
static volatile int churn_stop;
static void *churn_nop(void *a) { return a; }
static void *churn(void *a)
{
	while (!churn_stop) {
		pthread_t t;
		if (pthread_create(&t, NULL, churn_nop, NULL) == 0) pthread_join(t, NULL);
	}
	return a;
}

/* Runs inside the confined capsule: spawn the interpreter twice (plan and
 * finish, as the supervisor's agent will) and report both outputs on fd 3. */
static int inside_agent(const struct capsule_ctx *ctx, void *arg)
{
	(void)arg;
	if (ctx->nkept != 1 || ctx->kept_fds[0] != 3) return 40;
	static const char *const av[] = { "ailang", "run", "--quiet", "--caps", "", "--entry", "main",
	                                  "--args-file", "args.json", "host/capsule/main.ail", NULL };
	for (int round = 0; round < 2; round++) {
		int p[2];
		if (pipe(p) < 0) return 41;
		pid_t pid = capsule_spawn_interpreter(ctx, av, -1, p[1], -1);
		if (pid < 0) return 42;
		close(p[1]);
		char buf[512];
		ssize_t n, tot = 0;
		while ((n = read(p[0], buf + tot, sizeof buf - 1 - (size_t)tot)) > 0) tot += n;
		close(p[0]);
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 43;
		char line[600];
		int l = snprintf(line, sizeof line, "round%d %.*s", round, (int)tot, buf);
		if (write(3, line, (size_t)l) != l) return 44;
	}
	return 0;
}


/* ---- the template mount namespace (capsule_mount_template) ---- */

/* Start one capsule of `cmd` with stdout into a pipe; its output, whether
 * it was cloned from the template, and (while it runs, for "sleep") its
 * mountinfo as the host sees it. */
struct direct { char out[4096]; bool tmpl; int mounts; bool only_capsule_mounts; char first_bad[256]; int rc; };
static void run_direct(const char *cmd, int memfd, struct direct *d)
{
	memset(d, 0, sizeof *d);
	d->rc = -1;
	struct capsule_file files[] = { { "host/capsule/main.ail", cmd, strlen(cmd) }, { "args.json", "\"{}\"", 4 },
	                                { ".capsule-cache/", NULL, 0 } };
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) return;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct capsule_spec spec = { .profile = capsule_profile_find("transition"), .interp_fd = memfd, .files = files,
	                             .nfiles = 3, .stdin_fd = null, .stdout_fd = p[1], .stderr_fd = null };
	struct capsule_handle h;
	struct world_err err;
	if (capsule_start(&spec, &h, &err) < 0) {
		snprintf(d->first_bad, sizeof d->first_bad, "start: %.200s", err.msg);
		close(p[0]);
		close(p[1]);
		if (null >= 0) close(null);
		return;
	}
	close(p[1]);
	if (null >= 0) close(null);
	d->tmpl = h.mount_template;
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/mountinfo", (int)h.pid);
	FILE *f = fopen(path, "r");
	d->only_capsule_mounts = f != NULL;
	while (f && fgets(line, sizeof line, f)) {
		d->mounts++;
		/* "... - FSTYPE SOURCE OPTIONS": only the capsule's own tmpfs mounts */
		char *dash = strstr(line, " - "), fstype[64] = "", source[128] = "";
		if (!dash || sscanf(dash + 3, "%63s %127s", fstype, source) != 2 || strcmp(fstype, "tmpfs") != 0 ||
		    (strcmp(source, "capsule") != 0 && strcmp(source, "capsule-cache") != 0)) {
			if (d->only_capsule_mounts) snprintf(d->first_bad, sizeof d->first_bad, "%.200s", line);
			d->only_capsule_mounts = false;
		}
	}
	if (f) fclose(f);
	if (strncmp(cmd, "sleep", 5) == 0) capsule_kill(&h);
	size_t got = 0;
	ssize_t n;
	while ((n = read(p[0], d->out + got, sizeof d->out - 1 - got)) > 0) got += (size_t)n;
	close(p[0]);
	struct capsule_report rep;
	d->rc = capsule_finish(&h, &rep, &err) == 0 && (rep.exited || rep.killed) ? 0 : -1;
}

struct thread_start { int memfd; bool private_fs; struct direct d; };
static void *start_from_thread(void *a)
{
	struct thread_start *t = a;
	if (t->private_fs && capsule_thread_private_fs() < 0) return NULL;
	run_direct("echo", t->memfd, &t->d);
	return NULL;
}

static void test_mount_template(int memfd)
{
	struct world_err err = { 0, "" };
	if (geteuid() != 0) {
		ok(capsule_mount_template(true, &err) < 0 && err.code == WX_SETUP && strstr(err.msg, "needs root"),
		   "unprivileged: no template mount namespace (%s)", err.msg);
		struct direct d;
		run_direct("echo", memfd, &d);
		ok(d.rc == 0 && !d.tmpl, "unprivileged capsules copy the caller's mount table (and run)");
		return;
	}
	/* control: the old way, and what this process itself sees */
	struct direct old, now;
	run_direct("sleep", memfd, &old);
	ok(old.rc == 0 && !old.tmpl, "without the template the capsule is cloned from this process's mount table");
	ok(old.only_capsule_mounts, "... and after its detach only the capsule's own mounts are left (%d)", old.mounts);
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int own = 0, own_other = 0;
	char line[1024];
	while (f && fgets(line, sizeof line, f)) {
		own++;
		if (!strstr(line, " - tmpfs capsule ")) own_other++;
	}
	if (f) fclose(f);
	ok(own_other > 0, "control: the same reading of this process's mountinfo sees host mounts (%d of %d)", own_other, own);

	ok(capsule_mount_template(true, &err) == 0, "capsule_mount_template(true): %s", err.msg);
	ok(capsule_mount_template(true, &err) == 0, "a second capsule_mount_template(true) keeps the same template");
	char cwd_before[4096] = "", cwd_after[4096] = "";
	ok(chdir("/tmp") == 0 && getcwd(cwd_before, sizeof cwd_before) != NULL, "chdir /tmp");
	sigset_t blk, before, after;
	sigemptyset(&blk);
	sigaddset(&blk, SIGUSR1);
	sigemptyset(&before);
	sigemptyset(&after);
	pthread_sigmask(SIG_BLOCK, &blk, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &before);
	run_direct("sleep", memfd, &now);
	pthread_sigmask(SIG_BLOCK, NULL, &after);
	ok(now.rc == 0 && now.tmpl, "the only thread of its filesystem context clones from the template (%s)", now.first_bad);
	ok(now.only_capsule_mounts, "its namespace holds only the capsule's own mounts (%s)", now.first_bad);
	is_int(now.mounts, old.mounts, "as many mounts as the old way shows (the template's root is out of reach)");
	ok(getcwd(cwd_after, sizeof cwd_after) != NULL && strcmp(cwd_after, cwd_before) == 0,
	   "the caller's working directory is back (%s)", cwd_after);
	int mask_same = 1; /* the kernel fills only the first 64 bits of a sigset_t */
	for (int sig = 1; sig < NSIG; sig++) mask_same &= sigismember(&before, sig) == sigismember(&after, sig);
	ok(mask_same && sigismember(&after, SIGUSR1) && !sigismember(&after, SIGTERM),
	   "the caller's signal mask is back (SIGUSR1 still blocked, nothing more)");
	pthread_sigmask(SIG_UNBLOCK, &blk, NULL);
	char own_ns[128] = "", back_ns[128] = "";
	ok(readlink("/proc/self/ns/mnt", own_ns, sizeof own_ns - 1) > 0, "this thread's mount namespace: %s", own_ns);
	/* control: entering a mount namespace and coming back, without
	 * putting the working directory back, leaves the thread at / */
	int self = open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
	ok(self >= 0 && setns(self, CLONE_NEWNS) == 0 && getcwd(cwd_after, sizeof cwd_after) && strcmp(cwd_after, "/") == 0,
	   "control: a setns round trip alone leaves the working directory at / (%s)", cwd_after);
	if (self >= 0) close(self);
	ok(readlink("/proc/self/ns/mnt", back_ns, sizeof back_ns - 1) > 0 && strcmp(own_ns, back_ns) == 0,
	   "the caller stayed in its own mount namespace");
	ok(chdir(cwd_before) == 0, "back to %s", cwd_before);

	/* the same posture from inside */
	struct direct post;
	run_direct("posture", memfd, &post);
	json_t *pj = json_loads(post.out, 0, NULL);
	ok(post.rc == 0 && post.tmpl && pj, "posture from a template capsule: %s", post.out);
	is_int(json_integer_value(json_object_get(pj, "proc")), 0, "template: no /proc in the capsule");
	is_int(json_integer_value(json_object_get(pj, "etc")), 0, "template: no host /etc in the capsule");
	is_int(json_array_size(json_object_get(pj, "fds")), 3, "template: exactly fds 0,1,2");
	is_int(json_integer_value(json_object_get(pj, "uid")), CAPSULE_INSIDE_ID, "template: inside uid is 1000");
	is_int(json_integer_value(json_object_get(pj, "cap_eff")), 0, "template: no effective capabilities");
	is_int(json_integer_value(json_object_get(pj, "seccomp")), 2, "template: seccomp mode is filter");
	is_int(json_integer_value(json_object_get(pj, "pid")), 1, "template: pid 1 of its own pid namespace");
	json_decref(pj);

	/* threads: one sharing this filesystem context starts the old way, one
	 * with its own (capsule_thread_private_fs) from the template */
	struct thread_start ts[2] = { { memfd, false, { .rc = -1 } }, { memfd, true, { .rc = -1 } } };
	pthread_t th;
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th, NULL, start_from_thread, &ts[i]) == 0) pthread_join(th, NULL);
	ok(ts[0].d.rc == 0 && !ts[0].d.tmpl && strstr(ts[0].d.out, "\"args\""),
	   "a thread sharing the filesystem context starts the old way, and runs");
	ok(ts[1].d.rc == 0 && ts[1].d.tmpl && strstr(ts[1].d.out, "\"args\""),
	   "a thread with its own (capsule_thread_private_fs) clones from the template, and runs");

	/* a chrooted process is refused the template: setns would lose its root */
	for (int chrooted = 0; chrooted < 2; chrooted++) {
		int pp[2];
		char dir[] = "/tmp/world-tmpl-chroot.XXXXXX", sub[300];
		if (!mkdtemp(dir) || pipe(pp) < 0) break;
		pid_t pid = fork();
		if (pid == 0) {
			close(pp[0]);
			struct world_err e = { 0, "" };
			int rc = unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 ? 0 : -1;
			if (rc == 0 && chrooted) {
				snprintf(sub, sizeof sub, "%s/proc", dir);
				rc = mkdir(sub, 0755) == 0 && mount("/proc", sub, NULL, MS_BIND | MS_REC, NULL) == 0 ? 0 : -1;
				snprintf(sub, sizeof sub, "%s/tmp", dir);
				if (rc == 0) rc = mkdir(sub, 01777) == 0 && chroot(dir) == 0 && chdir("/") == 0 ? 0 : -1;
			}
			if (rc < 0) snprintf(e.msg, sizeof e.msg, "test setup: %s", strerror(errno));
			else rc = capsule_mount_template(false, &e) == 0 && capsule_mount_template(true, &e) == 0 ? 0 : -1;
			dprintf(pp[1], "%d %s", rc, rc == 0 ? "" : e.msg);
			_exit(0);
		}
		close(pp[1]);
		char msg[1200] = "";
		ssize_t n = read(pp[0], msg, sizeof msg - 1);
		msg[n > 0 ? n : 0] = 0;
		close(pp[0]);
		waitpid(pid, NULL, 0);
		/* its bind of /proc went with its mount namespace */
		snprintf(sub, sizeof sub, "%s/proc", dir);
		rmdir(sub);
		snprintf(sub, sizeof sub, "%s/tmp", dir);
		rmdir(sub);
		ok(rmdir(dir) == 0, "the chroot directory %s is removed", dir);
		if (chrooted)
			ok(strncmp(msg, "-1 ", 3) == 0 && strstr(msg, "chrooted"), "a chrooted process is refused the template: %s",
			   msg + 3);
		else
			ok(strcmp(msg, "0 ") == 0, "control: the same process not chrooted gets one (%s)", msg);
	}

	ok(capsule_mount_template(false, &err) == 0, "capsule_mount_template(false)");
	struct direct off;
	run_direct("echo", memfd, &off);
	ok(off.rc == 0 && !off.tmpl, "with the template off capsules copy the caller's mount table again");
}

int main(void)
{
	const char *bd = getenv("top_builddir");
	snprintf(fixture, sizeof fixture, "%s/tests/capsule/fixture", bd ? bd : ".");
	struct world_err err = { 0, "" };
	int fds0 = count_fds();

	/* ---- the pin ---- */
	int memfd = -1;
	char ref[80] = "", want[80];
	sha256_of(fixture, want);
	ok(capsule_pin_interpreter(fixture, NULL, &memfd, ref, &err) == 0, "pin the fixture: %s", err.msg);
	is_str(ref, want, "the ref is the sha256 of the file (sha256sum agrees)");
	int seals = fcntl(memfd, F_GET_SEALS);
	is_int(seals & (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL),
	       F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL, "memfd carries all four seals");
	ok(pwrite(memfd, "x", 1, 0) < 0 && errno == EPERM, "writing the sealed memfd is refused (EPERM)");
	ok(ftruncate(memfd, 1) < 0, "shrinking the sealed memfd is refused");
	ok(fcntl(memfd, F_GETFD) & FD_CLOEXEC, "memfd is close-on-exec in the parent");

	int m2 = -1;
	ok(capsule_pin_interpreter(fixture, want, &m2, NULL, &err) == 0, "pin with the matching ref");
	if (m2 >= 0) close(m2);
	const char *zero = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
	m2 = -1;
	ok(capsule_pin_interpreter(fixture, zero, &m2, NULL, &err) < 0 && m2 < 0, "pin with a wrong ref fails");
	is_int(err.code, WX_HASH_MISMATCH, "wrong ref: WX_HASH_MISMATCH");
	char expect[300];
	snprintf(expect, sizeof expect, "interpreter hash mismatch: expected %s got %s", zero, want);
	ok(strncmp(err.msg, expect, strlen(expect)) == 0, "mismatch names both refs: %s", err.msg);
	ok(capsule_pin_interpreter(fixture, "sha256:xyz", &m2, NULL, &err) < 0 && err.code == WX_BAD_INPUT,
	   "malformed ref: WX_BAD_INPUT");
	ok(capsule_pin_interpreter("/bin/sh", NULL, &m2, NULL, &err) < 0 && err.code == WX_BAD_INPUT &&
	   strstr(err.msg, "dynamically linked"), "dynamic ELF refused: %s", err.msg);
	char src[4200];
	snprintf(src, sizeof src, "%s/tests/capsule/test_capsule.c", getenv("top_srcdir") ? getenv("top_srcdir") : ".");
	ok(capsule_pin_interpreter(src, NULL, &m2, NULL, &err) < 0 && strstr(err.msg, "not an ELF"),
	   "non-ELF refused: %s", err.msg);
	ok(capsule_pin_interpreter("/nonexistent/bin", NULL, &m2, NULL, &err) < 0 && err.code == WX_NOT_FOUND,
	   "missing interpreter: WX_NOT_FOUND");

	/* ---- capsule_prepare: the first capsule's groups are made ahead ---- */
	char groups_before[4096], groups_after[4096];
	int made = capsule_prepare(capsule_profile_find("transition"));
	own_groups(groups_before, sizeof groups_before);
	if (geteuid() == 0) {
		is_int(made, 2, "capsule_prepare made a memory and a pids group (%s)", groups_before);
	} else {
		ok(made >= 0 && made <= 2, "capsule_prepare unprivileged: %d group(s) (%s)", made, groups_before);
	}

	/* ---- one run ---- */
	struct capsule_run_result res;
	ok(run_fixture("echo", memfd, &res, &err) == 0, "capsule_run echo: %s", err.msg);
	is_int(capsule_run_classify(&res, &(struct capsule_run_req){ .profile = capsule_profile_find("transition") },
	                            "transition", &err), 0, "echo exits 0");
	is_str(res.out, "{\"args\":\"{\\\"k\\\":[1,2]}\",\"argc\":10}\n",
	       "args.json holds one JSON string literal of the input; argv has the 10 words of §2");
	capsule_run_result_free(&res);
	own_groups(groups_after, sizeof groups_after);
	if (made > 0)
		is_str(groups_after, groups_before, "the first capsule ran in the prepared groups (none made at its start)");
	else
		skip("no group could be prepared here", "the first capsule ran in the prepared groups");

	/* fds the parent holds without close-on-exec never reach the capsule */
	int leak1 = open("/dev/null", O_RDONLY), leak2 = dup(leak1);
	/* and neither do ignored or blocked signals */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe, old_usr2;
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigaction(SIGUSR2, &ign, &old_usr2);
	sigset_t blk, old_mask;
	sigemptyset(&blk);
	sigaddset(&blk, SIGUSR1);
	sigaddset(&blk, SIGTERM);
	sigprocmask(SIG_BLOCK, &blk, &old_mask);
	ok(run_fixture("posture", memfd, &res, &err) == 0, "capsule_run posture");
	json_t *pj = json_loads(res.out, 0, NULL);
	ok(pj != NULL, "posture output is JSON");
	json_t *fdl = json_object_get(pj, "fds");
	is_int(json_array_size(fdl), 3, "capsule has exactly fds 0,1,2 (parent held %d and %d open)", leak1, leak2);
	is_int(json_integer_value(json_object_get(pj, "uid")), CAPSULE_INSIDE_ID, "inside uid is 1000");
	is_int(json_integer_value(json_object_get(pj, "cap_eff")), 0, "no effective capabilities");
	is_int(json_integer_value(json_object_get(pj, "cap_prm")), 0, "no permitted capabilities");
	is_int(json_integer_value(json_object_get(pj, "bnd_sys_admin")), 0, "CAP_SYS_ADMIN not in the bounding set");
	is_int(json_integer_value(json_object_get(pj, "nnp")), 1, "no_new_privs is set");
	is_int(json_integer_value(json_object_get(pj, "seccomp")), 2, "seccomp mode is filter");
	is_int(json_integer_value(json_object_get(pj, "pid")), 1, "the interpreter is pid 1 of its own pid namespace");
	is_int(json_integer_value(json_object_get(pj, "proc")), 0, "no /proc in the capsule");
	is_int(json_integer_value(json_object_get(pj, "etc")), 0, "no host /etc in the capsule");
	is_int(json_integer_value(json_object_get(pj, "sig_ignored")), 0, "no signal ignored in the capsule (caller ignored SIGPIPE, SIGUSR2)");
	is_int(json_integer_value(json_object_get(pj, "sig_blocked")), 0, "no signal blocked in the capsule (caller blocked SIGUSR1, SIGTERM)");
	sigaction(SIGPIPE, &old_pipe, NULL);
	sigaction(SIGUSR2, &old_usr2, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	json_decref(pj);
	capsule_run_result_free(&res);
	close(leak1);
	close(leak2);

	/* ---- capsules started while another thread churns threads ---- */
	pthread_t churner;
	ok(pthread_create(&churner, NULL, churn, NULL) == 0, "start a thread-churning thread");
	int good = 0;
	for (int i = 0; i < 40; i++) {
		if (run_fixture("noop", memfd, &res, &err) == 0 && res.report.exited && res.report.exit_status == 0) good++;
		else diag("run %d: %s", i, err.msg);
		capsule_run_result_free(&res);
	}
	churn_stop = 1;
	pthread_join(churner, NULL);
	is_int(good, 40, "40 capsules started from a threaded process all ran (no setxid hang)");

	/* ---- denial report through the API ---- */
	ok(run_fixture("syscall keyctl", memfd, &res, &err) == 0, "capsule_run keyctl probe");
	is_str(res.report.denied, "keyctl", "report names the denied syscall");
	ok(res.report.term_signal == SIGKILL && res.report.killed, "the capsule was killed after the denial");
	capsule_run_classify(&res, &(struct capsule_run_req){ .profile = capsule_profile_find("transition") },
	                     "transition", &err);
	is_int(err.code, WX_DENIED_SYSCALL, "classified WX_DENIED_SYSCALL");
	is_str(err.msg, "transition: syscall denied: keyctl", "one-line denial message");
	capsule_run_result_free(&res);

	/* ---- inside callback: two interpreter runs in one capsule, frames on a kept fd ---- */
	int proto[2];
	ok(pipe2(proto, O_CLOEXEC) == 0, "protocol pipe");
	struct capsule_file files[] = {
		{ "host/capsule/main.ail", "echo", 4 }, { "args.json", "\"{}\"", 4 }, { ".capsule-cache/", NULL, 0 },
	};
	struct capsule_spec spec = {
		.profile = capsule_profile_find("transition"), .interp_fd = memfd, .files = files, .nfiles = 3,
		.stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .keep_fds = &proto[1], .nkeep = 1,
		.inside = inside_agent,
	};
	struct capsule_handle h;
	ok(capsule_start(&spec, &h, &err) == 0, "capsule_start with an inside callback: %s", err.msg);
	close(proto[1]);
	char got[2048] = "";
	size_t gl = 0;
	ssize_t n;
	while ((n = read(proto[0], got + gl, sizeof got - 1 - gl)) > 0) gl += (size_t)n;
	got[gl] = 0;
	close(proto[0]);
	struct capsule_report rep;
	ok(capsule_finish(&h, &rep, &err) == 0, "capsule_finish");
	ok(rep.exited && rep.exit_status == 0, "agent exited 0 (status %d, signal %d)", rep.exit_status, rep.term_signal);
	ok(strstr(got, "round0 {\"args\":\"{}\"") && strstr(got, "round1 {\"args\":\"{}\""),
	   "both interpreter runs reported over the kept fd: %s", got);
	ok(h.cg_memory_dir[0] == 0 && h.cg_pids_dir[0] == 0, "cgroup directories removed");

	/* ---- the background pin: sealed only when it matched, never exec'd unsealed ---- */
	err = (struct world_err){ 0, "" };
	struct capsule_pin *bp = capsule_pin_begin(fixture, want, &err);
	ok(bp != NULL, "capsule_pin_begin with the matching ref: %s", err.msg);
	char bref[80] = "";
	ok(bp && capsule_pin_wait(bp, bref, &err) == 0 && strcmp(bref, want) == 0, "background pin: ref %s", bref);
	ok(bp && capsule_interp_sealed(capsule_pin_fd(bp)), "background pin: the memfd is sealed once it matched");
	ok(bp && capsule_pin_wait(bp, NULL, &err) == 0, "waiting again gives the same outcome");
	capsule_pin_free(bp);
	ok(capsule_pin_begin("/nonexistent/bin", NULL, &err) == NULL && err.code == WX_NOT_FOUND,
	   "capsule_pin_begin: a missing file fails at once (WX_NOT_FOUND)");
	bp = capsule_pin_begin(fixture, zero, &err);
	ok(bp != NULL, "capsule_pin_begin with a wrong ref starts (the hash is known later)");
	int unsealed = bp ? capsule_pin_fd(bp) : -1;
	ok(bp && capsule_pin_wait(bp, NULL, &err) < 0 && err.code == WX_HASH_MISMATCH, "and fails on wait: %s", err.msg);
	ok(unsealed >= 0 && !capsule_interp_sealed(unsealed), "a pin that did not match leaves the memfd unsealed");
	/* An agent holding that memfd cannot run it (control: the same agent
	 * with the sealed memfd ran both rounds above). */
	ok(pipe2(proto, O_CLOEXEC) == 0, "protocol pipe");
	files[0] = (struct capsule_file){ "host/capsule/main.ail", "echo", 4 };
	spec.interp_fd = unsealed;
	spec.keep_fds = &proto[1];
	ok(capsule_start(&spec, &h, &err) == 0, "capsule_start with the unsealed memfd and an agent: %s", err.msg);
	close(proto[1]);
	gl = 0;
	while ((n = read(proto[0], got + gl, sizeof got - 1 - gl)) > 0) gl += (size_t)n;
	got[gl] = 0;
	close(proto[0]);
	ok(capsule_finish(&h, &rep, &err) == 0, "capsule_finish");
	ok(rep.exited && rep.exit_status == 43 && gl == 0,
	   "the agent's interpreter spawn is refused: it exits 43, nothing ran (status %d, got '%s')", rep.exit_status, got);
	/* Nor can a capsule without an agent (control: run_fixture above). */
	ok(run_fixture("echo", unsealed, &res, &err) == 0, "capsule_run with the unsealed memfd");
	ok(res.report.setup_failed && strstr(res.report.setup_error, "not sealed") && (!res.out || !res.out[0]),
	   "a capsule without an agent refuses the unsealed memfd at setup: %s", res.report.setup_error);
	capsule_run_result_free(&res);
	capsule_pin_free(bp);
	spec.interp_fd = memfd;

	/* ---- kill ---- */
	files[0] = (struct capsule_file){ "host/capsule/main.ail", "sleep", 5 };
	spec.inside = NULL;
	spec.keep_fds = NULL;
	spec.nkeep = 0;
	ok(capsule_start(&spec, &h, &err) == 0, "start a sleeping capsule");
	char memdir[256];
	snprintf(memdir, sizeof memdir, "%s", h.cg_memory_dir);
	pid_t pid = h.pid;
	struct pollfd pf = { h.pidfd, POLLIN, 0 };
	ok(poll(&pf, 1, 200) == 0, "still running after 200 ms");
	/* every namespace of the capsule differs from ours */
	static const char *const nss[] = { "user", "mnt", "pid", "net", "ipc", "uts", "cgroup" };
	for (size_t i = 0; i < sizeof nss / sizeof nss[0]; i++) {
		char a[64], b[64], la[128] = "", lb[128] = "";
		snprintf(a, sizeof a, "/proc/self/ns/%s", nss[i]);
		snprintf(b, sizeof b, "/proc/%d/ns/%s", (int)h.pid, nss[i]);
		ssize_t na = readlink(a, la, sizeof la - 1), nb = readlink(b, lb, sizeof lb - 1);
		ok(na > 0 && nb > 0 && strcmp(la, lb) != 0, "capsule %s namespace %s differs from ours %s", nss[i], lb, la);
	}
	/* its network namespace has nothing but a loopback interface */
	char devpath[64];
	snprintf(devpath, sizeof devpath, "/proc/%d/net/dev", (int)h.pid);
	FILE *dev = fopen(devpath, "r");
	int ifaces = 0, lo = 0;
	char line[512];
	while (dev && fgets(line, sizeof line, dev))
		if (strchr(line, ':')) {
			ifaces++;
			if (strstr(line, "lo:")) lo = 1;
		}
	if (dev) fclose(dev);
	ok(ifaces == 1 && lo, "the capsule's network namespace holds only lo (%d interfaces)", ifaces);
	ok(!h.shared_netns, "by default the capsule has a network namespace of its own");
	ok(capsule_kill(&h) == 0, "capsule_kill");
	ok(capsule_finish(&h, &rep, &err) == 0, "finish after kill");
	ok(rep.killed && !rep.exited && rep.term_signal == SIGKILL, "report: killed by SIGKILL");
	ok(kill(pid, 0) < 0 && errno == ESRCH, "no process left (pid %d gone)", (int)pid);
	struct stat st;
	/* The group goes back to the pool only once empty. */
	char procs[400], pbuf[64] = "x";
	snprintf(procs, sizeof procs, "%s/cgroup.procs", memdir);
	int pfd = memdir[0] ? open(procs, O_RDONLY | O_CLOEXEC) : -1;
	ssize_t pn = pfd >= 0 ? read(pfd, pbuf, sizeof pbuf) : -1;
	if (pfd >= 0) close(pfd);
	ok(!memdir[0] || pn == 0, "memory cgroup %s is empty after the kill (pooled for reuse)", memdir[0] ? memdir : "(none)");
	files[0] = (struct capsule_file){ "host/capsule/main.ail", "echo", 4 };
	ok(capsule_start(&spec, &h, &err) == 0, "the next capsule starts: %s", err.msg);
	ok(!memdir[0] || strcmp(h.cg_memory_dir, memdir) == 0, "it reuses the pooled group (%s)", h.cg_memory_dir);
	ok(capsule_finish(&h, &rep, &err) == 0 && rep.exited && rep.exit_status == 0 && !rep.memory_limit_hit &&
	   !rep.pids_limit_hit, "and ends normally, no limit reported from the group's earlier use");

	/* ---- many threads starting capsules at once (no process-wide lock) ---- */
	{
		struct thr_arg ta[8];
		pthread_t th[8];
		for (int i = 0; i < 8; i++) {
			ta[i] = (struct thr_arg){ memfd, 0, "" };
			pthread_create(&th[i], NULL, start_many, &ta[i]);
		}
		int good = 0;
		char why[1100] = "";
		for (int i = 0; i < 8; i++) {
			pthread_join(th[i], NULL);
			good += ta[i].good;
			if (ta[i].err[0]) snprintf(why, sizeof why, "%s", ta[i].err);
		}
		is_int(good, 8 * 5, "8 threads x 5 capsules started at once all ran the interpreter and printed %s", why[0] ? why : "the echo");
	}

	/* ---- stale groups: the sweep removes those of a dead maker only ---- */
	if (memdir[0]) {
		char parent[256], stale1[400], stale2[400], legacy[400], live[400];
		snprintf(parent, sizeof parent, "%s", memdir);
		*strrchr(parent, '/') = 0;
		pid_t dead = fork();
		if (dead == 0) _exit(0);
		waitpid(dead, NULL, 0);
		unsigned long long mystart = 0, ppstart = 0;
		char sp[64], sbuf[1024];
		for (int k = 0; k < 2; k++) {
			snprintf(sp, sizeof sp, "/proc/%d/stat", k ? (int)getppid() : (int)getpid());
			FILE *f = fopen(sp, "r");
			size_t n = f ? fread(sbuf, 1, sizeof sbuf - 1, f) : 0;
			if (f) fclose(f);
			sbuf[n] = 0;
			char *q = strrchr(sbuf, ')');
			unsigned long long v = 0;
			for (int field = 2; q && field < 22; field++) {
				q = strchr(q + 1, ' ');
				if (q && field == 21) v = strtoull(q + 1, NULL, 10);
			}
			if (k) ppstart = v;
			else mystart = v;
		}
		struct stat nsst;
		unsigned long long ns = stat("/proc/self/ns/pid", &nsst) == 0 ? (unsigned long long)nsst.st_ino : 0;
		unsigned long long other = ns + 1000003; /* no pid namespace of ours */
		snprintf(stale1, sizeof stale1, "%s/world-capsule-%d-%llu-1-ns%llu", parent, (int)dead, mystart, ns);
		snprintf(stale2, sizeof stale2, "%s/world-capsule-%d-%llu-1-ns%llu", parent, (int)getppid(), ppstart + 1, ns);
		snprintf(legacy, sizeof legacy, "%s/world-capsule-%d-7", parent, (int)dead);
		snprintf(live, sizeof live, "%s/world-capsule-%d-%llu-1-ns%llu", parent, (int)getppid(), ppstart, ns);
		char prev[400], foreign[400];
		snprintf(prev, sizeof prev, "%s/world-capsule-%d-%llu-2", parent, (int)dead, mystart);
		snprintf(foreign, sizeof foreign, "%s/world-capsule-%d-%llu-1-ns%llu", parent, (int)dead, mystart, other);
		ok(ns > 0 && mkdir(stale1, 0755) == 0 && mkdir(stale2, 0755) == 0 && mkdir(legacy, 0755) == 0 &&
		   mkdir(live, 0755) == 0 && mkdir(prev, 0755) == 0 && mkdir(foreign, 0755) == 0,
		   "control: six groups named after makers made by hand (%s)", strerror(errno));
		/* and three busy ones, each holding a sleeping process, named after
		 * the dead maker: of this pid namespace (the control: its process
		 * is killed), of another one, and without a namespace */
		char busy[3][400];
		pid_t sleeper[3];
		const char *busy_what[3] = { "this pid namespace's", "another pid namespace's", "an earlier version's" };
		snprintf(busy[0], sizeof busy[0], "%s/world-capsule-%d-%llu-3-ns%llu", parent, (int)dead, mystart, ns);
		snprintf(busy[1], sizeof busy[1], "%s/world-capsule-%d-%llu-3-ns%llu", parent, (int)dead, mystart, other);
		snprintf(busy[2], sizeof busy[2], "%s/world-capsule-%d-%llu-3", parent, (int)dead, mystart);
		for (int b = 0; b < 3; b++) {
			sleeper[b] = fork();
			if (sleeper[b] == 0) {
				for (;;) pause();
			}
			char procs[1300], num[32];
			snprintf(procs, sizeof procs, "%s/cgroup.procs", busy[b]);
			snprintf(num, sizeof num, "%d", (int)sleeper[b]);
			int fd = mkdir(busy[b], 0755) == 0 ? open(procs, O_WRONLY | O_CLOEXEC) : -1;
			ok(fd >= 0 && write(fd, num, strlen(num)) == (ssize_t)strlen(num), "a sleeping process in %s dead maker's group",
			   busy_what[b]);
			if (fd >= 0) close(fd);
		}
		unsigned removed = 0;
		ok(capsule_cgroups_sweep(&removed, &err) == 0, "capsule_cgroups_sweep: %s", err.msg);
		ok(stat(stale1, &st) < 0 && errno == ENOENT, "a group of a dead pid is removed");
		ok(stat(stale2, &st) < 0 && errno == ENOENT, "a group of a live pid with another start time is removed (pid reused)");
		ok(stat(legacy, &st) < 0 && errno == ENOENT, "an old-style world-capsule-PID-N group of a dead pid is removed (empty)");
		ok(stat(prev, &st) < 0 && errno == ENOENT, "a world-capsule-PID-START-N group (no namespace) of a dead pid is removed (empty)");
		ok(stat(foreign, &st) == 0, "the same dead maker's group named with another pid namespace stays (not ours to judge)");
		ok(stat(live, &st) == 0, "a group of a live maker (pid and start time match) stays");
		ok(stat(memdir, &st) == 0, "this process's own pooled group stays");
		/* Every process's first capsule sweeps too, so a test running beside
		 * this one may remove some of these groups first (its rmdir wins,
		 * ours finds ENOENT and does not count it). The count is checked on
		 * a round nobody else swept: on a short count, a few more rounds of
		 * the four empty groups, each under fresh names. */
		unsigned want = 5, round = 0;
		while (removed < want && round < 6) {
			round++;
			char r1[400], r2[400], r3[400], r4[400];
			snprintf(r1, sizeof r1, "%s/world-capsule-%d-%llu-%u-ns%llu", parent, (int)dead, mystart, 100 + round, ns);
			snprintf(r2, sizeof r2, "%s/world-capsule-%d-%llu-%u-ns%llu", parent, (int)getppid(), ppstart + 1, 100 + round, ns);
			snprintf(r3, sizeof r3, "%s/world-capsule-%d-%u", parent, (int)dead, 100 + round);
			snprintf(r4, sizeof r4, "%s/world-capsule-%d-%llu-%u", parent, (int)dead, mystart, 200 + round);
			if (mkdir(r1, 0755) < 0 || mkdir(r2, 0755) < 0 || mkdir(r3, 0755) < 0 || mkdir(r4, 0755) < 0) break;
			removed = 0;
			want = 4;
			if (capsule_cgroups_sweep(&removed, &err) < 0) break;
		}
		ok(removed >= want, "the sweep counts what it removed (%u of %u; %u more round(s) for a sweeper beside it)", removed,
		   want, round);
		int st0;
		ok(waitpid(sleeper[0], &st0, WNOHANG) == sleeper[0] && WIFSIGNALED(st0) && WTERMSIG(st0) == SIGKILL &&
		   stat(busy[0], &st) < 0, "control: the process in this pid namespace's dead maker's group is killed, the group removed");
		for (int b = 1; b < 3; b++)
			ok(kill(sleeper[b], 0) == 0 && waitpid(sleeper[b], NULL, WNOHANG) == 0 && stat(busy[b], &st) == 0,
			   "the process in %s dead maker's group is not killed, the group stays", busy_what[b]);
		for (int b = 0; b < 3; b++) {
			if (b > 0) {
				kill(sleeper[b], SIGKILL);
				waitpid(sleeper[b], NULL, 0);
			}
			for (int k = 0; k < 100 && rmdir(busy[b]) < 0 && errno == EBUSY; k++) usleep(5000);
		}
		rmdir(live);
		rmdir(foreign);
	}

	/* ---- setup error: one line naming the step ---- */
	files[0] = (struct capsule_file){ "../escape", "x", 1 };
	ok(capsule_start(&spec, &h, &err) < 0, "a staged name with .. fails setup");
	is_int(err.code, WX_SETUP, "WX_SETUP");
	is_str(err.msg, "capsule setup: stage file: Invalid argument", "setup error names the step and errno");

	/* ---- the shared empty network namespace (root, opt-in) ---- */
	if (geteuid() == 0) {
		ok(capsule_netns_share(true, &err) == 0, "capsule_netns_share(true): %s", err.msg);
		char net_a[128] = "", net_b[128] = "", self_net[128] = "", path[64];
		ssize_t l0 = readlink("/proc/self/ns/net", self_net, sizeof self_net - 1);
		files[0] = (struct capsule_file){ "host/capsule/main.ail", "sleep", 5 };
		struct capsule_handle h2;
		ok(capsule_start(&spec, &h, &err) == 0 && capsule_start(&spec, &h2, &err) == 0, "two capsules share it");
		snprintf(path, sizeof path, "/proc/%d/ns/net", (int)h.pid);
		ssize_t la = readlink(path, net_a, sizeof net_a - 1);
		snprintf(path, sizeof path, "/proc/%d/ns/net", (int)h2.pid);
		ssize_t lb = readlink(path, net_b, sizeof net_b - 1);
		ok(h.shared_netns && h2.shared_netns && la > 0 && lb > 0 && strcmp(net_a, net_b) == 0,
		   "both capsules are in the same network namespace (%s, %s)", net_a, net_b);
		char back[128] = "";
		ok(l0 > 0 && readlink("/proc/self/ns/net", back, sizeof back - 1) > 0 && strcmp(back, self_net) == 0 &&
		   strcmp(net_a, self_net) != 0, "the caller stayed in its own network namespace (%s)", back);
		snprintf(devpath, sizeof devpath, "/proc/%d/net/dev", (int)h.pid);
		dev = fopen(devpath, "r");
		ifaces = 0;
		while (dev && fgets(line, sizeof line, dev)) if (strchr(line, ':')) ifaces++;
		if (dev) fclose(dev);
		is_int(ifaces, 1, "the shared namespace holds only lo");
		capsule_kill(&h);
		capsule_kill(&h2);
		ok(capsule_finish(&h, &rep, &err) == 0 && capsule_finish(&h2, &rep, &err) == 0, "both reaped");
		ok(capsule_netns_share(false, &err) == 0, "capsule_netns_share(false)");
	} else {
		ok(capsule_netns_share(true, &err) < 0 && err.code == WX_SETUP, "unprivileged: no shared namespace");
	}
	test_mount_template(memfd);
	close(memfd);
	is_int(count_fds(), fds0, "no fd leaked by the capsule API");
	/* At exit (and on SIGINT/SIGTERM/SIGHUP with capsule_cleanup_on_signals)
	 * the pool goes. */
	capsule_cgroups_release();
	struct stat st2;
	ok(!memdir[0] || (stat(memdir, &st2) < 0 && errno == ENOENT), "capsule_cgroups_release removes the pooled groups");
	return done_testing();
}
