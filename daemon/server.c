/* daemon/server.c: `worldd serve` -- start-up, the route table and
 * shutdown (see server.h).
 *
 * Owns: daemon_serve, the composition root of the daemon (the cgroup
 * delegation and the capsule spawner, the store and its start-up checks,
 * the exec profiles, the coordinator, the operator token, the log signer,
 * the notification streams, the call workers, the edge and libmicrohttpd,
 * then the drain and the teardown in reverse), the --listen rule, the route
 * table (dispatch: which projection of daemon/route.h answers a path) and
 * the log lines of held outcomes and denials. The call workers and their
 * queue are daemon/workers.c's, the connection edge daemon/edge.c's;
 * daemon/server_internal.h is what the three share. */
#include "daemon/server.h"
#include "daemon/home.h"
#include "supervisor/spawner.h"
#include "supervisor/supervisor.h"
#include "daemon/http.h"
#include "daemon/mcp_tasks.h"
#include "daemon/route.h"
#include "daemon/server_internal.h"
#include "broker/effect.h"
#include "broker/exec_probe.h"
#include "broker/exec_profile.h"
#include "coordinator/registry.h"
#include "store/open_opts.h"
#include "common/pause.h"
#include "store/scan.h"
#include "store/store.h"
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include "store/tree.h"
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A call's outcome held while the store does not answer (coordinator.h,
 * on_held): one log line each time it is held, written or given up. */
static void log_held(void *ctx, const char *line)
{
	(void)ctx;
	char l[1200];
	size_t j = 0;
	for (; *line && j + 1 < sizeof l; line++) l[j++] = (*line >= 32 && *line < 127) ? *line : '?';
	l[j] = 0;
	dlog("%s", l);
}

/* A call the capsule's seccomp filter stopped (coordinator.h, on_denial):
 * one line of stable keys, so that an operator can tell afterwards who
 * probed what (docs/daemon.md, Logs). Written before the call's request
 * line; the committed record it names is what `worldd journal --denials`
 * lists. */
static void log_denial(void *ctx, const struct coord_denial *dn)
{
	(void)ctx;
	char sc[64], arch[32], sk[160], ep[80], inv[256], io[96] = "", why[300] = "";
	dlog_safe(sc, sizeof sc, dn->call->syscall);
	dlog_safe(arch, sizeof arch, dn->call->arch);
	dlog_safe(sk, sizeof sk, dn->skill_id);
	dlog_safe(ep, sizeof ep, dn->episode);
	dlog_safe(inv, sizeof inv, dn->invocation_id);
	if (dn->call->has_cmd) {
		char cn[48];
		dlog_safe(cn, sizeof cn, dn->call->cmd_name);
		snprintf(io, sizeof io, " ioctl=%s ioctl_cmd=0x%x", cn, dn->call->cmd);
	}
	if (!dn->record_ref[0]) snprintf(why, sizeof why, " record_error=\"%.280s\"", dn->record_error);
	dlog("denied syscall=%s nr=%d arch=%s%s skill=%s episode=%s invocation_id=%s record=%s%s", sc, dn->call->nr, arch,
	     io, sk, ep, inv, dn->record_ref[0] ? dn->record_ref : "-", why);
}

/* ---- listen address ---- */

int daemon_parse_listen(const char *listen, char host[64], unsigned *port, struct world_err *err)
{
	const char *colon, *h = listen;
	size_t hl;
	if (!listen || !*listen) return werr(err, WX_USAGE, "--listen is empty: expected HOST:PORT on loopback");
	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');
		if (!close || close[1] != ':')
			return werr(err, WX_USAGE, "--listen '%s': expected [::1]:PORT", listen);
		h = listen + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(listen, ':');
		if (!colon) return werr(err, WX_USAGE, "--listen '%s': expected HOST:PORT (e.g. %s)", listen, DAEMON_DEFAULT_LISTEN);
		hl = (size_t)(colon - listen);
	}
	if (hl == 0 || hl >= 64) return werr(err, WX_USAGE, "--listen '%s': no host", listen);
	memcpy(host, h, hl);
	host[hl] = 0;
	if (strcmp(host, "127.0.0.1") != 0 && strcmp(host, "::1") != 0 && strcmp(host, "localhost") != 0)
		return werr(err, WX_USAGE,
		            "--listen '%s': %s is not a loopback address; the daemon listens on 127.0.0.1, ::1 or localhost only",
		            listen, host);
	if (strcmp(host, "::1") == 0 && listen[0] != '[')
		return werr(err, WX_USAGE, "--listen '%s': write an IPv6 address in brackets, [::1]:PORT", listen);
	const char *p = colon + 1;
	if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5 || atol(p) > 65535)
		return werr(err, WX_USAGE, "--listen '%s': port '%s' is not a number 0-65535", listen, p);
	*port = (unsigned)atol(p);
	return 0;
}

