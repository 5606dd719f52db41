/* audit/audit.c: see audit/audit.h. The verdicts are those of the escape
 * suite's judge (docs/escape-suite.md), one row each. */
#include "audit/audit.h"
#include "audit/host.h"
#include "capsule/profile.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <signal.h>

#define MiB (1LL << 20)
#define MAX_ATTEMPTS 128
#define MAX_RUNS 8192

/* exit codes of worldd run / check (worldd run --help) */
enum { RX_OK = 0, RX_DEADLINE = 11, RX_OUTPUT_CAP = 12, RX_INTERP = 14, RX_DENIED = 17, RX_CHECK_REFUSED = 19 };

/* The syscall a denial report must name for attempts whose first refused
 * call is certain; the others only need to name some syscall. */
static const char *const expected_denial[][2] = {
	{ "net_tcp_host", "socket" }, { "net_udp_host", "socket" }, { "net_abstract_unix", "socket" },
	{ "net_unix_path", "socket" }, { "net_netlink", "socket" }, { "net_raw", "socket" },
	{ "net_packet", "socket" }, { "net_vsock", "socket" }, { "ptrace_host", "ptrace" },
	{ "process_vm_host", "process_vm_readv" }, { "pidfd_getfd_host", "pidfd_open" },
	{ "ipc_host_shm", "shmctl" }, { "setns", "pidfd_open" }, { "mount_tmpfs", "mount" },
	{ "fsopen", "fsopen" }, { "unshare_user", "unshare" }, { "unshare_mount", "unshare" },
	{ "unshare_net", "unshare" }, { "clone_newuser", "clone" }, { "chroot", "chroot" },
	{ "keyctl", "add_key" }, { "bpf", "bpf" }, { "perf_event_open", "perf_event_open" },
	{ "io_uring", "io_uring_setup" }, { "userfaultfd", "userfaultfd" }, { "tiocsti", "ioctl(TIOCSTI)" },
	{ "tiocsti_high_bits", "ioctl(TIOCSTI)" }, { "reboot", "reboot" }, { "module_load", "finit_module" },
	{ "mknod", "mknodat" }, { "open_by_handle_at", "name_to_handle_at" },
	{ "clock_settime", "clock_settime" }, { "clock_adjtime", "clock_adjtime" },
	{ "sethostname", "sethostname" }, { "syslog_read", "syslog" }, { NULL, NULL },
};

enum { F_STATE = 1, F_ROOT = 2, F_RESOURCE = 4 };
enum { U_ROOT, U_NOBODY, U_SELF };
static const char *const user_names[] = { "root", "unpriv", "self" };

struct attempt {
	char name[64];
	int flags;
};

struct audit {
	const struct audit_opts *o;
	struct audit_host h;
	json_t *rows;
	struct attempt at[MAX_ATTEMPTS];
	int nat;
	int selected[MAX_ATTEMPTS];
	/* controls by [user slot][attempt]: slot 0 root or self, 1 uid 65534 */
	char *ctl_text[2][MAX_ATTEMPTS];
	int ctl_rc[2][MAX_ATTEMPTS];
	int users[2], nusers;
	/* the current pass */
	const char *profile, *via;
	int user;
	const struct capsule_profile *prof;
	json_t *pj; /* the profile as profile show --format json prints it */
	int seq;
	pid_t runs[MAX_RUNS];
	int nruns;
	int no_i386; /* the i386 control found no int $0x80 entry */
	int worktree; /* this pass's runs get --worktree (tool-run's /work) */
	char *wt_before; /* the worktree before the first tool run (ah_tree) */
	char *wt_ctl[3]; /* the worktree controls' results */
};

/* ------------------------------------------------------------ rows */

static void row(struct audit *A, const char *section, const char *attempt, const char *verdict,
                const char *expected, const char *observed, const char *control, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));

static void row(struct audit *A, const char *section, const char *attempt, const char *verdict,
                const char *expected, const char *observed, const char *control, const char *fmt, ...)
{
	char detail[1600] = "";
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(detail, sizeof detail, fmt, ap);
		va_end(ap);
	}
	json_t *r = json_object();
	json_object_set_new(r, "section", json_string(section));
	json_object_set_new(r, "profile", json_string(A->profile ? A->profile : "-"));
	json_object_set_new(r, "user", json_string(user_names[A->user]));
	json_object_set_new(r, "via", json_string(A->via ? A->via : "-"));
	json_object_set_new(r, "attempt", json_string(attempt));
	json_object_set_new(r, "expected", json_string(expected ? expected : ""));
	/* capsule output is arbitrary bytes: keep the row valid UTF-8 */
	char obs[1200];
	snprintf(obs, sizeof obs, "%s", observed ? observed : "");
	for (char *p = obs; *p; p++)
		if ((unsigned char)*p >= 0x80 || *p == '\t' || *p == '\n') *p = ' ';
	json_object_set_new(r, "observed", json_string(obs));
	if (control) {
		char c[600];
		snprintf(c, sizeof c, "%s", control);
		for (char *p = c; *p; p++)
			if ((unsigned char)*p >= 0x80 || *p == '\n') *p = ' ';
		json_object_set_new(r, "control", json_string(c));
	}
	json_object_set_new(r, "verdict", json_string(verdict));
	for (char *p = detail; *p; p++)
		if ((unsigned char)*p >= 0x80 || *p == '\t' || *p == '\n') *p = ' ';
	if (detail[0]) json_object_set_new(r, "detail", json_string(detail));
	json_array_append_new(A->rows, r);
}

/* A check row: pass or fail. */
#define CHECK(A, sec, what, cond, exp, obs, ...) \
	row(A, sec, what, (cond) ? "pass" : "fail", exp, obs, NULL, __VA_ARGS__)

static void progress(struct audit *A, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(struct audit *A, const char *fmt, ...)
{
	if (!A->o->progress) return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(A->o->progress, "worldd audit: ");
	vfprintf(A->o->progress, fmt, ap);
	fputc('\n', A->o->progress);
	fflush(A->o->progress);
	va_end(ap);
}

/* ------------------------------------------------------------ commands */

static void cmd_init(struct ah_cmd *c)
{
	memset(c, 0, sizeof *c);
	c->outfd = c->errfd = -1;
}

static void arg(struct ah_cmd *c, const char *s)
{
	int i = 0;
	while (c->argv[i]) i++;
	if (i < 31) c->argv[i] = strdup(s);
}

static void cmd_free(struct ah_cmd *c)
{
	ah_cmd_free(c);
	for (int i = 0; c->argv[i]; i++) free(c->argv[i]);
	memset(c->argv, 0, sizeof c->argv);
}

static const char *denied_name(const char *err, char *out, size_t cap)
{
	const char *p = err ? strstr(err, "syscall denied: ") : NULL;
	out[0] = 0;
	if (!p) return NULL;
	p += 16;
	size_t n = 0;
	while (p[n] && (isalnum((unsigned char)p[n]) || p[n] == '_')) n++;
	if (!n) return NULL;
	if (p[n] == '(') {
		size_t m = n + 1;
		while (p[m] && (isalnum((unsigned char)p[m]) || p[m] == '_' || p[m] == '?')) m++;
		if (p[m] == ')') n = m + 1;
	}
	if (n >= cap) n = cap - 1;
	memcpy(out, p, n);
	out[n] = 0;
	return out;
}

/* A new job tag: TAG-NNNN (the base tag finds every job's processes). */
static void job_tag(struct audit *A, char *out, size_t cap)
{
	snprintf(out, cap, "%s-%04d", A->h.tag, ++A->seq);
}

static int is_check(const struct audit *A) { return strcmp(A->profile, "source-check") == 0; }

/* A capsule run of the current pass: `worldd run` (or check) with the probe
 * as the interpreter, input = the probe's object (extra members + tag). */
static int capsule_cmd(struct audit *A, struct ah_cmd *c, const char *extra, long timeout_ms, char *tag,
                       size_t tagcap, int show_stderr)
{
	cmd_init(c);
	job_tag(A, tag, tagcap);
	char *input = ah_params(&A->h, tag, extra);
	if (!input) return -1;
	char ms[24];
	snprintf(ms, sizeof ms, "%ld", timeout_ms);
	arg(c, A->o->worldd);
	if (is_check(A)) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof path, "%s/check-%04d.ail", A->h.work, A->seq);
		FILE *f = fopen(path, "w");
		int ok = f && fprintf(f, "-- escape-probe: %s\n", input) > 0;
		if (f && fclose(f) != 0) ok = 0;
		if (!ok || chmod(path, 0644) != 0) {
			free(input);
			return -1;
		}
		arg(c, "check");
		arg(c, "--ailang-bin");
		arg(c, A->h.probe);
		arg(c, "--source");
		arg(c, path);
		arg(c, "--timeout-ms");
		arg(c, ms);
		if (show_stderr) arg(c, "--show-stderr");
	} else {
		arg(c, "run");
		arg(c, "--ailang-bin");
		arg(c, A->h.probe);
		arg(c, "--source");
		arg(c, A->h.src);
		arg(c, "--input");
		arg(c, input);
		arg(c, "--timeout-ms");
		arg(c, ms);
		if (!A->o->standin && strcmp(A->profile, "transition") != 0) {
			arg(c, "--profile");
			arg(c, A->profile);
		}
		if (strcmp(A->via, "spawner") == 0) arg(c, "--spawner");
		if (A->worktree) {
			arg(c, "--worktree");
			arg(c, A->h.worktree);
		}
	}
	free(input);
	c->as = A->user == U_NOBODY ? AH_AS_NOBODY : AH_AS_CALLER;
	c->cwd = A->h.tmp;
	c->timeout_ms = timeout_ms;
	return 0;
}

static void note_run(struct audit *A, const struct ah_cmd *c)
{
	if (A->nruns < MAX_RUNS && c->pid > 0) A->runs[A->nruns++] = c->pid;
}

static int run_one(struct audit *A, struct ah_cmd *c, struct world_err *err)
{
	if (ah_run_all(&A->h, c, 1, 1, err) < 0) return -1;
	note_run(A, c);
	return 0;
}

/* The output object of a run: stdout for run, the line of stderr that
 * holds a JSON object for check --show-stderr. */
static json_t *run_obj(const struct ah_cmd *c, int from_stderr)
{
	const char *t = from_stderr ? c->err : c->out;
	if (!t) return NULL;
	if (from_stderr) {
		const char *p = t;
		while (p && *p && *p != '{') {
			p = strchr(p, '\n');
			if (p) p++;
		}
		if (!p || !*p) return NULL;
		t = p;
	}
	json_t *o = json_loadb(t, from_stderr ? strcspn(t, "\n") : strlen(t), 0, NULL);
	if (o && !json_is_object(o)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static void run_detail(const struct ah_cmd *c, char *out, size_t cap)
{
	snprintf(out, cap, "exit %d%s, stdout '%.300s', stderr '%.500s'", c->rc, c->hung ? " (hung: killed by the audit)" : "",
	         c->out ? c->out : "", c->err ? c->err : "");
}

/* ------------------------------------------------------------ cgroups */

/* Capsule groups of this pass's worldd runs still present (they are named
 * world-capsule-PID-N, below the caller's own group). */
static int leftover_cgroups(struct audit *A, char *list, size_t cap)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	int n = 0;
	list[0] = 0;
	if (!f) return 0;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2) continue;
		*c2 = 0;
		const char *ctl = c1 + 1, *path = c2 + 1;
		char dir[1400];
		if (!*ctl) snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", path);
		else if (!strncmp(ctl, "name=", 5)) continue;
		else snprintf(dir, sizeof dir, "/sys/fs/cgroup/%s%s", ctl, path);
		char *comma = strchr(dir + 15, ',');
		(void)comma;
		DIR *d = opendir(dir);
		if (!d && !*ctl) {
			snprintf(dir, sizeof dir, "/sys/fs/cgroup/unified%s", path);
			d = opendir(dir);
		}
		if (!d) continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			int pid;
			if (sscanf(e->d_name, "world-capsule-%d-", &pid) != 1) continue;
			for (int i = 0; i < A->nruns; i++)
				if (A->runs[i] == pid) {
					size_t l = strlen(list);
					snprintf(list + l, cap - l, "%s%s/%s", l ? " " : "", dir, e->d_name);
					n++;
					break;
				}
		}
		closedir(d);
	}
	fclose(f);
	return n;
}

static void check_cgroups(struct audit *A, const char *section)
{
	char what[160];
	snprintf(what, sizeof what, "no capsule cgroup left behind by the %d runs", A->nruns);
	if (A->o->standin) {
		row(A, section, "cgroups", "skip", "none left", "", NULL, "the stand-in makes no cgroup");
		return;
	}
	if (strcmp(A->via, "spawner") == 0) {
		/* the groups are named after the spawner, a child of worldd the
		 * audit never sees: tests/supervisor/test_spawner checks them */
		row(A, section, "cgroups", "skip", "none left", "", NULL,
		    "groups named after the spawner; test_spawner checks their removal");
		return;
	}
	char list[2000];
	int n = leftover_cgroups(A, list, sizeof list);
	long end = ah_now_ms() + 1000;
	while (n && ah_now_ms() < end) {
		ah_sleep_ms(50);
		n = leftover_cgroups(A, list, sizeof list);
	}
	CHECK(A, section, "cgroups", n == 0, "none left", n ? list : what, "%s", n ? list : "");
}

