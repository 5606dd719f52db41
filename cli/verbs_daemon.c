/* cli/verbs_daemon.c: the worldd verb of daemon/ (see cli/verbs.h):
 * `serve`. Only argument parsing lives here; daemon/server.c runs it. */
#include "cli/verbs.h"
#include "daemon/server.h"
#include "daemon/a2a_push.h"
#include "cli/serve_exec.h"
#include "cli/store_uri.h"
#include "store/home.h"
#include "broker/exec_profile.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int serve_run(int argc, char **argv)
{
#ifdef WORLDD_SERVE_EXEC
	/* The worldd program links no daemon: worldd-serve runs it. */
	return worldd_exec_serve(argc, argv);
#endif
	const char *verb = "serve";
	struct daemon_config cfg = { 0 };
	/* taken out of argv by worldd's dispatch (cli/store_uri.h) */
	cfg.store_password_file = worldd_store_password_file();
	const char *origins[16];
	cfg.allow_origins = origins;
	const char *exec_profiles[64], *exec_maps[256];
	cfg.exec_profiles = exec_profiles;
	cfg.exec_episode_projects = exec_maps;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--open-reads") == 0) { cfg.open_reads = 1; continue; }
		if (strcmp(a, "--require-cgroups") == 0) { cfg.require_cgroups = 1; continue; }
		const char *v = NULL;
		size_t nl = strcspn(a, "=");
		if (a[nl] == '=') v = a + nl + 1;
		else if (i + 1 < argc) v = argv[++i];
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)(nl < 63 ? nl : 63), a);
		if (!v) return worldd_usage(verb, "flag %s needs a value", name);
		const char **slot = NULL;
		if (strcmp(name, "--store") == 0) slot = &cfg.store_path;
		else if (strcmp(name, "--ailang-bin") == 0) slot = &cfg.ailang_bin;
		else if (strcmp(name, "--listen") == 0) slot = &cfg.listen;
		else if (strcmp(name, "--workspace-root") == 0) slot = &cfg.workspace_root;
		else if (strcmp(name, "--tool-ailang-bin") == 0) slot = &cfg.tool_ailang_bin;
		else if (strcmp(name, "--examples-dir") == 0) slot = &cfg.examples_dir;
		else if (strcmp(name, "--log-key") == 0) slot = &cfg.log_key;
		else if (strcmp(name, "--host-id") == 0) slot = &cfg.host_id;
		else if (strcmp(name, "--advertise-url") == 0) slot = &cfg.advertise_url;
		else if (strcmp(name, "--home-lease") == 0) {
			char *end;
			errno = 0;
			long long n = strtoll(v, &end, 10);
			if (!*v || *end || errno || n < 2 || n > 86400)
				return worldd_usage(verb, "--home-lease needs a number of seconds 2-86400, got '%s'", v);
			if (cfg.home_lease_s) return worldd_usage(verb, "flag --home-lease given twice");
			cfg.home_lease_s = n;
			continue;
		}
		else if (strcmp(name, "--capacity") == 0 || strcmp(name, "--session-share") == 0) {
			unsigned *num = name[2] == 'c' ? &cfg.capacity : &cfg.session_share;
			char *end;
			errno = 0;
			long n = strtol(v, &end, 10);
			if (!*v || *end || errno || n < 1 || n > 256)
				return worldd_usage(verb, "%s needs a number 1-256, got '%s'", name, v);
			if (*num) return worldd_usage(verb, "flag %s given twice", name);
			*num = (unsigned)n;
			continue;
		} else if (strcmp(name, "--episode-calls") == 0 || strcmp(name, "--episode-bytes") == 0) {
			long long *num = name[10] == 'c' ? &cfg.episode_calls_max : &cfg.episode_bytes_max;
			char *end;
			errno = 0;
			long long n = strtoll(v, &end, 10);
			if (!*v || *end || errno || n < -1 || n == 0)
				return worldd_usage(verb, "%s needs a positive number or -1 (no limit), got '%s'", name, v);
			if (*num) return worldd_usage(verb, "flag %s given twice", name);
			*num = n;
			continue;
		} else if (strcmp(name, "--exec-profile") == 0) {
			if (cfg.n_exec_profiles == sizeof exec_profiles / sizeof exec_profiles[0])
				return worldd_usage(verb, "--exec-profile given more than %zu times", sizeof exec_profiles / sizeof exec_profiles[0]);
			exec_profiles[cfg.n_exec_profiles++] = v;
			continue;
		} else if (strcmp(name, "--exec-episode-project") == 0) {
			if (cfg.n_exec_episode_projects == sizeof exec_maps / sizeof exec_maps[0])
				return worldd_usage(verb, "--exec-episode-project given more than %zu times", sizeof exec_maps / sizeof exec_maps[0]);
			exec_maps[cfg.n_exec_episode_projects++] = v;
			continue;
		} else if (strcmp(name, "--exec-max-output-bytes") == 0) {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(v, &end, 10);
			if (!*v || *v == '-' || *end || errno || n < 65536 || n > (1ULL << 40))
				return worldd_usage(verb, "--exec-max-output-bytes needs a number 65536-1099511627776, got '%s'", v);
			if (cfg.exec_output_max) return worldd_usage(verb, "flag %s given twice", name);
			cfg.exec_output_max = n;
			continue;
		} else if (strcmp(name, "--exec-max-ms") == 0) {
			char *end;
			errno = 0;
			unsigned long n = strtoul(v, &end, 10);
			if (!*v || *v == '-' || *end || errno || n < 1000 || n > EXEC_TIMEOUT_MS_MAX)
				return worldd_usage(verb, "--exec-max-ms needs a number 1000-%u, got '%s'", EXEC_TIMEOUT_MS_MAX, v);
			if (cfg.exec_max_ms) return worldd_usage(verb, "flag %s given twice", name);
			cfg.exec_max_ms = (unsigned)n;
			continue;
		} else if (strcmp(name, "--allow-origin") == 0) {
			if (cfg.n_allow_origins == sizeof origins / sizeof origins[0])
				return worldd_usage(verb, "--allow-origin given more than %zu times", sizeof origins / sizeof origins[0]);
			if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
				return worldd_usage(verb, "--allow-origin '%s': expected an origin, SCHEME://HOST[:PORT]", v);
			origins[cfg.n_allow_origins++] = v;
			continue;
		} else if (strcmp(name, "--a2a-webhook-allow") == 0) {
			char why[200];
			if (a2a_push_allow(v, why, sizeof why) < 0)
				return worldd_usage(verb, "--a2a-webhook-allow '%s': %s", v, why);
			continue;
		} else if (strcmp(name, "--header-deadline") == 0 || strcmp(name, "--body-deadline") == 0 ||
		           strcmp(name, "--per-ip-connections") == 0) {
			int ip = name[2] == 'p';
			char *end;
			errno = 0;
			long n = strtol(v, &end, 10);
			if (!*v || *end || errno || n < (ip ? -1 : 1) || n == 0 || n > 86400)
				return worldd_usage(verb, "%s needs a number %s, got '%s'", name, ip ? "1-86400 or -1 (no limit)" : "1-86400", v);
			if (ip) cfg.per_ip_connections = (int)n;
			else if (name[2] == 'h') cfg.header_deadline_s = (unsigned)n;
			else cfg.body_deadline_s = (unsigned)n;
			continue;
		} else return worldd_usage(verb, "unknown flag '%s'", name);
		if (*slot) return worldd_usage(verb, "flag %s given twice", name);
		*slot = v;
	}
	if (!cfg.store_path) return worldd_usage(verb, "--store is required");
	/* like every other verb: the installed interpreter when none is named */
	if (!cfg.ailang_bin) cfg.ailang_bin = cli_default_ailang_bin();
	if (cfg.tool_ailang_bin && !cfg.workspace_root)
		return worldd_usage(verb, "--tool-ailang-bin needs --workspace-root");
	if (cfg.n_exec_profiles && !cfg.workspace_root) return worldd_usage(verb, "--exec-profile needs --workspace-root");
	{
		/* episode homes (daemon/home.h): refused before anything is opened */
		struct world_err he = { 0, "" };
		if ((cfg.host_id && world_home_host_check(cfg.host_id, &he) < 0) ||
		    (cfg.advertise_url && world_home_url_check(cfg.advertise_url, &he) < 0))
			return worldd_usage(verb, "%s", he.msg);
	}
	if ((cfg.n_exec_episode_projects || cfg.exec_output_max || cfg.exec_max_ms) && !cfg.n_exec_profiles)
		return worldd_usage(verb, "%s needs --exec-profile",
		                    cfg.n_exec_episode_projects ? "--exec-episode-project"
		                    : cfg.exec_output_max     ? "--exec-max-output-bytes"
		                                              : "--exec-max-ms");
	unsigned capacity = cfg.capacity ? cfg.capacity : DAEMON_DEFAULT_CAPACITY;
	if (cfg.session_share > capacity)
		return worldd_usage(verb, "--session-share %u is over the capacity (%u call workers)", cfg.session_share,
		                    capacity);
	struct world_err err = { 0, "" };
	if (daemon_serve(&cfg, &err) < 0) return worldd_fail(verb, &err);
	return WX_OK;
}

