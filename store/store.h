/* store/store.h: the content-addressed SQLite store (docs/design.md §6).
 *
 * Owns: the database file and its schema (versioned by PRAGMA user_version;
 * unknown versions are refused and the file is left untouched), the
 * write transactions of many writers (no lock is held between them),
 * objects, worlds and the log
 * (the store itself verifies the chain), the selected world head and the
 * registry heads (compare-and-swap), the journal, session rows, and the
 * interpreter archive `<db>.artifacts/`. The integrity scan is in scan.h.
 *
 * Transactions: every write function is atomic on its own. To group several
 * writes into one durable transaction (the daemon commits one invocation =
 * input, output, plan, record, world, log entry and head at once), call
 * world_store_begin(), the writes, then world_store_commit(); on any error
 * call world_store_rollback() and nothing of the group is kept. A write that
 * fails inside a group leaves the group as it was before that write.
 *
 * Several writers, in this process or others, share a store: each write
 * outside a group is its own short BEGIN IMMEDIATE transaction, a group is
 * one; a writer whose transaction finds another's waits for it (a
 * jittered, growing nap, up to the busy timeout: 5 s, or --wait-lock) and
 * then gets WX_LOCKED. Every check of a write (the log's index and chain,
 * a head's compare-and-swap) is made inside its transaction, so two
 * writers never fork the chain: the one that commits second sees the
 * first's head and refuses (WX_CONFLICT) or builds on it.
 *
 * Durability: WAL journal with synchronous=FULL -- a commit returns only
 * after the WAL is fsync'd (docs/store.md says why).
 *
 * Threads: a handle may be used from several threads only one call at a
 * time (SQLite serialises single calls, but a world_store_begin() group
 * spans calls): serialise writers with your own lock, or give each reader
 * thread its own WORLD_STORE_READER handle (WAL readers never block the
 * writer).
 *
 * Refs are strings "sha256:<64 lowercase hex>" (common/ref.h); buffers of
 * WORLD_REF_SIZE bytes. Errors: WX_BAD_INPUT (bad ref/label/JSON),
 * WX_NOT_FOUND, WX_LOCKED, WX_SCHEMA, WX_INTEGRITY (a damaged row: reads of
 * it keep failing), WX_CONFLICT (CAS lost, chain mismatch), WX_IO. */
#ifndef WORLD_STORE_STORE_H
#define WORLD_STORE_STORE_H
#include <stddef.h>
#include <stdint.h>
#include "common/error.h"
#include "common/ref.h"
#include <jansson.h>

#define WORLD_STORE_SCHEMA_VERSION 3

struct world_store;
struct sqlite3;

enum world_store_mode {
	WORLD_STORE_WRITER = 1,   /* may write (holds no lock between writes); create and migrate the store if needed */
	WORLD_STORE_READER = 2,   /* read only, no lock; the store must exist. A read-only
	                           * copy (no -shm beside it and none can be created) is
	                           * opened as an immutable file. */
};
/* Bench/bulk-load only: synchronous=OFF (NOT durable). Or'ed into mode. */
#define WORLD_STORE_NOSYNC 0x100
/* Or'ed into WORLD_STORE_WRITER by every verb that needs a store to be
 * there already (call, session mint/revoke, token rotate, serve): a path
 * that does not exist is WX_NOT_FOUND and nothing is created; so is an
 * empty PostgreSQL database (no schema is made in it). */
#define WORLD_STORE_EXISTING 0x200
/* Bench only: a durable writer with SQLite's own WAL writes, one system
 * call per frame and header (store/walbuf.h gathers them otherwise), to
 * print what gathering gives side by side. */
#define WORLD_STORE_PLAIN_WAL 0x400
/* Bench only: appends write no Merkle tree (store/tree.h), to print what
 * the tree and the checkpoint signatures cost beside none (bench/tree_bench).
 * A store written so is not a transparency log: its scan reports holes. */
#define WORLD_STORE_NO_TREE 0x800

/* How long a write waits for another writer's transaction by default. */
#define WORLD_STORE_BUSY_MS_DEFAULT 5000
/* Open (and for WRITER, create, or migrate from schema 1 -- each in one
 * transaction, safe when two writers open the store at once) the store at
 * path. Any number of writers may have it open. */
