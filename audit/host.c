/* audit/host.c: see audit/host.h. */
#include "audit/host.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OUT_KEEP ((size_t)2 << 20)
#define ERR_KEEP ((size_t)64 << 10)

volatile sig_atomic_t ah_interrupted;

static void on_signal(int s)
{
	ah_interrupted = s;
}

void ah_trap_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

long ah_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void ah_sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&t, NULL);
}

/* /proc/PID/stat read into buf: what follows the parenthesised name (the
 * name may hold spaces and parentheses, so the last ')'), or NULL. */
static char *stat_fields(pid_t pid, char *buf, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return NULL;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0) return NULL;
	buf[n] = 0;
	return strrchr(buf, ')');
}

/* Field 22 of /proc/PID/stat: the start time. */
static unsigned long long start_time(pid_t pid)
{
	char buf[1024];
	char *p = stat_fields(pid, buf, sizeof buf);
	if (!p) return 0;
	unsigned long long v = 0;
	int field = 2;
	for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " "))
		if (++field == 22) {
			v = strtoull(tok, NULL, 10);
			break;
		}
	return v;
}

/* Field 3 of /proc/PID/stat: the state letter. */
static char proc_state(pid_t pid)
{
	char buf[512];
	char *p = stat_fields(pid, buf, sizeof buf);
	return p && p[1] == ' ' ? p[2] : 0;
}

static void track(struct audit_host *h, pid_t pid)
{
	if (h->npids >= AH_MAX_PIDS) return;
	/* the child may not have exec'd yet; its start time is fixed at fork */
	h->pids[h->npids] = pid;
	h->starts[h->npids] = start_time(pid);
	h->npids++;
}

int ah_alive(pid_t pid)
{
	/* our own children: a dead one is reaped here, so it stops existing */
	waitpid(pid, NULL, WNOHANG);
	char s = proc_state(pid);
	return s && s != 'Z' && s != 'X';
}

int ah_dies(pid_t pid, long ms)
{
	long end = ah_now_ms() + ms;
	while (ah_alive(pid)) {
		if (ah_now_ms() > end) return 0;
		ah_sleep_ms(20);
	}
	return 1;
}

pid_t ah_sleeper(struct audit_host *h)
{
	pid_t pid = fork();
	if (pid == 0) {
		/* a victim of the attempts: it ends with the audit at the latest */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = SIG_DFL;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
		}
		sleep(600);
		_exit(0);
	}
	if (pid > 0) track(h, pid);
	return pid;
}

int ah_tagged(const char *tag, pid_t *out, int max)
{
	char needle[64];
	snprintf(needle, sizeof needle, "escprobe:%s", tag);
	size_t nl = strlen(needle);
	DIR *d = opendir("/proc");
	if (!d) return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
		char path[300], buf[256];
		snprintf(path, sizeof path, "/proc/%.20s/cmdline", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) continue;
		ssize_t k = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (k <= 0) continue;
		buf[k] = 0;
		/* the probe writes the tag at the start of its argv area */
		if ((size_t)k >= nl && memcmp(buf, needle, nl) == 0) {
			if (n < max) out[n] = (pid_t)atoi(e->d_name);
			n++;
		}
	}
	closedir(d);
	return n < max ? n : max;
}

int ah_tagged_settle(const char *tag, pid_t *out, int max, long ms)
{
	long end = ah_now_ms() + ms;
	int n;
	while ((n = ah_tagged(tag, out, max)) > 0 && ah_now_ms() < end) ah_sleep_ms(25);
	return n;
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) return -1;
	size_t len = strlen(text);
	ssize_t w = write(fd, text, len);
	int rc = w == (ssize_t)len ? 0 : -1;
	if (close(fd) != 0) rc = -1;
	if (rc == 0 && chmod(path, mode) != 0) rc = -1;
	return rc;
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0) return -1;
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0) {
		close(in);
		return -1;
	}
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n) {
			rc = -1;
			break;
		}
	if (n < 0) rc = -1;
	close(in);
	if (close(out) != 0) rc = -1;
	if (rc == 0 && chmod(to, mode) != 0) rc = -1;
	return rc;
}

