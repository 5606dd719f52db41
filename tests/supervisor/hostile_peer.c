/* tests/supervisor/hostile_peer.c: a hostile interpreter for the escape
 * suite (docs/escape-suite.md, "hostile interpreter"). Static and
 * unsanitized like ailang-lite: it is pinned (sealed memfd) and run inside
 * real capsules.
 *
 * The pinned interpreter never holds the frame fds: the agent runs it with
 * stdin at end of stream and frames its stdout. To send frames at all, a
 * hostile program needs a compromised agent. tests/supervisor/test_hostile.c
 * installs one (sup_set_agent, the supervisor's test hook) that starts this
 * program through the launcher's own spawn_interp with the capsule's frame
 * fds as its stdin and stdout: `hostile host/capsule/main.ail`. It then
 * reads the supervisor's `start` frame on fd 0 and writes what the first
 * word of the source file (the scenario) says on fd 1: cut, oversized,
 * interleaved and out-of-order frames, plans breaking each plan law, floods
 * of frames and effects, stalls mid-frame.
 *
 * Run by the real agent (`run ... host/capsule/main.ail`), it is a
 * well-behaved interpreter, so the same supervisor's next call can show it
 * keeps serving: `ok` prints {"served":true}; `effect` prints a valid plan
 * in the plan phase and {"finished":true} in the finish phase. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define FRAME_CAP 2162688u /* supervisor/frame.h FRAME_MAX */
#define GOOD_PLAN "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\"," \
                  "\"scope\":\"s\",\"cost\":1,\"payload\":{\"x\":1}}],\"finish\":true,\"result\":null}"

static char *slurp(const char *path, size_t *lenp)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) return NULL;
	size_t cap = 4096, len = 0;
	char *b = malloc(cap);
	if (!b) _exit(90);
	for (;;) {
		if (len + 1 >= cap) {
			b = realloc(b, cap *= 2);
			if (!b) _exit(90);
		}
		ssize_t n = read(fd, b + len, cap - len - 1);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) break;
		len += (size_t)n;
	}
	close(fd);
	b[len] = '\0';
	if (lenp) *lenp = len;
	return b;
}

static void put(const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(1, c, n);
		if (w < 0 && errno == EINTR) continue;
		if (w < 0) _exit(3); /* the supervisor closed its end: killed soon */
		c += w;
		n -= (size_t)w;
	}
}

static void hdr(uint32_t n)
{
	unsigned char h[4] = { (unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8),
	                       (unsigned char)n };
	put(h, 4);
}

static void frame(const char *json)
{
	hdr((uint32_t)strlen(json));
	put(json, strlen(json));
}

/* A frame {"type":TYPE,MEMBER:TEXT} with TEXT as a JSON string. */
static void frame_str(const char *type, const char *member, const char *text)
{
	size_t n = strlen(text);
	char *b = malloc(2 * n + 128);
	if (!b) _exit(90);
	size_t k = (size_t)sprintf(b, "{\"type\":\"%s\",\"%s\":\"", type, member);
	for (size_t i = 0; i < n; i++) {
		if (text[i] == '"' || text[i] == '\\') b[k++] = '\\';
		b[k++] = text[i];
	}
	b[k++] = '"';
	b[k++] = '}';
	b[k] = '\0';
	frame(b);
	free(b);
}

/* Read one frame from fd 0 (the supervisor's start or results); 0 at EOF. */
static int read_frame(void)
{
	unsigned char h[4];
	size_t have = 0;
	while (have < 4) {
		ssize_t n = read(0, h + have, 4 - have);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) return 0;
		have += (size_t)n;
	}
	size_t len = ((size_t)h[0] << 24) | ((size_t)h[1] << 16) | ((size_t)h[2] << 8) | h[3];
	char buf[4096];
	while (len > 0) {
		ssize_t n = read(0, buf, len < sizeof buf ? len : sizeof buf);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) return 0;
		len -= (size_t)n;
	}
	return 1;
}

static void stall(void)
{
	for (;;) pause(); /* until the supervisor's deadline kills the capsule */
}

static void send_plan(const char *plan_text) { frame_str("plan", "plan", plan_text); }