int world_store_open(const char *path, int mode, struct world_store **out, struct world_err *err);
/* The same, with the busy timeout of this handle's writes: wait_lock_s
 * seconds (0..86400; 0 = the default, WORLD_STORE_BUSY_MS_DEFAULT) that a
 * write waits for other writers' transactions before WX_LOCKED.
 * Before any database file is created, the file at path is probed:
 * one that is not a SQLite database (or, for a reader, an empty file) is
 * WX_NOT_STORE and nothing is created beside it. A reader opens with SQLite mode=ro, and immutable=1
 * when the directory or the file is not writable by this process (a store
 * of another user, a read-only mount), so it never creates the -wal or
 * -shm files; an immutable reader does not see commits still in a -wal. */
int world_store_open_wait(const char *path, int mode, double wait_lock_s, struct world_store **out,
                          struct world_err *err);
/* A --wait-lock value: a number of seconds in 0..86400 into *out; -1 when
 * s is not one (the caller prints its own usage line). */
int world_wait_lock_parse(const char *s, double *out);
void world_store_close(struct world_store *st);
const char *world_store_path(const struct world_store *st);
/* The underlying handle (for the scan and for tests); do not write through it. */
struct sqlite3 *world_store_db(struct world_store *st);

/* Checkpoints off the commit path (store/db_sqlite_ckpt.c; docs/store.md, The
 * write path): a thread of this WRITER handle, on a connection of its own,
 * copies the WAL back into the database once per 8000 new WAL frames
 * (32 MiB; a PASSIVE checkpoint: it never holds up a writer), instead of
 * the committing thread inside the COMMIT that crosses SQLite's own 1000;
 * the committer checkpoints itself only past 32000 frames (the thread
 * cannot keep up), so the WAL stays under some 128 MiB. Fewer, larger
 * checkpoints copy a page changed by many batches once, not once per
 * batch. world_group_new starts it; world_store_close stops it. Once per
 * handle (again: nothing; on PostgreSQL: nothing, its server checkpoints).
 * The counts (any may be NULL): checkpoints the
 * thread made, ones the committer made, ones that failed (neither). */
#define WORLD_STORE_CKPT_FRAMES 1000         /* SQLite's own autocheckpoint: a handle without the thread */
#define WORLD_STORE_CKPT_THREAD_FRAMES 8000  /* the thread is woken once per this many new frames */
#define WORLD_STORE_CKPT_INLINE_FRAMES 32000 /* past this the committer checkpoints itself */
int world_store_checkpoint_thread(struct world_store *st, struct world_err *err);
void world_store_checkpoint_stats(struct world_store *st, long long *background, long long *inlined,
                                  long long *failed);

int world_store_begin(struct world_store *st, struct world_err *err);
int world_store_commit(struct world_store *st, struct world_err *err);
void world_store_rollback(struct world_store *st);

/* ---- change detection (store/changes.c) ----
 * "Has anything a daemon caches changed since token T?", asked before
 * every call (docs/store.md, "Change detection"). The sessions, the
 * registry heads (transitions, epochs) and nothing else are cached by
 * callers; the store keeps one counter for each in a row of its own,
 * bumped by triggers in the transaction that changes them, whoever writes
 * (another daemon, `worldd session revoke`, world-publish). The check
 * first asks SQLite whether any connection committed at all since T
 * (PRAGMA data_version, which moves only for OTHER connections' commits,
 * and this handle's own commit count): when nothing was committed it
 * reads no row; otherwise one primary-key lookup of the counters row.
 * A later PostgreSQL store answers the same question its own way. */
#define WORLD_CHANGED_SESSIONS 1u   /* a session row was added, removed or changed */
#define WORLD_CHANGED_REGISTRIES 2u /* a registry head (transitions, epochs) moved */
#define WORLD_CHANGED_ALL (WORLD_CHANGED_SESSIONS | WORLD_CHANGED_REGISTRIES)
struct world_changes {
	int valid;                 /* 0 (a zeroed token): everything counts as changed */
	long long data_version;
	unsigned long long own;    /* this handle's commits */
	long long sessions, registries;
	/* in: an episode whose usage (world_episode_usage_get) the look reads
	 * in the same statement, NULL for none; out: usage_read = 1 when it
	 * did (0 when no row was read: nothing changed, or no counters row) */
	const char *usage_episode;
	int usage_read;
	long long usage_calls, usage_bytes;
};
/* Which of the kinds above changed since *t (bits into *changed, 0 when
 * none), and moves *t to now. A zeroed *t, or a store without the
 * counters row (one no writer of this build has opened yet), reports
 * WORLD_CHANGED_ALL every time, so callers re-read as they would without
 * a cache. Call it on the handle the cached rows are read through, one
 * thread at a time per token. Inside a write transaction
 * (world_store_begin) it sees every commit before that transaction. */