char *ah_read_text(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return NULL;
	char *s = malloc(max + 1);
	size_t n = 0;
	ssize_t k = 0;
	while (s && n < max && (k = read(fd, s + n, max - n)) > 0) n += (size_t)k;
	close(fd);
	if (s && k < 0) { /* a read error: no half a file */
		free(s);
		return NULL;
	}
	if (s) s[n] = 0;
	return s;
}

const char *ah_line_value(const char *text, const char *key, char sep, char *out, size_t cap)
{
	size_t kl = strlen(key);
	out[0] = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, kl) == 0 && p[kl] == sep) {
			p += kl + 1;
			if (sep == ':') /* /proc's "Key:\tvalue" */
				while (*p == ' ' || *p == '\t') p++;
			size_t l = strcspn(p, "\n");
			if (l >= cap) l = cap - 1;
			memcpy(out, p, l);
			out[l] = 0;
			return out;
		}
	return NULL;
}

static int rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		if (d) {
			struct dirent *e;
			while ((e = readdir(d))) {
				if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
				char sub[PATH_MAX];
				if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub) rm_rf(sub);
			}
			closedir(d);
		}
		return rmdir(path);
	}
	return unlink(path);
}

static int setup_fail(struct audit_host *h, struct world_err *err, const char *what, const char *on)
{
	int e = errno;
	werr(err, WX_SETUP, "audit setup: %s %s: %s", what, on, strerror(e));
	ah_cleanup(h);
	return -1;
}

