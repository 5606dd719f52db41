/* common/pause.c: see pause.h. Only built with --enable-test-hooks. */
#include "common/pause.h"
#ifdef WORLD_TEST_HOOKS
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_POINTS 32 /* every point arriving while WORLD_TEST_PAUSE is set takes one */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static world_pause_fn hook;
static void *hook_ctx;
static struct { char name[64]; long arrivals; } points[MAX_POINTS];

void world_pause_set_hook(world_pause_fn fn, void *ctx)
{
	pthread_mutex_lock(&mu);
	hook = fn;
	hook_ctx = ctx;
	pthread_mutex_unlock(&mu);
}

/* Whether the spec held in WORLD_TEST_PAUSE asks to hold arrival k at name. */
static int wanted(const char *spec, const char *name, long k)
{
	size_t n = strlen(name);
	for (const char *p = spec; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len >= n && strncmp(p, name, n) == 0) {
			if (len == n) return 1;
			if (p[n] == '@' && strtol(p + n + 1, NULL, 10) == k) return 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

void world_pause(const char *name)
{
	pthread_mutex_lock(&mu);
	world_pause_fn fn = hook;
	void *ctx = hook_ctx;
	long k = 0;
	const char *spec = getenv("WORLD_TEST_PAUSE");
	if (spec && *spec) {
		size_t i;
		for (i = 0; i < MAX_POINTS && points[i].name[0]; i++)
			if (strcmp(points[i].name, name) == 0) break;
		if (i < MAX_POINTS) {
			if (!points[i].name[0]) snprintf(points[i].name, sizeof points[i].name, "%s", name);
			k = ++points[i].arrivals;
		}
	}
	pthread_mutex_unlock(&mu);
	if (fn) fn(ctx, name);
	const char *dir = getenv("WORLD_TEST_PAUSE_DIR");
	if (!k || !dir || !wanted(spec, name, k)) return;
	char reached[4096], go[4096];
	snprintf(reached, sizeof reached, "%s/%s.%ld.reached", dir, name, k);
	snprintf(go, sizeof go, "%s/%s.%ld.go", dir, name, k);
	int fd = open(reached, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "world test pause %s: cannot create %s: %s (not held)\n", name, reached, strerror(errno));
		return;
	}
	close(fd);
	struct timespec step = { 0, 5 * 1000 * 1000 };
	for (int i = 0; i < 120 * 200 && !exists(go); i++) nanosleep(&step, NULL);
	if (!exists(go)) fprintf(stderr, "world test pause %s: %s never appeared; going on\n", name, go);
}
#endif