static int hostile(const char *scenario)
{
	if (!read_frame()) return 4; /* start */
	const char *s = scenario;
	/* Well-behaved over the frames (the coordinator- and daemon-level tests
	 * run every call of a supervisor through the hostile agent). */
	if (!strcmp(s, "ok")) { frame("{\"type\":\"output\",\"output\":\"{\\\"served\\\":true}\"}"); return 0; }
	if (!strcmp(s, "effect")) {
		send_plan(GOOD_PLAN);
		if (!read_frame()) return 5; /* results */
		frame("{\"type\":\"output\",\"output\":\"{\\\"finished\\\":true}\"}");
		return 0;
	}
	if (!strcmp(s, "cut-header")) {
		put("\0\0", 2);
		return 0;
	}
	if (!strcmp(s, "cut-body")) {
		hdr(100);
		put("{\"type\":\"o", 10);
		return 0;
	}
	if (!strcmp(s, "over-cap")) { hdr(FRAME_CAP + 1); put("{\"", 2); stall(); }
	if (!strcmp(s, "huge-prefix")) { hdr(0xffffffffu); stall(); }
	if (!strcmp(s, "zero-prefix")) { hdr(0); stall(); }
	if (!strcmp(s, "unknown-type")) { frame("{\"type\":\"hello\"}"); stall(); }
	if (!strcmp(s, "no-type")) { frame("{\"output\":\"{}\"}"); stall(); }
	if (!strcmp(s, "dup-type")) { frame("{\"type\":\"output\",\"type\":\"plan\",\"output\":\"{}\"}"); stall(); }
	if (!strcmp(s, "bad-utf8")) { frame("{\"type\":\"output\",\"output\":\"\xff\"}"); stall(); }
	if (!strcmp(s, "not-json")) { frame("this is not JSON"); stall(); }
	if (!strcmp(s, "extra-member")) { frame("{\"type\":\"output\",\"output\":\"{}\",\"note\":1}"); stall(); }
	if (!strcmp(s, "forged-class")) { frame("{\"type\":\"error\",\"class\":\"root\",\"detail\":\"x\"}"); stall(); }
	if (!strcmp(s, "plan-in-pure")) { send_plan(GOOD_PLAN); stall(); }
	if (!strcmp(s, "results-from-capsule")) { frame("{\"type\":\"results\",\"input\":\"{}\"}"); stall(); }
	if (!strcmp(s, "start-from-capsule")) { frame("{\"type\":\"start\",\"v\":1,\"mode\":\"pure\"}"); stall(); }
	if (!strcmp(s, "output-not-object")) { frame("{\"type\":\"output\",\"output\":\"[1,2]\"}"); stall(); }
	if (!strcmp(s, "output-over-cap")) {
		size_t n = ((size_t)1 << 20) + 1;
		char *big = malloc(n + 16);
		if (!big) return 90;
		memcpy(big, "{\"x\":\"", 6);
		memset(big + 6, 'a', n - 8);
		memcpy(big + n - 2, "\"}", 3);
		frame_str("output", "output", big);
		stall();
	}
	if (!strcmp(s, "two-outputs")) {
		frame("{\"type\":\"output\",\"output\":\"{}\"}");
		frame("{\"type\":\"output\",\"output\":\"{\\\"again\\\":1}\"}");
		stall();
	}
	if (!strcmp(s, "flood-frames")) for (;;) frame("{\"type\":\"output\",\"output\":\"{}\"}");
	if (!strcmp(s, "interleaved")) {
		/* Frame A's prefix and first bytes, all of frame B, then A's rest:
		 * two writers racing on one pipe. */
		const char *a = "{\"type\":\"output\",\"output\":\"{\\\"a\\\":1}\"}";
		hdr((uint32_t)strlen(a));
		put(a, 10);
		frame("{\"type\":\"output\",\"output\":\"{}\"}");
		put(a + 10, strlen(a) - 10);
		stall();
	}
	if (!strcmp(s, "stall-header")) { put("\0\0", 2); stall(); }
	if (!strcmp(s, "stall-body")) { hdr(100); put("{\"type\":\"out", 12); stall(); }
	if (!strcmp(s, "stall-silent")) stall();
	/* Effectful runs. */
	if (!strcmp(s, "output-before-plan")) { frame("{\"type\":\"output\",\"output\":\"{}\"}"); stall(); }
	if (!strcmp(s, "checked-in-effectful")) { frame("{\"type\":\"checked\",\"exit\":0,\"stdout\":\"\"}"); stall(); }
	if (!strcmp(s, "two-plans")) { send_plan(GOOD_PLAN); send_plan(GOOD_PLAN); stall(); }
	if (!strcmp(s, "flood-plans")) for (;;) send_plan(GOOD_PLAN);
	if (!strcmp(s, "plan-not-object")) { send_plan("[\"effects\"]"); stall(); }
	if (!strcmp(s, "plan-over-cap")) {
		size_t n = ((size_t)1 << 20) + 1;
		char *big = malloc(n + 16);
		if (!big) return 90;
		memcpy(big, "{\"x\":\"", 6);
		memset(big + 6, 'a', n - 8);
		memcpy(big + n - 2, "\"}", 3);
		send_plan(big);
		stall();
	}
	if (!strcmp(s, "garbage-between")) {
		send_plan(GOOD_PLAN);
		if (!read_frame()) return 5; /* results */
		put("GARBAGE!", 8);
		frame("{\"type\":\"output\",\"output\":\"{}\"}");
		stall();
	}
	if (!strcmp(s, "stall-finish")) {
		send_plan(GOOD_PLAN);
		if (!read_frame()) return 5;
		hdr(64);
		put("{\"type\":\"output\"", 16);
		stall();
	}
	/* Plans that break each law of broker/plan.c. */
	static const struct { const char *name, *plan; } laws[] = {
		{ "law-shape", "{\"plan\":\"world/effect-plan/v2\",\"effects\":[],\"finish\":false,\"result\":{}}" },
		{ "law-effect-shape", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\","
		                      "\"scope\":\"s\",\"cost\":1,\"payload\":{},\"extra\":1}],\"finish\":true,\"result\":null}" },
		{ "law-effect-id", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"E_1!\",\"effect\":\"Test.Echo\","
		                   "\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":true,\"result\":null}" },
		{ "law-declared", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Net.Fetch\","
		                  "\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":true,\"result\":null}" },
		{ "law-payload", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\","
		                 "\"scope\":\"s\",\"cost\":1,\"payload\":[1]}],\"finish\":true,\"result\":null}" },
		{ "law-no-world", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\","
		                  "\"scope\":\"s\",\"cost\":1,\"payload\":{\"world\":{}}}],\"finish\":true,\"result\":null}" },
		{ "law-result", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"finish\":false,\"result\":null}" },
		{ "law-finish", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"finish\":true,\"result\":{}}" },
	};
	for (size_t i = 0; i < sizeof laws / sizeof laws[0]; i++)
		if (!strcmp(s, laws[i].name)) {
			send_plan(laws[i].plan);
			stall();
		}
	if (!strcmp(s, "law-one-effect")) {
		/* A flood of effects in one plan: 2000 of them (about 150 KiB). */
		size_t cap = 256 * 1024, k = 0;
		char *p = malloc(cap);
		if (!p) return 90;
		k += (size_t)sprintf(p, "{\"plan\":\"world/effect-plan/v1\",\"effects\":[");
		for (int i = 0; i < 2000; i++)
			k += (size_t)sprintf(p + k, "%s{\"id\":\"e%d\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":{}}",
			                     i ? "," : "", i);
		sprintf(p + k, "],\"finish\":true,\"result\":null}");
		send_plan(p);
		stall();
	}
	fprintf(stderr, "hostile-peer: unknown scenario '%s'\n", s);
	return 2;
}