int ah_setup(struct audit_host *h, const char *probe_file, struct world_err *err)
{
	memset(h, 0, sizeof *h);
	h->shm_id = -1;
	h->is_root = geteuid() == 0;
	const char *t = getenv("TMPDIR");
	if (!t || !*t) t = "/tmp";
	snprintf(h->work, sizeof h->work, "%s/world-audit.XXXXXX", t);
	if (!mkdtemp(h->work)) {
		h->work[0] = 0;
		return setup_fail(h, err, "mkdtemp", t);
	}
	if (chmod(h->work, 0755) != 0) return setup_fail(h, err, "chmod", h->work);
	if (h->is_root) {
		/* the uid 65534 pass runs worldd, which reads the probe here: every
		 * directory above must be searchable by others */
		char up[PATH_MAX];
		snprintf(up, sizeof up, "%s", h->work);
		for (char *sl = strrchr(up, '/'); sl; sl = strrchr(up, '/')) {
			*sl = 0;
			struct stat st;
			const char *d = up[0] ? up : "/";
			if (stat(d, &st) != 0) return setup_fail(h, err, "stat", d);
			if (!(st.st_mode & S_IXOTH)) {
				werr(err, WX_SETUP,
				     "audit setup: %s (mode %04o) is not searchable by uid 65534, whose capsules read the probe "
				     "below it: set TMPDIR to a directory others can reach",
				     d, (unsigned)(st.st_mode & 07777));
				ah_cleanup(h);
				return -1;
			}
		}
	}
#define SUB(field, name) snprintf(h->field, sizeof h->field, "%s/%s", h->work, name)
	SUB(probe, "probe");
	SUB(src, "main.ail");
	SUB(tmp, "tmp");
	SUB(hostdir, "hostdir");
	SUB(scratch, "scratch");
	SUB(secret, "secret.txt");
	SUB(serve_dir, "serve");
	SUB(worktree, "worktree");
#undef SUB
	if (copy_file(probe_file, h->probe, 0755) != 0) return setup_fail(h, err, "copy the probe", probe_file);
	if (write_file(h->src, "-- escape probe: the interpreter ignores this source\nmodule main\n", 0644) != 0)
		return setup_fail(h, err, "write", h->src);
	const struct { const char *p; mode_t m; } dirs[] = {
		{ h->tmp, 01777 }, { h->hostdir, 0777 }, { h->scratch, 0777 }, { h->serve_dir, 0755 },
	};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (mkdir(dirs[i].p, 0700) != 0 || chmod(dirs[i].p, dirs[i].m) != 0)
			return setup_fail(h, err, "mkdir", dirs[i].p);
	char secret[64];
	snprintf(secret, sizeof secret, "host secret %d\n", (int)getpid());
	if (write_file(h->secret, secret, 0644) != 0) return setup_fail(h, err, "write", h->secret);
	/* the worktree a tool run gets at /work: a file, a directory, and a
	 * symlink to the host secret (which must resolve inside the capsule) */
	char wt[PATH_MAX + 40];
	if (mkdir(h->worktree, 0755) != 0 || chmod(h->worktree, 0755) != 0)
		return setup_fail(h, err, "mkdir", h->worktree);
	snprintf(wt, sizeof wt, "%s/sub", h->worktree);
	if (mkdir(wt, 0755) != 0 || chmod(wt, 0755) != 0) return setup_fail(h, err, "mkdir", wt);
	snprintf(wt, sizeof wt, "%s/readme.txt", h->worktree);
	if (write_file(wt, "worktree readme\n", 0644) != 0) return setup_fail(h, err, "write", wt);
	snprintf(wt, sizeof wt, "%s/secret-link", h->worktree);
	if (symlink(h->secret, wt) != 0) return setup_fail(h, err, "symlink", wt);
	unsigned r = (unsigned)getpid() ^ (unsigned)ah_now_ms() * 2654435761u;
	snprintf(h->tag, sizeof h->tag, "%08x", r);

	/* the listener: the probe's own serve mode */
	pid_t pid = fork();
	if (pid < 0) return setup_fail(h, err, "fork", "the listener");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
		}
		execl(h->probe, h->probe, "serve", h->serve_dir, (char *)NULL);
		_exit(127);
	}
	h->serve_pid = pid;
	track(h, pid);
	char envp[PATH_MAX + 32];
	snprintf(envp, sizeof envp, "%s/serve.env", h->serve_dir);
	char *env = NULL;
	int st = 0, gone = 0;
	for (int i = 0; i < 200 && !env && !gone && !ah_interrupted; i++) {
		if (access(envp, R_OK) == 0) env = ah_read_text(envp, 4096);
		else ah_sleep_ms(25);
		gone = waitpid(h->serve_pid, &st, WNOHANG) == h->serve_pid;
	}
	if (!env) {
		if (gone) {
			h->serve_pid = 0;
			werr(err, WX_SETUP, "audit setup: the probe's listener (%s serve %s) %s %d before it was ready", probe_file,
			     h->serve_dir, WIFEXITED(st) ? "exited with status" : "was killed by signal",
			     WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			ah_cleanup(h);
			return -1;
		}
		errno = ETIMEDOUT;
		return setup_fail(h, err, "start the listener (probe serve)", h->serve_dir);
	}
	char v[PATH_MAX];
	h->tcp_port = atoi(ah_line_value(env, "TCP_PORT", '=', v, sizeof v) ? v : "0");
	h->udp_port = atoi(ah_line_value(env, "UDP_PORT", '=', v, sizeof v) ? v : "0");
	h->shm_id = ah_line_value(env, "SHM_ID", '=', v, sizeof v) ? atoi(v) : -1;
	ah_line_value(env, "ABSTRACT", '=', h->abstract, sizeof h->abstract);
	ah_line_value(env, "UNIX_PATH", '=', h->unix_path, sizeof h->unix_path);
	free(env);
	if (!h->tcp_port || !h->udp_port || h->shm_id < 0 || !h->abstract[0] || !h->unix_path[0]) {
		errno = EPROTO;
		return setup_fail(h, err, "read the listener's serve.env", envp);
	}
	if ((h->victim_pid = ah_sleeper(h)) < 0 || (h->kill_pid = ah_sleeper(h)) < 0)
		return setup_fail(h, err, "fork", "a victim process");
	struct stat a, b, c;
	if (stat("/proc/self/ns/mnt", &a) || stat("/proc/self/ns/uts", &b) || stat("/proc/self/ns/pid", &c))
		return setup_fail(h, err, "stat", "/proc/self/ns");
	snprintf(h->host_ns, sizeof h->host_ns, "WORLD_ESCAPE_HOST_NS=mnt:%llu,uts:%llu,pid:%llu",
	         (unsigned long long)a.st_ino, (unsigned long long)b.st_ino, (unsigned long long)c.st_ino);
	return 0;
}

