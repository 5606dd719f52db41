/* daemon/a2a_push.h: A2A push notifications (docs/daemon.md, "A2A", "Push
 * notifications"). Owns: the operator's webhook allowlist
 * (--a2a-webhook-allow PREFIX; none = every webhook refused), the tasks'
 * push-notification configs (in memory, keyed by episode and task, at most
 * A2A_PUSH_PER_TASK per task and A2A_PUSH_MAX in all), and their delivery:
 * every task update is queued (at most A2A_PUSH_QUEUE events) and one
 * delivery thread POSTs it to each config's webhook over plain HTTP/1.1
 * with bounded connect, send and answer times; a call worker never waits
 * for a webhook. */
#ifndef WORLD_DAEMON_A2A_PUSH_H
#define WORLD_DAEMON_A2A_PUSH_H
#include <jansson.h>
#include <stddef.h>

#define A2A_PUSH_ALLOW_MAX 16
#define A2A_PUSH_PER_TASK 8
#define A2A_PUSH_MAX 1024
#define A2A_PUSH_QUEUE 256

/* Adds an allowlist prefix (an http:// URL whose host is an IP address or
 * localhost): 0, or -1 and why. */
int a2a_push_allow(const char *prefix, char *why, size_t wn);

struct a2a_push_cfg {
	char id[129];
	char url[1024];
	char token[513];
	char scheme[65];
	char cred[1025];
};

/* Reads a config object (1.0: {id?,url,token?,authentication?:{scheme,
 * credentials}}; v03: authentication {schemes:[S],credentials}) and checks
 * its URL against the allowlist and its values for header safety: 0, or
 * -1 and why (the caller answers -32602). */
int a2a_push_parse(const json_t *o, int v03, struct a2a_push_cfg *c, char *why, size_t wn);

/* Stores c for the task (a fresh id when c->id is empty; the same id
 * replaces). still (may be NULL), called under the configs' lock, says
 * whether the task can still change; 0 stored, 1 not (still said no), -1
 * and why (too many). */
int a2a_push_put(const char *episode, const char *task, struct a2a_push_cfg *c, int (*still)(void *), void *ctx,
                 char *why, size_t wn);
/* One config (id NULL or "": the first): 0 found, -1 none. */
int a2a_push_get(const char *episode, const char *task, const char *id, struct a2a_push_cfg *out);
/* The task's configs as a JSON array of the 1.0 (or v03) form. */
json_t *a2a_push_list(const char *episode, const char *task, int v03);
/* How many configs the task has. */
int a2a_push_count(const char *episode, const char *task);
/* Removes one (1) or none (0). */
int a2a_push_del(const char *episode, const char *task, const char *id);
/* A config in the 1.0 form {taskId,id,url,token?,authentication?} or the
 * 0.3 form {taskId,pushNotificationConfig:{...}}. */
json_t *a2a_push_json(const char *task, const struct a2a_push_cfg *c, int v03);

/* Queues event (a StreamResponse; taken) for every config of the task. */
void a2a_push_event(const char *episode, const char *task, int v03, json_t *event);

#endif