int world_store_changed(struct world_store *st, struct world_changes *t, unsigned *changed, struct world_err *err);

/* ---- objects (§6.1) ---- */
/* semanticId: 1-256 bytes of printable ASCII, e.g. "world/transition-source/v1".
 * provenance: free-form label (NULL = ""), at most 4096 bytes, no control chars.
 * The ref is recomputed here from the payload; an existing object keeps its
 * first writer's labels (*created = 0). */
int world_object_put(struct world_store *st, const char *semantic_id, const char *provenance,
                     const void *payload, size_t len, char ref_out[WORLD_REF_SIZE], int *created,
                     struct world_err *err);
/* Canonicalises v (common/canon.h) and stores the canonical bytes. */
int world_object_put_json(struct world_store *st, const char *semantic_id, const char *provenance, const json_t *v,
                          char ref_out[WORLD_REF_SIZE], struct world_err *err);
struct world_object {
	char ref[WORLD_REF_SIZE];
	char *semantic_id;
	char *provenance;
	unsigned char *payload; /* NUL-terminated for convenience */
	size_t len;
};
/* Re-hashes the payload: a mismatch is WX_INTEGRITY, never returned as data. */
int world_object_get(struct world_store *st, const char *ref, struct world_object *out, struct world_err *err);
void world_object_free(struct world_object *o);
/* Calls fn for every object of semantic_id stored at or after since (unix
 * seconds; created_at, never hashed), oldest first; fn returns 0 to go on.
 * Reads only that kind's rows (objects_by_semantic). fn may read the store
 * (e.g. world_object_get, which re-hashes). */
int world_objects_of_kind(struct world_store *st, const char *semantic_id, long long since,
                          int (*fn)(void *ctx, const char *ref, long long created_at), void *ctx,
                          struct world_err *err);
/* 1 present, 0 absent, -1 error (no re-hash). */
int world_object_exists(struct world_store *st, const char *ref, struct world_err *err);

/* ---- log and worlds (§6.4) ---- */
struct world_log_append {
	long long entry_index;        /* must be head index + 1 (first entry: 1) */
	long long semantics_epoch;    /* >= 1 */
	const char *transition_fn;    /* ref of the transition source */
	const char *interpreter;      /* ref of the archived interpreter */
	const char *prev_entry_hash;  /* head entryHash, or NULL for the first entry */
	const char *written_by;       /* who wrote it, e.g. "worldd/0.1.0" (1-256 bytes) */
	const char *transition_ref;   /* ref of the invocation record (must be stored) */
	const char *state_root;       /* ref of the invocation output (must be stored) */
	const char *expected_world;   /* CAS: current selected world ref, NULL/"" = no world yet */
};
struct world_log_result {
	long long entry_index;
	char entry_hash[WORLD_REF_SIZE];
	char world_ref[WORLD_REF_SIZE];
	/* the entry's leaf hash in the log's Merkle tree (store/tree.h):
	 * SHA-256(0x00 || its canonical JSON as stored) */
	unsigned char leaf_hash[32];
};
/* Appends one log entry, its world {revision,stateRoot,logHead} and moves the
 * selected head, all in one transaction. The store verifies index = previous
 * + 1 and prevEntryHash = previous entryHash (WX_CONFLICT otherwise) and the
 * head CAS (WX_CONFLICT). entryHash = sha256 of the canonical JSON of
 * {entryIndex, semanticsEpoch, transitionFn, interpreter, prevEntryHash
 * (null for the first entry), writtenBy, transitionRef}. */
int world_log_append(struct world_store *st, const struct world_log_append *a, struct world_log_result *out,
                     struct world_err *err);