int main(int argc, char **argv)
{
	/* What test_hostile's process probe looks for; run by the hook agent of
	 * WORLD_TEST_AGENT (the coordinator and daemon tests), another name, so
	 * those tests running beside it do not trip its probe. */
	prctl(PR_SET_NAME, argc > 1 && strcmp(argv[1], "hostile-hook") == 0 ? "hostilehook" : "hostilepeer");
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		puts("HOSTILE-peer v0.0.1 (test double, not AILANG)");
		return 0;
	}
	if (argc < 3) return 2;
	char *src = slurp(argv[argc - 1], NULL);
	if (!src) {
		fprintf(stderr, "Error: cannot read %s\n", argv[argc - 1]);
		return 1;
	}
	char word[64] = "";
	if (sscanf(src, "%63s", word) != 1) return 2;
	if (strcmp(argv[1], "hostile") == 0 || strcmp(argv[1], "hostile-hook") == 0) return hostile(word);
	if (strcmp(argv[1], "run") != 0) return 2;
	char *args = slurp("args.json", NULL);
	if (!args) return 1;
	int plan = strstr(args, "\\\"phase\\\":\\\"plan\\\"") != NULL;
	if (strcmp(word, "ok") == 0) {
		puts("{\"served\":true}");
	} else if (strcmp(word, "effect") == 0) {
		puts(plan ? GOOD_PLAN : "{\"finished\":true}");
	} else {
		fprintf(stderr, "Error: hostile-peer: '%s' needs the hostile agent\n", word);
		return 1;
	}
	return 0;
}
