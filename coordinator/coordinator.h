/* coordinator/coordinator.h: one invocation = input -> capsule -> broker ->
 * one committed log entry (docs/design.md §3, §5, §6.3-6.4).
 *
 * Owns: turning a caller's request (session, skill id, task id, arguments)
 * into exactly one committed log entry, or into a refusal that commits
 * nothing. It sits above supervisor/, broker/ and store/; its callers are
 * `worldd call` (cli/verbs_call.c) and the daemon (daemon/).
 *
 * Steps of coord_call:
 *   1. refusals before execution (commit nothing; WX_REFUSED unless noted):
 *      unknown skill, not visible to the session, arguments not a JSON
 *      object or over 1 MiB (WX_BAD_INPUT), arguments that fail the input
 *      schema (message names the JSON pointer and the rule), a declared
 *      effect with no handler, task id malformed or reused with other
 *      arguments ("task id already used in this session", WX_CONFLICT);
 *   2. the arguments are canonicalised (common/canon.h): the transition sees
 *      exactly the bytes stored as world/invocation-input/v1;
 *   3. pure: one capsule run; effectful: plan phase, every plan law of §5.2
 *      (a violation fails the call naming the law, commits nothing), the
 *      broker's decision and the effect pipeline (broker/effect.h), finish;
 *   4. the output gets its `world` block and is committed with input, plan,
 *      invocation record (v1 pure, v2 effectful), world, log entry and head,
 *      and the journal's commit outcome, in ONE transaction.
 * A task id already committed in the episode returns the committed result
 * after re-verifying its hashes (res->replayed = 1); nothing re-runs.
 *
 * Threads: one struct coordinator is shared by many threads (the daemon's
 * pool); store writes are serialised inside, capsules run in parallel. */
#ifndef WORLD_COORDINATOR_COORDINATOR_H
#define WORLD_COORDINATOR_COORDINATOR_H
#include <stddef.h>
#include <jansson.h>
#include "common/error.h"
#include "common/ref.h"
#include "supervisor/supervisor.h"

struct world_store;
struct exec_profiles;
struct coordinator;

/* A call the capsule's seccomp filter stopped (docs/security.md, "Where
 * denials are recorded"). Besides failing with WX_DENIED_SYSCALL, such a
 * call commits its evidence in one transaction: the input
 * (world/invocation-input/v1), a denial record (world/invocation-denial/v1,
 * docs/provenance.md) naming the invocation, episode, skill and the denied
 * call, both members of the episode, and the journal's invocation intent
 * closed "failed" with the record's ref; its bytes count against the
 * episode's byte quota (not its call quota). No log entry: nothing of the
 * world changed. */
struct coord_denial {
	const char *invocation_id;      /* CHANNEL:EPISODE:TASK */
	const char *episode;
	const char *skill_id;
	const char *record_ref;         /* the committed denial record, or "" when it could not be written */
	const char *record_error;       /* why not ("" when written) */
	const struct sup_denial *call;  /* syscall, nr, arch, ioctl request */
};