const struct worldd_verb daemon_verbs[] = {
	{ "serve", "run the daemon: read routes, MCP and A2A over HTTP on loopback",
	  "usage: worldd serve --store DB [--ailang-bin BIN] [--listen HOST:PORT]\n"
	  "                    [--workspace-root DIR --tool-ailang-bin BIN] [--examples-dir DIR]\n"
	  "                    [--capacity N] [--session-share N] [--open-reads] [--require-cgroups]\n"
	  "                    [--host-id NAME] [--advertise-url URL] [--home-lease S]\n"
	  "                    [--episode-calls N] [--episode-bytes N] [--log-key FILE]\n"
	  "                    [--exec-profile FILE ... [--exec-episode-project EP=PROJECT ...]\n"
	  "                     [--exec-max-output-bytes N] [--exec-max-ms MS]]\n\n"
	  "Start-up: opens DB as a writer (other daemons may share it), archives BIN, binds the\n"
	  "store to BIN's release (semantics epoch 1 on a store without one; another release is refused),\n"
	  "reports journal intents left without an outcome (one line each on stdout,\n"
	  "`journal_indeterminate id=N kind=K subject=S ref=R`; none is re-run), runs the\n"
	  "integrity scan (20000 rows, 2 s; its lines as `worldd scan` prints them), then prints\n"
	  "exactly one line `worldd listening on http://HOST:PORT` on stdout. One log line per\n"
	  "request on stderr: `worldd request method=M route=PATH status=N ms=N invocation_id=ID`.\n"
	  "The operator token: the store keeps its sha256, and every daemon of the store accepts\n"
	  "the one token whose hash it holds (re-read per request). The first daemon of a store\n"
	  "without one makes it and writes it to <DB>.operator-token (mode 0600); later daemons\n"
	  "leave that file as it is, nobody removes it, and `worldd token rotate` replaces both.\n"
	  "SIGTERM / SIGINT: stop accepting, let calls in flight finish (at most 25 s), reap every\n"
	  "capsule, exit 0. docs/daemon.md lists every route.\n\n"
	  "  --store DB               the store; it must exist (worldd epoch bootstrap makes one): a path\n"
	  "                           that does not, or an empty PostgreSQL database, is exit 4 and\n"
	  "                           nothing is created (worldd store copy DB URI moves a store there)\n"
	  "  --ailang-bin BIN         the transition interpreter (archived and pinned; default the\n"
	  "                           installed ailang-lite, worldd --help names it)\n"
	  "  --listen HOST:PORT       loopback only: 127.0.0.1, [::1] or localhost (default 127.0.0.1:7644;\n"
	  "                           port 0 = any free port, printed on the listening line)\n"
	  "  --workspace-root DIR     episode worktrees for Workspace.* / Ailang.* effects; without it a\n"
	  "                           store with such transitions published is refused at start (usage)\n"
	  "  --tool-ailang-bin BIN    the tool interpreter for Ailang.* effects (needs --workspace-root)\n"
	  "  --examples-dir DIR       the examples Ailang.Discover searches (default none)\n"
	  "  --capacity N             capsules alive at once = call worker threads (default 8, 1-256)\n"
	  "  --session-share N        call workers one episode's sessions may hold at once, 1..capacity\n"
	  "                           (default capacity/2, at least 1); its other calls wait in the queue\n"
	  "                           while other episodes' calls go first; = capacity turns it off\n"
	  "  --episode-calls N        calls one episode may commit, pure or effectful (default 100000;\n"
	  "                           -1 = no limit); then its calls are refused QuotaExceeded (HTTP 429)\n"
	  "  --episode-bytes N        bytes one episode's calls may store: inputs, plans, outputs, effect\n"
	  "                           results and records (default 1073741824 = 1 GiB; -1 = no limit)\n"
	  "  --require-cgroups        refuse to start (exit 10) when capsules would get no memory or pids\n"
	  "                           cgroup; without it that is one start-up line naming what is missing\n"
	  "                           and the rlimits that remain\n"
	  "  --log-key FILE           the log's signing key (issue 43; default DB.log-key, for a\n"
	  "                           postgresql:// store the host cache's log-keys/NAME.log-key): the\n"
	  "                           daemon signs a checkpoint in each commit batch (worldd log\n"
	  "                           checkpoint). Without this flag and no default file: one start-up\n"
	  "                           line, no signature; a FILE that is missing, not 0600 or not the\n"
	  "                           store's key refuses the start (exit 4, 3, 8)\n"
	  "  --host-id NAME           this host's id for episode homes (default: the host name up to its\n"
	  "                           first dot; [A-Za-z0-9._-], 1-128). Homes are on for a postgresql://\n"
	  "                           store, and on SQLite only with this flag: an episode's first\n"
	  "                           effectful call claims it for this host; on another host its\n"
	  "                           effectful calls are answered HTTP 307 NotHome naming the home\n"
	  "                           (docs/operations.md, \"Past one machine\"; worldd episode move)\n"
	  "  --advertise-url URL      the URL other hosts send this host's episodes to (default the\n"
	  "                           listening URL, http://HOST:PORT); e.g. the proxy in front of it\n"
	  "  --home-lease S           seconds a claim is leased, renewed by the home's effectful calls\n"
	  "                           once half is gone (default 120, 2-86400)\n"
	  "  --open-reads             GET /v1/* without a credential (default: a session credential or\n"
	  "                           the operator token; /v1/health is always open)\n"
	  "  --allow-origin ORIGIN    an Origin /mcp/ and /a2a/ accept besides http://localhost,\n"
	  "                           127.0.0.1 or [::1] with the daemon's port (repeatable, at most 16);\n"
	  "                           its HOST[:PORT] is then accepted as Host too; others answer 403\n"
	  "  --a2a-webhook-allow PREFIX\n"
	  "                           a URL prefix A2A push-notification webhooks may be under\n"
	  "                           (repeatable, at most 16): http://HOST[:PORT][/PATH], HOST an IP\n"
	  "                           address or localhost (no names resolved, no TLS client). None:\n"
	  "                           every webhook is refused (-32602). A match ends at a '/' (a PREFIX\n"
	  "                           http://127.0.0.1:9 allows http://127.0.0.1:9/x, not :90/x)\n"
	  "  --header-deadline S      seconds a request's whole header may take, however it trickles\n"
	  "                           (default 20); then the connection is closed\n"
	  "  --body-deadline S        seconds a request's whole body may take (default 60)\n"
	  "  --per-ip-connections N   connections one client address may hold at once (default 128 of\n"
	  "                           256; -1 = no limit); 16 reserve slots beyond 256 answer health only\n"
	  "  --exec-profile FILE      a world/exec-profile/v1 project profile for Workspace.Exec (the\n"
	  "                           workspace-exec tool; docs/exec.md); repeatable, one per project;\n"
	  "                           needs --workspace-root. Read once and checked at start: a refusal is\n"
	  "                           one line naming FILE and the field (JSON pointer), exit 3 (4: no\n"
	  "                           FILE). Then its capsule is probed (writes outside, decoys, a live\n"
	  "                           loopback listener, the toolchain): a failed arm is one start-up line\n"
	  "                           `exec profile FILE (project P, ...): not offered: arm A: ...` and\n"
	  "                           every exec call of P is refused naming it. Without any, an exec\n"
	  "                           call is refused naming this flag\n"
	  "  --exec-episode-project EP=PROJECT\n"
	  "                           the profile episode EP's exec calls use (repeatable); an episode\n"
	  "                           without one gets the only profile, or with several a refusal\n"
	  "  --exec-max-output-bytes N  stdout + stderr bytes one exec command may write before its\n"
	  "                           process tree is killed, recorded limit \"output\" (default 67108864\n"
	  "                           = 64 MiB, 65536-1099511627776)\n"
	  "  --exec-max-ms MS         the cap on one exec run's wall time (default 600000 = 10 min,\n"
	  "                           1000-3600000): a run gets its profile's timeout_ms (absent: 120000,\n"
	  "                           or MS when lower), not the 10 s of a tool run; a profile whose\n"
	  "                           timeout_ms is above MS is refused at start (exit 3, one line naming\n"
	  "                           the file and /timeout_ms). An exec call that long holds its HTTP\n"
	  "                           request, a call worker and its episode's turn until the run ends;\n"
	  "                           SIGTERM waits 25 s for calls in flight, then for the workers to\n"
	  "                           finish theirs\n\n"
	  "exit codes:\n"
	  "  0  stopped cleanly by SIGTERM / SIGINT\n"
	  "  2  usage (a flag, --listen not on loopback, effectful transitions and no --workspace-root,\n"
	  "     two profiles of one project, an --exec-episode-project naming no loaded project)\n"
	  "  3  an --exec-profile refused (one line: the file and the field)\n"
	  "  4  no store at DB or an empty database (nothing created), or no --exec-profile FILE\n"
	  "  5  another writer's transaction outlasted the busy timeout (5 s) at start-up\n"
	  "  6  DB is not a store of a known schema version\n"
	  "  8  DB is bound to another interpreter release\n"
	  "  9  I/O: archive, token file, or the listen socket (address in use)\n"
	  " 10  --require-cgroups and the capsules would get no memory or pids cgroup\n"
	  " 14  BIN --version failed\n"
	  " 29  the store's PostgreSQL server unreachable at start-up (once serving, its absence is\n"
	  "     HTTP 503 StoreUnavailable and service resumes by itself: GET /v1/ready says which)\n",
	  serve_run },
	{ NULL, NULL, NULL, NULL },
};
