/* tests/supervisor/exec_run.c: one sup_run_exec from the command line, for
 * tests/supervisor/exec.sh (and by hand). Prints the result as one JSON
 * object on stdout; the command's stdout and stderr are in it.
 *
 * usage: exec_run [--wall-ms N] [--memory BYTES] [--pids N] [--cpu-ms N]
 *                 [--output-max BYTES] [--cache DIR] [--ro DIR]... [--protect NAME]...
 *                 [--cwd REL] [--env K=V]... [--parallel WT2] WORKTREE -- ARGV...
 * ARGV[0] is resolved on /usr/bin:/bin unless absolute. The environment is
 * PATH=/usr/bin:/bin, LANG=C.UTF-8, HOME and TMPDIR (/cache when a cache is
 * given, else /tmp) plus each --env. --parallel runs the same command on a
 * second worktree at the same time (two threads) and prints two objects.
 * Exit: 0 when the run(s) ran, else the world_err code. */
#include "supervisor/exec.h"
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct job {
	struct sup_exec_req req;
	struct sup_exec_result res;
	struct world_err err;
	int rc;
};

static void *run(void *arg)
{
	struct job *j = arg;
	j->rc = sup_run_exec(&j->req, &j->res, &j->err);
	return NULL;
}

static void print(struct job *j)
{
	if (j->rc < 0) {
		json_t *e = json_pack("{s:i,s:s}", "error", j->err.code, "message", j->err.msg);
		char *t = e ? json_dumps(e, JSON_COMPACT) : NULL;
		printf("%s\n", t ? t : "{}");
		free(t);
		json_decref(e);
		return;
	}
	struct sup_exec_result *r = &j->res;
	json_t *o = json_pack("{s:i,s:b,s:s,s:I,s:s%,s:I,s:b,s:s,s:s%,s:I,s:b,s:s,s:s,s:s,s:s,s:s,s:s}",
		"exit_code", r->exit_code, "timed_out", r->timed_out, "limit", r->limit,
		"duration_ms", (json_int_t)r->duration_ms,
		"stdout", r->out.text, r->out.len, "stdout_bytes", (json_int_t)r->out.bytes,
		"stdout_truncated", r->out.truncated, "stdout_sha256", r->out.sha256,
		"stderr", r->err.text, r->err.len, "stderr_bytes", (json_int_t)r->err.bytes,
		"stderr_truncated", r->err.truncated, "stderr_sha256", r->err.sha256,
		"profile", r->profile_name, "digest", r->profile_digest, "layers", r->layers,
		"denied", r->denied, "protected_created", r->protected_created);
	char *t = json_dumps(o, JSON_COMPACT);
	printf("%s\n", t ? t : "{}");
	free(t);
	json_decref(o);
	sup_exec_result_free(r);
}

int main(int argc, char **argv)
{
	struct sup_exec_req q = { 0 };
	const char *ro[17] = { 0 }, *prot[17] = { 0 }, *env[40] = { 0 }, *par = NULL;
	size_t nro = 0, nprot = 0, nenv = 0;
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) break;
		if (!strcmp(a, "--wall-ms")) q.wall_ms = (unsigned)atol(v);
		else if (!strcmp(a, "--memory")) q.memory_max = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--pids")) q.pids_max = (unsigned)atol(v);
		else if (!strcmp(a, "--cpu-ms")) q.cpu_ms = (unsigned)atol(v);
		else if (!strcmp(a, "--output-max")) q.output_max = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--cache")) q.cache_dir = v;
		else if (!strcmp(a, "--ro") && nro < 16) ro[nro++] = v;
		else if (!strcmp(a, "--protect") && nprot < 16) prot[nprot++] = v;
		else if (!strcmp(a, "--cwd")) q.cwd_rel = v;
		else if (!strcmp(a, "--env") && nenv < 30) env[nenv++] = v;
		else if (!strcmp(a, "--parallel")) par = v;
		else if (a[0] != '-') {
			q.worktree = a;
			continue;
		} else {
			fprintf(stderr, "exec_run: unknown flag %s\n", a);
			return 2;
		}
		i++;
	}
	if (i >= argc - 1 || !q.worktree) {
		fprintf(stderr, "usage: exec_run [flags] WORKTREE -- ARGV...\n");
		return 2;
	}
	char **cmd = argv + i + 1;
	char path[4096], inside[4096];
	if (cmd[0][0] == '/') {
		snprintf(path, sizeof path, "%s", cmd[0]);
	} else if (strchr(cmd[0], '/')) { /* ./x: in the worktree, /work/x inside */
		snprintf(path, sizeof path, "%s/%s", q.worktree, cmd[0]);
		snprintf(inside, sizeof inside, "/work/%s", cmd[0]);
	} else {
		snprintf(path, sizeof path, "/usr/bin/%s", cmd[0]);
		if (access(path, X_OK) != 0) snprintf(path, sizeof path, "/bin/%s", cmd[0]);
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		return 4;
	}
	cmd[0] = cmd[0][0] != '/' && strchr(cmd[0], '/') ? inside : path;
	env[nenv++] = "PATH=/usr/bin:/bin";
	env[nenv++] = "LANG=C.UTF-8";
	env[nenv++] = q.cache_dir ? "HOME=/cache" : "HOME=/tmp";
	env[nenv++] = q.cache_dir ? "TMPDIR=/cache" : "TMPDIR=/tmp";
	q.argv = (const char *const *)cmd;
	q.argv0_fd = fd;
	q.envp = env;
	q.read_roots = ro;
	q.protected_names = prot;
	struct job a = { .req = q }, b = { .req = q };
	b.req.worktree = par;
	if (par) {
		pthread_t t1, t2;
		if (pthread_create(&t1, NULL, run, &a) || pthread_create(&t2, NULL, run, &b)) return 10;
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		print(&a);
		print(&b);
		return a.rc < 0 ? a.err.code : b.rc < 0 ? b.err.code : 0;
	}
	run(&a);
	print(&a);
	return a.rc < 0 ? a.err.code : 0;
}