struct coord_config {
	struct world_store *store;      /* WRITER handle; the caller keeps ownership */
	struct sup_limits limits;       /* capsule limits (sup_limits_default) */
	const char *workspace_root;     /* NULL: Workspace.* / Ailang.* calls fail as "no workspace root" */
	const char *tool_ailang_bin;    /* tool interpreter (archived + pinned at coord_new); NULL = none */
	const char *examples_dir;       /* Ailang.Discover examples; NULL = none */
	const char *written_by;         /* log entries' writtenBy, e.g. "worldd/0.1.0" */
	/* Workspace.Exec (broker/exec.h): the loaded profiles (NULL = none; the
	 * caller keeps them alive), the exec caches' root (NULL = the default)
	 * and --exec-max-output-bytes (0 = the default). */
	const struct exec_profiles *exec_profiles;
	const char *exec_cache_root;
	unsigned long long exec_output_max;
	unsigned exec_max_ms;           /* --exec-max-ms: the cap on an exec run's wall time (0 = EXEC_MAX_MS_DEFAULT) */
	/* Episode quotas (pure and effectful calls alike): calls committed, and
	 * bytes their inputs, plans, outputs and effect results/records stored.
	 * 0 = the default below; -1 = no limit. A call is refused (WX_QUOTA,
	 * class QuotaExceeded) before it runs when the episode has committed
	 * calls_max calls, or its bytes plus this call's input would pass
	 * bytes_max. Checked at admission: calls of one episode already running
	 * may each still commit (the overshoot is bounded by the episode's
	 * share of the call workers). */
	long long episode_calls_max, episode_bytes_max;
	/* Called (on the calling thread, after the denial record's transaction
	 * ended) for every call the seccomp filter stopped, so that the daemon
	 * can log it; NULL = nobody is told. */
	void (*on_denial)(void *ctx, const struct coord_denial *d);
	void *on_denial_ctx;
	/* Called with one line when a call's outcome is held because the store
	 * does not answer, and when it is written or given up (the
	 * daemon logs them); NULL = nobody is told. */
	void (*on_held)(void *ctx, const char *line);
	/* How long a held outcome is tried before the call gives up (its
	 * intents then stay open: worldd journal --indeterminate); 0 = the
	 * default, COORD_HOLD_S. */
	int hold_s;
};
#define COORD_HOLD_S 120
#define COORD_EPISODE_CALLS_DEFAULT 100000LL
#define COORD_EPISODE_BYTES_DEFAULT (1LL << 30)

/* Archives the tool interpreter (when given). Transition interpreters are
 * taken from the store's archive by the ref each descriptor was published
 * with, re-hashed into a sealed memfd on every run. */
struct coordinator *coord_new(const struct coord_config *cfg, struct world_err *err);
void coord_free(struct coordinator *c);

/* ---- sessions ---- */
/* A live session (broker/session.h): credential_id, episode, grants,
 * ngrants, expires_at (live while now < expires_at). */
#include "broker/session.h"
#define coord_session broker_session
/* Looks the credential up (64 lowercase hex). Errors, each its own code so
 * a projection can map them to its wire classes:
 *   WX_USAGE      malformed credential (not 64 lowercase hex)
 *   WX_NOT_FOUND  unknown session credential
 *   WX_SESSION    session credential has expired (unknown: WX_NOT_FOUND) */
int coord_session_open(struct coordinator *c, const char *credential, struct coord_session **out,
                       struct world_err *err);
void coord_session_free(struct coord_session *s);

/* ---- the published transitions a session can see ---- */
/* The current registry's descriptors visible to s, as a JSON array of
 * stored descriptors (docs/publishing.md: id, title, description,
 * inputSchema, outputSchema, access, declaredEffects, transitionFn,
 * interpreter, semanticsEpoch). An empty registry gives []. */
int coord_visible(struct coordinator *c, const struct coord_session *s, json_t **out, struct world_err *err);

/* What changed in the store (change detection, store.h
 * world_store_changed), for a caller that tells clients about it (the
 * daemon's notification stream): *registries grows each time a registry
 * head moved, *sessions each time the sessions changed, since coord_new.
 * One PRAGMA when nothing was committed anywhere. */
void coord_generations(struct coordinator *c, unsigned long long *registries, unsigned long long *sessions);