/* What the next append needs: *index = last index + 1, prev = last
 * entryHash ("" for the first entry), world = selected world ref ("" when
 * none). Call inside the same group as the append so nothing moves between. */
int world_log_next(struct world_store *st, long long *index, char prev[WORLD_REF_SIZE], char world[WORLD_REF_SIZE],
                   struct world_err *err);

struct world_log_entry {
	long long entry_index, semantics_epoch;
	char transition_fn[WORLD_REF_SIZE], interpreter[WORLD_REF_SIZE];
	char prev_entry_hash[WORLD_REF_SIZE]; /* "" for the first entry */
	char transition_ref[WORLD_REF_SIZE], entry_hash[WORLD_REF_SIZE];
	char *written_by;
	char *json; /* canonical JSON of the entry: the seven fields + entryHash */
	size_t json_len;
};
/* Reads entry N, re-verifying its hash and columns (WX_INTEGRITY on damage). */
int world_log_get(struct world_store *st, long long index, struct world_log_entry *out, struct world_err *err);
void world_log_entry_free(struct world_log_entry *e);
/* Last entry: *index = 0 and hash "" when the log is empty. */
int world_log_last(struct world_store *st, long long *index, char entry_hash[WORLD_REF_SIZE], struct world_err *err);

struct world_world {
	char ref[WORLD_REF_SIZE];
	long long revision;
	char state_root[WORLD_REF_SIZE], log_head[WORLD_REF_SIZE];
	char json[512]; /* canonical JSON {"logHead":..,"revision":..,"stateRoot":..} */
};
int world_world_get(struct world_store *st, const char *ref, struct world_world *out, struct world_err *err);
/* The selected world head; WX_NOT_FOUND when no entry was ever committed. */
int world_head_get(struct world_store *st, struct world_world *out, struct world_err *err);

/* ---- registry heads (§7) ---- */
/* name: e.g. "world/transition-registry/v1". *revision = moves so far. */
int world_registry_head_get(struct world_store *st, const char *name, char ref[WORLD_REF_SIZE],
                            long long *revision, struct world_err *err);
/* CAS: moves name from expected (NULL/"" = no head yet) to new_ref (must be a
 * stored object). WX_CONFLICT if the head is not expected. *revision gets the
 * new revision (1 for the first head). */
int world_registry_head_cas(struct world_store *st, const char *name, const char *expected,
                            const char *new_ref, long long *revision, struct world_err *err);

/* ---- journal (§5.5) ---- */
struct world_journal_intent {
	const char *kind;    /* "invocation" or "effect" */
	const char *subject; /* invocation id, or invocation id + effect id */
	const char *episode; /* may be NULL */
	const char *effect;  /* effect name (effects), may be NULL */
	const char *scope;   /* may be NULL */
	long long cost;      /* debited budget (effects), 0 otherwise */
	const char *ref;     /* request / input ref, may be NULL */
};
/* Durable once the enclosing transaction commits. *id = intent id. */
int world_journal_intent(struct world_store *st, const struct world_journal_intent *in, long long *id,
                         struct world_err *err);
/* status: "succeeded", "failed", "committed" or "cancelled" (an
 * invocation its caller cancelled: nothing of it committed as a result;
 * docs/broker.md, "Cancelled calls"). A second outcome for the
 * same intent is WX_CONFLICT; an unknown intent WX_NOT_FOUND. The outcome
 * row carries its intent's kind and subject, and a (kind, subject) is
 * committed at most once (a unique index, so across processes too): a
 * second "committed" outcome for it, of any intent, is WX_CONFLICT
 * "... already committed" and nothing is written. */
int world_journal_outcome(struct world_store *st, long long intent_id, const char *status, const char *ref,
                          struct world_err *err);
/* Inside a write transaction: reads intents ids[0..n) (n <= 4; 0 skipped)
 * in one statement, so that their outcomes written in this transaction
 * (world_journal_outcome) are checked without reading each again (one
 * round trip to PostgreSQL, not n). Outside one, nothing is read. */
int world_journal_expect(struct world_store *st, const long long *ids, size_t n, struct world_err *err);
/* Sum of the costs of the episode's effect intents for effect+scope (denials
 * write no intent; failed effects keep their intent and so cost). */
int world_journal_spent(struct world_store *st, const char *episode, const char *effect, const char *scope,
                        long long *spent, struct world_err *err);