static int path_is(const char *path, const char *a) { return strcmp(path, a) == 0; }

static void dispatch(struct dreq *rq, struct dresp *r)
{
	const char *p = rq->path;
	int get = strcmp(rq->method, "GET") == 0, post = strcmp(rq->method, "POST") == 0;
	if (strncmp(p, "/v1/replay/", 11) == 0) {
		replay_handle(rq, r);
	} else if (strncmp(p, "/v1/", 4) == 0 || path_is(p, "/v1")) {
		reads_handle(rq, r);
	} else if (path_is(p, "/mcp/") || path_is(p, "/mcp")) {
		/* GET opens the notification stream (on_request, open_stream) */
		if (!post) { dresp_error(r, "BadRequest", "method %s not allowed on /mcp/ (POST, or GET for the notification stream: Streamable HTTP)", rq->method); r->status = 405; r->allow = "GET, POST"; }
		else mcp_handle(rq, r);
	} else if (path_is(p, "/a2a/") || path_is(p, "/a2a")) {
		if (!post) { dresp_error(r, "BadRequest", "method %s not allowed on /a2a/ (POST only)", rq->method); r->status = 405; r->allow = "POST"; }
		else a2a_handle(rq, r);
	} else if (strncmp(p, "/.well-known/oauth-protected-resource", 37) == 0) {
		if (!get) { dresp_error(r, "BadRequest", "method %s not allowed on %s (GET only)", rq->method, p); r->status = 405; r->allow = "GET"; }
		else mcp_resource_metadata(rq, r);
	} else if (path_is(p, "/.well-known/agent.json") || path_is(p, "/.well-known/agent-card.json")) {
		if (!get) { dresp_error(r, "BadRequest", "method %s not allowed on %s (GET only)", rq->method, p); r->status = 405; r->allow = "GET"; }
		else a2a_card(rq, r, path_is(p, "/.well-known/agent-card.json"));
	} else if (mcp_not_oauth(rq, r) == 0) {
		/* an OAuth client's discovery or registration: 404 with the reason its credential was refused */
	} else {
		char safe[200];
		dlog_safe(safe, sizeof safe, p);
		dresp_error(r, "NotFound", "no route %s", safe);
	}
}

/* The route dispatch, for tests/fuzz/fuzz_http.c only (route.h): the
 * product reaches dispatch through run_route. */
void daemon_dispatch_for_test(struct dreq *rq, struct dresp *r) { dispatch(rq, r); }

/* Run the route of a whole request (server_internal.h). */
void run_route(struct dctx *d, struct MHD_Connection *conn, const char *method, struct dconn *dc)
{
	struct dreq rq = { .d = d, .conn = conn, .seat = conn ? NULL : &dc->seat, .hdrs = dc->hdrs, .nhdrs = dc->nhdrs,
	                   .method = method, .path = dc->path, .body = dc->body ? dc->body : "", .body_len = dc->len,
	                   .job = dc->jobbed ? dc->job.seq : 0, .cancel_early = dc->cancel_early,
	                   .cancel_fired = dc->cancel_fired, .cancel_pend = dc->cancel_pend };
	dispatch(&rq, &dc->resp);
	memcpy(dc->invocation_id, rq.invocation_id, sizeof dc->invocation_id);
	memcpy(dc->note, rq.note, sizeof dc->note);
	memcpy(dc->timing, rq.timing, sizeof dc->timing);
}

/* ---- operator token ---- */

