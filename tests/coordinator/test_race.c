/* tests/coordinator/test_race.c: acknowledged work survives concurrency.
 *
 * Each race of issue 19 is reproduced deterministically: the test-only
 * pause points (common/pause.h, built with --enable-test-hooks) hold the
 * first call inside its critical window while a second call either
 * completes (the race happens) or is seen waiting for its turn (the fix).
 * The test releases the first call only then, so the interleaving is the
 * one that lost work before the fix, every time.
 *   - a retried task id: the claim and the committed-check were two steps;
 *     held between them, a second call with the same id ran the effect
 *     again. Now: one entry, one handler run, the second call replayed.
 *   - two edits of one file in one episode: the handler reads the file and
 *     replaces it; held between the two, a second edit was overwritten.
 *     Now: the episode's effects take turns, both edits are in the file.
 * Then randomised load without pauses (N parallel edits of distinct lines,
 * N parallel retries of one id), and the episode quotas. Real capsules
 * (ailang-lite), a real store, the product's Workspace.Write handler. */
#include "tests/coordinator/ctest.h"
#include "broker/effect.h"
#include "broker/workspace.h"
#include "common/pause.h"
#include "store/scan.h"
#include "tests/tap.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

void coord_set_handlers(struct coordinator *c, const struct broker_handler_entry *table);

static struct ctest T;
static char ws_root[400];

/* ---- a counting handler: how many times did an effect really run ---- */
static pthread_mutex_t count_mu = PTHREAD_MUTEX_INITIALIZER;
static int count_runs;
static int h_count(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx; (void)payload; (void)err;
	pthread_mutex_lock(&count_mu);
	int n = ++count_runs;
	pthread_mutex_unlock(&count_mu);
	*out = json_pack("{s:b,s:i}", "ok", 1, "run", n);
	return 0;
}
static const struct broker_handler_entry handlers[] = {
	{ "Workspace.Write", workspace_write }, { "Test.Count", h_count }, { NULL, NULL },
};

/* ---- the pause hook: hold the first arrival at one point until the
 * second call finished or reached a point that shows it waiting ---- */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const char *hold;      /* point whose first arrival is held (NULL = none) */
	const char *waiting;   /* point that shows the second call waiting */
	int arrived, second_waiting, second_done, released;
} H = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0, 0, 0 };

static void hook(void *ctx, const char *name)
{
	(void)ctx;
	pthread_mutex_lock(&H.mu);
	if (H.hold && strcmp(name, H.hold) == 0 && ++H.arrived == 1) {
		pthread_cond_broadcast(&H.cv);
		while (!H.released) pthread_cond_wait(&H.cv, &H.mu);
	} else if (H.waiting && strcmp(name, H.waiting) == 0) {
		H.second_waiting = 1;
		pthread_cond_broadcast(&H.cv);
	}
	pthread_mutex_unlock(&H.mu);
}

static void hold_arm(const char *hold, const char *waiting)
{
	pthread_mutex_lock(&H.mu);
	H.hold = hold;
	H.waiting = waiting;
	H.arrived = H.second_waiting = H.second_done = H.released = 0;
	pthread_mutex_unlock(&H.mu);
}

static void hold_wait_first(void)
{
	pthread_mutex_lock(&H.mu);
	while (!H.arrived) pthread_cond_wait(&H.cv, &H.mu);
	pthread_mutex_unlock(&H.mu);
}

/* Returns 1 when the second call was seen waiting, 0 when it finished. */
static int hold_wait_second_then_release(void)
{
	pthread_mutex_lock(&H.mu);
	while (!H.second_waiting && !H.second_done) pthread_cond_wait(&H.cv, &H.mu);
	int waited = H.second_waiting;
	H.released = 1;
	H.hold = NULL;
	pthread_cond_broadcast(&H.cv);
	pthread_mutex_unlock(&H.mu);
	return waited;
}

