/* tests/store/test_crash.c: kill -9 a process that commits in a loop, many
 * times (20; 100 with WORLD_LONG_TESTS=1). After each kill, every commit the
 * writer acknowledged (reported on a pipe only after world_store_commit()
 * returned) must be present and readable, the head must match the log, and
 * the next integrity scan must be clean and complete. */
#include "store/scan.h"
#include "store/store.h"
#include "tests/store/sfix.h"
#include "tests/tap.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[256], db[300];
static struct sfix F; /* made by the parent before the first writer (sfix.h) */

/* The committing child: one invocation-like group per commit. */
static void writer(int fd)
{
	struct world_store *st = NULL;
	struct world_err err = {0};
	for (int tries = 0; world_store_open(db, WORLD_STORE_WRITER, &st, &err) < 0; tries++) {
		if (err.code != WX_LOCKED || tries > 500) {
			fprintf(stderr, "writer: %s\n", err.msg);
			_exit(3);
		}
		usleep(10000);
	}
	for (;;) {
		long long last;
		char last_hash[WORLD_REF_SIZE];
		struct world_world head;
		char head_ref[WORLD_REF_SIZE] = "";
		if (world_store_begin(st, &err) < 0) goto fail;
		if (world_log_last(st, &last, last_hash, &err) < 0) goto fail;
		if (world_head_get(st, &head, &err) == 0) strcpy(head_ref, head.ref);
		char outp[128];
		char rout[WORLD_REF_SIZE], rrec[WORLD_REF_SIZE];
		snprintf(outp, sizeof outp, "{\"out\":%lld,\"pid\":%ld}", last + 1, (long)getpid());
		if (world_object_put(st, "world/invocation-output/v1", "crash", outp, strlen(outp), rout, NULL, &err) < 0)
			goto fail;
		if (sfix_record(st, &F, rout, 1, "crash", rrec, &err) < 0) goto fail;
		struct world_log_append a = { last + 1, 1, F.src, F.interp, last_hash, "crash-test", rrec, rout, head_ref };
		if (world_log_append(st, &a, NULL, &err) < 0) goto fail;
		if (world_store_commit(st, &err) < 0) goto fail;
		char ack[32];
		int n = snprintf(ack, sizeof ack, "%lld\n", last + 1);
		if (write(fd, ack, (size_t)n) != n) _exit(4);
	}
fail:
	fprintf(stderr, "writer: %s\n", err.msg);
	_exit(3);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/world-test-crash.XXXXXX");
	if (!mkdtemp(dir)) bail("mkdtemp");
	snprintf(db, sizeof db, "%s/world.db", dir);
	const char *lt = getenv("WORLD_LONG_TESTS");
	int kills = lt && *lt && strcmp(lt, "0") != 0 ? 100 : 20;
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	long long acked = 0;
	int bad_writers = 0;
	{
		struct world_store *st;
		struct world_err err = { 0 };
		if (world_store_open(db, WORLD_STORE_WRITER, &st, &err) < 0 || sfix_init(st, dir, &F, &err) < 0)
			bail("fixture: %s", err.msg);
		world_store_close(st);
	}
	for (int k = 0; k < kills; k++) {
		int p[2];
		if (pipe(p) < 0) bail("pipe: %s", strerror(errno));
		pid_t pid = fork();
		if (pid < 0) bail("fork: %s", strerror(errno));
		if (pid == 0) {
			close(p[0]);
			writer(p[1]);
		}
		close(p[1]);
		/* let it acknowledge a few commits, then kill it at a random moment */
		int want = 1 + rand() % 8, got = 0;
		char buf[4096];
		size_t have = 0;
		while (got < want) {
			ssize_t r = read(p[0], buf + have, sizeof buf - 1 - have);
			if (r <= 0) break;
			for (ssize_t i = 0; i < r; i++)
				if (buf[have + (size_t)i] == '\n') got++;
			have += (size_t)r;
			if (have > sizeof buf - 64) { /* keep only the tail */
				memmove(buf, buf + have - 32, 32);
				have = 32;
			}
		}
		usleep((useconds_t)(rand() % 3000));
		kill(pid, SIGKILL);
		int status;
		waitpid(pid, &status, 0);
		if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) bad_writers++;
		/* everything acknowledged before the kill is in the pipe */
		for (;;) {
			ssize_t r = read(p[0], buf + have, sizeof buf - 1 - have);
			if (r <= 0) break;
			have += (size_t)r;
			if (have > sizeof buf - 64) {
				memmove(buf, buf + have - 32, 32);
				have = 32;
			}
		}
		close(p[0]);
		buf[have] = 0;
		/* the last complete line is the highest acknowledged index */
		char *end = strrchr(buf, '\n');
		if (end) {
			*end = 0;
			char *line = strrchr(buf, '\n');
			long long v = atoll(line ? line + 1 : buf);
			if (v > acked) acked = v;
		}
	}
	ok(bad_writers == 0, "every writer ran until killed by SIGKILL (%d did not)", bad_writers);
	ok(acked >= kills, "writers acknowledged %lld commits over %d kills", acked, kills);

	struct world_store *st = NULL;
	struct world_err err = {0};
	ok(world_store_open(db, WORLD_STORE_WRITER, &st, &err) == 0, "store reopens for writing after the kills (%s)",
	   err.msg);
	if (!st) bail("cannot reopen");
	long long last;
	char last_hash[WORLD_REF_SIZE];
	int lr = world_log_last(st, &last, last_hash, &err);
	ok(lr == 0 && last >= acked,
	   "log head %lld >= highest acknowledged commit %lld", last, acked);
	long long missing = 0;
	for (long long i = 1; i <= acked; i++) {
		struct world_log_entry e;
		if (world_log_get(st, i, &e, &err) < 0) missing++;
		else world_log_entry_free(&e);
	}
	is_int(missing, 0, "every acknowledged entry 1..%lld present and verified", acked);
	struct world_world w;
	ok(world_head_get(st, &w, &err) == 0 && w.revision == last && strcmp(w.log_head, last_hash) == 0,
	   "selected head matches the last entry");
	char buf[4096] = "";
	FILE *f = fmemopen(buf, sizeof buf, "w");
	struct world_scan_opts so = { 0 };
	struct world_scan_result sr;
	ok(world_scan(st, &so, f, &sr, &err) == 0 && sr.complete && sr.holes == 0, "next scan is clean and complete");
	fclose(f);
	is_str(buf, "", "the scan printed nothing");
	ok(sr.log_rows == last && sr.world_rows == last, "scan saw %lld entries and %lld worlds", sr.log_rows,
	   sr.world_rows);
	world_store_close(st);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("cleanup failed");
	return done_testing();
}