/* ---- one call ---- */
struct coord_call {
	const struct coord_session *session;
	const char *channel;            /* "mcp", "a2a" or "cli": the invocation id's prefix */
	const char *skill_id;           /* transition id, e.g. "tools.echo" */
	const char *task_id;            /* [A-Za-z0-9._-]{1,128}; NULL = a fresh random one */
	const char *args;               /* the caller's arguments, JSON text */
	size_t args_len;
	/* Cancellation (NULL = not cancellable): once fired, the call stops at
	 * the next of these points -- before its capsule starts, in its
	 * capsule (killed at once), before its effect runs, before its commit
	 * -- and fails with WX_CANCELLED; its journal intent is closed
	 * "cancelled" and no log entry is committed. An effect that already
	 * ran keeps its evidence (request, result, record, effect outcome);
	 * docs/broker.md, "Cancelled calls". A cancel after the commit changes
	 * nothing: the call committed. */
	const struct sup_cancel *cancel;
	/* Progress (NULL = none), on the calling thread, in this order:
	 * "admitted" (every refusal before execution passed, the task id
	 * claimed), "plan" (effectful: the plan passed its laws), "effect"
	 * (each effect, after it ran or was denied: message names it and its
	 * status), "finish" (the transition's output is in), "commit" (the log
	 * entry is durable). A replayed task id reports "admitted" then
	 * "commit". message is one line. */
	void (*on_progress)(void *ctx, const char *stage, const char *message);
	void *progress_ctx;
	/* Input the skill asked its caller for before it runs (its descriptor's
	 * "inputRequests", coordinator/confirm.h). inputs: the
	 * {"requests","responses"} block of confirm_decide, JSON text, which the
	 * transition sees as its input's "world":{"input":...} and the stored
	 * input keeps (NULL: a skill that asks is refused, nothing runs).
	 * once: the task id came in a request state -- any journal row for it
	 * refuses the call (WX_CONFLICT "requestState already used"), so a
	 * state runs at most once. declined: the caller declined (the reason):
	 * nothing runs; the input and the journal's "cancelled" outcome are
	 * written and the call fails WX_REFUSED. */
	const char *inputs;
	int once;
	const char *declined;
};
struct coord_result {
	char *output;                   /* canonical output JSON, with its world block; malloc'd */
	size_t output_len;
	char invocation_id[256];        /* CHANNEL:EPISODE:TASK */
	long long entry_index;
	char world_ref[WORLD_REF_SIZE], entry_hash[WORLD_REF_SIZE], record_ref[WORLD_REF_SIZE];
	/* the receipt's leaf hash (store/tree.h): base64 of
	 * SHA-256(0x00 || the entry's canonical JSON), leaf entry_index - 1 of
	 * the log's Merkle tree ("" when not committed) */
	char leaf_hash[45];
	int replayed;                   /* the task id was already committed: its result, re-verified */
	char denial_ref[WORLD_REF_SIZE]; /* failed with WX_DENIED_SYSCALL: its denial record ("" = not written) */
	long elapsed_ms, capsule_ms, broker_ms, commit_ms; /* where the time went */
};
/* 0: committed (or replayed); res filled. -1: err says why; nothing was
 * committed (a denied syscall commits its evidence only: struct
 * coord_denial, res->denial_ref; a cancelled call, WX_CANCELLED, its
 * input and the journal's "cancelled" outcome, and any effect's evidence). Execution failures keep the supervisor's codes (WX_DEADLINE,
 * WX_CAPACITY, WX_DENIED_SYSCALL, WX_NOT_OBJECT, WX_INTERP, ...); a plan law
 * violation is WX_PLAN_LAW. */
int coord_call(struct coordinator *c, const struct coord_call *call, struct coord_result *res,
               struct world_err *err);
void coord_result_free(struct coord_result *r);

/* 1 when s is a task id a caller may give: [A-Za-z0-9._-]{1,128} (the
 * one rule; every transport checks its callers' ids with it), else 0. */
int coord_task_id_valid(const char *s);

/* ---- a committed call, read back ---- */
/* The committed call whose invocation record is record_ref (the journal's
 * outcome of its invocation id), from st: the coordinator's store or a
 * reader of it, whose use the caller serialises. Its record, log entry and
 * output are read, each object re-hashed on read, and res gets what the
 * call's answer carried: output (canonical, malloc'd; coord_result_free),
 * entry_index, entry_hash, leaf_hash, record_ref and world_ref. input_ref,
 * when not NULL, must be the record's input: a task id used again with
 * other arguments is refused (WX_CONFLICT "task id already used in this
 * session"). *record (NULL: not wanted) gets the parsed invocation record,
 * the caller's. 0, or -1 with err. */
int coord_committed(struct world_store *st, const char *record_ref, const char *input_ref, struct coord_result *res,
                    json_t **record, struct world_err *err);

/* The error class of the wire envelope (docs/design.md §8.1) for an error code:
 * "BadRequest", "SessionUnknown", "Timeout", "Capacity", "NotFound", ... */
const char *coord_error_class(int code);
#endif