static void no_strays(struct audit *A, const char *section, const char *name, const char *tag)
{
	pid_t p[16];
	int n = ah_tagged_settle(tag, p, 16, 1000);
	char obs[200] = "no process left";
	if (n) {
		snprintf(obs, sizeof obs, "stray pids:");
		for (int i = 0; i < n; i++) snprintf(obs + strlen(obs), sizeof obs - strlen(obs), " %d", (int)p[i]);
	}
	char what[100];
	snprintf(what, sizeof what, "%s: no capsule process left", name);
	CHECK(A, section, what, n == 0, "no process left", obs, NULL);
}

/* ------------------------------------------------------------ controls */

static int attempt_index(const struct audit *A, const char *name)
{
	for (int i = 0; i < A->nat; i++)
		if (!strcmp(A->at[i].name, name)) return i;
	return -1;
}

static int list_attempts(struct audit *A, struct world_err *err)
{
	struct ah_cmd c;
	cmd_init(&c);
	arg(&c, A->h.probe);
	arg(&c, "list");
	c.timeout_ms = 10000;
	c.cwd = A->h.scratch;
	if (ah_run_all(&A->h, &c, 1, 1, err) < 0) {
		cmd_free(&c);
		return -1;
	}
	if (c.rc != 0 || !c.out) {
		werr(err, WX_SETUP, "%s list: exit %d: %s", A->o->probe, c.rc, c.err ? c.err : "");
		cmd_free(&c);
		return -1;
	}
	for (char *save = NULL, *l = strtok_r(c.out, "\n", &save); l && A->nat < MAX_ATTEMPTS;
	     l = strtok_r(NULL, "\n", &save)) {
		char name[64], flags[64];
		if (sscanf(l, "%63s %63s", name, flags) != 2) continue;
		struct attempt *a = &A->at[A->nat++];
		snprintf(a->name, sizeof a->name, "%s", name);
		a->flags = (strstr(flags, "state") ? F_STATE : 0) | (strstr(flags, "root") ? F_ROOT : 0) |
		           (strstr(flags, "resource") ? F_RESOURCE : 0);
	}
	cmd_free(&c);
	if (A->nat == 0) return werr(err, WX_SETUP, "%s list printed no attempt", A->o->probe);
	/* the selection (--attempts) */
	for (int i = 0; i < A->nat; i++) A->selected[i] = !A->o->attempts;
	if (A->o->attempts) {
		char *l = strdup(A->o->attempts);
		for (char *save = NULL, *w = l ? strtok_r(l, ",", &save) : NULL; w; w = strtok_r(NULL, ",", &save)) {
			int i = attempt_index(A, w);
			if (i < 0) {
				werr(err, WX_USAGE, "--attempts: '%s' is not an attempt of the probe (world-probe list)", w);
				free(l);
				return -1;
			}
			A->selected[i] = 1;
		}
		free(l);
	}
	return 0;
}

static void control_cmd(struct audit *A, struct ah_cmd *c, int ai, int user, const char *params)
{
	cmd_init(c);
	arg(c, A->h.probe);
	arg(c, "control");
	arg(c, A->at[ai].name);
	arg(c, params);
	c->as = user == U_NOBODY ? AH_AS_NOBODY : AH_AS_CALLER;
	c->private_ns = user != U_NOBODY && (A->at[ai].flags & F_STATE);
	c->host_ns_env = 1;
	c->fd7 = !c->private_ns;
	c->cwd = A->h.scratch;
	c->timeout_ms = 20000;
}

/* A control prints "NAME: RESULT" on stderr: keep RESULT. */
static void strip_name(struct ah_cmd *c, const char *name)
{
	size_t l = strlen(name);
	if (c->err && !strncmp(c->err, name, l) && c->err[l] == ':' && c->err[l + 1] == ' ')
		memmove(c->err, c->err + l + 2, strlen(c->err + l + 2) + 1);
}

static const char *ctl_verdict(int rc, const char *text, char *why, size_t cap)
{
	why[0] = 0;
	if (text && (!strncmp(text, "audit: unshare", 14) || !strncmp(text, "audit: mount", 12))) {
		snprintf(why, cap, "no throwaway namespace here: %s", text);
		return "skip";
	}
	if (rc == 0) return "pass";
	if (rc == 3) {
		const char *c = text ? strchr(text, ':') : NULL;
		snprintf(why, cap, "this kernel lacks it:%s", c ? c + 1 : "");
		return "skip";
	}
	snprintf(why, cap, "exit %d: %s", rc, text ? text : "");
	return "control failed";
}

static int run_controls(struct audit *A, struct world_err *err)
{
	const char *sec = "control";
	A->profile = "-";
	A->via = "unconfined";
	for (int slot = 0; slot < A->nusers; slot++) {
		int user = A->users[slot];
		A->user = user;
		progress(A, "controls as %s", user_names[user]);
		for (int i = 0; i < A->nat; i++) {
			if (!A->selected[i] || (A->at[i].flags & F_RESOURCE)) continue;
			int fl = A->at[i].flags;
			if ((fl & F_ROOT) && user != U_ROOT) {
				if (user == U_SELF) row(A, sec, A->at[i].name, "skip", "open", "", NULL, "needs root");
				continue;
			}
			if (user == U_NOBODY && (fl & F_STATE)) continue;
			char *params = ah_params(&A->h, "", NULL);
			struct ah_cmd c;
			control_cmd(A, &c, i, user, params ? params : "{}");
			free(params);
			if (ah_run_all(&A->h, &c, 1, 1, err) < 0) {
				cmd_free(&c);
				return -1;
			}
			A->ctl_rc[slot][i] = c.rc;
			strip_name(&c, A->at[i].name);
			A->ctl_text[slot][i] = strdup(c.err ? c.err : "");
			char why[1200];
			const char *v = ctl_verdict(c.rc, c.err, why, sizeof why);
			row(A, sec, A->at[i].name, v, "open", c.err, NULL, "%s", why);
			if (!strcmp(A->at[i].name, "i386_syscall") && c.rc == 3 && c.err && strstr(c.err, "no i386 entry point"))
				A->no_i386 = 1;
			cmd_free(&c);
			if (!strcmp(A->at[i].name, "kill_host") && user == U_ROOT) {
				int died = ah_dies(A->h.kill_pid, 3000);
				CHECK(A, sec, "kill_host: the host victim really died", died, "dead", died ? "dead" : "alive", NULL);
				A->h.kill_pid = ah_sleeper(&A->h);
			}
			if (!strcmp(A->at[i].name, "host_write")) {
				char f[PATH_MAX + 40];
				snprintf(f, sizeof f, "%s/escape-probe-wrote", A->h.hostdir);
				int there = access(f, F_OK) == 0;
				if (user == U_ROOT || user == U_SELF)
					CHECK(A, sec, "host_write: the file really is in the host directory", there, "written",
					      there ? "written" : "absent", NULL);
				unlink(f);
			}
		}
	}
	A->user = A->users[0];
	int ti = attempt_index(A, "net_tcp_host"), ui = attempt_index(A, "net_udp_host");
	if ((ti >= 0 && A->selected[ti]) || (ui >= 0 && A->selected[ui])) {
		int tcp = ah_hits(&A->h, "tcp"), udp = ah_hits(&A->h, "udp");
		CHECK(A, sec, "the network controls reached the host listener",
		      (ti < 0 || !A->selected[ti] || tcp > 0) && (ui < 0 || !A->selected[ui] || udp > 0), "tcp and udp hits",
		      ah_hits_text(&A->h), NULL);
	}
	ah_hits_clear(&A->h);
	if (!(A->o->parts & AUDIT_RESOURCE)) return 0;
	/* resource controls: unconfined each runs to a small safety cap */
	static const struct { const char *name, *extra; } rc[] = {
		{ "fork_bomb", "\"cap_procs\":96" },   { "memory_bomb", "\"cap_mb\":96" },
		{ "disk_fill", "\"cap_mb\":24" },      { "cpu_spin", "\"cap_ms\":300" },
		{ "sleep_forever", "\"cap_ms\":300" }, { "stdout_flood", "\"cap_mb\":12" },
		{ "stderr_flood", "\"cap_mb\":1" },
	};
	for (size_t k = 0; k < sizeof rc / sizeof rc[0]; k++) {
		int i = attempt_index(A, rc[k].name);
		if (i < 0 || !A->selected[i]) continue;
		char *params = ah_params(&A->h, "", rc[k].extra);
		struct ah_cmd c;
		control_cmd(A, &c, i, A->users[0], params ? params : "{}");
		c.fd7 = 0;
		free(params);
		if (ah_run_all(&A->h, &c, 1, 1, err) < 0) {
			cmd_free(&c);
			return -1;
		}
		strip_name(&c, rc[k].name);
		char why[1200];
		const char *v = ctl_verdict(c.rc, c.err, why, sizeof why);
		/* stdout_flood writes to stdout: its text is on stderr as for all */
		row(A, sec, rc[k].name, v, "runs to its safety cap", c.err, NULL, "%s", why);
		A->ctl_rc[0][i] = c.rc;
		A->ctl_text[0][i] = strdup(c.err ? c.err : "");
		cmd_free(&c);
	}
	int di = attempt_index(A, "disk_fill");
	if (di >= 0 && A->selected[di]) {
		char f[PATH_MAX + 40];
		snprintf(f, sizeof f, "%s/escape-probe-fill", A->h.scratch);
		int gone = access(f, F_OK) != 0;
		CHECK(A, sec, "disk_fill: the control removed its file", gone, "removed", gone ? "removed" : "present", NULL);
	}
	return 0;
}

/* The control text of attempt i for the current user (that user's own, or
 * root's for attempts only root can run). */
static const char *control_of(const struct audit *A, int i)
{
	int slot = A->user == U_NOBODY ? 1 : 0;
	if (slot == 1 && !A->ctl_text[1][i]) slot = 0;
	return A->ctl_text[slot][i];
}

/* ------------------------------------------------------------ attempts */

static const char *want_denial(const char *name)
{
	for (int i = 0; expected_denial[i][0]; i++)
		if (!strcmp(expected_denial[i][0], name)) return expected_denial[i][1];
	return NULL;
}

static void judge_attempt(struct audit *A, int i, struct ah_cmd *c, const char *tag)
{
	const char *n = A->at[i].name, *sec = "attempt";
	const char *ctl = control_of(A, i);
	char det[1200], den[64], obs[1200], exp[160];
	run_detail(c, det, sizeof det);
	const char *want = want_denial(n);
	if (want) snprintf(exp, sizeof exp, "blocked (the filter, reported as %s)", want);
	else snprintf(exp, sizeof exp, "blocked");
	json_t *o = run_obj(c, 0);
	const char *v = o ? json_string_value(json_object_get(o, n)) : NULL;
	int bad_arch = !strcmp(n, "x32_syscall") || !strcmp(n, "i386_syscall");
	if (is_check(A) && c->rc == RX_OK) {
		row(A, sec, n, "pass", exp, "blocked (the probe reported blocked, so the check accepted)", ctl, NULL);
	} else if (is_check(A) && c->rc == RX_CHECK_REFUSED) {
		row(A, sec, n, "escaped", exp, c->err, ctl, "%s", det);
	} else if (c->rc == RX_OK && v) {
		int blocked = !strncmp(v, "blocked", 7);
		row(A, sec, n, blocked ? "pass" : "escaped", exp, v, ctl, "%s", blocked ? "" : det);
	} else if (c->rc == RX_DENIED && denied_name(c->err, den, sizeof den)) {
		snprintf(obs, sizeof obs, "stopped by the filter, reported as %s", den);
		if (want && strcmp(den, want) != 0)
			row(A, sec, n, "fail", exp, obs, ctl, "expected the report to name %s; %s", want, det);
		else
			row(A, sec, n, "pass", exp, obs, ctl, NULL);
	} else if (c->rc == RX_INTERP && bad_arch && c->err &&
	           (strstr(c->err, "SIGSYS") || strstr(c->err, "signal 31") || strstr(c->err, "system call"))) {
		const char *l = strstr(c->err, "SIGSYS") ? strstr(c->err, "SIGSYS") : strstr(c->err, "signal 31");
		while (l && l > c->err && l[-1] != '\n') l--; /* the line that says so, not a warning before it */
		snprintf(obs, sizeof obs, "the non-native ABI kills the process (%.*s)", (int)strcspn(l ? l : c->err, "\n"),
		         l ? l : c->err);
		row(A, sec, n, "pass", exp, obs, ctl, NULL);
	} else if (!strcmp(n, "i386_syscall") && A->no_i386 &&
	           ((c->err && (strstr(c->err, "SIGSEGV") || strstr(c->err, "signal 11"))) || (v && strstr(v, "SIGSEGV")))) {
		row(A, sec, n, "skip", exp, c->err, ctl,
		    "this kernel has no i386 entry point (the unconfined control gets SIGSEGV too)");
	} else if (v && !strncmp(v, "open", 4)) {
		row(A, sec, n, "escaped", exp, v, ctl, "%s", det);
	} else {
		/* no verdict of the probe's and no stop the capsule reports: the
		 * run itself failed, which proves nothing either way */
		snprintf(obs, sizeof obs, "no verdict: %s", v ? v : c->err && c->err[0] ? c->err : "the run printed nothing");
		row(A, sec, n, "fail", exp, obs, ctl, "%s", det);
	}
	json_decref(o);
	if (!strcmp(n, "exec_host_binary") || !strcmp(n, "clone_newuser") || !strcmp(n, "clone3_newuser"))
		no_strays(A, sec, n, tag);
}

