/* cli/serve_exec.c: `worldd serve` in the worldd program execs
 * worldd-serve (the same verbs, linked with the daemon). Why: libmicrohttpd
 * pulls in GnuTLS and eight more shared objects, and ld.so loading them
 * cost every `worldd run` ~2 ms at start-up (bench/run_bench); only serve
 * needs them. worldd-serve is looked up beside the running worldd (the
 * build tree, or a relocated install), then in pkglibexecdir; so is
 * world-store-copy (cli/copy_exec.h), through the same worldd_exec_sibling. */
#include "cli/serve_exec.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef WORLD_PKGLIBEXECDIR
#define WORLD_PKGLIBEXECDIR "/usr/local/libexec/world"
#endif

int worldd_exec_sibling(const char *verb, const char *program, const char *av0, const char *const *words, int nwords,
                        int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	char installed[sizeof WORLD_PKGLIBEXECDIR + 64];
	snprintf(installed, sizeof installed, "%s/%s", WORLD_PKGLIBEXECDIR, program);
	const char *cands[2] = { NULL, installed };
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(path, sizeof path, "%s/%s", self, program);
			cands[0] = path;
		}
	}
	char **av = calloc((size_t)argc + (size_t)nwords + 2, sizeof *av);
	if (!av) {
		fprintf(stderr, "worldd %s: out of memory\n", verb);
		return WX_FAIL;
	}
	av[0] = (char *)av0;
	for (int i = 0; i < nwords; i++) av[1 + i] = (char *)words[i];
	for (int i = 0; i < argc; i++) av[1 + nwords + i] = argv[i];
	fflush(stdout);
	int e = ENOENT;
	for (int i = 0; i < 2; i++) {
		if (!cands[i]) continue;
		execv(cands[i], av);
		if (errno != ENOENT) e = errno;
	}
	fprintf(stderr, "worldd %s: cannot run %s (beside worldd or in %s): %s\n", verb, program, WORLD_PKGLIBEXECDIR,
	        strerror(e));
	free(av);
	return WX_FAIL;
}

int worldd_exec_serve(int argc, char **argv)
{
	static const char *const w[] = { "serve" };
	return worldd_exec_sibling("serve", "worldd-serve", "worldd", w, 1, argc, argv);
}
