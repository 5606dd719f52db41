/* bench/live_bench.c: the two halves of bench/live_bench.sh (issue 20,
 * item 7). Figures only.
 *
 *   live_bench calls PORT[,PORT...] CREDENTIAL CLIENTS CALLS TOOL ARGS [PID,...]
 *     CLIENTS threads, client i on PORT[i mod n] (one keep-alive HTTP/1.1
 *     connection each), CALLS MCP tools/call in all, each with a task id of
 *     its own; prints one line: daemons, clients, calls, failures, calls/s,
 *     p50 and p99 (ms); with PIDs, also the CPU the processes PID and all
 *     their descendants spent during the row, in ms per call (cpu_ms/call,
 *     see tree_ticks), and how busy the whole host's CPUs were (host_busy,
 *     /proc/stat: everything on the machine, other users' builds too).
 *   live_bench commits DB WRITERS COMMITS
 *     WRITERS processes, each with its own writer handle, COMMITS call-like
 *     commits each (output, input, invocation record and log entry, one
 *     BEGIN IMMEDIATE transaction, the chain moved by compare-and-swap,
 *     synchronous=FULL), all started at once; prints one line: writers,
 *     commits, commits/s. Needs AILANG_LITE (the fixture's interpreter). */
#include "store/store.h"
#include "tests/store/sfix.h"
#include "bench/bench.h"
#include "bench/mcp_client.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* ---- calls ---- */

static const char *cred, *tool, *targs;

struct client {
	int id, port, calls, failures;
	double *lat;
};

static char run_tag[32];

static void *client_main(void *arg)
{
	struct client *c = arg;
	int fd = -1;
	size_t cap = 1 << 20;
	char *buf = malloc(cap), *body = malloc(8192);
	if (!buf || !body) { c->failures = c->calls; free(buf); free(body); return NULL; }
	for (int i = 0; i < c->calls; i++) {
		int bl = snprintf(body, 8192,
		                  "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
		                  "\"arguments\":%s,\"_meta\":{\"world/task_id\":\"%s-%d-%d\"}}}",
		                  i + 1, tool, targs, run_tag, c->id, i);
		double t0 = bench_now_s();
		if (bl <= 0 || bl >= 8192 || bench_mcp_call(c->port, cred, &fd, body, (size_t)bl, buf, cap, NULL) < 0) c->failures++;
		c->lat[i] = (bench_now_s() - t0) * 1000.0;
	}
	if (fd >= 0) close(fd);
	free(buf);
	free(body);
	return NULL;
}

/* ---- CPU of a process tree ----
 *
 * The CPU time of the processes roots[] and of every live descendant, in
 * clock ticks: for each, utime + stime (all its threads) + cutime + cstime
 * (its children that exited and were waited for). A capsule is a child of
 * the daemon's capsule spawner, which reaps it, so the capsules that ended
 * are in the spawner's cutime and those alive now in their own utime; a
 * process that exited but is not waited for yet (at most the capsules
 * running at the sample) is missed, which undercounts by at most a few
 * calls' worth per row. Read from /proc/PID/stat of every process (one scan
 * of /proc). */
struct pstat { long pid, ppid; unsigned long long ticks; };

static int read_pstat(long pid, struct pstat *ps)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f) return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	if (!p) return -1;
	char state;
	long ppid;
	unsigned long long ut, st;
	long long cut, cst;
	/* after the name: state ppid pgrp session tty_nr tpgid flags minflt
	 * cminflt majflt cmajflt utime stime cutime cstime */
	if (sscanf(p + 1, " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &state, &ppid, &ut, &st,
	           &cut, &cst) != 6)
		return -1;
	ps->pid = pid;
	ps->ppid = ppid;
	ps->ticks = ut + st + (unsigned long long)(cut > 0 ? cut : 0) + (unsigned long long)(cst > 0 ? cst : 0);
	return 0;
}