static int run_attempts(struct audit *A, struct world_err *err)
{
	const char *sec = "attempt";
	/* every attempt blocked in one run, or the filter ended the capsule at
	 * the first refused call (this capsule's policy) */
	char tag[40];
	if (!is_check(A) && !A->o->standin && !A->o->attempts) {
		struct ah_cmd c;
		if (capsule_cmd(A, &c, "\"mode\":\"attempts\"", 20000, tag, sizeof tag, 0) < 0 || run_one(A, &c, err) < 0) {
			cmd_free(&c);
			return werr(err, err->code ? err->code : WX_IO, "%s", err->msg[0] ? err->msg : "batch run");
		}
		json_t *o = run_obj(&c, 0);
		char det[1200], den[64];
		run_detail(&c, det, sizeof det);
		if (c.rc == RX_OK && o) {
			const char *k;
			json_t *v;
			char bad[1000] = "";
			json_object_foreach(o, k, v) if (!json_is_string(v) || strncmp(json_string_value(v), "blocked", 7))
				snprintf(bad + strlen(bad), sizeof bad - strlen(bad), "%s%s", bad[0] ? "," : "", k);
			CHECK(A, sec, "batch", !bad[0], "every attempt blocked in one run", bad[0] ? bad : "all blocked", "%s",
			      bad[0] ? det : "");
		} else {
			int ok = c.rc == RX_DENIED && denied_name(c.err, den, sizeof den);
			char obs[200];
			snprintf(obs, sizeof obs, "the filter ended the capsule at the first refused call (%s)", den);
			CHECK(A, sec, "batch", ok, "every attempt blocked, or the filter ended the run", ok ? obs : c.err, "%s",
			      ok ? "" : det);
		}
		json_decref(o);
		cmd_free(&c);
	}
	int idx[MAX_ATTEMPTS], n = 0;
	for (int i = 0; i < A->nat; i++)
		if (A->selected[i] && !(A->at[i].flags & F_RESOURCE)) idx[n++] = i;
	struct ah_cmd *cs = calloc((size_t)n ? (size_t)n : 1, sizeof *cs);
	char (*tags)[40] = calloc((size_t)n ? (size_t)n : 1, sizeof *tags);
	if (!cs || !tags) {
		free(cs);
		free(tags);
		return werr(err, WX_FAIL, "out of memory");
	}
	int rc = 0;
	for (int k = 0; k < n && rc == 0; k++) {
		char extra[120];
		snprintf(extra, sizeof extra, "\"mode\":\"one\",\"attempt\":\"%s\"", A->at[idx[k]].name);
		if (capsule_cmd(A, &cs[k], extra, 8000, tags[k], sizeof tags[k], 0) < 0)
			rc = werr(err, WX_IO, "cannot prepare the run of %s", A->at[idx[k]].name);
	}
	if (rc == 0) rc = ah_run_all(&A->h, cs, (size_t)n, A->o->jobs, err);
	for (int k = 0; k < n; k++) {
		if (rc == 0) {
			note_run(A, &cs[k]);
			judge_attempt(A, idx[k], &cs[k], tags[k]);
		}
		cmd_free(&cs[k]);
	}
	free(cs);
	free(tags);
	if (rc == 0) check_cgroups(A, sec);
	return rc;
}

/* ------------------------------------------------------------ worktree */

static void sort_words(char *s);

/* A tool run's worktree (`worldd run --profile tool-run --worktree W`, W
 * read-only at /work): readable, not writable, and no way out of it to the
 * host. The controls show the same paths reach W and the host unconfined. */
static int worktree_controls(struct audit *A, struct world_err *err)
{
	char link[PATH_MAX + 40], up[PATH_MAX + 40];
	snprintf(link, sizeof link, "%s/secret-link", A->h.worktree);
	snprintf(up, sizeof up, "%s/../secret.txt", A->h.worktree);
	const struct { const char *what, *attempt, *file, *dir; } ctl[3] = {
		{ "worktree: host_write into the worktree", "host_write", A->h.secret, A->h.worktree },
		{ "worktree: host_secret_file through the worktree's symlink", "host_secret_file", link, A->h.hostdir },
		{ "worktree: host_secret_file of worktree/..", "host_secret_file", up, A->h.hostdir },
	};
	const char *prof = A->profile, *via = A->via;
	int user = A->user;
	A->profile = "-";
	A->via = "unconfined";
	A->user = A->users[0];
	for (int k = 0; k < 3; k++) {
		int ai = attempt_index(A, ctl[k].attempt);
		if (ai < 0) return werr(err, WX_SETUP, "the probe has no attempt %s", ctl[k].attempt);
		char *params = ah_params_files(&A->h, "", ctl[k].file, ctl[k].dir, NULL);
		struct ah_cmd c;
		control_cmd(A, &c, ai, A->users[0], params ? params : "{}");
		c.fd7 = 0;
		free(params);
		if (ah_run_all(&A->h, &c, 1, 1, err) < 0) {
			cmd_free(&c);
			return -1;
		}
		strip_name(&c, ctl[k].attempt);
		char why[1200];
		const char *v = ctl_verdict(c.rc, c.err, why, sizeof why);
		row(A, "control", ctl[k].what, v, "open", c.err, NULL, "%s", why);
		A->wt_ctl[k] = strdup(c.err ? c.err : "");
		cmd_free(&c);
	}
	char f[PATH_MAX + 40];
	snprintf(f, sizeof f, "%s/escape-probe-wrote", A->h.worktree);
	int there = access(f, F_OK) == 0;
	CHECK(A, "control", "worktree: host_write: the file really is in the worktree", there, "written",
	      there ? "written" : "absent", NULL);
	if (there && unlink(f) != 0) return werr(err, WX_IO, "unlink %s: %s", f, strerror(errno));
	A->profile = prof;
	A->via = via;
	A->user = user;
	A->wt_before = ah_tree(A->h.worktree);
	if (!A->wt_before) return werr(err, WX_IO, "cannot list the worktree %s", A->h.worktree);
	return 0;
}

static int run_worktree(struct audit *A, struct world_err *err)
{
	const char *sec = "attempt";
	if (!A->wt_before && worktree_controls(A, err) < 0) return -1;
	char secret[PATH_MAX + 16];
	snprintf(secret, sizeof secret, "%s", A->h.secret);
	const struct {
		const char *what, *attempt, *file, *dir, *want, *need, *expected;
		int ctl, must_open;
	} t[] = {
		{ "worktree: a worktree file at /work", "host_secret_file", "/work/readme.txt", NULL,
		  "open: read 16 bytes of /work/readme.txt", NULL, "readable (the worktree is the tool's input)", -1, 1 },
		{ "worktree: host_write into /work", "host_write", NULL, "/work", "blocked", "EROFS",
		  "blocked: EROFS (mounted read-only)", 0, 0 },
		{ "worktree: host_write into /work/sub", "host_write", NULL, "/work/sub", "blocked", "EROFS",
		  "blocked: EROFS (mounted read-only)", 0, 0 },
		{ "worktree: host_secret_file of the host secret's path", "host_secret_file", secret, NULL, "blocked", "ENOENT",
		  "blocked: ENOENT (no host path)", -1, 0 },
		{ "worktree: host_secret_file of /work/secret-link", "host_secret_file", "/work/secret-link", NULL, "blocked",
		  "ENOENT", "blocked: ENOENT (the symlink resolves inside the capsule)", 1, 0 },
		{ "worktree: host_secret_file of /work/../secret.txt", "host_secret_file", "/work/../secret.txt", NULL,
		  "blocked", "ENOENT", "blocked: ENOENT (/work/.. is the capsule root)", 2, 0 },
		{ "worktree: host_root_listing", "host_root_listing", NULL, NULL, NULL, NULL,
		  "the root holds .capsule-cache, args.json, dev, host, work and nothing else", -1, 0 },
		{ "worktree: exec_written_file", "exec_written_file", NULL, NULL, "blocked", NULL, "blocked", -1, 0 },
	};
	enum { NT = sizeof t / sizeof t[0] };
	struct ah_cmd cs[NT];
	char tags[NT][40];
	A->worktree = 1;
	int rc = 0, made = 0;
	for (int k = 0; k < (int)NT && rc == 0; k++, made++) {
		char extra[120];
		snprintf(extra, sizeof extra, "\"mode\":\"one\",\"attempt\":\"%s\"", t[k].attempt);
		cmd_init(&cs[k]);
		/* capsule_cmd makes the input from the audit's targets; this one
		 * names the worktree's paths instead */
		if (capsule_cmd(A, &cs[k], extra, 8000, tags[k], sizeof tags[k], 0) < 0) {
			rc = werr(err, WX_IO, "cannot prepare the worktree run of %s", t[k].attempt);
			break;
		}
		char *in = ah_params_files(&A->h, tags[k], t[k].file ? t[k].file : A->h.secret, t[k].dir ? t[k].dir : A->h.hostdir,
		                           extra);
		for (int i = 0; in && cs[k].argv[i]; i++)
			if (!strcmp(cs[k].argv[i], "--input") && cs[k].argv[i + 1]) {
				free(cs[k].argv[i + 1]);
				cs[k].argv[i + 1] = in;
				in = NULL;
			}
		free(in);
	}
	A->worktree = 0;
	if (rc == 0) rc = ah_run_all(&A->h, cs, (size_t)made, A->o->jobs, err);
	for (int k = 0; k < made; k++) {
		struct ah_cmd *c = &cs[k];
		if (rc == 0) {
			note_run(A, c);
			json_t *o = run_obj(c, 0);
			const char *v = o ? json_string_value(json_object_get(o, t[k].attempt)) : NULL;
			char det[1200], obs[1200];
			run_detail(c, det, sizeof det);
			const char *ctl = t[k].ctl >= 0 ? A->wt_ctl[t[k].ctl] : NULL;
			const char *verdict;
			if (!strcmp(t[k].attempt, "host_root_listing")) {
				/* "...: a,b,c": the entries, sorted */
				char names[600] = "";
				const char *l = v ? strrchr(v, ':') : NULL;
				if (l) {
					snprintf(names, sizeof names, "%s", l + 1 + (l[1] == ' '));
					for (char *p = names; *p; p++)
						if (*p == ',') *p = ' ';
					sort_words(names);
				}
				int same = !strcmp(names, ".capsule-cache args.json dev host work");
				verdict = c->rc == RX_OK && v ? (same ? "pass" : "escaped") : "fail";
				snprintf(obs, sizeof obs, "%s", v ? names : c->err ? c->err : "");
			} else if (c->rc == RX_OK && v) {
				int match = !strncmp(v, t[k].want, strlen(t[k].want)) && (!t[k].need || strstr(v, t[k].need));
				verdict = match ? "pass" : !strncmp(v, "open", 4) && !t[k].must_open ? "escaped" : "fail";
				snprintf(obs, sizeof obs, "%s", v);
			} else if (c->rc == RX_DENIED && !t[k].must_open) {
				char den[64];
				verdict = denied_name(c->err, den, sizeof den) ? "pass" : "fail";
				snprintf(obs, sizeof obs, "stopped by the filter, reported as %s", den);
			} else {
				verdict = "fail";
				snprintf(obs, sizeof obs, "no verdict: %s", c->err && c->err[0] ? c->err : "the run printed nothing");
			}
			row(A, sec, t[k].what, verdict, t[k].expected, obs, ctl, "%s", strcmp(verdict, "pass") ? det : "");
			json_decref(o);
		}
		cmd_free(c);
	}
	if (rc != 0) return rc;
	char *after = ah_tree(A->h.worktree);
	int same = after && !strcmp(after, A->wt_before);
	CHECK(A, sec, "worktree: unchanged (every entry: type, mode, size, mtime, link target)", same, "unchanged",
	      same ? "unchanged" : after ? after : "unreadable", "before: %.600s", A->wt_before);
	free(after);
	return 0;
}

/* ------------------------------------------------------------ resource */

static long long jint(json_t *o, const char *path)
{
	/* "a.b.c" */
	char buf[128];
	snprintf(buf, sizeof buf, "%s", path);
	json_t *v = o;
	for (char *save = NULL, *w = strtok_r(buf, ".", &save); w && v; w = strtok_r(NULL, ".", &save))
		v = json_object_get(v, w);
	return json_is_integer(v) ? json_integer_value(v) : 0;
}

static long long first_num(const char *s, const char *before)
{
	const char *p = s ? strstr(s, before) : NULL;
	if (!p) return -1;
	p += strlen(before);
	return isdigit((unsigned char)*p) ? atoll(p) : -1;
}

