/* daemon/calls.c: the calls in flight that a cancel can reach (route.h,
 * struct dcall; docs/daemon.md, "Cancellation and progress"), and the
 * cancels of calls still waiting for a call worker (pending cancels).
 *
 * A projection registers each call it runs under an owner and a key --
 * MCP: "mcp:CREDENTIAL-ID" and the JSON-RPC request id ("s:ID" for a
 * string, "i:N" for an integer); A2A: "a2a:EPISODE" and the task id --
 * with the cancel handle (supervisor.h, struct sup_cancel) it passes to
 * coord_call. A cancel names an owner and a key: only that owner's calls
 * are reached, so another session's request with the same id is never
 * cancelled (JSON-RPC ids repeat across clients). The list is short (at
 * most the call workers' number of entries per batch message) and one
 * mutex guards it; firing is one write(2).
 *
 * Jobs and pending cancels. The server registers every request it hands
 * to the call workers as a job (struct djob: its owner, as above, read on
 * the HTTP thread, and a sequence number in arrival order) from the moment
 * it is queued until its route returned. A cancel that finds no call in
 * flight, while its owner has a job outstanding, is kept as a pending
 * cancel (owner, key, reason, and the sequence number the next job would
 * get): a call that registers later with that owner and key, from a job
 * that arrived before the cancel, takes it and starts with its handle
 * already fired (the coordinator then runs nothing: the journal says
 * cancelled, no entry). A pending cancel lives only while a job of its
 * owner that arrived before it is outstanding: when the last such job
 * ends it is dropped (no call of that id was waiting), so it never
 * reaches a request sent after it, nor another owner's. At most
 * PEND_MAX are kept; a new one over that drops the oldest, which is
 * logged. Nothing here touches the store; the lock is never held across
 * anything but these lists and one write(2). */
#include "daemon/http.h"
#include "daemon/route.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PEND_MAX 64

enum { P_FREE, P_PENDING, P_CONSUMED, P_DROPPED };

struct pend {
	int state;                       /* P_*: P_CONSUMED / P_DROPPED kept only while awaited */
	int awaited;                     /* a CancelTask waits for its outcome (dcall_pend_wait) */
	unsigned long long id;           /* 1, 2, ... in the order they were made */
	unsigned long long before;       /* reaches jobs with a lower sequence number only */
	unsigned long long self;         /* the canceller's own job (0 = none): never reached */
	char owner[80], key[300], reason[200];
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct dcall *list;
	struct djob *jobs;
	unsigned long long next_job, next_pend;
	struct pend pend[PEND_MAX];
} C = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 1, 1, { { 0 } } };

static void log_key(char *out, size_t n, const char *key)
{
	snprintf(out, n, "%s", key);
	for (char *q = out; *q; q++)
		if (*q < 0x20 || *q > 0x7e) *q = '?';
}

/* A pending cancel is resolved: kept for its waiter, else its slot freed. */
static void pend_resolve(struct pend *p, int state)
{
	p->state = p->awaited ? state : P_FREE;
	pthread_cond_broadcast(&C.cv);
}

/* Does a job of owner that p may reach (arrived before it, not its
 * canceller's) still wait or run? Call with C.mu held. */
static int pend_live(const struct pend *p)
{
	for (const struct djob *j = C.jobs; j; j = j->next)
		if (j->seq < p->before && j->seq != p->self && strcmp(j->owner, p->owner) == 0) return 1;
	return 0;
}

void dcall_job_begin(struct djob *j, const char *owner)
{
	snprintf(j->owner, sizeof j->owner, "%s", owner ? owner : "");
	pthread_mutex_lock(&C.mu);
	j->seq = C.next_job++;
	j->next = C.jobs;
	C.jobs = j;
	pthread_mutex_unlock(&C.mu);
}

void dcall_job_end(struct djob *j)
{
	pthread_mutex_lock(&C.mu);
	for (struct djob **p = &C.jobs; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			break;
		}
	/* the pending cancels no outstanding job can take any more */
	for (int i = 0; i < PEND_MAX; i++) {
		struct pend *p = &C.pend[i];
		if (p->state != P_PENDING || strcmp(p->owner, j->owner) != 0 || pend_live(p)) continue;
		char k[300];
		log_key(k, sizeof k, p->key);
		dlog("cancel key=%.100s: no call with that id waited for a worker; the cancel is dropped", k);
		pend_resolve(p, P_DROPPED);
	}
	pthread_mutex_unlock(&C.mu);
}

