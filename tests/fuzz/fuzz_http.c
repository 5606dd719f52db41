/* tests/fuzz/fuzz_http.c: libFuzzer harness of the HTTP request path
 * through the daemon's route dispatch (daemon/server.c's dispatch, via
 * daemon_dispatch_for_test of daemon/route.h) into the real handlers of
 * /v1/... (the reads, replay), /mcp/, /a2a/ and /.well-known/..., against the
 * small real store of rpc_env.h (compiled in: server.c, workers.c, edge.c,
 * reads.c, mcp.c, a2a.c, replay_route.c, jschema.c; the rest from libworld.a).
 *
 * Input: a request line "METHOD TARGET" (TARGET = path, then "?" and query
 * arguments "k=v&k2", %XX and + decoded as libmicrohttpd does), then header
 * lines "Name: value" up to the first 0x00 (or the end), then the body.
 * Authorization: Bearer <the rpc_env credential> is added unless a header
 * line names Authorization ("Authorization:" with no value drops it).
 * What libmicrohttpd and the edge (Host/Origin, framing, body caps) refuse
 * before dispatch is not reached here; tests/daemon/edge.sh covers those.
 * Every answer must be a status in 100..499 with a content type on a body
 * (no input is a host failure), and nothing is committed (the log stays
 * empty: the descriptors' interpreter is not archived). */
#include "tests/fuzz/rpc_env.h"

#define HTTP_ITEMS_MAX 64

/* Decode %XX (and + as a space when plus) in place. */
static void pct_decode(char *s, int plus)
{
	char *o = s;
	for (char *p = s; *p; p++) {
		if (*p == '%' && p[1] && p[2]) {
			char hx[3] = { p[1], p[2], 0 }, *end;
			long v = strtol(hx, &end, 16);
			if (*end == 0 && v > 0) {
				*o++ = (char)v;
				p += 2;
				continue;
			}
		}
		*o++ = (plus && *p == '+') ? ' ' : *p;
	}
	*o = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rpc_env_init();
	const uint8_t *z = memchr(data, 0, size);
	size_t hl = z ? (size_t)(z - data) : size;
	char *head = malloc(hl + 1);
	if (!head) return 0;
	memcpy(head, data, hl);
	head[hl] = 0;
	const char *body = z ? (const char *)z + 1 : "";
	size_t blen = z ? size - hl - 1 : 0;
	char *b = malloc(blen + 1);
	if (!b) { free(head); return 0; }
	memcpy(b, body, blen);
	b[blen] = 0;

	struct dhdr h[HTTP_ITEMS_MAX + 1];
	size_t nh = 0;
	static char auth[] = "Authorization", bearer[] = "Bearer " RPC_CRED;
	int have_auth = 0;
	char *save = NULL;
	char *line = strtok_r(head, "\n", &save);
	char *method = (char *)"GET", *path = (char *)"/";
	if (line) {
		size_t ll = strlen(line);
		if (ll && line[ll - 1] == '\r') line[ll - 1] = 0;
		char *sp = strchr(line, ' ');
		if (sp) {
			*sp = 0;
			method = line;
			path = sp + 1;
			char *sp2 = strchr(path, ' '); /* a trailing " HTTP/1.1" */
			if (sp2) *sp2 = 0;
		} else {
			path = line;
		}
		char *q = strchr(path, '?');
		if (q) {
			*q++ = 0;
			char *as = NULL;
			for (char *a = strtok_r(q, "&", &as); a && nh < HTTP_ITEMS_MAX; a = strtok_r(NULL, "&", &as)) {
				char *eq = strchr(a, '=');
				if (eq) *eq++ = 0;
				pct_decode(a, 1);
				if (eq) pct_decode(eq, 1);
				h[nh++] = (struct dhdr){ 0, a, eq ? eq : (char *)"" };
			}
		}
		pct_decode(path, 0);
		for (line = strtok_r(NULL, "\n", &save); line && nh < HTTP_ITEMS_MAX; line = strtok_r(NULL, "\n", &save)) {
			size_t n = strlen(line);
			if (n && line[n - 1] == '\r') line[n - 1] = 0;
			char *c = strchr(line, ':');
			if (!c) continue;
			*c++ = 0;
			while (*c == ' ' || *c == '\t') c++;
			if (!strcasecmp(line, "Authorization")) have_auth = 1;
			if (!*c && !strcasecmp(line, "Authorization")) continue; /* "Authorization:" drops it */
			h[nh++] = (struct dhdr){ 1, line, c };
		}
	}
	if (!have_auth) h[nh++] = (struct dhdr){ 1, auth, bearer };
	struct dreq rq = { .d = &rpc_d, .hdrs = h, .nhdrs = nh, .method = method, .path = path, .body = b,
		           .body_len = blen };
	struct dresp r = { 0 };
	daemon_dispatch_for_test(&rq, &r);
	if (r.status < 100 || r.status > 599) __builtin_trap();
	if (r.status >= 500) {
		if (getenv("RPC_ENV_SHOW")) fprintf(stderr, "%d %.*s\n", r.status, (int)r.len, r.body ? r.body : "");
		__builtin_trap(); /* no input is a host failure */
	}
	if (r.body && !r.ctype) __builtin_trap();
	if (getenv("RPC_ENV_SHOW"))
		fprintf(stderr, "%s %s -> %d %.*s\n", method, path, r.status, (int)(r.len < 400 ? r.len : 400),
		        r.body ? r.body : "");
	free(r.body);
	free(b);
	free(head);
	long long last = 0;
	char lh[WORLD_REF_SIZE];
	struct world_err e = { 0, "" };
	if (world_log_last(rpc_d.writer, &last, lh, &e) == 0 && last != 0) __builtin_trap(); /* nothing ran */
	return 0;
}