static int run_resource(struct audit *A, struct world_err *err)
{
	const char *sec = "resource";
	json_t *P = A->pj;
	long long pids = jint(P, "cgroups.pids"), nproc = jint(P, "rlimits.RLIMIT_NPROC.soft");
	long long pids_lim = 4096;
	if (pids && pids < pids_lim) pids_lim = pids;
	if (nproc && nproc < pids_lim) pids_lim = nproc;
	long long as = jint(P, "rlimits.RLIMIT_AS.soft"), as_mib = as ? as / MiB : 4096;
	long long data = jint(P, "rlimits.RLIMIT_DATA.soft"), data_mib = data ? data / MiB : as_mib;
	if (data_mib > as_mib) data_mib = as_mib;
	long long mem = jint(P, "cgroups.memory_bytes"), mem_mib = mem ? mem / MiB : as_mib;
	if (mem_mib > data_mib) mem_mib = data_mib;
	long long stdout_cap = jint(P, "limits.stdout_cap");
	if (!stdout_cap) stdout_cap = 8 * MiB;
	long long fsize_kib = jint(P, "rlimits.RLIMIT_FSIZE.soft") / 1024, cache_kib = 0;
	json_t *m;
	size_t mi;
	json_array_foreach(json_object_get(P, "mounts"), mi, m) if (!strcmp(json_string_value(json_object_get(m, "path")) ?: "",
	                                                                  "/.capsule-cache")) cache_kib =
	    jint(m, "size") / 1024;
	long long bound = fsize_kib > cache_kib ? fsize_kib : cache_kib;
	if (!bound) bound = 1 << 30;
	const int flood_mib = 256;
	char extra[8][120];
	static const char *const names[] = { "fork_bomb", "memory_bomb", "disk_fill", "cpu_spin",
		                             "sleep_forever", "stdout_flood", "stderr_flood" };
	long to[] = { 8000, 10000, 10000, 1500, 1500, 8000, 8000 };
	snprintf(extra[0], sizeof extra[0], "\"cap_procs\":2048,\"cap_ms\":4000");
	snprintf(extra[1], sizeof extra[1], "\"cap_mb\":%lld", as_mib * 2 < 4096 ? as_mib * 2 : 4096);
	snprintf(extra[2], sizeof extra[2], "\"cap_mb\":1024");
	snprintf(extra[3], sizeof extra[3], "\"cap_ms\":30000");
	snprintf(extra[4], sizeof extra[4], "\"cap_ms\":30000");
	snprintf(extra[5], sizeof extra[5], "\"cap_mb\":%d", flood_mib);
	snprintf(extra[6], sizeof extra[6], "\"cap_mb\":%d", flood_mib);
	struct ah_cmd cs[7];
	char tags[7][40];
	int idx[7], n = 0;
	for (int k = 0; k < 7; k++) {
		int i = attempt_index(A, names[k]);
		if (i < 0 || !A->selected[i]) continue;
		char ex[400];
		snprintf(ex, sizeof ex, "\"mode\":\"resource\",\"attempt\":\"%.60s\",%.110s", names[k], extra[k]);
		if (capsule_cmd(A, &cs[n], ex, to[k], tags[n], sizeof tags[n], 0) < 0) {
			for (int j = 0; j < n; j++) cmd_free(&cs[j]);
			return werr(err, WX_IO, "cannot prepare the run of %s", names[k]);
		}
		idx[n++] = k;
	}
	/* the floods and bombs run one at a time beside the others: the
	 * supervisor's peak RSS is measured per worldd process */
	if (ah_run_all(&A->h, cs, (size_t)n, A->o->jobs, err) < 0) {
		for (int j = 0; j < n; j++) cmd_free(&cs[j]);
		return -1;
	}
	for (int j = 0; j < n; j++) {
		struct ah_cmd *c = &cs[j];
		note_run(A, c);
		const char *name = names[idx[j]];
		int ai = attempt_index(A, name);
		const char *ctl = control_of(A, ai);
		json_t *o = run_obj(c, 0);
		const char *v = o ? json_string_value(json_object_get(o, name)) : NULL;
		v = v ? v : "";
		char det[1200], exp[200], obs[300];
		run_detail(c, det, sizeof det);
		int ok = 0;
		switch (idx[j]) {
		case 0: {
			long long k = first_num(v, "at ");
			snprintf(exp, sizeof exp, "fork refused at <= %lld processes, or the deadline", pids_lim);
			ok = c->rc == RX_OK ? !strncmp(v, "blocked: fork failed", 20) && k >= 0 && k <= pids_lim
			                   : c->rc == RX_DEADLINE;
			snprintf(obs, sizeof obs, "%s", c->rc == RX_OK ? v : c->err ? c->err : "");
			break;
		}
		case 1: {
			long long k = first_num(v, "after ");
			snprintf(exp, sizeof exp, "mmap refused after <= %lld MiB, or killed at the %lld MiB memory limit", data_mib,
			         mem_mib);
			ok = c->rc == RX_OK ? !strncmp(v, "blocked: mmap failed", 20) && k >= 0 && k <= data_mib
			                   : c->rc == RX_INTERP && c->err &&
			                         (strstr(c->err, "memory") || strstr(c->err, "SIGKILL") ||
			                          strstr(c->err, "signal 9") || strstr(c->err, "killed"));
			snprintf(obs, sizeof obs, "%s", c->rc == RX_OK ? v : c->err ? c->err : "");
			break;
		}
		case 2: {
			long long k = first_num(v, "after ");
			snprintf(exp, sizeof exp, "writing stopped at <= %lld KiB", bound);
			ok = c->rc == RX_OK && !strncmp(v, "blocked", 7) && k <= bound;
			snprintf(obs, sizeof obs, "%s", c->rc == RX_OK ? v : c->err ? c->err : "");
			break;
		}
		case 3:
		case 4:
			snprintf(exp, sizeof exp, "ended by the 1.5 s deadline (exit 11)");
			ok = c->rc == RX_DEADLINE && c->err && strstr(c->err, "deadline");
			snprintf(obs, sizeof obs, "exit %d: %.200s", c->rc, c->err ? c->err : "");
			break;
		case 5:
			snprintf(exp, sizeof exp, "%d MiB on stdout ends the run at the %lld MiB cap (exit 12)", flood_mib,
			         stdout_cap / MiB);
			ok = c->rc == RX_OUTPUT_CAP;
			snprintf(obs, sizeof obs, "exit %d: %.200s", c->rc, c->err ? c->err : "");
			break;
		case 6:
			snprintf(exp, sizeof exp, "%d MiB on stderr: the run ends (exit 0, 11 or 12)", flood_mib);
			ok = c->rc == RX_OK || c->rc == RX_DEADLINE || c->rc == RX_OUTPUT_CAP;
			snprintf(obs, sizeof obs, "exit %d: %.200s", c->rc, c->err ? c->err : "");
			break;
		}
		/* escaped: the probe ran and got past the profile's limit (or to
		 * its own cap); a run that ended otherwise is a failure (fail) */
		row(A, sec, name, ok ? "pass" : c->rc == RX_OK && v[0] ? "escaped" : "fail", exp, obs, ctl, "%s",
		    ok ? "" : det);
		if (idx[j] >= 5) {
			char what[100], o2[100];
			snprintf(what, sizeof what, "%s: the supervisor held at most half of it", name);
			snprintf(o2, sizeof o2, "peak RSS %ld MiB", c->maxrss_kb / 1024);
			CHECK(A, sec, what, c->maxrss_kb * 1024 < (long)flood_mib * MiB / 2, "< 128 MiB", o2, "%s", det);
		}
		no_strays(A, sec, name, tags[j]);
		json_decref(o);
		cmd_free(c);
	}
	check_cgroups(A, sec);
	return 0;
}

/* ------------------------------------------------------------ posture */

static const char *const ns_map[][2] = {
	{ "user", "user" }, { "mount", "mnt" }, { "pid", "pid" }, { "net", "net" },
	{ "ipc", "ipc" },   { "uts", "uts" },   { "cgroup", "cgroup" }, { NULL, NULL },
};

static const char *ns_proc_name(const char *profile_name)
{
	for (int i = 0; ns_map[i][0]; i++)
		if (!strcmp(ns_map[i][0], profile_name)) return ns_map[i][1];
	return NULL;
}

static unsigned long long ns_ino(const char *pid, const char *name)
{
	char p[80];
	snprintf(p, sizeof p, "/proc/%s/ns/%s", pid, name);
	struct stat st;
	return stat(p, &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/* "Key:\tvalue" of /proc/PID/status */
static const char *status_get(const char *st, const char *key, char *out, size_t cap)
{
	return ah_line_value(st, key, ':', out, cap);
}

/* The environment the profile gives, sorted, joined by spaces. */
static void profile_env(json_t *P, char *out, size_t cap)
{
	const char *v[32];
	size_t n = 0, i;
	json_t *e;
	json_array_foreach(json_object_get(P, "environment"), i, e) if (n < 32 && json_is_string(e)) v[n++] =
	    json_string_value(e);
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			if (strcmp(v[a], v[b]) > 0) {
				const char *t = v[a];
				v[a] = v[b];
				v[b] = t;
			}
	out[0] = 0;
	for (i = 0; i < n; i++) snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? " " : "", v[i]);
}

static void sort_words(char *s)
{
	char *w[64];
	int n = 0;
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n < 64; t = strtok_r(NULL, " ", &save)) w[n++] = t;
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (strcmp(w[a], w[b]) > 0) {
				char *t = w[a];
				w[a] = w[b];
				w[b] = t;
			}
	char out[4096] = "";
	for (int i = 0; i < n; i++) snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", w[i]);
	strcpy(s, out);
}

/* /proc/PID/limits row name of each rlimit the profile sets */
static const char *const limit_names[][2] = {
	{ "RLIMIT_CPU", "Max cpu time" },        { "RLIMIT_FSIZE", "Max file size" },
	{ "RLIMIT_DATA", "Max data size" },      { "RLIMIT_STACK", "Max stack size" },
	{ "RLIMIT_CORE", "Max core file size" }, { "RLIMIT_NPROC", "Max processes" },
	{ "RLIMIT_NOFILE", "Max open files" },   { "RLIMIT_MEMLOCK", "Max locked memory" },
	{ "RLIMIT_AS", "Max address space" },    { "RLIMIT_MSGQUEUE", "Max msgqueue size" },
	{ "RLIMIT_RTPRIO", "Max realtime priority" }, { "RLIMIT_LOCKS", "Max file locks" },
	{ "RLIMIT_SIGPENDING", "Max pending signals" }, { "RLIMIT_NICE", "Max nice priority" },
	{ "RLIMIT_RTTIME", "Max realtime timeout" }, { NULL, NULL },
};

static long long limit_val(const char *s)
{
	return !strncmp(s, "unlimited", 9) ? -1 : atoll(s);
}

/* The mount flags a profile mount's "options" text begins with. */
static void mount_flags(const char *options, char *out, size_t cap)
{
	size_t l = strcspn(options, " :(");
	if (l >= cap) l = cap - 1;
	memcpy(out, options, l);
	out[l] = 0;
}

static int has_flag(const char *opts, const char *flag)
{
	size_t fl = strlen(flag);
	for (const char *p = opts; (p = strstr(p, flag)); p += fl)
		if ((p == opts || p[-1] == ',') && (p[fl] == ',' || !p[fl])) return 1;
	return 0;
}

/* One host-view item: a name, whether it matched the profile, what was seen
 * and what the profile says. */
struct hv {
	char item[64];
	int ok;
	char observed[700], expected[300];
};

static int hv_add(struct hv *v, int n, const char *item, int ok, const char *exp, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static int hv_add(struct hv *v, int n, const char *item, int ok, const char *exp, const char *fmt, ...)
{
	if (n >= 48) return n;
	snprintf(v[n].item, sizeof v[n].item, "%s", item);
	v[n].ok = ok;
	snprintf(v[n].expected, sizeof v[n].expected, "%s", exp);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v[n].observed, sizeof v[n].observed, fmt, ap);
	va_end(ap);
	return n + 1;
}

/* What /proc says of process pid (status, uid/gid maps, namespaces, fds,
 * environ, mountinfo, limits, cgroups), against the profile P. */