void ah_cleanup(struct audit_host *h)
{
	for (int i = 0; i < h->npids; i++)
		if (h->starts[i] && start_time(h->pids[i]) == h->starts[i]) kill(h->pids[i], SIGTERM);
	for (int i = 0; i < h->npids; i++) {
		/* the listener ends on SIGTERM (removing its segment); a victim at once */
		long end = ah_now_ms() + 2000;
		while (waitpid(h->pids[i], NULL, WNOHANG) == 0 && ah_now_ms() < end) ah_sleep_ms(10);
		if (h->starts[i] && start_time(h->pids[i]) == h->starts[i]) {
			kill(h->pids[i], SIGKILL);
			waitpid(h->pids[i], NULL, 0);
		}
	}
	h->npids = 0;
	if (h->shm_id >= 0) shmctl(h->shm_id, IPC_RMID, NULL);
	h->shm_id = -1;
	if (h->work[0]) rm_rf(h->work);
	h->work[0] = 0;
}

char *ah_params(const struct audit_host *h, const char *tag, const char *extra)
{
	return ah_params_files(h, tag, h->secret, h->hostdir, extra);
}

char *ah_params_files(const struct audit_host *h, const char *tag, const char *host_file, const char *host_dir,
                      const char *extra)
{
	char *s = NULL;
	if (asprintf(&s,
	             "{\"tcp_port\":%d,\"udp_port\":%d,\"abstract\":\"%s\",\"unix_path\":\"%s\",\"shm_id\":%d,"
	             "\"victim_pid\":%d,\"kill_pid\":%d,\"host_file\":\"%s\",\"host_dir\":\"%s\",\"tag\":\"%s\"%s%s}",
	             h->tcp_port, h->udp_port, h->abstract, h->unix_path, h->shm_id, (int)h->victim_pid,
	             (int)h->kill_pid, host_file, host_dir, tag, extra && *extra ? "," : "", extra ? extra : "") < 0)
		return NULL;
	return s;
}

/* ---- snapshot ---- */

struct sbuf {
	char *s;
	size_t n, cap;
};

static void sb_add(struct sbuf *b, const char *t, size_t l)
{
	if (b->n + l + 1 > b->cap) {
		size_t nc = (b->cap ? b->cap * 2 : 4096) + l;
		char *ns = realloc(b->s, nc);
		if (!ns) return;
		b->s = ns;
		b->cap = nc;
	}
	memcpy(b->s + b->n, t, l);
	b->n += l;
	b->s[b->n] = 0;
}

static void sb_puts(struct sbuf *b, const char *t) { sb_add(b, t, strlen(t)); }

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void sb_file(struct sbuf *b, const char *path)
{
	char *t = ah_read_text(path, 4096);
	sb_puts(b, t ? t : "(unreadable)\n");
	free(t);
}

static void tree_walk(const char *dir, const char *rel, char ***lines, size_t *n, size_t *cap, int *bad)
{
	DIR *d = opendir(dir);
	if (!d) {
		*bad = 1;
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
		char path[PATH_MAX], r[PATH_MAX], target[PATH_MAX] = "";
		if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
		    snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name) >= (int)sizeof r) {
			*bad = 1;
			continue;
		}
		struct stat st;
		if (lstat(path, &st) != 0) {
			*bad = 1;
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t k = readlink(path, target, sizeof target - 1);
			target[k > 0 ? k : 0] = 0;
		}
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 32;
			char **nl = realloc(*lines, nc * sizeof *nl);
			if (!nl) {
				*bad = 1;
				break;
			}
			*lines = nl;
			*cap = nc;
		}
		char *l = NULL;
		if (asprintf(&l, "%s %o %lld %lld.%09ld %s", r, (unsigned)st.st_mode, (long long)st.st_size,
		             (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, target) < 0) {
			*bad = 1;
			continue;
		}
		(*lines)[(*n)++] = l;
		if (S_ISDIR(st.st_mode)) tree_walk(path, r, lines, n, cap, bad);
	}
	closedir(d);
}

char *ah_tree(const char *dir)
{
	char **lines = NULL;
	size_t n = 0, cap = 0;
	int bad = 0;
	tree_walk(dir, "", &lines, &n, &cap, &bad);
	qsort(lines, n, sizeof *lines, cmp_str);
	struct sbuf b = { 0 };
	for (size_t i = 0; i < n; i++) {
		sb_puts(&b, lines[i]);
		sb_puts(&b, "\n");
		free(lines[i]);
	}
	free(lines);
	if (bad) {
		free(b.s);
		return NULL;
	}
	return b.s ? b.s : strdup("");
}