/* Calls fn for every intent without an outcome (indeterminate after a crash).
 * fn returns 0 to continue. */
int world_journal_indeterminate(struct world_store *st,
                                int (*fn)(void *ctx, long long id, const char *kind, const char *subject,
                                          const char *ref),
                                void *ctx, struct world_err *err);

/* The latest intent of kind for subject, preferring one whose outcome is
 * "committed": status "" when it has no outcome. WX_NOT_FOUND when none. */
struct world_journal_row {
	long long intent_id;
	char intent_ref[WORLD_REF_SIZE];   /* the intent's ref ("" when none) */
	char status[16];                   /* outcome status, "" = indeterminate */
	char outcome_ref[WORLD_REF_SIZE];  /* the outcome's ref ("" when none) */
};
int world_journal_find(struct world_store *st, const char *kind, const char *subject, struct world_journal_row *out,
                       struct world_err *err);
/* The index of the log entry whose transitionRef is record_ref (WX_NOT_FOUND). */
int world_log_find_record(struct world_store *st, const char *record_ref, long long *index, struct world_err *err);
/* The index of the log entry a ref names: its entryHash, its transitionRef
 * (invocation record), the ref of its world, or its world's stateRoot (the
 * invocation output), tried in that order; *what (may be NULL) gets
 * "entry", "record", "world" or "output". WX_NOT_FOUND when none. */
int world_log_find_ref(struct world_store *st, const char *ref, long long *index, const char **what,
                       struct world_err *err);

/* ---- the operator token (docs/daemon.md, "The operator token") ---- */
/* *match = 1 when sha256(token) is the store's operator token hash; 0 when
 * it is not, or the store has none. Works in READER mode (one PK lookup). */
int world_operator_token_match(struct world_store *st, const char *token, int *match, struct world_err *err);
/* Stores sha256(token) as the operator token: with replace, whatever was
 * there is replaced (token rotate); without, only when the store has none
 * (*installed = 1 then, else 0: a daemon's start, one statement, so two
 * daemons starting at once install one). */
int world_operator_token_install(struct world_store *st, const char *token, int replace, int *installed,
                                 struct world_err *err);
/* The operator token file's path into path: <db>.operator-token, or for a
 * PostgreSQL store CACHE/operator-tokens/NAME.operator-token in the host's
 * cache directory (world_archive_cache_dir; NAME the store's name without
 * scheme, bytes other than [A-Za-z0-9.@-] as '_'). -1 with err when it does
 * not fit or there is no cache directory. */
int world_operator_token_path(const struct world_store *st, char *path, size_t n, struct world_err *err);
/* A new random token (64 lowercase hex) installed as by
 * world_operator_token_install and, when installed, written to
 * <db>.operator-token (0600; temp file, fsync, rename): token gets it then,
 * else "" (not replace, and the store already had one: its file is left as
 * it is). path gets the file's path either way. */
int world_operator_token_new(struct world_store *st, int replace, char token[65], char *path, size_t pathn,
                             int *installed, struct world_err *err);
/* The file of the key that signs MCP request states (coordinator/confirm.h):
 * <db>.input-key, or for a PostgreSQL store CACHE/input-keys/NAME.input-key,
 * as the operator token's; make_dirs makes the cache's directories. */
int world_input_key_path(const struct world_store *st, char *path, size_t n, int make_dirs, struct world_err *err);

/* ---- sessions (§8) ---- */
/* Stores sha256(credential) only, with the episode, grants (canonicalised
 * JSON text) and the expiry (unix seconds). */
int world_session_put(struct world_store *st, const char *credential, const char *episode,
                      const char *grants_json, long long expires_at, struct world_err *err);
struct world_session {
	char credential_hash[WORLD_REF_SIZE];
	char *episode;
	char *grants_json;
	long long expires_at, created_at;
};
/* Hashes credential and looks it up (WX_NOT_FOUND if unknown). Expiry is
 * reported, not enforced: the caller compares expires_at with its clock. */
int world_session_get(struct world_store *st, const char *credential, struct world_session *out,
                      struct world_err *err);
/* The same by the stored hash ("sha256:<hex>" of the credential): the
 * per-call check that a session was not revoked since its request began. */
