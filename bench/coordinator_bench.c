/* bench/coordinator_bench.c: durable invocations through the coordinator
 * in one process (what `worldd call` and the daemon do per call), beside the
 * bare supervisor+capsule run of the same transition, measured side by side
 * in interleaved rounds at 1 and 2 threads. Rows: bare supervisor (echo),
 * coordinator pure echo, coordinator effectful Workspace.Read. Prints
 * runs/s, ms/run, the ratio to the bare rate and the share of wall time in
 * the capsule, the broker/handler and the store commit. Figures only.
 * usage: coordinator_bench AILANG_LITE [RUNS] */
#include "tests/coordinator/ctest.h"
#include "broker/effect.h"
#include "supervisor/launcher.h"
#include "supervisor/spawner.h"
#include "bench/bench.h"
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

static const char ECHO[] = "module echo\nexport func main(input: string) -> string { \"{\\\"echo\\\":${input}}\" }\n";
static const char ARGS[] = "{\"message\":\"hello, world\"}";

enum row { BARE, PURE, READ, NROWS };
static const char *const row_names[NROWS] = { "bare supervisor+capsule (echo)", "coordinator pure echo (durable)",
	                                      "coordinator Workspace.Read (durable)" };

struct job {
	enum row row;
	int runs;
	struct supervisor *sup;
	struct coordinator *c;
	struct coord_session *s;
	long capsule_ms, broker_ms, commit_ms;
	int failures;
	char err[1024];
};