char *ah_snapshot(const struct audit_host *h)
{
	struct sbuf b = { 0 };
	sb_puts(&b, "== mounts\n");
	/* mount point, fs type, source: what a stray mount or umount changes */
	char *mi = ah_read_text("/proc/self/mountinfo", 1 << 20);
	char **lines = NULL;
	size_t nl = 0;
	for (char *save = NULL, *l = mi ? strtok_r(mi, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		char *f[12] = { 0 };
		int nf = 0;
		char *dash = strstr(l, " - ");
		if (!dash) continue;
		*dash = 0;
		for (char *s2 = NULL, *w = strtok_r(l, " ", &s2); w && nf < 12; w = strtok_r(NULL, " ", &s2)) f[nf++] = w;
		char *g[3] = { 0 };
		int ng = 0;
		for (char *s2 = NULL, *w = strtok_r(dash + 3, " ", &s2); w && ng < 3; w = strtok_r(NULL, " ", &s2)) g[ng++] = w;
		if (nf < 5 || ng < 2) continue;
		char *line = NULL;
		if (asprintf(&line, "%s %s %s", f[4], g[0], g[1]) < 0) continue;
		char **nlines = realloc(lines, (nl + 1) * sizeof *lines);
		if (!nlines) {
			free(line);
			continue;
		}
		lines = nlines;
		lines[nl++] = line;
	}
	free(mi);
	qsort(lines, nl, sizeof *lines, cmp_str);
	for (size_t i = 0; i < nl; i++) {
		sb_puts(&b, lines[i]);
		sb_puts(&b, "\n");
		free(lines[i]);
	}
	free(lines);
	sb_puts(&b, "== hostname\n");
	sb_file(&b, "/proc/sys/kernel/hostname");
	sb_puts(&b, "== ctrl-alt-del\n");
	sb_file(&b, "/proc/sys/kernel/ctrl-alt-del");
	sb_puts(&b, "== domainname\n");
	sb_file(&b, "/proc/sys/kernel/domainname");
	sb_puts(&b, "== hostdir\n");
	DIR *d = opendir(h->hostdir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
				sb_puts(&b, e->d_name);
				sb_puts(&b, "\n");
			}
		closedir(d);
	}
	sb_puts(&b, "== tagged processes\n");
	pid_t pids[64];
	int n = ah_tagged(h->tag, pids, 64);
	for (int i = 0; i < n; i++) {
		char x[24];
		snprintf(x, sizeof x, "%d\n", (int)pids[i]);
		sb_puts(&b, x);
	}
	return b.s;
}

double ah_clock_offset(void)
{
	struct timespec r, bt;
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	return (double)(r.tv_sec - bt.tv_sec) + (double)(r.tv_nsec - bt.tv_nsec) / 1e9;
}

