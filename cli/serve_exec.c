/* cli/serve_exec.c: `worldd serve` in the worldd program execs
 * worldd-serve (the same verbs, linked with the daemon). Why: libmicrohttpd
 * pulls in GnuTLS and eight more shared objects, and ld.so loading them
 * cost every `worldd run` ~2 ms at start-up (bench/run_bench); only serve
 * needs them. worldd-serve is looked up beside the running worldd (the
 * build tree, or a relocated install), then in pkglibexecdir. */
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

int worldd_exec_serve(int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	const char *cands[2] = { NULL, WORLD_PKGLIBEXECDIR "/worldd-serve" };
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(path, sizeof path, "%s/worldd-serve", self);
			cands[0] = path;
		}
	}
	char **av = calloc((size_t)argc + 3, sizeof *av);
	if (!av) {
		fprintf(stderr, "worldd serve: out of memory\n");
		return WX_FAIL;
	}
	av[0] = "worldd";
	av[1] = "serve";
	for (int i = 0; i < argc; i++) av[2 + i] = argv[i];
	int e = ENOENT;
	for (int i = 0; i < 2; i++) {
		if (!cands[i]) continue;
		execv(cands[i], av);
		if (errno != ENOENT) e = errno;
	}
	fprintf(stderr, "worldd serve: cannot run worldd-serve (beside worldd or in %s): %s\n", WORLD_PKGLIBEXECDIR,
	        strerror(e));
	free(av);
	return WX_FAIL;
}