static void *worker(void *arg)
{
	struct job *j = arg;
	for (int i = 0; i < j->runs; i++) {
		struct world_err e;
		if (j->row == BARE) {
			struct sup_result r;
			if (sup_run_pure(j->sup, ECHO, sizeof ECHO - 1, ARGS, sizeof ARGS - 1, &r, &e) < 0) {
				j->failures++;
				snprintf(j->err, sizeof j->err, "%s", e.msg);
			} else {
				j->capsule_ms += r.elapsed_ms;
			}
			sup_result_free(&r);
			continue;
		}
		struct coord_call call = { .session = j->s, .channel = "cli", .skill_id = j->row == PURE ? "b.echo" : "b.read",
			                   .args = ARGS, .args_len = sizeof ARGS - 1 };
		struct coord_result r;
		if (coord_call(j->c, &call, &r, &e) < 0) {
			j->failures++;
			snprintf(j->err, sizeof j->err, "%s", e.msg);
			continue;
		}
		j->capsule_ms += r.capsule_ms;
		j->broker_ms += r.broker_ms;
		j->commit_ms += r.commit_ms;
		coord_result_free(&r);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) { fprintf(stderr, "usage: coordinator_bench AILANG_LITE [RUNS]\n"); return 2; }
	setenv("AILANG_LITE", argv[1], 1);
	int runs = argc > 2 ? atoi(argv[2]) : 300;
	/* As in the daemon: the capsule spawner first (supervisor/spawner.h). */
	struct world_err se;
	if (sup_spawner_start(NULL, NULL, &se) < 0) ctest_die("capsule spawner", &se);
	struct ctest t;
	ctest_init(&t, "coordbench");
	int have_read = broker_handler_find(broker_handlers, "Workspace.Read") != NULL;
	ctest_register(&t, "b.echo", ECHO, "[]", "null", NULL);
	char *src = ctest_plan_source("{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":"
	                              "\"Workspace.Read\",\"scope\":\"worktree\",\"cost\":0,\"payload\":{\"op\":\"read\","
	                              "\"path\":\"hello.txt\"}}],\"finish\":false,\"result\":null}");
	ctest_register(&t, "b.read", src, "[{\"effect\":\"Workspace.Read\",\"scope\":\"worktree\",\"cost\":0}]", "null", NULL);
	free(src);
	char ws[400], path[500];
	snprintf(ws, sizeof ws, "%s/ws", t.dir);
	snprintf(path, sizeof path, "%s/bench", ws);
	if (mkdir(ws, 0700) < 0 || mkdir(path, 0700) < 0) ctest_die("mkdir", NULL);
	snprintf(path, sizeof path, "%s/bench/hello.txt", ws);
	FILE *f = fopen(path, "w");
	if (!f || fputs("hello, world\n", f) < 0 || fclose(f) != 0) ctest_die("write hello.txt", NULL);
	char cred[65];
	const char *const g[] = { "Workspace.Read=worktree:9007199254740992", NULL };
	ctest_session(&t, "bench", g, 3600, cred);

	struct world_err e;
	struct sup_limits lim;
	sup_limits_default(&lim);
	struct launcher *l = launcher_capsule_new(t.interp.path, t.interp.ref, &e);
	struct supervisor *sup = l ? sup_new(&lim, l, &e) : NULL;
	if (!sup) ctest_die("supervisor", &e);
	struct coord_config cfg = { .store = t.st, .workspace_root = ws, .written_by = "bench" };
	cfg.limits = lim;
	struct coordinator *c = coord_new(&cfg, &e);
	if (!c) ctest_die("coordinator", &e);
	struct coord_session *s;
	if (coord_session_open(c, cred, &s, &e) < 0) ctest_die("session", &e);

	printf("coordinator bench: %d runs per row and thread count, 5 interleaved rounds, durable commits "
	       "(WAL, synchronous=FULL)\n", runs);
	if (!have_read) printf("(no Workspace.Read handler in this build: that row is skipped)\n");
	for (int threads = 1; threads <= 2; threads++) {
		double wall[NROWS] = { 0 };
		long cap[NROWS] = { 0 }, brk[NROWS] = { 0 }, com[NROWS] = { 0 };
		int fails[NROWS] = { 0 };
		char lasterr[NROWS][1024] = { { 0 } };
		const int rounds = 5;
		for (int round = 0; round < rounds; round++)
			for (int r = 0; r < NROWS; r++) {
				if (r == READ && !have_read) continue;
				struct job jobs[2];
				pthread_t th[2];
				double t0 = bench_now_s();
				for (int k = 0; k < threads; k++) {
					jobs[k] = (struct job){ .row = (enum row)r, .runs = runs / rounds, .sup = sup, .c = c, .s = s };
					pthread_create(&th[k], NULL, worker, &jobs[k]);
				}
				for (int k = 0; k < threads; k++) {
					pthread_join(th[k], NULL);
					cap[r] += jobs[k].capsule_ms;
					brk[r] += jobs[k].broker_ms;
					com[r] += jobs[k].commit_ms;
					fails[r] += jobs[k].failures;
					if (jobs[k].err[0]) snprintf(lasterr[r], sizeof lasterr[r], "%s", jobs[k].err);
				}
				wall[r] += bench_now_s() - t0;
			}
		printf("\n%d thread(s):\n  %-40s %9s %8s %8s %9s %8s %8s\n", threads, "row", "runs/s", "ms/run", "x bare",
		       "capsule%", "broker%", "commit%");
		double total = (double)(runs / rounds) * rounds * threads;
		double bare = total / wall[BARE];
		for (int r = 0; r < NROWS; r++) {
			if (r == READ && !have_read) continue;
			double rate = total / wall[r];
			double busy = wall[r] * 1000.0 * threads; /* thread-ms */
			printf("  %-40s %9.1f %8.2f %8.2f %8.1f%% %7.1f%% %7.1f%%", row_names[r], rate, 1000.0 / rate * threads,
			       rate / bare, 100.0 * cap[r] / busy, 100.0 * brk[r] / busy, 100.0 * com[r] / busy);
			if (fails[r]) printf("  (%d failed: %s)", fails[r], lasterr[r]);
			printf("\n");
		}
	}
	printf("\ntargets (issue 8): pure echo >= 0.8x and Workspace.Read >= 0.5x the bare rate\n");
	coord_session_free(s);
	coord_free(c);
	sup_free(sup);
	ctest_fini(&t);
	return 0;
}