static int host_view(struct audit *A, pid_t pid, json_t *P, int user, struct hv *v)
{
	char ps[24], path[96], b[512], e[512];
	snprintf(ps, sizeof ps, "%d", (int)pid);
	int n = 0;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	char *st = ah_read_text(path, 1 << 16);
	if (!st) return hv_add(v, n, "status", 0, "readable", "read %s: %s", path, strerror(errno));
	json_t *ident = json_object_get(P, "identity");
	long long in_uid = jint(ident, "inside_uid"), in_gid = jint(ident, "inside_gid");
	long long base = jint(ident, "as_root_host_id.base"), span = jint(ident, "as_root_host_id.span");
	char uidl[128], gidl[128], nspid[128];
	status_get(st, "Uid", uidl, sizeof uidl);
	status_get(st, "Gid", gidl, sizeof gidl);
	status_get(st, "NSpid", nspid, sizeof nspid);
	long long u[4] = { -1, -1, -1, -1 };
	sscanf(uidl, "%lld %lld %lld %lld", &u[0], &u[1], &u[2], &u[3]);
	int same = u[0] >= 0 && u[0] == u[1] && u[1] == u[2] && u[2] == u[3];
	/* the capsule init's host pid: the first NSpid of the process whose
	 * last is 1 (worldd run: the interpreter is pid 2 under the agent) */
	if (user == U_NOBODY)
		n = hv_add(v, n, "host uid", same && u[0] == 65534, "the caller's uid 65534", "Uid %s", uidl);
	else if (user == U_ROOT)
		n = hv_add(v, n, "host uid", same && base && u[0] >= base && u[0] < base + span,
		           "one unprivileged uid in the capsule range (base + capsule init pid)", "Uid %s, NSpid %s", uidl,
		           nspid);
	else
		n = hv_add(v, n, "host uid", same && u[0] == (long long)getuid(), "the caller's own uid", "Uid %s", uidl);
	int no_caps = !strncmp(json_string_value(json_object_get(P, "capabilities")) ?: "", "none", 4);
	static const char *const caps[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
	for (int i = 0; i < 5; i++) {
		status_get(st, caps[i], b, sizeof b);
		n = hv_add(v, n, caps[i], no_caps ? strtoull(b, NULL, 16) == 0 && b[0] : 1,
		           no_caps ? "0 (the profile: capabilities none)" : "as the profile", "%s %s", caps[i], b);
	}
	int nnp = json_is_true(json_object_get(P, "no_new_privs"));
	status_get(st, "NoNewPrivs", b, sizeof b);
	n = hv_add(v, n, "NoNewPrivs", atoi(b) == nnp && b[0], nnp ? "1" : "0", "NoNewPrivs %s", b);
	status_get(st, "Seccomp", b, sizeof b);
	n = hv_add(v, n, "Seccomp", !strcmp(b, "2"), "2 (filter: the profile has a seccomp layer)", "Seccomp %s", b);
	status_get(st, "Seccomp_filters", b, sizeof b);
	n = hv_add(v, n, "Seccomp_filters", !strcmp(b, "1"), "1 (the profile's one filter)", "Seccomp_filters %s", b);
	free(st);
	/* uid_map / gid_map: one line, the profile's inside id onto the host id */
	static const char *const maps[] = { "uid_map", "gid_map" };
	for (int k = 0; k < 2; k++) {
		snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, maps[k]);
		char *m = ah_read_text(path, 4096);
		long long in = -1, out = -1, cnt = -1;
		int lines = 0;
		for (char *p = m; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
			if (*p != '\n') {
				lines++;
				if (lines == 1) sscanf(p, "%lld %lld %lld", &in, &out, &cnt);
			}
		long long want_in = k ? in_gid : in_uid;
		long long host = -1;
		if (k == 0) host = u[0];
		else sscanf(gidl, "%lld", &host);
		snprintf(e, sizeof e, "one line: %lld -> the host id, count 1", want_in);
		for (char *p = m; p && *p; p++)
			if (*p == '\n') *p = ';';
		n = hv_add(v, n, maps[k], m && lines == 1 && in == want_in && out == host && cnt == 1, e, "%s",
		           m ? m : "unreadable");
		free(m);
	}
	/* namespaces */
	char shared[200] = "", lst[200] = "";
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(P, "namespaces"), i, x)
	{
		const char *pn = ns_proc_name(json_string_value(x) ?: "");
		if (!pn) continue;
		snprintf(lst + strlen(lst), sizeof lst - strlen(lst), "%s%s", lst[0] ? "," : "", pn);
		unsigned long long a = ns_ino(ps, pn), h = ns_ino("self", pn);
		if (!a || a == h) snprintf(shared + strlen(shared), sizeof shared - strlen(shared), " %s", pn);
	}
	snprintf(e, sizeof e, "own %s", lst);
	n = hv_add(v, n, "namespaces", !shared[0], e, "%s%s", shared[0] ? "shared with the host or unreadable:" : "all own",
	           shared);
	/* fds */
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	char fds[300] = "";
	int extra = 0;
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.') continue;
			snprintf(fds + strlen(fds), sizeof fds - strlen(fds), "%s%s", fds[0] ? "," : "", de->d_name);
			if (atoi(de->d_name) > 2) extra = 1;
		}
		closedir(d);
	}
	n = hv_add(v, n, "fds", d && !extra, "0,1,2 only", "%s", d ? fds : "unreadable");
	/* environ */
	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char env[4096] = "";
	if (fd >= 0) {
		ssize_t k = read(fd, env, sizeof env - 1);
		close(fd);
		env[k > 0 ? k : 0] = 0;
		for (ssize_t j = 0; j + 1 < k; j++)
			if (!env[j]) env[j] = ' ';
		sort_words(env);
	}
	char want_env[1024];
	profile_env(P, want_env, sizeof want_env);
	n = hv_add(v, n, "environ", fd >= 0 && !strcmp(env, want_env), want_env, "%s", env);
	/* mountinfo: every mount the profile lists, with its flags, and no other */
	snprintf(path, sizeof path, "/proc/%d/mountinfo", (int)pid);
	char *mi = ah_read_text(path, 1 << 20);
	char others[600] = "";
	json_t *mounts = json_object_get(P, "mounts");
	int seen[32] = { 0 };
	for (char *save = NULL, *l = mi ? strtok_r(mi, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		char mp[512], opts[256], fstype[64] = "";
		if (sscanf(l, "%*s %*s %*s %*s %511s %255s", mp, opts) != 2) continue;
		char *dash = strstr(l, " - ");
		if (dash) sscanf(dash + 3, "%63s", fstype);
		int found = -1;
		json_array_foreach(mounts, i, x) if (!strcmp(json_string_value(json_object_get(x, "path")) ?: "", mp)) found =
		    (int)i;
		if (found < 0) {
			snprintf(others + strlen(others), sizeof others - strlen(others), " %s(%s)", mp, fstype);
			continue;
		}
		if (found < 32) seen[found]++;
		json_t *pm = json_array_get(mounts, (size_t)found);
		const char *type = json_string_value(json_object_get(pm, "type")) ?: "";
		char flags[128], bad[200] = "";
		mount_flags(json_string_value(json_object_get(pm, "options")) ?: "", flags, sizeof flags);
		for (char *s2 = NULL, *f = strtok_r(flags, ",", &s2); f; f = strtok_r(NULL, ",", &s2))
			if (!has_flag(opts, f)) snprintf(bad + strlen(bad), sizeof bad - strlen(bad), " %s missing", f);
		if (!strcmp(type, "tmpfs") && strcmp(fstype, "tmpfs"))
			snprintf(bad + strlen(bad), sizeof bad - strlen(bad), " type %s, not tmpfs", fstype);
		char item[64];
		snprintf(item, sizeof item, "mount %.50s", mp);
		mount_flags(json_string_value(json_object_get(pm, "options")) ?: "", flags, sizeof flags);
		snprintf(e, sizeof e, "%s %s", type, flags);
		n = hv_add(v, n, item, !bad[0], e, "%s %s%s", fstype, opts, bad);
	}
	json_array_foreach(mounts, i, x)
	{
		/* a mount whose source is "(optional)" (tool-run's worktree) is
		 * there only when asked for; the audit asks for none */
		const char *src = json_string_value(json_object_get(x, "source")) ?: "";
		if (i < 32 && !seen[i] && !strstr(src, "(optional)")) {
			char item[64];
			snprintf(item, sizeof item, "mount %s", json_string_value(json_object_get(x, "path")) ?: "?");
			n = hv_add(v, n, item, 0, "mounted", "absent from mountinfo");
		}
	}
	n = hv_add(v, n, "no other mount", mi && !others[0], "only the profile's mounts", "%s",
	           !mi ? "mountinfo unreadable" : others[0] ? others : "none");
	free(mi);
	/* limits: every rlimit soft/hard as the profile sets it */
	snprintf(path, sizeof path, "/proc/%d/limits", (int)pid);
	char *lim = ah_read_text(path, 1 << 16);
	char badl[700] = "";
	json_t *rl = json_object_get(P, "rlimits");
	const char *key;
	json_object_foreach(rl, key, x)
	{
		const char *row_name = NULL;
		for (int k = 0; limit_names[k][0]; k++)
			if (!strcmp(limit_names[k][0], key)) row_name = limit_names[k][1];
		const char *p = row_name && lim ? strstr(lim, row_name) : NULL;
		if (!p) {
			snprintf(badl + strlen(badl), sizeof badl - strlen(badl), " %s unread", key);
			continue;
		}
		p += strlen(row_name);
		while (*p == ' ') p++;
		long long soft = limit_val(p);
		while (*p && *p != ' ') p++;
		while (*p == ' ') p++;
		long long hard = limit_val(p);
		if (soft != jint(x, "soft") || hard != jint(x, "hard"))
			snprintf(badl + strlen(badl), sizeof badl - strlen(badl), " %s %lld/%lld (profile %lld/%lld)", key, soft,
			         hard, jint(x, "soft"), jint(x, "hard"));
	}
	n = hv_add(v, n, "limits", lim && !badl[0], "every rlimit soft/hard as the profile", "%s",
	           !lim ? "unreadable" : badl[0] ? badl : "all as the profile");
	free(lim);
	/* cgroups: as root the capsule gets its own memory and pids groups */
	if (user == U_ROOT && jint(P, "cgroups.pids") && strcmp(A->via, "unconfined") != 0) {
		snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
		char *theirs = ah_read_text(path, 1 << 16), *mine = ah_read_text("/proc/self/cgroup", 1 << 16);
		char moved[100] = "";
		static const char *const ctl[] = { "memory", "pids" };
		for (int k = 0; k < 2 && theirs && mine; k++) {
			/* v1: "N:memory:/path"; the capsule's differs from ours */
			char needle[32];
			snprintf(needle, sizeof needle, ":%s:", ctl[k]);
			char *a = strstr(theirs, needle), *bb = strstr(mine, needle);
			if (a && bb) {
				size_t la = strcspn(a, "\n"), lb = strcspn(bb, "\n");
				if (la != lb || strncmp(a, bb, la))
					snprintf(moved + strlen(moved), sizeof moved - strlen(moved), "%s%s", moved[0] ? "," : "", ctl[k]);
			} else if (strstr(theirs, "0::/") && strstr(mine, "0::/")) {
				/* v2: one line; the capsule's path is below ours */
				char *ta = strstr(theirs, "0::/"), *ma = strstr(mine, "0::/");
				if (strcspn(ta, "\n") != strcspn(ma, "\n") || strncmp(ta, ma, strcspn(ta, "\n")))
					snprintf(moved + strlen(moved), sizeof moved - strlen(moved), "%s%s", moved[0] ? "," : "",
					         ctl[k]);
			}
		}
		n = hv_add(v, n, "cgroups", moved[0] != 0, "its own memory and pids groups", "own: %s",
		           moved[0] ? moved : "none");
		free(theirs);
		free(mine);
	}
	return n;
}

/* Posture items the filter refuses to read, by the syscall it names. */
static const char *posture_item(const char *denied)
{
	if (strstr(denied, "AMBIENT") || strstr(denied, "prctl(?)") || strstr(denied, "capget") ||
	    strstr(denied, "CAPBSET"))
		return "caps";
	if (strstr(denied, "SECCOMP")) return "seccomp";
	if (strstr(denied, "NO_NEW_PRIVS")) return "no_new_privs";
	if (strstr(denied, "pidfd_open") || strstr(denied, "ioctl")) return "namespaces";
	if (strstr(denied, "landlock")) return "landlock";
	return NULL;
}

static int posture_inside(struct audit *A, json_t **obj, char *skipped, size_t scap, struct world_err *err)
{
	const char *sec = "posture";
	skipped[0] = 0;
	*obj = NULL;
	for (int round = 0; round < 8; round++) {
		char extra[400], tag[40];
		snprintf(extra, sizeof extra, "\"mode\":\"posture\",\"skip\":\"%s\"", skipped);
		struct ah_cmd c;
		if (capsule_cmd(A, &c, extra, 8000, tag, sizeof tag, 1) < 0 || run_one(A, &c, err) < 0) {
			cmd_free(&c);
			return -1;
		}
		json_t *o = run_obj(&c, is_check(A));
		if (c.rc == RX_OK && o) {
			*obj = o;
			cmd_free(&c);
			return 0;
		}
		json_decref(o);
		char den[64];
		const char *item = c.rc == RX_DENIED && denied_name(c.err, den, sizeof den) ? posture_item(den) : NULL;
		if (item && strstr(skipped, item)) item = NULL;
		if (!item) {
			char det[1200];
			run_detail(&c, det, sizeof det);
			CHECK(A, sec, "inside: the probe reports its posture from inside the capsule", 0, "a report", c.err, "%s",
			      det);
			cmd_free(&c);
			return 0;
		}
		char what[120], obs[160];
		snprintf(what, sizeof what, "inside: reading %s", item);
		snprintf(obs, sizeof obs, "refused by the filter (%s); recorded, asked again without it", den);
		row(A, sec, what, "pass", "read, or refused by the filter", obs, NULL, NULL);
		snprintf(skipped + strlen(skipped), scap - strlen(skipped), "%s%s", skipped[0] ? "," : "", item);
		cmd_free(&c);
	}
	return 0;
}