static long long tree_ticks(const long *roots, int nroots)
{
	DIR *d = opendir("/proc");
	if (!d) return -1;
	size_t cap = 1024, n = 0;
	struct pstat *all = malloc(cap * sizeof *all);
	struct dirent *e;
	while (all && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0) continue;
		if (n == cap) {
			struct pstat *m = realloc(all, 2 * cap * sizeof *all);
			if (!m) { free(all); all = NULL; break; }
			all = m;
			cap *= 2;
		}
		if (read_pstat(pid, &all[n]) == 0) n++;
	}
	closedir(d);
	if (!all) return -1;
	/* mark the roots, then whatever has a marked parent, until nothing moves */
	char *in = calloc(n ? n : 1, 1);
	if (!in) { free(all); return -1; }
	for (size_t i = 0; i < n; i++)
		for (int r = 0; r < nroots; r++)
			if (all[i].pid == roots[r]) in[i] = 1;
	for (int moved = 1; moved;) {
		moved = 0;
		for (size_t i = 0; i < n; i++) {
			if (in[i]) continue;
			for (size_t j = 0; j < n; j++)
				if (in[j] && all[j].pid == all[i].ppid) { in[i] = 1; moved = 1; break; }
		}
	}
	long long t = 0;
	for (size_t i = 0; i < n; i++)
		if (in[i]) t += (long long)all[i].ticks;
	free(in);
	free(all);
	return t;
}

/* busy and total jiffies of all the host's CPUs (/proc/stat's cpu line) */
static int host_cpu(unsigned long long *busy, unsigned long long *total)
{
	FILE *f = fopen("/proc/stat", "re");
	if (!f) return -1;
	unsigned long long v[8] = { 0 };
	int k = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
	               &v[7]);
	fclose(f);
	if (k < 5) return -1;
	*total = 0;
	for (int i = 0; i < 8; i++) *total += v[i];
	*busy = *total - v[3] - v[4]; /* idle and iowait */
	return 0;
}

static int run_calls(char *ports_s, int clients, int calls, char *pids_s)
{
	long roots[64];
	int nroots = 0;
	for (char *p = pids_s ? strtok(pids_s, ",") : NULL; p && nroots < 64; p = strtok(NULL, ",")) roots[nroots++] = atol(p);
	int ports[16], np = 0;
	for (char *p = strtok(ports_s, ","); p && np < 16; p = strtok(NULL, ",")) ports[np++] = atoi(p);
	if (np == 0 || clients < 1 || clients > 256 || calls < clients) {
		fprintf(stderr, "live_bench calls: bad ports, clients or calls\n");
		return 2;
	}
	snprintf(run_tag, sizeof run_tag, "lb%ld-%d", (long)getpid(), np);
	pthread_t th[256];
	struct client c[256];
	double *all = calloc((size_t)calls, sizeof *all);
	if (!all) return 1;
	int off = 0;
	for (int i = 0; i < clients; i++) {
		c[i] = (struct client){ .id = i, .port = ports[i % np], .calls = calls / clients + (i < calls % clients) };
		c[i].lat = all + off;
		off += c[i].calls;
	}
	long long tk0 = nroots ? tree_ticks(roots, nroots) : -1;
	unsigned long long hb0 = 0, ht0 = 0, hb1 = 0, ht1 = 0;
	int host = host_cpu(&hb0, &ht0) == 0;
	double t0 = bench_now_s();
	for (int i = 0; i < clients; i++)
		if (pthread_create(&th[i], NULL, client_main, &c[i]) != 0) { fprintf(stderr, "pthread_create failed\n"); return 1; }
	int fails = 0;
	for (int i = 0; i < clients; i++) {
		pthread_join(th[i], NULL);
		fails += c[i].failures;
	}
	double el = bench_now_s() - t0;
	long long tk1 = nroots ? tree_ticks(roots, nroots) : -1;
	host = host && host_cpu(&hb1, &ht1) == 0 && ht1 > ht0;
	qsort(all, (size_t)calls, sizeof *all, cmp_d);
	size_t p99 = (size_t)((double)calls * 0.99);
	if (p99 >= (size_t)calls) p99 = (size_t)calls - 1;
	printf("daemons=%d clients=%d calls=%d failures=%d calls/s=%.1f p50_ms=%.1f p99_ms=%.1f", np, clients, calls,
	       fails, (double)calls / el, all[calls / 2], all[p99]);
	if (tk0 >= 0 && tk1 >= tk0)
		printf(" cpu_ms/call=%.2f", (double)(tk1 - tk0) * 1000.0 / (double)sysconf(_SC_CLK_TCK) / (double)calls);
	if (host) printf(" host_busy=%.0f%%", 100.0 * (double)(hb1 - hb0) / (double)(ht1 - ht0));
	printf("\n");
	free(all);
	return 0;
}