int ah_hits(const struct audit_host *h, const char *kind)
{
	char path[PATH_MAX + 40];
	snprintf(path, sizeof path, "%s/hits", h->serve_dir);
	char *t = ah_read_text(path, 1 << 20);
	if (!t) return 0;
	int n = 0;
	size_t kl = strlen(kind);
	for (char *p = t; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (!kind[0] ? *p != '\n' : strncmp(p, kind, kl) == 0 && (p[kl] == '\n' || !p[kl])) n++;
	free(t);
	return n;
}

const char *ah_hits_text(const struct audit_host *h)
{
	static char buf[160];
	snprintf(buf, sizeof buf, "tcp:%d udp:%d abstract:%d unixpath:%d", ah_hits(h, "tcp"), ah_hits(h, "udp"),
	         ah_hits(h, "abstract"), ah_hits(h, "unixpath"));
	return buf;
}

void ah_hits_clear(const struct audit_host *h)
{
	char path[PATH_MAX + 40];
	snprintf(path, sizeof path, "%s/hits", h->serve_dir);
	if (truncate(path, 0) != 0 && errno != ENOENT) { /* an absent log has no hit */ }
}

/* ---- commands ---- */

static void child_die(const char *what)
{
	char m[256];
	int n = snprintf(m, sizeof m, "audit: %s: %s\n", what, strerror(errno));
	if (n > 0 && write(2, m, (size_t)n) < 0) { /* nothing more to say */ }
	_exit(126);
}

/* The throwaway namespace of a state-changing control (as lib.sh's
 * esc_private): new mount, UTS, net and pid namespaces (and a user
 * namespace when not root), private propagation, a private tmpfs as cwd.
 * The command runs as pid 1 of the new pid namespace; this process waits
 * for it and exits with its status. */
static void enter_private(const char *dir)
{
	int flags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWNET | CLONE_NEWPID;
	uid_t uid = getuid();
	gid_t gid = getgid();
	if (geteuid() != 0) flags |= CLONE_NEWUSER;
	if (unshare(flags) != 0) child_die("unshare: a throwaway namespace");
	if (flags & CLONE_NEWUSER) {
		char m[64];
		snprintf(m, sizeof m, "0 %u 1", (unsigned)uid);
		if (write_file("/proc/self/uid_map", m, 0644) != 0 && errno != EPERM) child_die("unshare: uid_map");
		int fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "deny", 4) != 4) child_die("unshare: setgroups");
			close(fd);
		}
		snprintf(m, sizeof m, "0 %u 1", (unsigned)gid);
		if (write_file("/proc/self/gid_map", m, 0644) != 0 && errno != EPERM) child_die("unshare: gid_map");
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) child_die("mount: make / private");
	pid_t pid = fork();
	if (pid < 0) child_die("fork: pid 1 of the throwaway namespace");
	if (pid > 0) {
		int st;
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR) _exit(126);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
	if (mount("escape-control", dir, "tmpfs", 0, "size=64m,mode=0755") != 0) child_die("mount: tmpfs");
	if (chdir(dir) != 0) child_die("chdir: the private tmpfs");
}

int ah_start(struct audit_host *h, struct ah_cmd *c, struct world_err *err)
{
	c->outfd = memfd_create("audit-out", MFD_CLOEXEC);
	c->errfd = memfd_create("audit-err", MFD_CLOEXEC);
	if (c->outfd < 0 || c->errfd < 0) {
		int e = errno;
		if (c->outfd >= 0) close(c->outfd);
		if (c->errfd >= 0) close(c->errfd);
		c->outfd = c->errfd = -1;
		return werr(err, WX_IO, "audit: memfd_create: %s", strerror(e));
	}
	char privdir[PATH_MAX + 32] = "";
	if (c->private_ns) {
		snprintf(privdir, sizeof privdir, "%s/priv.XXXXXX", h->work);
		if (!mkdtemp(privdir)) {
			int e = errno;
			close(c->outfd);
			close(c->errfd);
			return werr(err, WX_IO, "audit: mkdtemp %s: %s", privdir, strerror(e));
		}
	}
	c->t0_ms = ah_now_ms();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(c->outfd);
		close(c->errfd);
		return werr(err, WX_FAIL, "audit: fork %s: %s", c->argv[0], strerror(e));
	}
	if (pid == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = SIG_DFL;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		/* a new process group: an interrupt reaches the audit, which ends
		 * each command itself (worldd then removes its capsule) */
		setpgid(0, 0);
		int nul = open("/dev/null", O_RDONLY);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(c->outfd, 1) < 0 || dup2(c->errfd, 2) < 0) child_die("dup2");
		if (nul > 2) close(nul);
		for (int fd = 3; fd < 1024; fd++) close(fd);
		if (c->fd7) {
			int f = open("/etc/hostname", O_RDONLY);
			if (f >= 0 && f != 7) {
				dup2(f, 7);
				close(f);
			}
		}
		if (c->host_ns_env) putenv(h->host_ns);
		if (c->as == AH_AS_NOBODY) {
			if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
			    setresuid(65534, 65534, 65534) != 0)
				child_die("drop to uid 65534");
		}
		if (c->private_ns) enter_private(privdir);
		else if (c->cwd && chdir(c->cwd) != 0) child_die("chdir");
		execv(c->argv[0], c->argv);
		child_die(c->argv[0]);
	}
	c->pid = pid;
	c->running = 1;
	c->done = 0;
	return 0;
}