/* ---- calls on threads ---- */
struct job {
	struct coordinator *c;
	const char *cred, *skill, *task;
	char args[512];
	int second;            /* tell the hook when done */
	int rc;
	struct world_err err;
	struct coord_result res;
	pthread_t th;
};

static void *job_main(void *arg)
{
	struct job *j = arg;
	struct coord_session *s;
	j->rc = coord_session_open(j->c, j->cred, &s, &j->err);
	if (j->rc == 0) {
		struct coord_call cl = { .session = s, .channel = "cli", .skill_id = j->skill, .task_id = j->task,
			                 .args = j->args, .args_len = strlen(j->args) };
		j->rc = coord_call(j->c, &cl, &j->res, &j->err);
		coord_session_free(s);
	}
	if (j->second) {
		pthread_mutex_lock(&H.mu);
		H.second_done = 1;
		pthread_cond_broadcast(&H.cv);
		pthread_mutex_unlock(&H.mu);
	}
	return NULL;
}

static void job_start(struct job *j)
{
	if (pthread_create(&j->th, NULL, job_main, j) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		exit(99);
	}
}

static int scans_clean(void)
{
	struct world_scan_opts so = { 0 };
	struct world_scan_result sr;
	struct world_err e;
	return world_scan(T.st, &so, NULL, &sr, &e) == 0 && sr.holes == 0 && sr.complete;
}

/* ---- the worktree file ---- */
static void file_put(const char *episode, const char *name, const char *text)
{
	char p[600];
	snprintf(p, sizeof p, "%s/%s", ws_root, episode);
	if (mkdir(p, 0700) < 0 && errno != EEXIST) { perror(p); exit(99); }
	snprintf(p, sizeof p, "%s/%s/%s", ws_root, episode, name);
	FILE *f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) { perror(p); exit(99); }
}

static char *file_get(const char *episode, const char *name)
{
	char p[600];
	snprintf(p, sizeof p, "%s/%s/%s", ws_root, episode, name);
	FILE *f = fopen(p, "r");
	if (!f) return strdup("");
	static char buf[8192];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return strdup(buf);
}

static int output_ok(const struct job *j)
{
	struct world_err e;
	json_t *o = j->rc == 0 ? world_json_parse(j->res.output, j->res.output_len, &e) : NULL;
	int yes = o && json_is_true(json_object_get(o, "ok"));
	json_decref(o);
	return yes;
}

static struct coordinator *new_coord(long long calls_max, long long bytes_max)
{
	struct coord_config cfg = { .store = T.st, .written_by = "test/race", .workspace_root = ws_root,
		                    .episode_calls_max = calls_max, .episode_bytes_max = bytes_max };
	sup_limits_default(&cfg.limits);
	struct world_err e;
	struct coordinator *c = coord_new(&cfg, &e);
	if (!c) ctest_die("coord_new", &e);
	coord_set_handlers(c, handlers);
	return c;
}

static char *read_source(const char *rel)
{
	const char *top = getenv("top_srcdir");
	char p[600];
	snprintf(p, sizeof p, "%s/%s", top ? top : ".", rel);
	FILE *f = fopen(p, "r");
	if (!f) { perror(p); exit(99); }
	static char buf[65536];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return strdup(buf);
}