/* The first daemon of a store without a token installs one and writes
 * its file (<db>.operator-token; a PostgreSQL store's in this host's cache
 * directory: world_operator_token_path); the others use the store's (its
 * file untouched: a daemon on another host of a PostgreSQL store has none
 * until the operator copies it there or rotates the token);
 * nobody removes the file at exit; `worldd token rotate` replaces both. */
static int token_setup(struct dctx *d, char path[4200], int *created, struct world_err *err)
{
	char tok[65];
	int rc = world_operator_token_new(d->writer, 0, tok, path, 4200, created, err);
	OPENSSL_cleanse(tok, sizeof tok);
	return rc;
}

/* ---- start-up and shutdown ---- */

static int report_indeterminate(void *ctx, long long id, const char *kind, const char *subject, const char *ref)
{
	long long *n = ctx;
	char k[64], s[300], r[100];
	dlog_safe(k, sizeof k, kind);
	dlog_safe(s, sizeof s, subject);
	dlog_safe(r, sizeof r, ref);
	printf("journal_indeterminate id=%lld kind=%s subject=%s ref=%s\n", id, k, s, r);
	(*n)++;
	return 0;
}

/* Without --workspace-root the effects whose handler opens the worktree
 * (Workspace.*, Ailang.Check/Run/CLI) fail ("no workspace root"), each
 * charged to its session: refuse to serve a store with such transitions
 * published. 0, or -1 with err naming one. */
/* The exec profiles (--exec-profile; broker/exec_profile.h): loaded, mapped
 * and probed at start-up, before anything is written; kept for the life of
 * the daemon (the coordinator's handler context points at them). */
static struct exec_profiles exec_set;

static int exec_start(const struct daemon_config *cfg, const struct world_store *st, struct world_err *err)
{
	if (!cfg->n_exec_profiles) return 0;
	/* the store's folder, when the store is a file */
	char store_dir[PATH_MAX] = "";
	if (!strstr(cfg->store_path, "://")) {
		char rp[PATH_MAX];
		if (!realpath(cfg->store_path, rp)) return werr(err, WX_IO, "exec profiles: realpath %s: %s", cfg->store_path, strerror(errno));
		snprintf(store_dir, sizeof store_dir, "%s", dirname(rp));
	}
	const char *home = getenv("HOME");
	struct exec_profile_env pe = { .workspace_root = cfg->workspace_root, .store_dir = store_dir[0] ? store_dir : NULL,
		                       .home = home && home[0] == '/' ? home : NULL, .homes_dir = "/home",
		                       .max_ms = cfg->exec_max_ms };
	for (size_t i = 0; i < cfg->n_exec_profiles; i++) {
		struct exec_profile *p;
		if (exec_profile_load(cfg->exec_profiles[i], &pe, &p, err) < 0) return -1;
		if (exec_profiles_add(&exec_set, p, err) < 0) {
			exec_profile_free(p);
			return -1;
		}
	}
	for (size_t i = 0; i < cfg->n_exec_episode_projects; i++)
		if (exec_profiles_map(&exec_set, cfg->exec_episode_projects[i], err) < 0) return -1;
	/* The daemon's own secret files: none may lie under a tree the exec
	 * capsule shows (the probe's arm "secrets", broker/exec_probe.h). A path
	 * the daemon cannot name is one start-up line: that file is not read. */
	char tok_path[4200] = "", key_path[4400] = "", input_key_path[4400] = "";
	struct world_err ig = { 0, "" };
	if (world_operator_token_path(st, tok_path, sizeof tok_path, &ig) < 0) {
		dlog("start: exec profiles: no operator token file path to check: %s", ig.msg);
		tok_path[0] = '\0';
	}
	if (cfg->log_key) snprintf(key_path, sizeof key_path, "%s", cfg->log_key);
	else if (world_log_key_path(st, key_path, sizeof key_path, 0, &ig) < 0) key_path[0] = '\0';
	if (world_input_key_path(st, input_key_path, sizeof input_key_path, 0, &ig) < 0) input_key_path[0] = '\0';
	const struct exec_secret secrets[] = {
		{ "store password file (--store-password-file)", cfg->store_password_file },
		{ "operator token file", tok_path },
		{ "log signing key file", key_path },
		{ "request state key file", input_key_path },
	};
	struct exec_probe_env xe = { .workspace_root = cfg->workspace_root, .store_dir = pe.store_dir, .home = pe.home,
		                     .secrets = secrets, .nsecrets = sizeof secrets / sizeof secrets[0] };
	for (size_t i = 0; i < exec_set.n; i++) {
		struct exec_profile *p = exec_set.p[i];
		char note[1024];
		exec_probe_run(p, &xe, note, sizeof note);
		if (p->probe_failure[0])
			dlog("start: exec profile %s (project %s, %s): not offered: %s", p->file, p->project, p->digest, p->probe_failure);
		else
			dlog("start: exec profile %s (project %s, %s): offered; probe: %s", p->file, p->project, p->digest, note);
	}
	return 0;
}