int dcall_begin(struct dcall *c, const char *owner, const char *key, unsigned long long job, struct world_err *err)
{
	memset(c, 0, sizeof *c);
	snprintf(c->owner, sizeof c->owner, "%s", owner);
	snprintf(c->key, sizeof c->key, "%s", key);
	if (sup_cancel_init(&c->cancel, err) < 0) return -1;
	int pended = 0;
	pthread_mutex_lock(&C.mu);
	/* a cancel that came while this call waited for a worker: the oldest */
	struct pend *hit = NULL;
	for (int i = 0; job && i < PEND_MAX; i++) {
		struct pend *p = &C.pend[i];
		if (p->state == P_PENDING && job < p->before && job != p->self && strcmp(p->owner, c->owner) == 0 &&
		    strcmp(p->key, c->key) == 0 && (!hit || p->id < hit->id))
			hit = p;
	}
	if (hit) {
		c->fired = 1;
		snprintf(c->reason, sizeof c->reason, "%s", hit->reason);
		sup_cancel_fire(&c->cancel);
		pend_resolve(hit, P_CONSUMED);
		pended = 1;
	}
	c->next = C.list;
	C.list = c;
	pthread_mutex_unlock(&C.mu);
	return pended;
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

int dcall_cancel(const char *owner, const char *key, const char *reason, unsigned long long self, int await,
                 unsigned long long *pend)
{
	int n = 0;
	if (pend) *pend = 0;
	pthread_mutex_lock(&C.mu);
	for (struct dcall *c = C.list; c; c = c->next)
		if (strcmp(c->owner, owner) == 0 && strcmp(c->key, key) == 0 && !c->fired) {
			c->fired = 1;
			snprintf(c->reason, sizeof c->reason, "%s", reason ? reason : "");
			sup_cancel_fire(&c->cancel);
			n++;
		}
	struct pend probe = { .before = C.next_job, .self = self };
	snprintf(probe.owner, sizeof probe.owner, "%s", owner);
	if (n == 0 && pend && pend_live(&probe)) {
		/* a free slot, else the oldest resolved one nobody collected, else the oldest */
		struct pend *slot = NULL, *done = NULL, *old = NULL;
		for (int i = 0; i < PEND_MAX && !slot; i++) {
			struct pend *p = &C.pend[i];
			if (p->state == P_FREE) slot = p;
			else if (p->state != P_PENDING) { if (!done || p->id < done->id) done = p; }
			else if (!old || p->id < old->id) old = p;
		}
		if (!slot) slot = done;
		if (!slot) {
			slot = old;
			char k[300];
			log_key(k, sizeof k, old->key);
			dlog("cancel key=%.100s: %d cancels of queued calls are kept already; this oldest one is dropped (its call, "
			     "if it still waits, will run)", k, PEND_MAX);
			pthread_cond_broadcast(&C.cv); /* its waiter, if any, finds it gone */
		}
		memset(slot, 0, sizeof *slot);
		*slot = probe;
		slot->state = P_PENDING;
		slot->awaited = await;
		slot->id = C.next_pend++;
		snprintf(slot->key, sizeof slot->key, "%s", key);
		snprintf(slot->reason, sizeof slot->reason, "%s", reason ? reason : "");
		*pend = slot->id;
	}
	pthread_mutex_unlock(&C.mu);
	return n;
}

int dcall_fire(const char *owner, const char *key, const char *reason)
{
	return dcall_cancel(owner, key, reason, 0, 0, NULL);
}

static int registered(const char *owner, const char *key)
{
	for (struct dcall *c = C.list; c; c = c->next)
		if (strcmp(c->owner, owner) == 0 && strcmp(c->key, key) == 0) return 1;
	return 0;
}

static void deadline(struct timespec *until, unsigned ms)
{
	clock_gettime(CLOCK_REALTIME, until);
	until->tv_sec += ms / 1000;
	until->tv_nsec += (long)(ms % 1000) * 1000000L;
	until->tv_sec += until->tv_nsec / 1000000000L;
	until->tv_nsec %= 1000000000L;
}

void dcall_set_context(struct dcall *c, const char *context)
{
	pthread_mutex_lock(&C.mu);
	snprintf(c->context, sizeof c->context, "%s", context);
	pthread_mutex_unlock(&C.mu);
}

int dcall_lookup(const char *owner, const char *key, char *context, size_t n)
{
	int found = 0;
	pthread_mutex_lock(&C.mu);
	for (struct dcall *c = C.list; c && !found; c = c->next)
		if (strcmp(c->owner, owner) == 0 && strcmp(c->key, key) == 0) {
			found = 1;
			if (n) snprintf(context, n, "%s", c->context);
		}
	pthread_mutex_unlock(&C.mu);
	return found;
}

int dcall_wait_gone(const char *owner, const char *key, unsigned ms)
{
	struct timespec until;
	deadline(&until, ms);
	pthread_mutex_lock(&C.mu);
	while (registered(owner, key))
		if (pthread_cond_timedwait(&C.cv, &C.mu, &until) == ETIMEDOUT) {
			pthread_mutex_unlock(&C.mu);
			return -1;
		}
	pthread_mutex_unlock(&C.mu);
	return 0;
}

int dcall_pend_wait(unsigned long long id, unsigned ms)
{
	struct timespec until;
	deadline(&until, ms);
	pthread_mutex_lock(&C.mu);
	int out = -1;
	for (;;) {
		struct pend *p = NULL;
		for (int i = 0; i < PEND_MAX && !p; i++)
			if (C.pend[i].state != P_FREE && C.pend[i].id == id) p = &C.pend[i];
		if (!p) { out = 0; break; } /* dropped for room: its slot went to another */
		if (p->state == P_DROPPED) { p->state = P_FREE; out = 0; break; }
		if (p->state == P_CONSUMED && !registered(p->owner, p->key)) { p->state = P_FREE; out = 1; break; }
		if (pthread_cond_timedwait(&C.cv, &C.mu, &until) == ETIMEDOUT) {
			/* nobody collects it now: a pending one is freed when it is
			 * resolved; a consumed one's call has not ended yet */
			if (p->state == P_PENDING) p->awaited = 0;
			else p->state = P_FREE;
			break;
		}
	}
	pthread_mutex_unlock(&C.mu);
	return out;
}