static char *read_back(int fd, size_t keep)
{
	char *s = malloc(keep + 1);
	if (!s) return NULL;
	size_t n = 0;
	ssize_t k;
	if (lseek(fd, 0, SEEK_SET) == 0)
		while (n < keep && (k = read(fd, s + n, keep - n)) > 0) n += (size_t)k;
	s[n] = 0;
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r')) s[--n] = 0;
	char *p = s;
	while (*p == '\n' || *p == ' ') p++;
	if (p != s) memmove(s, p, strlen(p) + 1);
	return s;
}

static void finish(struct ah_cmd *c, int status, const struct rusage *ru)
{
	c->running = 0;
	c->done = 1;
	c->elapsed_ms = ah_now_ms() - c->t0_ms;
	c->maxrss_kb = ru ? ru->ru_maxrss : 0;
	if (WIFEXITED(status)) c->rc = WEXITSTATUS(status);
	else if (WIFSIGNALED(status)) c->rc = 128 + WTERMSIG(status);
	c->out = read_back(c->outfd, OUT_KEEP);
	c->err = read_back(c->errfd, ERR_KEEP);
	close(c->outfd);
	close(c->errfd);
	c->outfd = c->errfd = -1;
}

int ah_poll(struct ah_cmd *c)
{
	if (c->done) return 1;
	if (!c->running) return 0;
	int st;
	struct rusage ru;
	pid_t r = wait4(c->pid, &st, WNOHANG, &ru);
	if (r == c->pid) {
		finish(c, st, &ru);
		return 1;
	}
	/* a liveness bound only (a hung run must not hang the audit) */
	if (ah_now_ms() > c->t0_ms + c->timeout_ms + 60000) {
		kill(c->pid, SIGKILL);
		if (wait4(c->pid, &st, 0, &ru) == c->pid) finish(c, st, &ru);
		else finish(c, 128 + SIGKILL, NULL);
		c->hung = 1;
		return 1;
	}
	return 0;
}

/* End a running command: SIGTERM (worldd kills its capsule and removes its
 * groups), then SIGKILL after 5 s. */
static void end_cmd(struct ah_cmd *c)
{
	if (!c->running) return;
	kill(c->pid, SIGTERM);
	long end = ah_now_ms() + 5000;
	int st;
	struct rusage ru;
	while (ah_now_ms() < end) {
		if (wait4(c->pid, &st, WNOHANG, &ru) == c->pid) {
			finish(c, st, &ru);
			return;
		}
		ah_sleep_ms(10);
	}
	kill(c->pid, SIGKILL);
	if (wait4(c->pid, &st, 0, &ru) == c->pid) finish(c, st, &ru);
	else finish(c, 128 + SIGKILL, NULL);
}

int ah_wait(struct ah_cmd *c)
{
	while (!ah_poll(c)) {
		if (ah_interrupted) {
			end_cmd(c);
			return -1;
		}
		ah_sleep_ms(2);
	}
	return 0;
}

int ah_run_all(struct audit_host *h, struct ah_cmd *cmds, size_t n, int jobs, struct world_err *err)
{
	size_t next = 0, left = n;
	int running = 0, rc = 0;
	if (jobs < 1) jobs = 1;
	while (left) {
		if (ah_interrupted) {
			rc = werr(err, WX_FAIL, "interrupted (signal %d)", (int)ah_interrupted);
			break;
		}
		while (running < jobs && next < n) {
			if (ah_start(h, &cmds[next], err) < 0) {
				rc = -1;
				left = 0;
				break;
			}
			next++;
			running++;
		}
		if (rc) break;
		int progressed = 0;
		for (size_t i = 0; i < next; i++)
			if (cmds[i].running && ah_poll(&cmds[i])) {
				running--;
				left--;
				progressed = 1;
			}
		if (!progressed) ah_sleep_ms(2);
	}
	for (size_t i = 0; i < next; i++) end_cmd(&cmds[i]);
	return rc;
}

void ah_cmd_free(struct ah_cmd *c)
{
	free(c->out);
	free(c->err);
	c->out = c->err = NULL;
	if (c->outfd >= 0 && c->running) close(c->outfd);
}