static int effects_need_workspace(struct world_store *st, struct world_err *err)
{
	json_t *reg = NULL, *d, *e;
	long long rev;
	if (registry_load(st, &reg, &rev, NULL, err) < 0) return -1;
	size_t i, k, n = 0;
	const char *first = NULL, *eff = NULL;
	json_array_foreach(json_object_get(reg, "transitions"), i, d) {
		json_array_foreach(json_object_get(d, "declaredEffects"), k, e) {
			const char *name = json_string_value(json_object_get(e, "effect"));
			/* the handlers that open the episode's worktree (broker/handlers.c);
			 * an effect with no handler at all is refused before it runs */
			if (!name || (strncmp(name, "Workspace.", 10) != 0 && strcmp(name, "Ailang.Check") != 0 &&
			              strcmp(name, "Ailang.Run") != 0 && strcmp(name, "Ailang.CLI") != 0))
				continue;
			if (!n++) {
				first = json_string_value(json_object_get(d, "id"));
				eff = name;
			}
			break;
		}
	}
	int rc = 0;
	if (n)
		rc = werr(err, WX_USAGE,
		          "%zu published transition(s) have effects that need a worktree (first: %s declares %s): "
		          "give --workspace-root DIR",
		          n, first ? first : "?", eff);
	json_decref(reg);
	return rc;
}

/* The log's signing key (store/tree.h): the coordinator's
 * writer signs a checkpoint in the commit of each batch that appended.
 * --log-key FILE must be there and be the store's key; without it the
 * store's default file is used when there is one, else one start-up line
 * and no signatures. */
static int log_signer_start(struct dctx *d, const struct daemon_config *cfg, struct world_err *err)
{
	char path[4400];
	struct world_err pe = { 0, "" };
	if (cfg->log_key) snprintf(path, sizeof path, "%s", cfg->log_key);
	else if (world_log_key_path(d->writer, path, sizeof path, 0, &pe) < 0) {
		dlog("start: log checkpoints not signed: %s", pe.msg);
		return 0;
	}
	char *skey = NULL;
	struct world_err ke = { 0, "" };
	if (world_log_key_read(path, &skey, &ke) < 0) {
		if (cfg->log_key || ke.code != WX_NOT_FOUND) {
			*err = ke;
			return werr_prefix(err, "--log-key");
		}
		dlog("start: log checkpoints not signed: no key file %s (worldd log key init)", path);
		return 0;
	}
	int rc = world_tree_set_signer(d->writer, skey, err);
	OPENSSL_cleanse(skey, strlen(skey));
	free(skey);
	if (rc < 0) return werr_prefix(err, "--log-key %s", path);
	char vkey[1024] = "";
	struct world_err ig;
	world_log_key_get(d->writer, vkey, sizeof vkey, &ig);
	dlog("start: log checkpoints signed in each commit batch by %s (key file %s)", vkey, path);
	return 0;
}