int world_session_get_hash(struct world_store *st, const char *credential_hash, struct world_session *out,
                           struct world_err *err);
void world_session_free(struct world_session *s);
/* Calls fn for every session (oldest first); the row's strings are valid
 * during the call only. fn returns 0 to continue. */
int world_session_list(struct world_store *st, int (*fn)(void *ctx, const struct world_session *s), void *ctx,
                       struct world_err *err);
/* Deletes the session whose credential_hash is given, or every session of
 * episode (exactly one of the two). None matched: WX_NOT_FOUND, nothing
 * changed. *count (may be NULL) gets the number deleted. */
int world_session_revoke(struct world_store *st, const char *credential_hash, const char *episode, int *count,
                         struct world_err *err);

/* ---- episodes: membership and usage (schema 2) ----
 * episode_objects says which refs an episode's committed calls produced or
 * depended on (one object can belong to several episodes: content
 * addressing); the read routes show a session only its episode's members
 * and the public objects. episode_usage holds per-episode quota counters.
 * episode: 1-256 bytes, no control characters. A reader of a schema-1
 * store gets WX_SCHEMA from these (open it once with a writer). */
/* Records that each of refs[0..n) belongs to episode (idempotent; NULL or "" entries skipped). Call inside the commit's transaction. */
int world_episode_objects_add(struct world_store *st, const char *episode, const char *const *refs, size_t n, struct world_err *err);
/* *member = 1 when ref belongs to episode, else 0. */
int world_episode_has_object(struct world_store *st, const char *episode, const char *ref, int *member, struct world_err *err);
/* Adds to the episode's usage (calls committed, bytes stored by its calls). */
int world_episode_usage_add(struct world_store *st, const char *episode, long long calls, long long bytes, struct world_err *err);
/* The episode's usage so far (0, 0 when none). */
int world_episode_usage_get(struct world_store *st, const char *episode, long long *calls, long long *bytes, struct world_err *err);

/* The log entries an episode sees: those whose transitionRef (invocation
 * record) is a member of it (a derived table the store keeps itself,
 * whichever of the entry and the membership row is written first). */
int world_episode_has_entry(struct world_store *st, const char *episode, long long index, int *member,
                            struct world_err *err);
/* Up to max of its entry indexes >= from, ascending, into out[0..*n). */
int world_episode_entries(struct world_store *st, const char *episode, long long from, size_t max, long long *out,
                          size_t *n, struct world_err *err);
/* Its newest entry's index (0 when none). */
int world_episode_last_entry(struct world_store *st, const char *episode, long long *index, struct world_err *err);
/* The world of revision N (= the world entry N made), re-verified; WX_NOT_FOUND when none. */
int world_world_at(struct world_store *st, long long revision, struct world_world *out, struct world_err *err);

/* ---- interpreter archive (§6.6) ---- */
struct world_interp {
	char ref[WORLD_REF_SIZE];
	char version[256];  /* first non-empty line of `BIN --version` */
	uint64_t size;
	char path[4096];    /* <db>.artifacts/interpreters/sha256/<hex>/ailang */
	int created;        /* 0 when the same bytes were already archived */
};
/* Hashes bin, copies it to the archive (temp + fsync + rename, mode 0555),
 * probes `--version` on the archived copy (10 s limit, empty environment),
 * writes manifest.json {hash,size,version} beside it and records it. */
int world_archive_interpreter(struct world_store *st, const char *bin, struct world_interp *out,
                              struct world_err *err);
/* The archive's checks of BIN, by reads only: its sha256 (ref), size and
 * release line (version), with nothing archived and no store needed
 * (out->path is ""), so a verb can refuse an interpreter before its
 * attended step. Errors as world_archive_interpreter's. */
int world_interp_probe(const char *bin, struct world_interp *out, struct world_err *err);
/* Looks up an archived interpreter by ref (no re-hash: the runner hashes the
 * bytes it executes). WX_NOT_FOUND when unknown. Works in READER mode. */
int world_interp_get(struct world_store *st, const char *ref, struct world_interp *out, struct world_err *err);
/* Re-verifies an archived interpreter: the file's sha256 is ref and its
 * size the recorded one (*what = WORLD_INTERP_FILE on failure), and
 * manifest.json beside it is the canonical {hash,size,version} of that file
 * and the recorded release (*what = WORLD_INTERP_MANIFEST). A damaged or
 * missing file is WX_INTEGRITY; an unknown ref WX_NOT_FOUND. Works in READER
 * mode; reads only. */