/* ---- 1. a retried task id ---- */
static void race_task_id(struct coordinator *c, const char *cred)
{
	long long before = ctest_log_len(&T);
	count_runs = 0;
	hold_arm("coord.claimed", "coord.claim_wait");
	struct job a = { .c = c, .cred = cred, .skill = "t.count", .task = "retry-1", .args = "{\"k\":1}" };
	struct job b = a;
	b.second = 1;
	job_start(&a);
	hold_wait_first();
	job_start(&b);
	int waited = hold_wait_second_then_release();
	pthread_join(a.th, NULL);
	pthread_join(b.th, NULL);
	ok(waited, "race 1: the second call with the task id waited for the first (it did not run past the claim)");
	ok(a.rc == 0 && b.rc == 0, "race 1: both calls answered (%s / %s)", a.rc ? a.err.msg : "ok", b.rc ? b.err.msg : "ok");
	is_int(count_runs, 1, "race 1: the effect ran exactly once");
	is_int(ctest_log_len(&T) - before, 1, "race 1: exactly one log entry for the task id");
	ok(a.res.entry_index == b.res.entry_index && a.res.replayed + b.res.replayed == 1,
	   "race 1: both answers name the same entry, one of them replayed (%lld/%d, %lld/%d)", a.res.entry_index,
	   a.res.replayed, b.res.entry_index, b.res.replayed);
	ok(a.rc == 0 && b.rc == 0 && a.res.output_len == b.res.output_len &&
	   memcmp(a.res.output, b.res.output, a.res.output_len) == 0, "race 1: the replayed answer is the committed output");
	ok(scans_clean(), "race 1: the store scans clean (no journal hole)");
	coord_result_free(&a.res);
	coord_result_free(&b.res);
}

/* ---- 2. two edits of one file in one episode ---- */
static void race_edit(struct coordinator *c, const char *cred)
{
	file_put("ep-race", "f.txt", "l0\nl1\n");
	hold_arm("workspace.edit.read", "effect.waiting_turn");
	struct job a = { .c = c, .cred = cred, .skill = "t.edit", .task = "edit-a",
		         .args = "{\"path\":\"f.txt\",\"old_text\":\"l0\",\"new_text\":\"L0\"}" };
	struct job b = { .c = c, .cred = cred, .skill = "t.edit", .task = "edit-b", .second = 1,
		         .args = "{\"path\":\"f.txt\",\"old_text\":\"l1\",\"new_text\":\"L1\"}" };
	job_start(&a);
	hold_wait_first();
	job_start(&b);
	int waited = hold_wait_second_then_release();
	pthread_join(a.th, NULL);
	pthread_join(b.th, NULL);
	ok(waited, "race 2: the second edit waited for the episode's turn while the first was between read and replace");
	ok(output_ok(&a) && output_ok(&b), "race 2: both edits answered ok:true (%s / %s)", a.rc ? a.err.msg : "ok",
	   b.rc ? b.err.msg : "ok");
	char *f = file_get("ep-race", "f.txt");
	is_str(f, "L0\nL1\n", "race 2: the file keeps both acknowledged edits");
	free(f);
	coord_result_free(&a.res);
	coord_result_free(&b.res);
}

/* ---- 2b. the control: other episodes do not wait for each other ---- */
static void race_edit_other_episode(struct coordinator *c, const char *cred_a, const char *cred_b)
{
	file_put("ep-race", "g.txt", "a0\n");
	file_put("ep-other", "g.txt", "b0\n");
	hold_arm("workspace.edit.read", "effect.waiting_turn");
	struct job a = { .c = c, .cred = cred_a, .skill = "t.edit", .task = "other-a",
		         .args = "{\"path\":\"g.txt\",\"old_text\":\"a0\",\"new_text\":\"A0\"}" };
	struct job b = { .c = c, .cred = cred_b, .skill = "t.edit", .task = "other-b", .second = 1,
		         .args = "{\"path\":\"g.txt\",\"old_text\":\"b0\",\"new_text\":\"B0\"}" };
	job_start(&a);
	hold_wait_first();
	job_start(&b);
	int waited = hold_wait_second_then_release();
	pthread_join(a.th, NULL);
	pthread_join(b.th, NULL);
	ok(!waited && output_ok(&b), "control: an edit of another episode ran to the end while the first was held");
	char *fa = file_get("ep-race", "g.txt"), *fb = file_get("ep-other", "g.txt");
	ok(strcmp(fa, "A0\n") == 0 && strcmp(fb, "B0\n") == 0, "control: both episodes' files edited");
	free(fa);
	free(fb);
	coord_result_free(&a.res);
	coord_result_free(&b.res);
}