static int rl_index(const char *k)
{
	static const char *const short_names[][2] = {
		{ "as", "RLIMIT_AS" },       { "data", "RLIMIT_DATA" },   { "cpu", "RLIMIT_CPU" },
		{ "fsize", "RLIMIT_FSIZE" }, { "nofile", "RLIMIT_NOFILE" }, { "nproc", "RLIMIT_NPROC" },
		{ "stack", "RLIMIT_STACK" }, { "core", "RLIMIT_CORE" },   { NULL, NULL },
	};
	for (int i = 0; short_names[i][0]; i++)
		if (!strcmp(short_names[i][0], k)) return i;
	return -1;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* The supplementary groups a capsule this process makes shows inside,
 * sorted, as a JSON array: none when root makes it (its child drops them);
 * unprivileged, this process's own, which nothing in an unprivileged user
 * namespace can drop (setgroups is denied there, docs/security.md §6): the
 * effective gid -- the one gid mapped in -- shows as the inside gid, every
 * other one as the kernel's overflow gid (/proc/sys/kernel/overflowgid,
 * 65534). NULL with why on failure. */
static json_t *expected_groups(int is_root, long long in_gid, char *why, size_t n)
{
	json_t *a = json_array();
	if (!a || is_root) return a;
	int ng = getgroups(0, NULL);
	gid_t *g = ng > 0 ? calloc((size_t)ng, sizeof *g) : NULL;
	long long *v = ng > 0 ? calloc((size_t)ng, sizeof *v) : NULL;
	if (ng < 0 || (ng > 0 && (!g || !v || (ng = getgroups(ng, g)) < 0))) {
		snprintf(why, n, "getgroups: %s", strerror(errno));
		goto fail;
	}
	long long over = 65534;
	FILE *f = fopen("/proc/sys/kernel/overflowgid", "re");
	if (!f || fscanf(f, "%lld", &over) != 1) {
		snprintf(why, n, "read /proc/sys/kernel/overflowgid: %s", f ? "not a number" : strerror(errno));
		if (f) fclose(f);
		goto fail;
	}
	fclose(f);
	gid_t eg = getegid();
	for (int i = 0; i < ng; i++) v[i] = g[i] == eg ? in_gid : over;
	qsort(v, (size_t)ng, sizeof *v, cmp_ll);
	for (int i = 0; i < ng; i++)
		if (json_array_append_new(a, json_integer(v[i])) < 0) {
			snprintf(why, n, "out of memory");
			goto fail;
		}
	free(g);
	free(v);
	return a;
fail:
	free(g);
	free(v);
	json_decref(a);
	return NULL;
}