int daemon_serve(const struct daemon_config *cfg, struct world_err *err)
{
	char host[64];
	unsigned port = 0;
	const char *listen = cfg->listen ? cfg->listen : DAEMON_DEFAULT_LISTEN;
	if (daemon_parse_listen(listen, host, &port, err) < 0) return -1;
	unsigned capacity = cfg->capacity ? cfg->capacity : DAEMON_DEFAULT_CAPACITY;
	if (capacity > 256) return werr(err, WX_USAGE, "--capacity %u is over 256", capacity);
	unsigned share = cfg->session_share ? cfg->session_share : DAEMON_DEFAULT_SHARE(capacity);
	if (share > capacity)
		return werr(err, WX_USAGE, "--session-share %u is over the capacity (%u call workers)", share, capacity);
	if (cfg->tool_ailang_bin && !cfg->workspace_root)
		return werr(err, WX_USAGE, "--tool-ailang-bin needs --workspace-root");

	/* Block the stop signals before any thread exists: every thread inherits
	 * the mask, and the main thread takes them with sigwait. Capsules reset
	 * their mask (capsule/capsule.c). */
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, &stop, NULL) != 0) return werr(err, WX_FAIL, "block SIGTERM/SIGINT failed");
	signal(SIGPIPE, SIG_IGN);

	/* The capsule spawner first, while this process is small and has one
	 * thread: every capsule is a clone of the spawner, whose size does not
	 * grow with the calls in flight (supervisor/spawner.h). It also removes
	 * the groups of dead makers and, on v1 without favordynmods, keeps the
	 * cgroup attach fast (it is the process that attaches). */
	/* Under systemd with Delegate=memory pids the service's group offers
	 * the controllers but, holding this process, cannot enable them for
	 * children: move into a leaf first (capsule.h, capsule_cgroup_delegate),
	 * before the spawner is forked, so that it and its capsules follow. */
	char dnote[1200];
	int drc = sup_cgroup_delegate_self(dnote, sizeof dnote);
	if (drc != 1 || strstr(dnote, "offers no")) dlog("start: cgroup delegation: %s", dnote);
	struct sup_spawner_opts so_sp = { .keepwarm = true };
	struct sup_spawner_info spi;
	struct world_err sperr = { 0, "" };
	bool spawner = sup_spawner_start(&so_sp, &spi, &sperr) == 0;

	static struct dctx d; /* static: MHD's threads and the signal path see it until exit */
	memset(&d, 0, sizeof d);
	pthread_mutex_init(&d.pool_mu, NULL);
	d.open_reads = cfg->open_reads;
	snprintf(d.db_path, sizeof d.db_path, "%s", cfg->store_path);
	d.password_file = cfg->store_password_file;
	char token_path[4200] = "";
	struct MHD_Daemon *mhd = NULL;
	int rc = -1;

	/* Start-up refusals come before anything is written (the archive, the
	 * epoch, the token). Limits are never silently missing: no memory or
	 * pids group for the capsules is one line, or with --require-cgroups a
	 * refusal (supervisor.h: sup_cgroups_check). */
	char cgline[700];
	if (sup_cgroups_check(cgline, sizeof cgline)) {
		if (cfg->require_cgroups) {
			werr(err, WX_SETUP, "--require-cgroups: %s", cgline);
			goto out;
		}
		dlog("start: %s", cgline);
	}
	struct world_store_open_opts oo = { .password_file = cfg->store_password_file };
	if (world_store_open_opts(cfg->store_path, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, &oo, &d.writer, err) < 0)
		goto out;
	if (!cfg->workspace_root && effects_need_workspace(d.writer, err) != 0) goto out;
	if (exec_start(cfg, d.writer, err) < 0) goto out;
	struct world_interp interp;
	if (world_archive_interpreter(d.writer, cfg->ailang_bin, &interp, err) < 0) goto out;
	snprintf(d.interp_ref, sizeof d.interp_ref, "%s", interp.ref);
	snprintf(d.interp_version, sizeof d.interp_version, "%s", interp.version);
	long long epoch = 0;
	int created = 0;
	if (registry_epoch_bootstrap(d.writer, &interp, &epoch, &created, err) < 0) goto out;
	dlog("start store=%s interpreter=%s release=\"%s\" epoch=%lld%s", world_store_path(d.writer), d.interp_ref, d.interp_version, epoch,
	     created ? " (epoch registry bootstrapped)" : "");
	long long indeterminate = 0;
	if (world_journal_indeterminate(d.writer, report_indeterminate, &indeterminate, err) < 0) goto out;
	if (indeterminate)
		dlog("journal: %lld intent(s) without an outcome are indeterminate; none is re-run", indeterminate);
	struct world_scan_result sr;
	/* the record law is the broker's */
	if (world_scan_start(d.writer, broker_record_check, stdout, &sr, err) < 0) goto out;
	dlog("scan log_rows=%lld world_rows=%lld holes=%lld complete=%d", sr.log_rows, sr.world_rows, sr.holes, sr.complete);
	if (log_signer_start(&d, cfg, err) < 0) goto out;

	int keepwarm;
	if (spawner) {
		dlog("start: capsule spawner pid=%d (every capsule is made by it: docs/daemon.md)", (int)spi.pid);
		if (spi.sweep_error[0]) dlog("start: %s", spi.sweep_error);
		if (spi.template_error[0])
			dlog("start: %s; capsules copy the daemon's mount table instead (docs/security.md)", spi.template_error);
		if (spi.swept) dlog("start: removed %u capsule cgroup(s) left by processes that are gone", spi.swept);
		keepwarm = spi.keepwarm;
	} else {
		/* Capsules are then clones of this process: slower under load,
		 * as confined. */
		dlog("start: %s; capsules are made by the daemon itself", sperr.msg);
		unsigned removed = 0;
		struct world_err e = { 0, "" };
		if (sup_cgroups_sweep(&removed, &e) < 0) dlog("start: %s", e.msg);
		if (removed) dlog("start: removed %u capsule cgroup(s) left by processes that are gone", removed);
		keepwarm = sup_cgroup_keepwarm(true);
	}
	/* v1 cgroups without favordynmods: an attach after a quiet spell waits
	 * for an RCU grace period (milliseconds); keep it fast (capsule.h). */
	if (keepwarm == 1)
		dlog("start: cgroup v1 without favordynmods: a keeper thread keeps capsule attaches from waiting "
		     "(favordynmods on the host makes it unneeded: docs/security.md)");
	else
		dlog("start: capsule cgroup attaches do not wait (favordynmods on, cgroup v2, or no v1 group to write)");

	struct coord_config cc = { .store = d.writer, .workspace_root = cfg->workspace_root,
	                           .tool_ailang_bin = cfg->tool_ailang_bin, .examples_dir = cfg->examples_dir,
	                           .written_by = "worldd/" DAEMON_VERSION,
	                           .episode_calls_max = cfg->episode_calls_max,
	                           .episode_bytes_max = cfg->episode_bytes_max, .on_denial = log_denial,
	                           .exec_profiles = exec_set.n ? &exec_set : NULL, .exec_output_max = cfg->exec_output_max,
	                           .exec_max_ms = cfg->exec_max_ms };
	sup_limits_default(&cc.limits);
	cc.limits.capacity = capacity;
	cc.on_held = log_held;
	d.coord = coord_new(&cc, err);
	if (!d.coord) goto out;
	int token_created = 0;
	if (token_setup(&d, token_path, &token_created, err) < 0) goto out;
	dlog("operator token: %s (%s)", token_path,
	     token_created ? "the store had none: a new one, written to that file"
	                   : "the store's, shared by every daemon of it; the file is left as it is");

	if (mcp_streams_start(&d, err) < 0) goto out;

	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	struct sockaddr *sa;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
	if (strcmp(host, "::1") == 0) {
		memset(&sin6, 0, sizeof sin6);
		sin6.sin6_family = AF_INET6;
		sin6.sin6_addr = in6addr_loopback;
		sin6.sin6_port = htons((uint16_t)port);
		sa = (struct sockaddr *)&sin6;
		flags |= MHD_USE_IPv6;
	} else {
		memset(&sin, 0, sizeof sin);
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons((uint16_t)port);
		sa = (struct sockaddr *)&sin;
	}
	if (workers_start(capacity, share) < 0) dlog("start: no call worker could start; calls run on the HTTP threads");
	unsigned header_s = cfg->header_deadline_s ? cfg->header_deadline_s : DAEMON_HEADER_DEADLINE_S;
	unsigned body_s = cfg->body_deadline_s ? cfg->body_deadline_s : DAEMON_BODY_DEADLINE_S;
	unsigned per_ip = cfg->per_ip_connections < 0 ? 0 /* libmicrohttpd: no limit */
	                  : cfg->per_ip_connections ? (unsigned)cfg->per_ip_connections : DAEMON_PER_IP_DEFAULT;
	if (edge_start(header_s, body_s, cfg->allow_origins, cfg->n_allow_origins, err) < 0) goto out;
	mhd = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, &d,
	                       MHD_OPTION_SOCK_ADDR, sa,
	                       MHD_OPTION_THREAD_POOL_SIZE, (unsigned)DAEMON_HTTP_THREADS,
	                       MHD_OPTION_CONNECTION_LIMIT, (unsigned)(DAEMON_CONNECTION_LIMIT + DAEMON_RESERVE_SLOTS),
	                       MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
	                       MHD_OPTION_STRICT_FOR_CLIENT, (int)1, /* HTTP/1.1 without Host: 400 */
	                       MHD_OPTION_NOTIFY_CONNECTION, on_connection, &d,
	                       MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)DAEMON_IDLE_TIMEOUT_S,
	                       MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 << 10),
	                       MHD_OPTION_NOTIFY_COMPLETED, on_completed, &d,
	                       MHD_OPTION_EXTERNAL_LOGGER, mhd_log, &d,
	                       MHD_OPTION_END);
	if (!mhd) {
		werr(err, WX_IO, "listen on %s failed (address in use, or no permission)", listen);
		goto out;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(mhd, MHD_DAEMON_INFO_BIND_PORT);
	unsigned real = info ? info->port : port;
	if (strcmp(host, "::1") == 0) snprintf(d.base_url, sizeof d.base_url, "http://[::1]:%u", real);
	else snprintf(d.base_url, sizeof d.base_url, "http://%s:%u", host, real);
	/* episode homes (daemon/home.h): the advertised URL defaults to this one */
	if (dhome_start(cfg, d.base_url, err) < 0) goto out;
	printf("worldd listening on %s\n", d.base_url);
	fflush(stdout);
	dlog("listening url=%s capacity=%u session_share=%u open_reads=%d operator_token=%s header_deadline_s=%u "
	     "body_deadline_s=%u per_ip_connections=%u allow_origins=%zu", d.base_url, capacity, share, d.open_reads, token_path,
	     header_s, body_s, per_ip, cfg->n_allow_origins);

	int sig = 0;
	while (sigwait(&stop, &sig) != 0) {}
	dlog("stop signal=%s: no new connections; waiting up to %d ms for %d request(s) in flight", sig == SIGTERM ? "SIGTERM" : "SIGINT",
	     DAEMON_DRAIN_MS, edge_inflight());
	MHD_socket ls = MHD_quiesce_daemon(mhd);
	if (ls != MHD_INVALID_SOCKET) close(ls);
	/* the notification streams end now, so the drain below is not held up */
	mcp_streams_stop();
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (edge_inflight() > 0 && ms_since(&t0) < DAEMON_DRAIN_MS) {
		struct timespec ten = { 0, 10 * 1000 * 1000 };
		nanosleep(&ten, NULL);
	}
	/* The workers finish the calls they run (every call is bounded by its
	 * invocation deadline) and answer what is queued, resuming every
	 * connection, before libmicrohttpd stops. */
	workers_stop();
	MHD_stop_daemon(mhd);
	mhd = NULL;
	rc = 0;
out:
	workers_stop();
	mtask_stop(); /* the MCP tasks' calls end before the coordinator goes */
	mcp_streams_stop(); /* no connection may stay suspended when libmicrohttpd stops */
	if (mhd) MHD_stop_daemon(mhd);
	edge_stop();
	if (d.coord) coord_free(d.coord); /* reaps every capsule */
	dhome_stop();
	exec_profiles_free(&exec_set);
	/* The spawner removes its pooled groups and exits; waited for, so
	 * nothing of ours is left when "stopped" is logged. */
	if (spawner) sup_spawner_stop();
	dreader_pool_close(&d);
	if (d.writer) world_store_close(d.writer); /* releases the writer lock */
	if (rc == 0) dlog("stopped");
	return rc;
}