/* ---- commits ---- */

static struct sfix F;

static int commit_one(struct world_store *st, const char *tag, struct world_err *err)
{
	if (world_store_begin(st, err) < 0) return -1;
	long long idx;
	char prev[WORLD_REF_SIZE], world[WORLD_REF_SIZE], out[WORLD_REF_SIZE], rec[WORLD_REF_SIZE];
	char payload[160];
	snprintf(payload, sizeof payload, "{\"out\":\"%s\"}", tag);
	int rc = world_log_next(st, &idx, prev, world, err);
	if (rc == 0) rc = world_object_put(st, "world/invocation-output/v1", tag, payload, strlen(payload), out, NULL, err);
	if (rc == 0) rc = sfix_record(st, &F, out, 1, tag, rec, err);
	struct world_log_append a = { idx, 1, F.src, F.interp, prev[0] ? prev : NULL, "live_bench", rec, out, world };
	if (rc == 0) rc = world_log_append(st, &a, NULL, err);
	if (rc == 0) rc = world_store_commit(st, err);
	else world_store_rollback(st);
	return rc;
}

static int run_commits(const char *db, int writers, int commits)
{
	if (writers < 1 || writers > 64 || commits < 1) {
		fprintf(stderr, "live_bench commits: bad writers or commits\n");
		return 2;
	}
	struct world_err err = { 0, "" };
	struct world_store *st;
	if (world_store_open(db, WORLD_STORE_WRITER, &st, &err) < 0 || sfix_init(st, NULL, &F, &err) < 0) {
		fprintf(stderr, "live_bench commits: %s\n", err.msg);
		return 1;
	}
	world_store_close(st); /* no connection crosses the fork */
	int go[2];
	if (pipe(go) < 0) { perror("pipe"); return 1; }
	pid_t kids[64];
	for (int k = 0; k < writers; k++) {
		kids[k] = fork();
		if (kids[k] < 0) { perror("fork"); return 1; }
		if (kids[k] == 0) {
			close(go[1]);
			struct world_store *c;
			struct world_err e = { 0, "" };
			if (world_store_open(db, WORLD_STORE_WRITER, &c, &e) < 0) { fprintf(stderr, "writer %d: %s\n", k, e.msg); _exit(3); }
			char b;
			if (read(go[0], &b, 1) < 0) _exit(4); /* EOF when the parent starts everyone */
			for (int n = 0; n < commits; n++) {
				char tag[64];
				snprintf(tag, sizeof tag, "w%d-%ld-%d", k, (long)getpid(), n);
				if (commit_one(c, tag, &e) < 0) { fprintf(stderr, "writer %d: %s\n", k, e.msg); _exit(5); }
			}
			world_store_close(c);
			_exit(0);
		}
	}
	close(go[0]);
	usleep(200 * 1000); /* let every writer open its handle */
	double t0 = bench_now_s();
	close(go[1]);
	int bad = 0;
	for (int k = 0; k < writers; k++) {
		int status;
		if (waitpid(kids[k], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) bad++;
	}
	double el = bench_now_s() - t0;
	printf("writers=%d commits=%d failed_writers=%d commits/s=%.1f\n", writers, writers * commits, bad,
	       (double)(writers * commits) / el);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if ((argc == 8 || argc == 9) && strcmp(argv[1], "calls") == 0) {
		cred = argv[3];
		tool = argv[6];
		targs = argv[7];
		return run_calls(argv[2], atoi(argv[4]), atoi(argv[5]), argc == 9 ? argv[8] : NULL);
	}
	if (argc == 5 && strcmp(argv[1], "commits") == 0) return run_commits(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: live_bench calls PORT[,PORT...] CREDENTIAL CLIENTS CALLS TOOL ARGS [PID,...]\n"
	                "       live_bench commits DB WRITERS COMMITS\n");
	return 2;
}
