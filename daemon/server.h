/* daemon/server.h: `worldd serve` (docs/design.md §8).
 *
 * Owns: the daemon's life: start-up (writer lock, interpreter archive,
 * epoch bootstrap, journal recovery report, integrity scan, operator token,
 * listen), the HTTP server (libmicrohttpd, connection / body / time
 * limits), the call workers (as many as the capsule capacity) and their
 * queue with its per-episode fair shares, routing to the
 * projections of daemon/route.h, one log line per request, and shutdown on
 * SIGTERM/SIGINT (stop accepting, let in-flight calls finish within a
 * bound, free the coordinator so every capsule is reaped, remove the
 * operator token, release the writer lock). cli/ only parses the flags.
 *
 * Where it lives: start-up, the route table and shutdown in
 * daemon/server.c; the call workers and their queue in daemon/workers.c;
 * the connection edge (slots, deadlines, framing, origins, body limits,
 * request logs) in daemon/edge.c; daemon/server_internal.h is what the
 * three share. */
#ifndef WORLD_DAEMON_SERVER_H
#define WORLD_DAEMON_SERVER_H
#include "common/error.h"
#include <stddef.h>

#define DAEMON_DEFAULT_LISTEN "127.0.0.1:7644"
#define DAEMON_DEFAULT_CAPACITY 8
/* The default --session-share: half the call workers (at least one), so
 * that one episode flooding the daemon leaves the other half to everyone
 * else (docs/daemon.md, "Fair shares"). */
#define DAEMON_DEFAULT_SHARE(capacity) ((capacity) / 2 ? (capacity) / 2 : 1u)
#define DAEMON_CONNECTION_LIMIT 256     /* open connections at once (ordinary slots) */
#define DAEMON_RESERVE_SLOTS 16         /* beyond them: connections that may only ask GET /v1/health */
#define DAEMON_PER_IP_DEFAULT 128       /* open connections one client address may hold (--per-ip-connections) */
#define DAEMON_HEADER_DEADLINE_S 20     /* a request's whole header must arrive within this, counted from the
                                           connection's opening or its previous request's end; bytes do not
                                           extend it (--header-deadline) */
#define DAEMON_RESERVE_DEADLINE_S 2     /* the same on a reserve slot */
#define DAEMON_BODY_DEADLINE_S 60       /* a request's whole body must arrive within this (--body-deadline) */
#define DAEMON_IDLE_TIMEOUT_S 30        /* a connection silent this long is closed */
#define DAEMON_DRAIN_MS 25000           /* shutdown: in-flight calls get this long */
#define DAEMON_HTTP_THREADS 2           /* libmicrohttpd's threads: I/O and the GET routes only; calls run on
                                           `capacity` call workers (server.c) */

struct daemon_config {
	const char *store_path;          /* --store: a path or a postgresql:// URI (never printed: the
	                                    store's own name, world_store_path, is) */
	const char *store_password_file; /* --store-password-file (a URI's password; NULL = none) */
	const char *ailang_bin;          /* --ailang-bin */
	const char *listen;              /* --listen HOST:PORT (NULL = default) */
	const char *workspace_root;      /* --workspace-root (NULL = none) */
	const char *tool_ailang_bin;     /* --tool-ailang-bin (NULL = none) */
	const char *examples_dir;        /* --examples-dir (NULL = none) */
	const char *log_key;             /* --log-key FILE: the log's signing key (NULL = the store's default
	                                    file, if there is one: store/tree.h) */
	unsigned capacity;               /* --capacity (0 = default) */
	unsigned session_share;          /* --session-share: call workers one episode may hold at once
	                                    (0 = default: DAEMON_DEFAULT_SHARE(capacity)); 1..capacity */
	int open_reads;                  /* --open-reads */
	int require_cgroups;             /* --require-cgroups: refuse to start when capsules get no memory or pids group */
	long long episode_calls_max;     /* --episode-calls (0 = COORD_EPISODE_CALLS_DEFAULT, -1 = no limit) */
	long long episode_bytes_max;     /* --episode-bytes (0 = COORD_EPISODE_BYTES_DEFAULT, -1 = no limit) */
	const char *const *allow_origins; /* --allow-origin ORIGIN (repeatable): Origins (and their host[:port] as
	                                    Host) /mcp/ and /a2a/ accept besides loopback with the daemon's port */
	size_t n_allow_origins;
	unsigned header_deadline_s;      /* --header-deadline (0 = DAEMON_HEADER_DEADLINE_S) */
	unsigned body_deadline_s;        /* --body-deadline (0 = DAEMON_BODY_DEADLINE_S) */
	int per_ip_connections;          /* --per-ip-connections (0 = DAEMON_PER_IP_DEFAULT, -1 = no limit) */
	/* Workspace.Exec (docs/exec.md): --exec-profile FILE (repeatable, one per
	 * project), --exec-episode-project EP=PROJECT (repeatable) and
	 * --exec-max-output-bytes N (0 = SUP_EXEC_OUTPUT_MAX, 64 MiB). Each
	 * profile is loaded (a refusal is start-up's one line and a non-zero
	 * exit) and probed before the daemon listens (broker/exec_probe.h). */
	const char *const *exec_profiles;
	size_t n_exec_profiles;
	const char *const *exec_episode_projects;
	size_t n_exec_episode_projects;
	unsigned long long exec_output_max;
	unsigned exec_max_ms;            /* --exec-max-ms: the cap on one exec run's wall time, and on a
	                                  * profile's timeout_ms (0 = EXEC_MAX_MS_DEFAULT, 600 s) */
	/* Episode homes (daemon/home.h): --host-id NAME (NULL = the host's
	 * name; on SQLite, homes are on only when given), --advertise-url URL
	 * (NULL = the listen URL) and --home-lease S (0 = WORLD_HOME_LEASE_S_DEFAULT). */
	const char *host_id;
	const char *advertise_url;
	long long home_lease_s;
};

/* Checks a --listen value: HOST:PORT with HOST one of 127.0.0.1, ::1
 * (written [::1]:PORT) or localhost and PORT 0-65535 (0 = any free port).
 * Fills host (as written, without brackets) and *port. WX_USAGE with a
 * one-line reason otherwise ("... is not a loopback address"). */
int daemon_parse_listen(const char *listen, char host[64], unsigned *port, struct world_err *err);

/* Runs the daemon until SIGTERM or SIGINT. Returns 0 after a clean stop,
 * or -1 with err when start-up failed (nothing is left behind: no lock,
 * no token file). */
int daemon_serve(const struct daemon_config *cfg, struct world_err *err);
#endif
