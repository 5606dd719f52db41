/* daemon/calls.c: the calls in flight that a cancel can reach (route.h,
 * struct dcall; docs/daemon.md, "Cancellation and progress").
 *
 * A projection registers each call it runs under an owner and a key --
 * MCP: "mcp:CREDENTIAL-ID" and the JSON-RPC request id ("s:ID" for a
 * string, "i:N" for an integer); A2A: "a2a:EPISODE" and the task id --
 * with the cancel handle (supervisor.h, struct sup_cancel) it passes to
 * coord_call. A cancel names an owner and a key: only that owner's calls
 * are reached, so another session's request with the same id is never
 * cancelled (JSON-RPC ids repeat across clients). The list is short (at
 * most the call workers' number of entries per batch message) and one
 * mutex guards it; firing is one write(2). */
#include "daemon/route.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct dcall *list;
} C = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL };

int dcall_begin(struct dcall *c, const char *owner, const char *key, struct world_err *err)
{
	memset(c, 0, sizeof *c);
	snprintf(c->owner, sizeof c->owner, "%s", owner);
	snprintf(c->key, sizeof c->key, "%s", key);
	if (sup_cancel_init(&c->cancel, err) < 0) return -1;
	pthread_mutex_lock(&C.mu);
	c->next = C.list;
	C.list = c;
	pthread_mutex_unlock(&C.mu);
	return 0;
}

void dcall_end(struct dcall *c)
{
	pthread_mutex_lock(&C.mu);
	for (struct dcall **p = &C.list; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	pthread_cond_broadcast(&C.cv);
	pthread_mutex_unlock(&C.mu);
	sup_cancel_close(&c->cancel);
}

int dcall_fire(const char *owner, const char *key, const char *reason)
{
	int n = 0;
	pthread_mutex_lock(&C.mu);
	for (struct dcall *c = C.list; c; c = c->next)
		if (strcmp(c->owner, owner) == 0 && strcmp(c->key, key) == 0 && !c->fired) {
			c->fired = 1;
			snprintf(c->reason, sizeof c->reason, "%s", reason ? reason : "");
			sup_cancel_fire(&c->cancel);
			n++;
		}
	pthread_mutex_unlock(&C.mu);
	return n;
}

int dcall_wait_gone(const char *owner, const char *key, unsigned ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&C.mu);
	for (;;) {
		int there = 0;
		for (struct dcall *c = C.list; c && !there; c = c->next)
			there = strcmp(c->owner, owner) == 0 && strcmp(c->key, key) == 0;
		if (!there) break;
		if (pthread_cond_timedwait(&C.cv, &C.mu, &until) == ETIMEDOUT) {
			pthread_mutex_unlock(&C.mu);
			return -1;
		}
	}
	pthread_mutex_unlock(&C.mu);
	return 0;
}