static void judge_inside(struct audit *A, json_t *o)
{
	const char *sec = "posture";
	json_t *P = A->pj;
	json_t *ident = json_object_get(P, "identity");
	long long in_uid = jint(ident, "inside_uid"), in_gid = jint(ident, "inside_gid");
	char obs[1200], exp[300];
	char *t;
	json_t *uid = json_object_get(o, "uid"), *gid = json_object_get(o, "gid");
	int ok = json_array_size(uid) == 3 && json_array_size(gid) == 3;
	for (size_t i = 0; ok && i < 3; i++)
		ok = json_integer_value(json_array_get(uid, i)) == in_uid && json_integer_value(json_array_get(gid, i)) == in_gid;
	json_t *pair = json_pack("[OO]", uid ? uid : json_null(), gid ? gid : json_null());
	t = pair ? json_dumps(pair, JSON_COMPACT) : NULL;
	json_decref(pair);
	snprintf(exp, sizeof exp, "uid %lld, gid %lld (the profile's inside ids)", in_uid, in_gid);
	CHECK(A, sec, "inside: uid/gid", ok, exp, t, NULL);
	free(t);
	size_t i;
	json_t *x;
	/* Exactly the groups the identity rule gives (expected_groups), in any
	 * order: as root none; unprivileged the caller's, each one unmapped
	 * (65534) but its own gid (the inside gid). */
	json_t *g = json_object_get(o, "groups");
	char gwhy[200] = "";
	json_t *want = expected_groups(A->h.is_root, in_gid, gwhy, sizeof gwhy);
	size_t ngot = json_array_size(g);
	long long *got = ngot ? calloc(ngot, sizeof *got) : NULL;
	ok = want && json_is_array(g) && (ngot == 0 || got) && ngot == json_array_size(want);
	for (i = 0; ok && i < ngot; i++) {
		if (!json_is_integer(json_array_get(g, i))) ok = 0;
		got[i] = json_integer_value(json_array_get(g, i));
	}
	if (ok && ngot) qsort(got, ngot, sizeof *got, cmp_ll);
	for (i = 0; ok && i < ngot; i++) ok = got[i] == json_integer_value(json_array_get(want, i));
	free(got);
	char *w = want ? json_dumps(want, JSON_COMPACT) : NULL;
	snprintf(exp, sizeof exp, "%s%s", A->h.is_root ? "none (a root capsule drops them; the uid 65534 pass has none): " :
	         "the caller's own, unmapped ones as 65534, its own gid as the inside gid: ",
	         w ? w : gwhy[0] ? gwhy : "out of memory");
	free(w);
	json_decref(want);
	t = json_dumps(g ? g : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
	CHECK(A, sec, "inside: supplementary groups", ok, exp, t, NULL);
	free(t);
	json_t *caps = json_object_get(o, "caps");
	if (caps) {
		ok = 1;
		static const char *const k[] = { "effective", "permitted", "inheritable", "bounding" };
		for (int j = 0; j < 4; j++)
			if (strcmp(json_string_value(json_object_get(caps, k[j])) ?: "", "0x0")) ok = 0;
		if (strncmp(json_string_value(json_object_get(caps, "ambient")) ?: "", "0x0", 3)) ok = 0;
		t = json_dumps(caps, JSON_COMPACT);
		CHECK(A, sec, "inside: capabilities", ok, "every set empty", t, NULL);
		free(t);
	}
	json_t *nnp = json_object_get(o, "no_new_privs");
	if (nnp) {
		int want = json_is_true(json_object_get(P, "no_new_privs"));
		snprintf(obs, sizeof obs, "%lld", json_integer_value(nnp));
		CHECK(A, sec, "inside: no_new_privs", json_is_integer(nnp) && json_integer_value(nnp) == want,
		      want ? "1" : "0", obs, NULL);
	}
	json_t *sc = json_object_get(o, "seccomp");
	if (sc) {
		snprintf(obs, sizeof obs, "%lld", json_integer_value(sc));
		CHECK(A, sec, "inside: seccomp mode", json_is_integer(sc) && json_integer_value(sc) == 2, "2 (filter)", obs,
		      NULL);
	}
	json_t *ns = json_object_get(o, "namespaces");
	if (ns) {
		char bad[300] = "";
		json_array_foreach(json_object_get(P, "namespaces"), i, x)
		{
			const char *pn = ns_proc_name(json_string_value(x) ?: "");
			if (!pn) continue;
			json_t *val = json_object_get(ns, pn);
			if (!json_is_integer(val) || (unsigned long long)json_integer_value(val) == ns_ino("self", pn))
				snprintf(bad + strlen(bad), sizeof bad - strlen(bad), " %s", pn);
		}
		CHECK(A, sec, "inside: namespaces", !bad[0], "own, none shared with the host", bad[0] ? bad : "all own", NULL);
	} else {
		/* what it sees instead: a pid of its own pid namespace (worldd
		 * run: 2 under the capsule's agent; tool-run: 1) */
		long long pid = jint(o, "pid"), ppid = jint(o, "ppid");
		snprintf(obs, sizeof obs, "pid %lld, parent %lld", pid, ppid);
		CHECK(A, sec, "inside: pid namespace", (pid == 1 || pid == 2) && (ppid == 0 || ppid == 1) && pid > ppid,
		      "pid 1 or 2 of its own pid namespace, parent 0 or 1", obs, NULL);
	}
	const char *hn = json_string_value(json_object_get(o, "hostname")) ?: "";
	const char *want_hn = json_string_value(json_object_get(P, "hostname")) ?: "";
	CHECK(A, sec, "inside: hostname", !strcmp(hn, want_hn), want_hn, hn, NULL);
	json_t *fds = json_object_get(o, "fds");
	const char *k;
	char fl[200] = "";
	ok = json_is_object(fds);
	json_object_foreach(fds, k, x)
	{
		snprintf(fl + strlen(fl), sizeof fl - strlen(fl), "%s%s", fl[0] ? "," : "", k);
		if (atoi(k) > 2) ok = 0;
	}
	CHECK(A, sec, "inside: open fds", ok, "0-2 only", fl, NULL);
	char env[2048] = "", want_env[1024];
	json_object_foreach(json_object_get(o, "env"), k, x)
	    snprintf(env + strlen(env), sizeof env - strlen(env), "%s%s=%s", env[0] ? " " : "", k, json_string_value(x) ?: "");
	sort_words(env);
	profile_env(P, want_env, sizeof want_env);
	CHECK(A, sec, "inside: environment", !strcmp(env, want_env), want_env, env, NULL);
	const char *cwd = json_string_value(json_object_get(o, "cwd")) ?: "";
	const char *sandbox = json_string_value(json_object_get(json_object_get(o, "env"), "AILANG_FS_SANDBOX")) ?: "";
	CHECK(A, sec, "inside: cwd", !strcmp(cwd, sandbox), "the sandbox root (AILANG_FS_SANDBOX)", cwd, NULL);
	char root[600] = "", badr[300] = "";
	json_array_foreach(json_object_get(o, "root"), i, x)
	{
		const char *name = json_string_value(x) ?: "";
		snprintf(root + strlen(root), sizeof root - strlen(root), "%s%s", root[0] ? "," : "", name);
		int found = 0;
		size_t j;
		json_t *s;
		json_array_foreach(json_object_get(P, "staged"), j, s)
		{
			const char *sv = json_string_value(s) ?: "";
			size_t l = strcspn(sv, "/");
			if (strlen(name) == l && !strncmp(sv, name, l)) found = 1;
		}
		if (!found) snprintf(badr + strlen(badr), sizeof badr - strlen(badr), " %s", name);
	}
	if (strcmp(A->profile, "tool-run") == 0) {
		/* tool-run also mounts its devices at /dev (profile mounts) */
		char *p = strstr(badr, " dev");
		if (p && (p[4] == ' ' || !p[4])) memmove(p, p + 4, strlen(p + 4) + 1);
	}
	snprintf(obs, sizeof obs, "%s%s%s", root, badr[0] ? "; not staged:" : "", badr);
	CHECK(A, sec, "inside: root directory", !badr[0], "only the profile's staged files", obs, NULL);
	json_t *rlm = json_object_get(o, "rlimits"), *rl = json_object_get(P, "rlimits");
	char badl[600] = "";
	json_object_foreach(rlm, k, x)
	{
		int ri = rl_index(k);
		if (ri < 0) continue;
		static const char *const full[] = { "RLIMIT_AS",     "RLIMIT_DATA",  "RLIMIT_CPU",   "RLIMIT_FSIZE",
			                            "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_STACK", "RLIMIT_CORE" };
		json_t *want = json_object_get(rl, full[ri]);
		if (!want) continue;
		if (json_array_size(x) != 2 || json_integer_value(json_array_get(x, 0)) != jint(want, "soft") ||
		    json_integer_value(json_array_get(x, 1)) != jint(want, "hard"))
			snprintf(badl + strlen(badl), sizeof badl - strlen(badl), " %s", full[ri]);
	}
	CHECK(A, sec, "inside: rlimits", !badl[0], "soft/hard as the profile", badl[0] ? badl : "all as the profile", NULL);
}

/* The probe lingering in a capsule (or unconfined for the control), read
 * from the host's /proc while it waits. */
static pid_t find_tagged(const char *tag, struct ah_cmd *c)
{
	pid_t p[4];
	long end = ah_now_ms() + 5000;
	while (ah_now_ms() < end && !ah_interrupted) {
		int n = ah_tagged(tag, p, 4);
		if (n > 0) return p[0];
		if (ah_poll(c)) return 0;
		ah_sleep_ms(10);
	}
	return 0;
}

static int posture_host(struct audit *A, const char *skipped, struct world_err *err)
{
	const char *sec = "posture";
	char extra[400], tag[40];
	snprintf(extra, sizeof extra, "\"mode\":\"posture\",\"linger_ms\":2500,\"skip\":\"%s\"", skipped);
	struct ah_cmd c;
	if (capsule_cmd(A, &c, extra, 10000, tag, sizeof tag, 1) < 0 || ah_start(&A->h, &c, err) < 0) {
		cmd_free(&c);
		return werr(err, err->code ? err->code : WX_IO, "%s", err->msg[0] ? err->msg : "posture run");
	}
	pid_t pid = find_tagged(tag, &c);
	if (!pid) {
		ah_wait(&c);
		char det[1200];
		run_detail(&c, det, sizeof det);
		CHECK(A, sec, "host: found the capsule's interpreter by its tag", 0, "found", "not found", "%s", det);
		cmd_free(&c);
		return 0;
	}
	struct hv v[48];
	int n = host_view(A, pid, A->pj, A->user, v);
	for (int i = 0; i < n; i++) {
		char what[100];
		snprintf(what, sizeof what, "host: %.64s", v[i].item);
		CHECK(A, sec, what, v[i].ok, v[i].expected, v[i].observed, NULL);
	}
	if (ah_wait(&c) < 0) {
		cmd_free(&c);
		return werr(err, WX_FAIL, "interrupted");
	}
	note_run(A, &c);
	json_t *o = run_obj(&c, is_check(A));
	char det[1200];
	run_detail(&c, det, sizeof det);
	CHECK(A, sec, "host: the lingering posture run ended normally", c.rc == RX_OK && o, "exit 0 and a report",
	      c.rc == RX_OK && o ? "exit 0" : c.err, "%s", c.rc == RX_OK && o ? "" : det);
	json_decref(o);
	cmd_free(&c);
	return 0;
}

static int run_posture(struct audit *A, struct world_err *err)
{
	json_t *o;
	char skipped[200];
	if (posture_inside(A, &o, skipped, sizeof skipped, err) < 0) return -1;
	if (o) {
		CHECK(A, "posture", "inside: the probe reports its posture from inside the capsule", 1, "a report", "a report",
		      NULL);
		judge_inside(A, o);
		json_decref(o);
	}
	if (A->h.is_root && !A->o->standin) {
		if (posture_host(A, skipped, err) < 0) return -1;
	} else if (!A->h.is_root) {
		row(A, "posture", "host: /proc of the capsule", "skip", "", "", NULL,
		    "needs root: the host reads the capsule's /proc/PID");
	}
	check_cgroups(A, "posture");
	return 0;
}

/* The posture readers see the unconfined state as it is: the probe's own
 * report unconfined, and the host view of an unconfined lingering probe,
 * must both differ from the profile where confinement makes the difference. */
static int posture_controls(struct audit *A, struct world_err *err)
{
	const char *sec = "posture";
	A->profile = "-";
	A->via = "unconfined";
	A->user = A->users[0];
	struct ah_cmd c;
	cmd_init(&c);
	arg(&c, A->h.probe);
	arg(&c, "posture");
	c.cwd = A->h.scratch;
	c.timeout_ms = 10000;
	if (ah_run_all(&A->h, &c, 1, 1, err) < 0) {
		cmd_free(&c);
		return -1;
	}
	json_t *o = run_obj(&c, 0);
	char obs[200];
	snprintf(obs, sizeof obs, "%lld", jint(o, "seccomp"));
	CHECK(A, sec, "control: unconfined, the posture reader sees seccomp mode 0", o && jint(o, "seccomp") == 0, "0", obs,
	      NULL);
	snprintf(obs, sizeof obs, "%lld", jint(o, "no_new_privs"));
	CHECK(A, sec, "control: unconfined, the posture reader sees no_new_privs 0", o && jint(o, "no_new_privs") == 0, "0",
	      obs, NULL);
	if (A->users[0] == U_ROOT) {
		const char *eff = json_string_value(json_object_get(json_object_get(o, "caps"), "effective")) ?: "";
		CHECK(A, sec, "control: unconfined as root, the posture reader sees a non-empty effective set",
		      o && eff[0] && strcmp(eff, "0x0"), "not 0x0", eff, NULL);
	}
	json_t *cg = json_object_get(json_object_get(o, "namespaces"), "cgroup");
	CHECK(A, sec, "control: unconfined, namespace inodes are readable through the pidfd ioctls", json_is_integer(cg),
	      "an inode number", json_is_integer(cg) ? "read" : "not read", NULL);
	json_decref(o);
	cmd_free(&c);
	/* the host view of an unconfined probe, against the transition profile */
	const struct capsule_profile *p = capsule_profile_find("transition");
	struct capsule_host_facts hf;
	capsule_host_facts_read(&hf);
	json_t *P = p ? capsule_profile_json(p, &hf) : NULL;
	if (!P) return werr(err, WX_FAIL, "profile transition: out of memory");
	char tag[40], argsf[PATH_MAX + 32];
	job_tag(A, tag, sizeof tag);
	snprintf(argsf, sizeof argsf, "%s/posture-args.json", A->h.work);
	FILE *f = fopen(argsf, "w");
	int ok = f && fprintf(f, "\"{\\\"mode\\\":\\\"posture\\\",\\\"linger_ms\\\":1500,\\\"tag\\\":\\\"%s\\\"}\"\n", tag) > 0;
	if (f && fclose(f) != 0) ok = 0;
	if (!ok) {
		json_decref(P);
		return werr(err, WX_IO, "write %s", argsf);
	}
	cmd_init(&c);
	arg(&c, A->h.probe);
	arg(&c, "run");
	arg(&c, "--args-file");
	arg(&c, argsf);
	arg(&c, A->h.src);
	c.cwd = A->h.scratch;
	c.timeout_ms = 10000;
	if (ah_start(&A->h, &c, err) < 0) {
		json_decref(P);
		cmd_free(&c);
		return -1;
	}
	pid_t pid = find_tagged(tag, &c);
	struct hv v[48];
	int n = pid ? host_view(A, pid, P, A->users[0], v) : 0;
	ah_wait(&c);
	cmd_free(&c);
	json_decref(P);
	static const char *const must_fail[] = { "CapEff", "NoNewPrivs", "Seccomp", "uid_map", "no other mount", "limits" };
	for (size_t k = 0; k < sizeof must_fail / sizeof must_fail[0]; k++) {
		if (!strcmp(must_fail[k], "CapEff") && A->users[0] != U_ROOT) continue;
		int found = -1;
		for (int i = 0; i < n; i++)
			if (!strcmp(v[i].item, must_fail[k])) found = i;
		char what[160];
		snprintf(what, sizeof what, "control: unconfined, the host view's %s check fails", must_fail[k]);
		CHECK(A, sec, what, found >= 0 && !v[found].ok, "differs from the transition profile",
		      found >= 0 ? v[found].observed : "not read", NULL);
	}
	return 0;
}

/* ------------------------------------------------------------ exec */

/* The exec capsule's arms (profile exec): the probe's own
 * attempts run as the project's command in `worldd capsule exec` (the
 * capsule Workspace.Exec uses: execve allowed, the host's system dirs, a
 * worktree at /work), each beside the unconfined control run_controls
 * already made; and a process a command leaves behind (a double-forked,
 * setsid daemon) must not survive the call, beside the same command run
 * unconfined, where it does. */
static const char *const exec_arms[][2] = {
	{ "net_tcp_host", NULL },        /* connect to the audit's loopback listener */
	{ "host_secret_file", NULL },    /* read a host file */
	{ "host_write", NULL },          /* write outside /work */
	{ "mount_tmpfs", "mount" }, { "unshare_user", "unshare" }, { "ptrace_host", "ptrace" },
	{ NULL, NULL },
};

static void exec_cmd(struct audit *A, struct ah_cmd *c, const char *wt, const char *ro)
{
	cmd_init(c);
	arg(c, A->o->worldd);
	arg(c, "capsule");
	arg(c, "exec");
	arg(c, "--worktree");
	arg(c, wt);
	arg(c, "--ro");
	arg(c, ro);
	arg(c, "--env");
	arg(c, "PATH=/usr/bin:/bin");
	arg(c, "--env");
	arg(c, A->h.host_ns);
	arg(c, "--wall-ms");
	arg(c, "10000");
	arg(c, "--");
	c->as = A->user == U_NOBODY ? AH_AS_NOBODY : AH_AS_CALLER;
	c->cwd = A->h.tmp;
	c->timeout_ms = 15000;
}

/* bash -c: a daemon (setsid, double fork) whose argv[0] carries the tag
 * (ah_tagged finds it), then exit at once. */
static void daemon_script(const char *tag, char *out, size_t cap)
{
	snprintf(out, cap, "( setsid bash -c 'exec -a escprobe:%s sleep 86399' </dev/null >/dev/null 2>&1 & ); exit 0",
	         tag);
}

static int run_exec(struct audit *A, struct world_err *err)
{
	const char *sec = "attempt";
	char wt[PATH_MAX + 32];
	snprintf(wt, sizeof wt, "%s/exec-work-%s", A->h.work, user_names[A->user]);
	if (mkdir(wt, 0755) != 0 && errno != EEXIST) return werr(err, WX_SETUP, "audit setup: mkdir %s: %s", wt, strerror(errno));
	if (A->user == U_NOBODY && chown(wt, 65534, 65534) != 0)
		return werr(err, WX_SETUP, "audit setup: chown %s: %s", wt, strerror(errno));
	/* The command must lie where the capsule may execute (landlock: the
	 * system directories, a read root, /work): the probe gets a directory
	 * of its own, given as a read root (the audit's directory holds the
	 * host secret the arms look for). */
	char bin[PATH_MAX + 32], probe[PATH_MAX + 48];
	snprintf(bin, sizeof bin, "%s/exec-bin", A->h.work);
	snprintf(probe, sizeof probe, "%s/probe", bin);
	if ((mkdir(bin, 0755) != 0 && errno != EEXIST) || (link(A->h.probe, probe) != 0 && errno != EEXIST))
		return werr(err, WX_SETUP, "audit setup: %s: %s", probe, strerror(errno));
	for (int k = 0; exec_arms[k][0]; k++) {
		int i = attempt_index(A, exec_arms[k][0]);
		if (i < 0 || !A->selected[i]) continue;
		if ((A->at[i].flags & F_ROOT) && A->user == U_NOBODY && !control_of(A, i)) continue;
		char tag[40], exp[160], obs[1200], det[1200];
		job_tag(A, tag, sizeof tag);
		char *params = ah_params(&A->h, tag, NULL);
		if (!params) return werr(err, WX_FAIL, "out of memory");
		struct ah_cmd c;
		exec_cmd(A, &c, wt, bin);
		arg(&c, probe);
		arg(&c, "control");
		arg(&c, A->at[i].name);
		arg(&c, params);
		free(params);
		if (run_one(A, &c, err) < 0) {
			cmd_free(&c);
			return -1;
		}
		const char *n = A->at[i].name, *want = exec_arms[k][1], *ctl = control_of(A, i);
		snprintf(exp, sizeof exp, "blocked%s%s%s", want ? " (or the filter, reported as " : "", want ? want : "",
		         want ? ")" : "");
		run_detail(&c, det, sizeof det);
		json_t *o = c.rc == 0 && c.out ? json_loads(c.out, 0, NULL) : NULL;
		const char *den = o ? json_string_value(json_object_get(o, "denied")) : NULL;
		const char *e = o ? json_string_value(json_object_get(o, "stderr")) : NULL;
		long long code = o ? json_integer_value(json_object_get(o, "exit_code")) : -1;
		const char *v = e ? strstr(e, ": ") : NULL;
		v = v ? v + 2 : e;
		if (!o) {
			row(A, sec, n, "fail", exp, "no verdict: worldd capsule exec printed no result", ctl, "%s", det);
		} else if (den && den[0]) {
			snprintf(obs, sizeof obs, "stopped by the filter, reported as %s", den);
			int named = !want || !strcmp(den, want);
			row(A, sec, n, named ? "pass" : "fail", exp, obs, ctl, named ? NULL : "expected the report to name %s",
			    want ? want : "");
		} else if (code == 1 && v && !strncmp(v, "blocked", 7)) {
			row(A, sec, n, "pass", exp, v, ctl, NULL);
		} else if (code == 0 && v && !strncmp(v, "open", 4)) {
			row(A, sec, n, "escaped", exp, v, ctl, "%s", det);
		} else {
			snprintf(obs, sizeof obs, "no verdict: exit %lld: %s", code, e ? e : "");
			row(A, sec, n, "fail", exp, obs, ctl, "%s", det);
		}
		json_decref(o);
		cmd_free(&c);
	}
	/* a process left behind: unconfined it survives, in the capsule it does not */
	char tag[40], script[300], ctlobs[200], obs[200];
	job_tag(A, tag, sizeof tag);
	daemon_script(tag, script, sizeof script);
	struct ah_cmd c;
	cmd_init(&c);
	arg(&c, "/bin/bash");
	arg(&c, "-c");
	arg(&c, script);
	c.as = A->user == U_NOBODY ? AH_AS_NOBODY : AH_AS_CALLER;
	c.cwd = A->h.scratch;
	c.timeout_ms = 10000;
	if (run_one(A, &c, err) < 0) {
		cmd_free(&c);
		return -1;
	}
	cmd_free(&c);
	pid_t left[16];
	int nl = 0;
	for (int t = 0; t < 40 && (nl = ah_tagged(tag, left, 16)) == 0; t++) ah_sleep_ms(25);
	snprintf(ctlobs, sizeof ctlobs, nl ? "open: the daemon survived its command (pid %d)" : "blocked: no daemon found",
	         nl ? (int)left[0] : 0);
	for (int k = 0; k < nl; k++) kill(left[k], SIGKILL);
	job_tag(A, tag, sizeof tag);
	daemon_script(tag, script, sizeof script);
	exec_cmd(A, &c, wt, bin);
	arg(&c, "/bin/bash");
	arg(&c, "-c");
	arg(&c, script);
	if (run_one(A, &c, err) < 0) {
		cmd_free(&c);
		return -1;
	}
	json_t *o = c.rc == 0 && c.out ? json_loads(c.out, 0, NULL) : NULL;
	long long code = o ? json_integer_value(json_object_get(o, "exit_code")) : -1;
	json_decref(o);
	int n = ah_tagged_settle(tag, left, 16, 1000);
	for (int k = 0; k < n; k++) kill(left[k], SIGKILL);
	if (code != 0) snprintf(obs, sizeof obs, "no verdict: the command did not run (exit %lld)", code);
	else if (n) snprintf(obs, sizeof obs, "a process of the call survived it (pid %d)", (int)left[0]);
	else snprintf(obs, sizeof obs, "the daemon was killed with the call");
	row(A, sec, "daemon_left_behind", code != 0 ? "fail" : n ? "escaped" : nl ? "pass" : "control failed",
	    "no process of the call left", obs, ctlobs, NULL);
	cmd_free(&c);
	return 0;
}

/* ------------------------------------------------------------ the run */

static const char *const daemon_profiles[] = { "transition", "tool-run", "source-check", "exec" };

static int pass(struct audit *A, const char *profile, int user, const char *via, struct world_err *err)
{
	A->profile = profile;
	A->user = user;
	A->via = via;
	A->nruns = 0;
	A->prof = capsule_profile_find(profile);
	if (!A->prof) return werr(err, WX_NOT_FOUND, "profile '%s' not found (see worldd profile list)", profile);
	json_decref(A->pj);
	if (A->o->expect) {
		json_error_t je;
		A->pj = json_load_file(A->o->expect, 0, &je);
		if (!A->pj || !json_is_object(A->pj))
			return werr(err, WX_USAGE, "--expect %s: not a profile's JSON (line %d: %s)", A->o->expect, je.line,
			            A->pj ? "not an object" : je.text);
		const char *pn = json_string_value(json_object_get(A->pj, "profile"));
		if (!pn || strcmp(pn, profile) != 0)
			return werr(err, WX_USAGE, "--expect %s: the JSON of profile '%s', not '%s'", A->o->expect, pn ? pn : "?",
			            profile);
	} else {
		struct capsule_host_facts hf;
		capsule_host_facts_read(&hf);
		A->pj = capsule_profile_json(A->prof, &hf);
		if (!A->pj) return werr(err, WX_FAIL, "profile %s: out of memory", profile);
	}
	progress(A, "%s as %s via %s", profile, user_names[user], via);
	/* exec: its own arms (run_exec); its posture is not the interpreter
	 * capsules' and is not compared here */
	if (A->prof->exec) return (A->o->parts & AUDIT_ATTEMPTS) && !A->o->standin ? run_exec(A, err) : 0;
	if ((A->o->parts & AUDIT_POSTURE) && run_posture(A, err) < 0) return -1;
	A->nruns = 0;
	if ((A->o->parts & AUDIT_ATTEMPTS) && run_attempts(A, err) < 0) return -1;
	/* tool-run's worktree: only with every attempt (no --attempts filter) */
	if ((A->o->parts & AUDIT_ATTEMPTS) && !strcmp(profile, "tool-run") && !A->o->standin && !A->o->attempts &&
	    run_worktree(A, err) < 0)
		return -1;
	A->nruns = 0;
	if ((A->o->parts & AUDIT_RESOURCE) && !strcmp(profile, "transition") && run_resource(A, err) < 0) return -1;
	return 0;
}

static json_t *summary(json_t *rows)
{
	size_t i;
	json_t *r;
	long long pass = 0, fail = 0, esc = 0, cf = 0, skip = 0;
	json_array_foreach(rows, i, r)
	{
		const char *v = json_string_value(json_object_get(r, "verdict")) ?: "";
		if (!strcmp(v, "pass")) pass++;
		else if (!strcmp(v, "skip")) skip++;
		else if (!strcmp(v, "escaped")) esc++;
		else if (!strcmp(v, "control failed")) cf++;
		else fail++;
	}
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:b}", "rows", (json_int_t)json_array_size(rows), "pass",
	                 (json_int_t)pass, "escaped", (json_int_t)esc, "control_failed", (json_int_t)cf, "fail",
	                 (json_int_t)fail, "skip", (json_int_t)skip, "ok", esc + cf + fail == 0);
}