/* ---- 3. randomised load, no pauses ---- */
#define N_LOAD 8
static void load_edits(struct coordinator *c, const char *cred, int round)
{
	char text[256] = "", name[32];
	snprintf(name, sizeof name, "load%d.txt", round);
	for (int i = 0; i < N_LOAD; i++) {
		char line[32];
		snprintf(line, sizeof line, "line%d\n", i);
		strcat(text, line);
	}
	file_put("ep-race", name, text);
	struct job j[N_LOAD];
	char tasks[N_LOAD][32];
	for (int i = 0; i < N_LOAD; i++) {
		memset(&j[i], 0, sizeof j[i]);
		snprintf(tasks[i], sizeof tasks[i], "load%d-%d", round, i);
		j[i].c = c;
		j[i].cred = cred;
		j[i].skill = "t.edit";
		j[i].task = tasks[i];
		snprintf(j[i].args, sizeof j[i].args,
		         "{\"path\":\"%s\",\"old_text\":\"line%d\\n\",\"new_text\":\"LINE%d\\n\"}", name, i, i);
	}
	for (int i = 0; i < N_LOAD; i++) job_start(&j[i]);
	int acked = 0;
	for (int i = 0; i < N_LOAD; i++) {
		pthread_join(j[i].th, NULL);
		acked += output_ok(&j[i]);
	}
	char *f = file_get("ep-race", name);
	int present = 0;
	for (int i = 0; i < N_LOAD; i++) {
		char want[32];
		snprintf(want, sizeof want, "LINE%d\n", i);
		present += strstr(f, want) != NULL;
	}
	is_int(acked, N_LOAD, "load round %d: all %d parallel edits of distinct lines acknowledged", round, N_LOAD);
	is_int(present, acked, "load round %d: every acknowledged edit is in the file", round);
	free(f);
	for (int i = 0; i < N_LOAD; i++) coord_result_free(&j[i].res);
}

static void load_retries(struct coordinator *c, const char *cred, const char *skill, const char *task)
{
	long long before = ctest_log_len(&T);
	count_runs = 0;
	struct job j[N_LOAD];
	for (int i = 0; i < N_LOAD; i++) {
		memset(&j[i], 0, sizeof j[i]);
		j[i].c = c;
		j[i].cred = cred;
		j[i].skill = skill;
		j[i].task = task;
		snprintf(j[i].args, sizeof j[i].args, "{\"k\":42}");
	}
	for (int i = 0; i < N_LOAD; i++) job_start(&j[i]);
	int okc = 0, replayed = 0, same = 1;
	for (int i = 0; i < N_LOAD; i++) {
		pthread_join(j[i].th, NULL);
		okc += j[i].rc == 0;
		replayed += j[i].res.replayed;
		if (j[i].rc != 0 || j[i].res.entry_index != j[0].res.entry_index) same = 0;
	}
	is_int(okc, N_LOAD, "%s: %d parallel calls with one task id all answered", skill, N_LOAD);
	is_int(ctest_log_len(&T) - before, 1, "%s: exactly one entry for the task id", skill);
	ok(same && replayed == N_LOAD - 1, "%s: every answer names that entry, %d of them replayed", skill, replayed);
	if (strcmp(skill, "t.count") == 0) is_int(count_runs, 1, "%s: the effect ran once", skill);
	for (int i = 0; i < N_LOAD; i++) coord_result_free(&j[i].res);
}