#define WORLD_INTERP_FILE 1
#define WORLD_INTERP_MANIFEST 2
int world_interp_verify(struct world_store *st, const char *ref, int *what, struct world_err *err);

/* The archive of a PostgreSQL store (docs/store.md, "Interpreter
 * archive"): world_archive_interpreter writes the bytes and manifest.json
 * into the table archive(ref, bytes, manifest) in the transaction of the
 * interpreters row (the server re-hashes the bytes against the ref), and
 * world_archive_interpreter and world_interp_get give as out->path a file
 * of this host's cache, laid out like <db>.artifacts:
 * CACHE/interpreters/sha256/<hex>/{ailang (0500), manifest.json (0400)},
 * directories 0700; each call re-hashes the cached file, and one that is
 * missing or of other bytes (refused with one line on stderr, never given
 * out) is written again from the row (temp name, fsync, rename: two
 * processes materialising one ref at once each leave it whole).
 * world_interp_verify checks the row (reads only). CACHE is
 * world_archive_configure's cache_dir, else $XDG_CACHE_HOME/world, else
 * $HOME/.cache/world. One setting per process (the cache is content
 * addressed: one serves every store); NULL opts or cache_dir = the
 * default again. A cache_dir must be absolute (WX_USAGE). */
struct world_archive_opts {
	const char *cache_dir;
};
int world_archive_configure(const struct world_archive_opts *opts, struct world_err *err);
/* The cache directory in effect (n >= 4096). */
int world_archive_cache_dir(char *out, size_t n, struct world_err *err);
/* For the components above the store, so that none needs its raw handle
 * (the same on SQLite and PostgreSQL): */
/* 1 for a WRITER handle. */
int world_store_is_writer(const struct world_store *st);
/* 1 inside a world_store_begin() transaction of the caller's (its writes
 * are the caller's to commit), 0 outside. */
int world_store_in_txn(const struct world_store *st);
/* One savepoint of the caller's inside its world_store_begin() transaction:
 * BEGIN it, RELEASE it (keep its writes) or ROLLBACK to it (undo them;
 * then RELEASE). One level. */
enum world_savepoint_op { WORLD_SP_BEGIN, WORLD_SP_RELEASE, WORLD_SP_ROLLBACK };
int world_store_savepoint(struct world_store *st, enum world_savepoint_op op, struct world_err *err);
/* A flat run inside the caller's world_store_begin() transaction: while it
 * lasts the store's own writes of several statements open no savepoint of
 * their own (each costs a statement, a round trip on PostgreSQL), so a
 * write that fails midway leaves its earlier statements in the
 * transaction. world_store_flat_end returns 1 when any write failed (or
 * was undone) during the run: the caller must then roll the whole
 * transaction back (and may run it again with savepoints), else 0. */
void world_store_flat_begin(struct world_store *st);
int world_store_flat_end(struct world_store *st);
/* An object's kind and payload as stored, not re-hashed (the provenance
 * walk shows what is there, damage included; world_object_get checks). */
int world_object_get_raw(struct world_store *st, const char *ref, char **semantic_id, char **payload, size_t *len,
                         struct world_err *err);
/* 1 when the episode may read object ref: a member of it, or of one of the
 * three public kinds (daemon/reads.c's); 0 when not or absent; -1 with err. */
int world_episode_object_visible(struct world_store *st, const char *episode, const char *ref,
                                 const char *const public_kinds[3], struct world_err *err);
/* 1 and *revision when a world of that ref is stored, 0 when not, -1 with err. */
int world_world_revision(struct world_store *st, const char *ref, long long *revision, struct world_err *err);
/* Objects of one semanticId in ref order after `after` ("" = from the
 * start), at most limit: fn(ctx, ref, provenance) for each, 0 to go on.
 * With episode, only the episode's members (its episode_objects range;
 * other episodes' objects are never read). */
int world_objects_by_semantic(struct world_store *st, const char *semantic_id, const char *after, long long limit,
                              const char *episode, int (*fn)(void *ctx, const char *ref, const char *provenance),
                              void *ctx, struct world_err *err);
#endif
