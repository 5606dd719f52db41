/* tests/fuzz/rpc_env.h: the small real daemon context the JSON-RPC
 * harnesses (fuzz_mcp.c, fuzz_a2a.c) dispatch into: a store made once in a
 * temporary directory with a session (credential 11..1, episode "fz", a
 * Secret.Read=vault:5 grant), a transition registry of two descriptors
 * (tools.echo open to every session with an input schema of several
 * keywords; tests.secret behind Secret.Read=vault) and a coordinator with
 * no tool interpreter. The descriptors name an interpreter that is NOT
 * archived, so a call that passes every check before execution (skill,
 * visibility, arguments against the input schema, quota) stops at the
 * interpreter lookup: no capsule is ever spawned, and the store is not
 * written by any input (rpc_env_check asserts the log stays empty).
 *
 * Input: the bytes before the first 0x00, when there is one, are header
 * lines "Name: value" (one per line, replacing the default of that name;
 * "Name:" with no value drops it); the rest is the body. Defaults:
 * Authorization: Bearer <the credential>, Content-Type: application/json,
 * Accept: application/json, text/event-stream. RPC_ENV_SHOW=1 in the
 * environment prints each answer's status and body start on stderr. */
#ifndef WORLD_FUZZ_RPC_ENV_H
#define WORLD_FUZZ_RPC_ENV_H
#include "coordinator/coordinator.h"
#include "coordinator/registry.h"
#include "daemon/http.h"
#include "daemon/route.h"
#include "common/canon.h"
#include "store/store.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RPC_CRED "1111111111111111111111111111111111111111111111111111111111111111"
#define RPC_HDRS_MAX 32

static struct dctx rpc_d;

static void rpc_die(const char *what, const struct world_err *e)
{
	fprintf(stderr, "rpc_env: %s: %s\n", what, e ? e->msg : "");
	abort();
}

static void rpc_env_init(void)
{
	if (rpc_d.coord) return;
	static char dir[] = "/tmp/world-fuzz-rpc.XXXXXX";
	if (!mkdtemp(dir)) rpc_die("mkdtemp", NULL);
	struct world_err e = { 0, "" };
	snprintf(rpc_d.db_path, sizeof rpc_d.db_path, "%s/db", dir);
	if (world_store_open(rpc_d.db_path, WORLD_STORE_WRITER, &rpc_d.writer, &e) < 0) rpc_die("store", &e);
	if (world_session_put(rpc_d.writer, RPC_CRED, "fz", "[{\"budget\":5,\"effect\":\"Secret.Read\",\"scope\":\"vault\"}]",
	                      (long long)time(NULL) + 86400 * 365, &e) < 0)
		rpc_die("session", &e);
	static const char src[] = "module echo\nexport func main(input: string) -> string { input }\n";
	char fn[WORLD_REF_SIZE], reg[WORLD_REF_SIZE];
	int created;
	long long rev;
	if (world_object_put(rpc_d.writer, "world/transition-source/v1", "fuzz", src, sizeof src - 1, fn, &created, &e) < 0)
		rpc_die("source", &e);
	const char *interp = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
	json_t *in = json_loads("{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\",\"maxLength\":8,"
	                        "\"enum\":[\"a\",\"bb\"]},\"n\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":9},"
	                        "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"boolean\"},\"maxItems\":3}},"
	                        "\"required\":[\"x\"],\"additionalProperties\":false}", 0, NULL);
	json_t *v = json_pack("{s:n,s:i,s:[{s:n,s:[],s:s,s:s,s:o,s:s,s:{s:s},s:i,s:s,s:s},"
	                      "{s:{s:i,s:s,s:s},s:[{s:i,s:s,s:s}],s:s,s:s,s:{s:s},s:s,s:{s:s},s:i,s:s,s:s}]}",
	                      "parent", "revision", 1, "transitions",
	                      "access", "declaredEffects", "description", "echoes", "id", "tools.echo", "inputSchema", in,
	                      "interpreter", interp, "outputSchema", "type", "object", "semanticsEpoch", 1, "title", "Echo",
	                      "transitionFn", fn,
	                      "access", "cost", 1, "effect", "Secret.Read", "scope", "vault", "declaredEffects", "cost", 1,
	                      "effect", "Secret.Read", "scope", "vault", "description", "reads a secret", "id",
	                      "tests.secret", "inputSchema", "type", "object", "interpreter", interp, "outputSchema", "type",
	                      "object", "semanticsEpoch", 1, "title", "Secret", "transitionFn", fn);
	if (!v) rpc_die("registry json", NULL);
	if (world_object_put_json(rpc_d.writer, REGISTRY_TRANSITIONS, "fuzz", v, reg, &e) < 0 ||
	    world_registry_head_cas(rpc_d.writer, REGISTRY_TRANSITIONS, NULL, reg, &rev, &e) < 0)
		rpc_die("registry", &e);
	json_decref(v);
	pthread_mutex_init(&rpc_d.pool_mu, NULL);
	snprintf(rpc_d.base_url, sizeof rpc_d.base_url, "http://127.0.0.1:1");
	snprintf(rpc_d.interp_ref, sizeof rpc_d.interp_ref, "%s", interp);
	snprintf(rpc_d.interp_version, sizeof rpc_d.interp_version, "AILANG-lite v0.1.0");
	struct coord_config cc = { .store = rpc_d.writer, .written_by = "fuzz" };
	sup_limits_default(&cc.limits);
	rpc_d.coord = coord_new(&cc, &e);
	if (!rpc_d.coord) rpc_die("coordinator", &e);
}