static int host_checks(struct audit *A, const char *before, double clock_before)
{
	const char *sec = "host";
	A->profile = "-";
	A->via = "-";
	A->user = A->users[0];
	int hits = ah_hits(&A->h, "");
	CHECK(A, sec, "no connection or datagram reached the host listener from a capsule", hits == 0, "none",
	      ah_hits_text(&A->h), NULL);
	int a = ah_alive(A->h.kill_pid), b = ah_alive(A->h.victim_pid), s = ah_alive(A->h.serve_pid);
	CHECK(A, sec, "the host process the capsules tried to kill is alive", a, "alive", a ? "alive" : "dead", NULL);
	CHECK(A, sec, "the host process the capsules tried to trace is alive", b, "alive", b ? "alive" : "dead", NULL);
	CHECK(A, sec, "the host listener is alive", s, "alive", s ? "alive" : "dead", NULL);
	char path[64];
	snprintf(path, sizeof path, "/proc/sysvipc/shm");
	char *shm = ah_read_text(path, 1 << 20);
	char needle[32];
	snprintf(needle, sizeof needle, " %d ", A->h.shm_id);
	int intact = shm && strstr(shm, needle);
	free(shm);
	CHECK(A, sec, "the host shm segment is intact", intact, "present", intact ? "present" : "gone", NULL);
	char left[400] = "";
	DIR *d = opendir(A->h.tmp);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				snprintf(left + strlen(left), sizeof left - strlen(left), " %s", e->d_name);
		closedir(d);
	}
	CHECK(A, sec, "worldd left nothing in its working directory", !left[0], "empty", left[0] ? left : "empty", NULL);
	ah_sleep_ms(200);
	char *after = ah_snapshot(&A->h);
	int same = before && after && !strcmp(before, after);
	CHECK(A, sec, "host unchanged: mounts, hostname, reboot setting, host dir, no tagged process", same, "unchanged",
	      same ? "unchanged" : after, "before: %.600s", before ? before : "");
	free(after);
	double ca = ah_clock_offset(), dd = ca - clock_before;
	char obs[120];
	snprintf(obs, sizeof obs, "realtime - boottime %.3f, then %.3f", clock_before, ca);
	CHECK(A, sec, "the host clock was not stepped", dd < 0.5 && dd > -0.5, "moved < 0.5 s", obs, NULL);
	return 0;
}

json_t *audit_run(const struct audit_opts *o_in, struct world_err *err)
{
	struct audit_opts o = *o_in;
	if (!o.parts) o.parts = AUDIT_ALL;
	if (o.jobs < 1) o.jobs = 2;
	struct audit *A = calloc(1, sizeof *A);
	if (!A) {
		werr(err, WX_FAIL, "out of memory");
		return NULL;
	}
	A->o = &o;
	A->rows = json_array();
	long t0 = ah_now_ms();
	ah_trap_signals();
	if (ah_setup(&A->h, o.probe, err) < 0) {
		json_decref(A->rows);
		free(A);
		return NULL;
	}
	int rc = 0;
	char *before = ah_snapshot(&A->h);
	double clock_before = ah_clock_offset();
	if (A->h.is_root) {
		A->users[0] = U_ROOT;
		A->users[1] = U_NOBODY;
		A->nusers = 2;
	} else {
		A->users[0] = U_SELF;
		A->nusers = 1;
	}
	if (o.standin) A->nusers = 1;
	rc = list_attempts(A, err);
	if (rc == 0 && !o.standin && (o.parts & (AUDIT_CONTROLS | AUDIT_ATTEMPTS | AUDIT_RESOURCE)))
		rc = run_controls(A, err);
	if (rc == 0 && !o.standin && (o.parts & AUDIT_POSTURE)) rc = posture_controls(A, err);
	const char *const *profiles = o.profiles ? o.profiles : daemon_profiles;
	size_t np = o.profiles ? o.nprofiles : sizeof daemon_profiles / sizeof daemon_profiles[0];
	if (o.standin) np = 1, profiles = daemon_profiles; /* the stand-in runs only `run` */
	unsigned parts = o.parts;
	for (size_t k = 0; rc == 0 && k < np; k++) {
		if (!capsule_profile_find(profiles[k])) {
			rc = werr(err, WX_NOT_FOUND, "profile '%s' not found (see worldd profile list)", profiles[k]);
			break;
		}
		/* the daemon's capsule maker (worldd serve's spawner) with
		 * --spawner; worldd check (publishing) has no spawner */
		const char *via = !strcmp(profiles[k], "exec") ? "capsule exec"
		                : o.spawner && strcmp(profiles[k], "source-check") != 0 ? "spawner" : "run";
		for (int u = 0; rc == 0 && u < A->nusers; u++) rc = pass(A, profiles[k], A->users[u], via, err);
	}
	o.parts = parts;
	if (rc == 0 && !o.standin) host_checks(A, before, clock_before);
	free(before);
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < MAX_ATTEMPTS; i++) free(A->ctl_text[s][i]);
	for (int k = 0; k < 3; k++) free(A->wt_ctl[k]);
	free(A->wt_before);
	json_decref(A->pj);
	ah_cleanup(&A->h);
	long elapsed = ah_now_ms() - t0;
	if (rc != 0 || ah_interrupted) {
		if (ah_interrupted && rc == 0) werr(err, WX_FAIL, "interrupted (signal %d)", (int)ah_interrupted);
		json_decref(A->rows);
		free(A);
		return NULL;
	}
	struct utsname un;
	uname(&un);
	char covers[1200], profs[200] = "";
	for (size_t k = 0; k < np; k++) snprintf(profs + strlen(profs), sizeof profs - strlen(profs), "%s%s", k ? "," : "", profiles[k]);
	snprintf(covers, sizeof covers,
	         "profiles %s; users %s; capsule maker: %s; parts:%s%s%s%s; attempts: %s; resource "
	         "attempts in transition only; posture from the host's /proc as root only; exec: its arms (network, "
	         "host file, write outside /work, mount, unshare, ptrace, a daemon left behind) by worldd capsule exec",
	         profs, A->nusers == 2 ? "root and uid 65534" : user_names[A->users[0]],
	         o.spawner ? "the daemon's capsule spawner (worldd run --spawner; source-check by worldd check)"
	                   : "worldd run's own launcher (worldd run; source-check by worldd check)",
	         o.parts & AUDIT_CONTROLS ? " controls" : "", o.parts & AUDIT_POSTURE ? " posture" : "",
	         o.parts & AUDIT_ATTEMPTS ? " attempts" : "", o.parts & AUDIT_RESOURCE ? " resource" : "",
	         o.attempts ? o.attempts : "all of the probe's");
	json_t *rep = json_pack("{s:s,s:s,s:s,s:s,s:i,s:I,s:s,s:o,s:o}", "tool", "worldd audit", "worldd", o.worldd,
	                        "probe", o.probe, "kernel", un.release, "uid", (int)geteuid(), "elapsed_ms",
	                        (json_int_t)elapsed, "covers", covers, "summary", summary(A->rows), "rows", A->rows);
	free(A);
	if (!rep) werr(err, WX_FAIL, "out of memory building the report");
	return rep;
}

int audit_exit_code(const json_t *report)
{
	return json_is_true(json_object_get(json_object_get(report, "summary"), "ok")) ? WX_OK : WX_ESCAPE;
}

int audit_print_text(const json_t *report, FILE *out)
{
	json_t *s = json_object_get(report, "summary");
	fprintf(out, "worldd audit: %s, probe %s, kernel %s, uid %d\ncovers: %s\n\n",
	        json_string_value(json_object_get(report, "worldd")), json_string_value(json_object_get(report, "probe")),
	        json_string_value(json_object_get(report, "kernel")), (int)jint((json_t *)report, "uid"),
	        json_string_value(json_object_get(report, "covers")));
	fprintf(out, "%-8s %-8s %-12s %-7s %-10s %s\n", "verdict", "section", "profile", "user", "via",
	        "check: observed [expected; control: the same attempt unconfined]");
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(report, "rows"), i, r)
	{
#define F(k) (json_string_value(json_object_get(r, k)) ?: "")
		const char *v = F("verdict");
		/* one line: verdict, where, the check, observed [expected; control] */
		fprintf(out, "%-8s %-8s %-12s %-7s %-10s %s: %.200s", !strcmp(v, "control failed") ? "CONTROL" :
		        !strcmp(v, "escaped") ? "ESCAPED" : !strcmp(v, "fail") ? "FAIL" : v, F("section"), F("profile"),
		        F("user"), F("via"), F("attempt"), F("observed"));
		if (F("expected")[0] || json_object_get(r, "control")) {
			fprintf(out, " [expected: %.160s", F("expected"));
			if (json_object_get(r, "control")) fprintf(out, "; control: %.120s", F("control"));
			fputc(']', out);
		}
		/* and for a row that did not pass, the run itself */
		if (strcmp(v, "pass") && json_object_get(r, "detail")) fprintf(out, "\n         %s", F("detail"));
		fputc('\n', out);
#undef F
	}
	fprintf(out, "\n%lld rows: %lld pass, %lld escaped, %lld control failed, %lld fail, %lld skipped; %.1f s\n",
	        jint(s, "rows"), jint(s, "pass"), jint(s, "escaped"), jint(s, "control_failed"), jint(s, "fail"),
	        jint(s, "skip"), (double)jint((json_t *)report, "elapsed_ms") / 1000.0);
	fprintf(out, "%s\n", json_is_true(json_object_get(s, "ok")) ?
	        "ok: nothing escaped, every control got through, the posture is the profile's" :
	        "NOT OK: see the rows marked ESCAPED, CONTROL or FAIL");
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