/* ---- 4. episode quotas: pure calls are metered too ---- */
static void quotas(const char *cred_q, const char *cred_other)
{
	struct coordinator *c = new_coord(2, 4096);
	struct job j = { .c = c, .cred = cred_q, .skill = "t.seen", .task = "q1", .args = "{\"n\":1}" };
	long long before = ctest_log_len(&T);
	job_main(&j);
	ok(j.rc == 0, "quota: call 1 of 2 committed (%s)", j.rc ? j.err.msg : "ok");
	coord_result_free(&j.res);
	j.task = "q2";
	job_main(&j);
	ok(j.rc == 0, "quota: call 2 of 2 committed");
	coord_result_free(&j.res);
	j.task = "q3";
	job_main(&j);
	ok(j.rc < 0 && j.err.code == WX_QUOTA && strstr(j.err.msg, "call quota"), "quota: call 3 refused: %s", j.err.msg);
	is_str(coord_error_class(WX_QUOTA), "QuotaExceeded", "quota: the wire class is QuotaExceeded");
	is_int(ctest_log_len(&T) - before, 2, "quota: the refused call committed nothing");
	j.task = "q1";
	job_main(&j);
	ok(j.rc == 0 && j.res.replayed, "quota: a retry of a committed task id is still answered (replayed)");
	coord_result_free(&j.res);
	coord_free(c);
	/* bytes: another episode, 4096 bytes, no call limit */
	c = new_coord(-1, 4096);
	struct job k = { .c = c, .cred = cred_other, .skill = "t.seen", .task = "b1" };
	memset(k.args, 0, sizeof k.args);
	strcpy(k.args, "{\"pad\":\"");
	memset(k.args + 8, 'x', 400);
	strcat(k.args, "\"}");
	int committed = 0;
	char task[16];
	for (int i = 0; i < 12; i++) {
		snprintf(task, sizeof task, "b%d", i);
		k.task = task;
		job_main(&k);
		if (k.rc < 0) break;
		committed++;
		coord_result_free(&k.res);
	}
	ok(k.rc < 0 && k.err.code == WX_QUOTA && strstr(k.err.msg, "byte quota"),
	   "quota: the byte quota stops an episode after %d calls of 400-byte arguments: %s", committed, k.err.msg);
	ok(committed >= 2 && committed < 12, "quota: %d calls fitted in 4096 bytes before the refusal", committed);
	coord_free(c);
}

int main(void)
{
	if (!WORLD_PAUSE_COMPILED) {
		skip("built without --enable-test-hooks: the pause points are not compiled in", "the race tests");
		return done_testing();
	}
	ctest_init(&T, "race");
	snprintf(ws_root, sizeof ws_root, "%s/ws", T.dir);
	if (mkdir(ws_root, 0700) < 0) { perror(ws_root); return 99; }
	char *edit = read_source("packages/se-tools/ailang-edit.ail");
	ctest_register(&T, "t.edit", edit, "[{\"effect\":\"Workspace.Write\",\"scope\":\"worktree\",\"cost\":1}]", "null",
	               NULL);
	free(edit);
	char *count = ctest_plan_source("{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":"
	                                "\"Test.Count\",\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":false,"
	                                "\"result\":null}");
	ctest_register(&T, "t.count", count, "[{\"effect\":\"Test.Count\",\"scope\":\"s\",\"cost\":1}]", "null", NULL);
	free(count);
	ctest_register(&T, "t.seen", ctest_seen_source, "[]", "null", NULL);
	const char *const grants[] = { "Workspace.Write=worktree:1000", "Test.Count=s:1000", NULL };
	char cred[65], cred_other[65], cred_q[65], cred_q2[65];
	ctest_session(&T, "ep-race", grants, 3600, cred);
	ctest_session(&T, "ep-other", grants, 3600, cred_other);
	ctest_session(&T, "ep-quota", grants, 3600, cred_q);
	ctest_session(&T, "ep-quota-bytes", grants, 3600, cred_q2);

	world_pause_set_hook(hook, NULL);
	struct coordinator *c = new_coord(0, 0);
	race_task_id(c, cred);
	race_edit(c, cred);
	race_edit_other_episode(c, cred, cred_other);
	world_pause_set_hook(NULL, NULL);
	for (int r = 0; r < 3; r++) load_edits(c, cred, r);
	load_retries(c, cred, "t.count", "many-1");
	load_retries(c, cred, "t.seen", "many-2");
	ok(scans_clean(), "the store scans clean after the load");
	coord_free(c);
	quotas(cred_q, cred_q2);
	ctest_fini(&T);
	return done_testing();
}