/* Splits data into headers and body and dispatches through handle. */
static void rpc_env_run(const uint8_t *data, size_t size, const char *path,
                        void (*handle)(struct dreq *, struct dresp *))
{
	rpc_env_init();
	struct dhdr h[RPC_HDRS_MAX];
	size_t nh = 0;
	static char auth[] = "Authorization", bearer[] = "Bearer " RPC_CRED, ct[] = "Content-Type",
	            json[] = "application/json", acc[] = "Accept", both[] = "application/json, text/event-stream";
	const uint8_t *z = memchr(data, 0, size);
	char *hcopy = NULL;
	const char *body = (const char *)data;
	size_t blen = size;
	int have_auth = 0, have_ct = 0, have_acc = 0;
	if (z) {
		size_t hl = (size_t)(z - data);
		hcopy = malloc(hl + 1);
		if (!hcopy) return;
		memcpy(hcopy, data, hl);
		hcopy[hl] = 0;
		body = (const char *)z + 1;
		blen = size - hl - 1;
		for (char *line = strtok(hcopy, "\n"); line && nh < RPC_HDRS_MAX - 3; line = strtok(NULL, "\n")) {
			char *c = strchr(line, ':');
			if (!c) continue;
			*c++ = 0;
			while (*c == ' ') c++;
			if (!strcasecmp(line, "Authorization")) have_auth = 1;
			if (!strcasecmp(line, "Content-Type")) have_ct = 1;
			if (!strcasecmp(line, "Accept")) have_acc = 1;
			if (!*c) continue; /* "Name:" drops it */
			h[nh++] = (struct dhdr){ 1, line, c };
		}
	}
	if (!have_auth) h[nh++] = (struct dhdr){ 1, auth, bearer };
	if (!have_ct) h[nh++] = (struct dhdr){ 1, ct, json };
	if (!have_acc) h[nh++] = (struct dhdr){ 1, acc, both };
	char *b = malloc(blen + 1); /* NUL-terminated, as the server hands it over */
	if (!b) { free(hcopy); return; }
	memcpy(b, body, blen);
	b[blen] = 0;
	struct dreq rq = { .d = &rpc_d, .hdrs = h, .nhdrs = nh, .method = "POST", .path = path, .body = b,
		           .body_len = blen };
	struct dresp r = { 0 };
	handle(&rq, &r);
	if (r.status < 100 || r.status > 599) __builtin_trap();
	if (r.status >= 500) __builtin_trap(); /* no input is a host failure */
	if (r.body && !r.ctype) __builtin_trap();
	if (getenv("RPC_ENV_SHOW")) fprintf(stderr, "%d %.*s\n", r.status, (int)(r.len < 400 ? r.len : 400), r.body ? r.body : "");
	free(r.body);
	free(b);
	free(hcopy);
	long long last = 0;
	char lh[WORLD_REF_SIZE];
	struct world_err e = { 0, "" };
	if (world_log_last(rpc_d.writer, &last, lh, &e) == 0 && last != 0) __builtin_trap(); /* nothing ran */
}
#endif
