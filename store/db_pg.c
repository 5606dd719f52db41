/* store/db_pg.c: the PostgreSQL driver of store/db.h, over libpq.
 *
 * Owns: the connection (a postgresql:// URI; the password from the URI,
 * from PGPASSFILE / ~/.pgpass through libpq, or from opts.password_file,
 * which wins), reconnection after a lost connection, the rewriting of `?`
 * parameters to `$N`, prepared statements (lazily, per connection, again
 * after a reconnect), binary bytea both ways, SERIALIZABLE transactions,
 * and the classification of SQLSTATEs. Every text it produces is scrubbed
 * of every form of the password it knows (as written in the URI, percent-
 * decoded, from the file) before it leaves this file.
 *
 * Linked only into dynamically linked programs (libworld_pg.a,
 * docs/HACKING.md); a program enables it with wdb_pg_enable(). */
#include "store/db_internal.h"
#include "store/open_opts.h"
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* type OIDs (pg_type.dat; stable across releases) */
#define OID_BOOL 16
#define OID_BYTEA 17
#define OID_NAME 19
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_TEXT 25
#define OID_UNKNOWN 705
#define OID_BPCHAR 1042
#define OID_VARCHAR 1043
#define OID_NUMERIC 1700

#define MAX_SECRETS 6

struct pdb {
	struct wdb h;
	PGconn *conn;
	int readonly;
	int lock_timeout_ms; /* the busy timeout: how long any lock wait of this session may last */
	int in_tx;        /* between wdb_begin and commit/rollback */
	int tx_fail;      /* the class of the first failure inside the transaction */
	unsigned gen;     /* counts connections: statements prepared on an older one are prepared again */
	unsigned next_id; /* names of prepared statements */
	int64_t changes;
	/* the transaction's pipeline (store/db.h's wdb_begin): BEGIN and the
	 * writes whose result nobody reads are sent without waiting; the next
	 * read, exec or COMMIT sends them all and waits once */
	int pipelining; /* 0: every statement waits for its answer (WORLD_TEST_PG_NO_PIPELINE) */
	int pipe;       /* the connection is in libpq's pipeline mode */
	int begun;      /* the transaction's BEGIN was sent */
	int sp_depth;   /* savepoints open: inside one every statement waits (its failure is its caller's) */
	const char *next_lock; /* wdb_lock_next: taken by the next transaction */
	const char *tx_lock;   /* the open transaction's, sent right after its BEGIN */
	struct qent *q; /* sent, answers not read yet */
	size_t nq, capq;
	uint64_t round_trips; /* waits for the server's answer on this handle */
	char *secrets[MAX_SECRETS]; /* every form of the password: scrubbed from every message */
};

/* one command sent in the pipeline whose answer is not read yet */
struct qent {
	char kind;        /* 'b' BEGIN, 'l' its write queue's lock, 'w' a deferred write, 'p' a prepare, 'x' an exec,
	                   * 'r' the read waited for, 'c' COMMIT */
	struct pstmt *s;  /* 'p': its statement (NULL once finalized) */
};

struct pstmt {
	struct wdb_stmt h;
	char *sql; /* rewritten to $N */
	int nparams;
	char name[32];
	unsigned gen;   /* connection it was prepared on (0 = never) */
	char *kinds;    /* per parameter: 0 unbound, 'i', 't', 'b', 'n' */
	char *prepared_blob; /* per parameter: prepared as bytea */
	char **vals;
	int *lens;
	int *fmts;
	PGresult *res;
	int ran;
	int deferrable; /* INSERT or DELETE without RETURNING: no row to read */
	int row, nrows;
	char numbuf[32];
};

#define PDB(d) ((struct pdb *)(d))

/* ---- round trips ---- */

/* every wait for the server's answer, over every handle of the process */
static atomic_uint_fast64_t round_trips_all;

#ifdef WORLD_TEST_HOOKS
/* WORLD_TEST_PG_TRACE=FILE: one line per round trip (thread, what, the
 * statement's start), appended; never a parameter's value */
static pthread_mutex_t trace_mu = PTHREAD_MUTEX_INITIALIZER;
static void trace(const char *what, const char *sql)
{
	const char *path = getenv("WORLD_TEST_PG_TRACE");
	if (!path || !*path) return;
	pthread_mutex_lock(&trace_mu);
	FILE *f = fopen(path, "ae");
	if (f) {
		fprintf(f, "%d %s %.100s\n", (int)gettid(), what, sql ? sql : "");
		fclose(f);
	}
	pthread_mutex_unlock(&trace_mu);
}
#else
#define trace(what, sql) ((void)(what), (void)(sql))
#endif

static void exchanged(struct pdb *d, const char *what, const char *sql)
{
	d->round_trips++;
	atomic_fetch_add_explicit(&round_trips_all, 1, memory_order_relaxed);
	trace(what, sql);
}

uint64_t wdb_pg_round_trips(const struct wdb *db)
{
	if (!db) return atomic_load_explicit(&round_trips_all, memory_order_relaxed);
	return db->drv->kind == WDB_PG ? ((const struct pdb *)db)->round_trips : 0;
}
#define PST(s) ((struct pstmt *)(s))

/* ---- secrets and messages ---- */

static void add_secret(struct pdb *d, const char *s, size_t n)
{
	if (!s || !n) return;
	for (int i = 0; i < MAX_SECRETS; i++) {
		if (d->secrets[i] && strlen(d->secrets[i]) == n && memcmp(d->secrets[i], s, n) == 0) return;
		if (!d->secrets[i]) {
			d->secrets[i] = strndup(s, n);
			return;
		}
	}
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

/* s as written and percent-decoded (as far as it decodes) */
static void add_secret_both(struct pdb *d, const char *s, size_t n)
{
	add_secret(d, s, n);
	char *dec = malloc(n + 1);
	if (!dec) return;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int a, b;
		if (s[i] == '%' && i + 2 < n && (a = hexval((unsigned char)s[i + 1])) >= 0 && (b = hexval((unsigned char)s[i + 2])) >= 0) {
			dec[k++] = (char)(a * 16 + b);
			i += 2;
		} else {
			dec[k++] = s[i];
		}
	}
	add_secret(d, dec, k);
	explicit_bzero(dec, n + 1);
	free(dec);
}

/* Every form of a password the raw URI may hold, before libpq has parsed
 * it (its parse errors may quote a piece of the URI): the userinfo's
 * password (as libpq reads it: after the first ':' of what precedes the
 * first '@' before any '/') and any password=... query parameter. */
static void secrets_of_uri(struct pdb *d, const char *uri)
{
	const char *a = strstr(uri, "://");
	if (!a) return;
	a += 3;
	size_t auth = strcspn(a, "@/");
	if (a[auth] == '@') {
		const char *colon = memchr(a, ':', auth);
		if (colon) add_secret_both(d, colon + 1, (size_t)(a + auth - colon - 1));
	}
	for (const char *p = uri; (p = strstr(p, "password=")); p += 9) {
		const char *v = p + 9;
		size_t n = strcspn(v, "&#");
		add_secret_both(d, v, n);
	}
}

/* msg as one line, every secret replaced by "***", into out */
static void scrub(const struct pdb *d, const char *msg, char *out, size_t cap)
{
	size_t k = 0;
	int space = 0;
	if (!msg) msg = "(no message)";
	for (size_t i = 0; msg[i] && k + 4 < cap;) {
		size_t hit = 0;
		for (int j = 0; j < MAX_SECRETS && d->secrets[j]; j++) {
			size_t n = strlen(d->secrets[j]);
			if (n && strncmp(msg + i, d->secrets[j], n) == 0 && n > hit) hit = n;
		}
		if (hit) {
			memcpy(out + k, "***", 3);
			k += 3;
			i += hit;
			space = 0;
			continue;
		}
		unsigned char c = (unsigned char)msg[i++];
		if (c == '\n' || c == '\t' || c == '\r') {
			if (!space && k) out[k++] = ' ';
			space = 1;
			continue;
		}
		if (c == ' ' && space) continue;
		space = c == ' ';
		out[k++] = (char)c;
	}
	while (k && out[k - 1] == ' ') k--;
	out[k] = 0;
}

static int pfail(struct pdb *d, int cls, int code_other, const char *what, const char *msg, const char *sqlstate,
                 struct world_err *err)
{
	char clean[768];
	scrub(d, msg, clean, sizeof clean);
	snprintf(d->h.msg, sizeof d->h.msg, "%s", clean);
	if (sqlstate && *sqlstate)
		werr(err, wdb_fail_code(cls, code_other), "store %s: %s: %s (SQLSTATE %s)", d->h.name, what, clean, sqlstate);
	else
		werr(err, wdb_fail_code(cls, code_other), "store %s: %s: %s", d->h.name, what, clean);
	if (d->in_tx && !d->tx_fail) d->tx_fail = cls;
	return cls;
}

static int classify_state(const char *st)
{
	if (!st || strlen(st) != 5) return WDB_FAIL;
	if (!strcmp(st, "40001") || !strcmp(st, "40P01") || !strcmp(st, "55P03")) return WDB_RETRY;
	if (!strncmp(st, "08", 2) || !strcmp(st, "57P01") || !strcmp(st, "57P02") || !strcmp(st, "57P03") ||
	    !strcmp(st, "53300"))
		return WDB_UNAVAILABLE;
	if (!strncmp(st, "23", 2)) return WDB_CONFLICT;
	return WDB_FAIL;
}

/* a failed result (or none) of WHAT */
static int res_fail(struct pdb *d, PGresult *res, const char *what, struct world_err *err)
{
	const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *prim = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	int cls = classify_state(st);
	/* "current transaction is aborted": the class of what aborted it */
	if (st && !strcmp(st, "25P02") && d->in_tx && d->tx_fail) cls = d->tx_fail;
	if (PQstatus(d->conn) == CONNECTION_BAD) cls = WDB_UNAVAILABLE;
	int rc = pfail(d, cls, WX_IO, what, prim ? prim : PQerrorMessage(d->conn), st, err);
	if (res) PQclear(res);
	return rc;
}

/* ---- connecting ---- */

static void drop_notices(void *arg, const char *message)
{
	(void)arg;
	(void)message; /* NOTICEs (e.g. "relation exists, skipping") are not errors: nothing is printed */
}

static void set_name(struct pdb *d)
{
	const char *user = PQuser(d->conn), *host = PQhost(d->conn), *port = PQport(d->conn), *db = PQdb(d->conn);
	int sock = host && *host == '/'; /* a socket directory */
	char raw[sizeof d->h.name];
	snprintf(raw, sizeof raw, "postgresql://%s@%s%s%s%s%s/%s", user ? user : "", sock ? "[" : "", host ? host : "",
	         sock ? "]" : "", port && *port ? ":" : "", port ? port : "", db ? db : "");
	scrub(d, raw, d->h.name, sizeof d->h.name);
}

/* After every (re)connection: what the store's contract needs of a session. */
static int session_setup(struct pdb *d, struct world_err *err)
{
	PQsetNoticeProcessor(d->conn, drop_notices, NULL);
	/* lock_timeout: a lock wait (a row another transaction holds, the
	 * store's write queue) ends after the busy timeout with 55P03, as a
	 * SQLite writer's wait in its busy handler does */
	char sql[160];
	snprintf(sql, sizeof sql, "SET synchronous_commit = on; SET lock_timeout = %d%s", d->lock_timeout_ms,
	         d->readonly ? "; SET default_transaction_read_only = on" : "");
	exchanged(d, "session", sql);
	PGresult *res = PQexec(d->conn, sql);
	if (!res || PQresultStatus(res) != PGRES_COMMAND_OK) return res_fail(d, res, "connect: session set-up", err);
	PQclear(res);
	d->gen++;
	return 0;
}

/* The class of a failed connection attempt. libpq gives no SQLSTATE for
 * it: a refusal by the server itself ("FATAL:": bad password, no such
 * database or role) is WDB_FAIL, unless it is the server starting or
 * stopping; anything else (no server, refused, timed out) is unavailable. */
static int connect_class(PGconn *c)
{
	const char *m = PQerrorMessage(c);
	if (PQconnectionNeedsPassword(c)) return WDB_FAIL;
	if (strstr(m, "FATAL:") && !strstr(m, "the database system is") && !strstr(m, "too many"))
		return WDB_FAIL;
	return WDB_UNAVAILABLE;
}

/* opts.password_file by the one reader of password files
 * (store/open_opts.h); the password is a secret of the handle from then */
static int read_password_file(struct pdb *d, const char *path, char **out, struct world_err *err)
{
	if (world_password_file_read(d->h.name, path, out, err) < 0) return WDB_FAIL;
	add_secret(d, *out, strlen(*out));
	return 0;
}

static void free_secrets(struct pdb *d)
{
	for (int i = 0; i < MAX_SECRETS; i++)
		if (d->secrets[i]) {
			explicit_bzero(d->secrets[i], strlen(d->secrets[i]));
			free(d->secrets[i]);
			d->secrets[i] = NULL;
		}
}

static int p_open(const char *name, const struct wdb_opts *opts, struct wdb **out, struct world_err *err)
{
	struct pdb *d = calloc(1, sizeof *d);
	if (!d) return werr(err, WX_IO, "store postgresql://...: open: out of memory"), WDB_FAIL;
	d->h.drv = wdb_pg_driver_enabled;
	d->readonly = !!(opts->flags & WDB_READONLY);
	d->lock_timeout_ms = opts->busy_timeout_ms > 0 ? opts->busy_timeout_ms : 5000;
	const char *np = getenv("WORLD_TEST_PG_NO_PIPELINE");
	d->pipelining = !(np && *np && strcmp(np, "0") != 0);
	secrets_of_uri(d, name);
	snprintf(d->h.name, sizeof d->h.name, "postgresql://...");

	/* parse first: a name that is no URI is refused without connecting */
	char *perr = NULL;
	PQconninfoOption *ci = PQconninfoParse(name, &perr);
	if (!ci) {
		int rc = pfail(d, WDB_FAIL, WX_USAGE, "not a valid postgresql:// URI", perr ? perr : "out of memory", NULL, err);
		PQfreemem(perr);
		free_secrets(d);
		free(d);
		return rc;
	}
	for (PQconninfoOption *o = ci; o->keyword; o++)
		if (!strcmp(o->keyword, "password") && o->val) add_secret(d, o->val, strlen(o->val));
	PQconninfoFree(ci);

	char *filepw = NULL;
	if (opts->password_file && read_password_file(d, opts->password_file, &filepw, err) < 0) {
		free_secrets(d);
		free(d);
		return WDB_FAIL;
	}
	char timeout[16];
	snprintf(timeout, sizeof timeout, "%d", opts->connect_timeout_s > 0 ? opts->connect_timeout_s : 5);
	/* defaults first (the URI's own settings override them), the password
	 * file and the encoding after it (they override the URI) */
	const char *keys[8], *vals[8];
	int k = 0;
	keys[k] = "connect_timeout", vals[k++] = timeout;
	keys[k] = "application_name", vals[k++] = "worldd";
	keys[k] = "dbname", vals[k++] = name;
	if (filepw) keys[k] = "password", vals[k++] = filepw;
	keys[k] = "client_encoding", vals[k++] = "UTF8";
	keys[k] = NULL, vals[k] = NULL;
	exchanged(d, "connect", NULL);
	d->conn = PQconnectdbParams(keys, vals, 1);
	if (filepw) {
		explicit_bzero(filepw, strlen(filepw));
		free(filepw);
	}
	if (!d->conn) {
		werr(err, WX_IO, "store postgresql://...: connect: out of memory");
		free_secrets(d);
		free(d);
		return WDB_FAIL;
	}
	set_name(d);
	if (PQstatus(d->conn) != CONNECTION_OK) {
		int rc = pfail(d, connect_class(d->conn), WX_IO, "connect", PQerrorMessage(d->conn), NULL, err);
		/* the server asked for a password and none was given: say where one goes */
		if (err && strstr(err->msg, "no password supplied")) {
			size_t l = strlen(err->msg);
			snprintf(err->msg + l, sizeof err->msg - l,
			         " (give it in a file: --store-password-file FILE, mode 0600; or libpq's PGPASSFILE / ~/.pgpass)");
		}
		PQfinish(d->conn);
		free_secrets(d);
		free(d);
		return rc;
	}
	int rc = session_setup(d, err);
	if (rc < 0) {
		PQfinish(d->conn);
		free_secrets(d);
		free(d);
		return rc;
	}
	*out = &d->h;
	return 0;
}

static void p_close(struct wdb *h)
{
	struct pdb *d = PDB(h);
	PQfinish(d->conn);
	free(d->q);
	free_secrets(d);
	free(d);
}

/* Before each use: a lost connection is re-established outside a
 * transaction; inside one the transaction is gone with it. */
static int ensure(struct pdb *d, const char *what, struct world_err *err)
{
	if (PQstatus(d->conn) == CONNECTION_OK) return 0;
	if (d->in_tx)
		return pfail(d, WDB_UNAVAILABLE, WX_IO, what,
		             "connection lost inside a transaction (the server rolled it back); roll back and retry", NULL, err);
	exchanged(d, "reconnect", NULL);
	PQreset(d->conn);
	/* a connection lost in the pipeline comes back out of it */
	if (PQpipelineStatus(d->conn) != PQ_PIPELINE_OFF) PQexitPipelineMode(d->conn);
	d->pipe = 0;
	d->nq = 0;
	if (PQstatus(d->conn) != CONNECTION_OK)
		return pfail(d, connect_class(d->conn), WX_IO, "reconnect", PQerrorMessage(d->conn), NULL, err);
	return session_setup(d, err);
}

/* ---- the transaction's pipeline ----
 *
 * Inside a transaction the connection is in libpq's pipeline mode: BEGIN
 * and every write whose answer the caller does not read (INSERT or
 * DELETE without RETURNING, stepped outside a savepoint) are sent without
 * waiting; the next statement whose answer is read (a row, wdb_changes, an
 * exec, COMMIT) is sent behind them with one Sync, and the answers of all
 * are read in one wait: one round trip. A failure of a deferred write
 * makes the server skip everything after it up to the Sync; it is returned
 * by the call that waited (its class kept in tx_fail), so the transaction
 * fails as a whole, as it would have at that write. Inside a savepoint
 * nothing is deferred: its caller undoes a failed statement alone. */

static int qpush(struct pdb *d, char kind, struct pstmt *s)
{
	if (d->nq == d->capq) {
		size_t cap = d->capq ? d->capq * 2 : 32;
		struct qent *q = realloc(d->q, cap * sizeof *q);
		if (!q) return -1;
		d->q = q;
		d->capq = cap;
	}
	d->q[d->nq++] = (struct qent){ kind, s };
	/* on its way now, not at the Sync: the server runs it at once (takes
	 * its locks, writes its rows) while its answer waits; only the wait
	 * is saved. A failure to send shows at the Sync. */
	PQflush(d->conn);
	return 0;
}

/* the connection died: what was queued is gone with it */
static void pipe_lost(struct pdb *d)
{
	for (size_t i = 0; i < d->nq; i++)
		if (d->q[i].kind == 'p' && d->q[i].s) d->q[i].s->gen = 0;
	d->nq = 0;
	d->pipe = 0;
}

static int pipe_send(struct pdb *d, const char *sql, char kind, const char *what, struct world_err *err);

/* The write queue's lock (wdb_lock_next) waited past lock_timeout:
 * final, not a race to run again (the busy timeout is the caller's
 * bound); anything else as any failure. */
static int queue_fail(struct pdb *d, PGresult *r, struct world_err *err)
{
	const char *st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	if (!st || strcmp(st, "55P03") != 0 || PQstatus(d->conn) == CONNECTION_BAD) return res_fail(d, r, "write queue", err);
	PQclear(r);
	char m[160];
	snprintf(m, sizeof m, "another writer's transaction held it past the busy timeout (%d ms)", d->lock_timeout_ms);
	return pfail(d, WDB_FAIL, WX_LOCKED, "write queue", m, NULL, err);
}

/* In pipeline mode with the transaction's BEGIN sent. */
static int pipe_start(struct pdb *d, const char *what, struct world_err *err)
{
	if (PQstatus(d->conn) != CONNECTION_OK) {
		pipe_lost(d);
		return pfail(d, WDB_UNAVAILABLE, WX_IO, what,
		             "connection lost inside a transaction (the server rolled it back); roll back and retry", NULL, err);
	}
	if (!d->pipe) {
		if (!PQenterPipelineMode(d->conn)) return pfail(d, WDB_FAIL, WX_IO, what, PQerrorMessage(d->conn), NULL, err);
		d->pipe = 1;
	}
	if (!d->begun) {
		if (!PQsendQueryParams(d->conn, "BEGIN ISOLATION LEVEL SERIALIZABLE", 0, NULL, NULL, NULL, NULL, 0) ||
		    qpush(d, 'b', NULL) < 0)
			return pfail(d, PQstatus(d->conn) == CONNECTION_BAD ? WDB_UNAVAILABLE : WDB_FAIL, WX_IO, "begin",
			             PQerrorMessage(d->conn), NULL, err);
		d->begun = 1;
		int rc;
		if (d->tx_lock && (rc = pipe_send(d, d->tx_lock, 'l', "write queue", err)) < 0) return rc;
	}
	return 0;
}

/* Send a command of no parameters into the pipeline. */
static int pipe_send(struct pdb *d, const char *sql, char kind, const char *what, struct world_err *err)
{
	if (!PQsendQueryParams(d->conn, sql, 0, NULL, NULL, NULL, NULL, 0) || qpush(d, kind, NULL) < 0)
		return pfail(d, PQstatus(d->conn) == CONNECTION_BAD ? WDB_UNAVAILABLE : WDB_FAIL, WX_IO, what,
		             PQerrorMessage(d->conn), NULL, err);
	return 0;
}

/* Sync and read the answer of everything queued: one round trip. The
 * answer of the queue's 'r' entry (there is at most one, the last) goes
 * to *out (NULL when it failed or was skipped). Returns 0 or the class of
 * the first failure (err says it: the server's message). */
static int pipe_sync(struct pdb *d, PGresult **out, const char *what, const char *sql, struct world_err *err)
{
	if (out) *out = NULL;
	if (!PQpipelineSync(d->conn)) {
		pipe_lost(d);
		return pfail(d, WDB_UNAVAILABLE, WX_IO, what, PQerrorMessage(d->conn), NULL, err);
	}
	exchanged(d, what, sql);
	int fail = 0;
	for (size_t i = 0; i < d->nq; i++) {
		struct qent *e = &d->q[i];
		PGresult *r = PQgetResult(d->conn);
		if (!r) {
			/* no answer: the connection is gone */
			if (!fail) fail = pfail(d, WDB_UNAVAILABLE, WX_IO, what, PQerrorMessage(d->conn), NULL, err);
			pipe_lost(d);
			return fail;
		}
		ExecStatusType st = PQresultStatus(r);
		if (st == PGRES_FATAL_ERROR) {
			if (e->kind == 'p' && e->s) e->s->gen = 0;
			if (!fail && e->kind == 'l') fail = queue_fail(d, r, err);
			else if (!fail) fail = res_fail(d, r, e->kind == 'c' ? "commit" : what, err);
			else PQclear(r);
		} else if (st == PGRES_PIPELINE_ABORTED) {
			if (e->kind == 'p' && e->s) e->s->gen = 0;
			PQclear(r);
		} else {
			if (e->kind == 'w' || (e->kind == 'r' && st == PGRES_COMMAND_OK)) {
				const char *t = PQcmdTuples(r);
				if (t && *t) d->changes = strtoll(t, NULL, 10);
			}
			if (e->kind == 'r' && out) *out = r;
			else PQclear(r);
		}
		/* each command's answers end with a NULL */
		PGresult *x;
		while ((x = PQgetResult(d->conn))) PQclear(x);
	}
	d->nq = 0;
	PGresult *r = PQgetResult(d->conn);
	int synced = r && PQresultStatus(r) == PGRES_PIPELINE_SYNC;
	if (r) PQclear(r);
	if (!synced) {
		if (out && *out) {
			PQclear(*out);
			*out = NULL;
		}
		if (!fail) fail = pfail(d, WDB_UNAVAILABLE, WX_IO, what, PQerrorMessage(d->conn), NULL, err);
		pipe_lost(d);
	}
	return fail;
}

/* Out of pipeline mode (nothing may be queued). */
static void pipe_end(struct pdb *d)
{
	if (d->pipe && PQstatus(d->conn) == CONNECTION_OK) PQexitPipelineMode(d->conn);
	d->pipe = 0;
	d->nq = 0;
}

static int starts(const char *sql, const char *word)
{
	while (isspace((unsigned char)*sql)) sql++;
	return strncasecmp(sql, word, strlen(word)) == 0;
}

static int p_exec(struct wdb *h, const char *sql, struct world_err *err)
{
	struct pdb *d = PDB(h);
	if (d->in_tx && d->pipelining) {
		/* a savepoint is begun and released in the pipeline (each fails
		 * only when the transaction has already failed, and then the
		 * transaction fails), and so is a LOCK TABLE (a write queue taken
		 * first thing in the transaction: LOCK takes no snapshot, so the
		 * transaction's snapshot is taken after the lock is granted, with
		 * BEGIN and the lock riding in the first statement's round trip;
		 * a lock wait past lock_timeout fails the transaction, WDB_RETRY);
		 * ROLLBACK TO and anything else wait */
		int sp = starts(sql, "SAVEPOINT"), rel = starts(sql, "RELEASE"), back = starts(sql, "ROLLBACK TO");
		int lock = starts(sql, "LOCK") && !strchr(sql, ';');
		int rc = pipe_start(d, "exec", err);
		if (rc < 0) return rc;
		if (lock) return pipe_send(d, sql, 'x', "exec", err);
		if (sp || rel || back) {
			if ((rc = pipe_send(d, sql, back ? 'r' : 'x', "exec", err)) < 0) return rc;
			if (sp) d->sp_depth++;
			if (rel && d->sp_depth > 0) d->sp_depth--;
			if (!back) return 0;
			PGresult *res;
			rc = pipe_sync(d, &res, "exec", sql, err);
			if (res) PQclear(res);
			/* undone to the savepoint: the transaction stands again */
			if (rc == 0) d->tx_fail = 0;
			return rc;
		}
		/* anything else (several statements, maybe) by itself, out of
		 * the pipeline, after what it queued */
		if ((rc = pipe_sync(d, NULL, "exec", sql, err)) < 0) return rc;
		pipe_end(d);
	}
	int rc = ensure(d, "exec", err);
	if (rc < 0) return rc;
	exchanged(d, "exec", sql);
	PGresult *res = PQexec(d->conn, sql);
	ExecStatusType s = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK && s != PGRES_EMPTY_QUERY) return res_fail(d, res, "exec", err);
	PQclear(res);
	return 0;
}

/* ---- statements ---- */

/* `?` and `?N` to `$N` outside '...', "..." and comments; the number of
 * parameters into *np. */
static char *rewrite(const char *sql, int *np)
{
	size_t n = strlen(sql);
	char *out = malloc(n * 6 + 1);
	if (!out) return NULL;
	size_t k = 0;
	int max = 0;
	for (size_t i = 0; i < n;) {
		char c = sql[i];
		if (c == '\'' || c == '"') {
			size_t j = i + 1;
			while (j < n && sql[j] != c) j++;
			if (j < n) j++;
			memcpy(out + k, sql + i, j - i);
			k += j - i;
			i = j;
		} else if (c == '-' && i + 1 < n && sql[i + 1] == '-') {
			size_t j = i;
			while (j < n && sql[j] != '\n') j++;
			memcpy(out + k, sql + i, j - i);
			k += j - i;
			i = j;
		} else if (c == '/' && i + 1 < n && sql[i + 1] == '*') {
			const char *e = strstr(sql + i + 2, "*/");
			size_t j = e ? (size_t)(e - sql) + 2 : n;
			memcpy(out + k, sql + i, j - i);
			k += j - i;
			i = j;
		} else if (c == '?') {
			i++;
			int num = 0;
			if (i < n && isdigit((unsigned char)sql[i])) {
				while (i < n && isdigit((unsigned char)sql[i]) && num < 100000) num = num * 10 + (sql[i++] - '0');
			} else {
				num = max + 1;
			}
			if (num < 1 || num > 32766) { /* SQLite's limit; libpq's is 65535 */
				free(out);
				*np = -1;
				return NULL;
			}
			if (num > max) max = num;
			k += (size_t)sprintf(out + k, "$%d", num);
		} else {
			out[k++] = sql[i++];
		}
	}
	out[k] = 0;
	*np = max;
	return out;
}

static void clear_val(struct pstmt *s, int i)
{
	free(s->vals[i]);
	s->vals[i] = NULL;
	s->lens[i] = 0;
	s->fmts[i] = 0;
	s->kinds[i] = 0;
}

static void p_finalize(struct wdb_stmt *sh)
{
	struct pstmt *s = PST(sh);
	struct pdb *d = PDB(sh->db);
	if (s->res) PQclear(s->res);
	for (size_t i = 0; i < d->nq; i++)
		if (d->q[i].s == s) d->q[i].s = NULL;
	if (d->pipe) {
		/* in the pipeline, unanswered: skipped when the transaction failed,
		 * and then the statement dies with its connection */
		if (s->gen && s->gen == d->gen && PQstatus(d->conn) == CONNECTION_OK) {
			char sql[64];
			snprintf(sql, sizeof sql, "DEALLOCATE %s", s->name);
			pipe_send(d, sql, 'x', "finalize", NULL);
		}
	} else if (s->gen && s->gen == d->gen && PQstatus(d->conn) == CONNECTION_OK &&
	    PQtransactionStatus(d->conn) != PQTRANS_INERROR) {
		char sql[64];
		snprintf(sql, sizeof sql, "DEALLOCATE %s", s->name);
		exchanged(d, "deallocate", s->sql);
		PGresult *res = PQexec(d->conn, sql);
		if (res) PQclear(res); /* a statement that cannot be deallocated dies with its connection */
	}
	for (int i = 0; i < s->nparams; i++) free(s->vals[i]);
	free(s->vals);
	free(s->lens);
	free(s->fmts);
	free(s->kinds);
	free(s->prepared_blob);
	free(s->sql);
	free(s);
}

static int p_prepare(struct wdb *h, const char *sql, struct wdb_stmt **out, struct world_err *err)
{
	struct pdb *d = PDB(h);
	struct pstmt *s = calloc(1, sizeof *s);
	if (!s) return werr(err, WX_IO, "store %s: prepare: out of memory", h->name), WDB_FAIL;
	s->h.db = h;
	s->sql = rewrite(sql, &s->nparams);
	if (!s->sql) {
		int bad = s->nparams < 0;
		free(s);
		return pfail(d, WDB_FAIL, WX_IO, "prepare", bad ? "a parameter number out of range 1..32766" : "out of memory",
		             NULL, err);
	}
	size_t np = s->nparams ? (size_t)s->nparams : 1;
	s->vals = calloc(np, sizeof *s->vals);
	s->lens = calloc(np, sizeof *s->lens);
	s->fmts = calloc(np, sizeof *s->fmts);
	s->kinds = calloc(np, 1);
	s->prepared_blob = calloc(np, 1);
	if (!s->vals || !s->lens || !s->fmts || !s->kinds || !s->prepared_blob) {
		p_finalize(&s->h);
		return werr(err, WX_IO, "store %s: prepare: out of memory", h->name), WDB_FAIL;
	}
	snprintf(s->name, sizeof s->name, "wdb%u", ++d->next_id);
	/* an UPDATE is a compare-and-swap whose count is read (store/db.h): it waits */
	s->deferrable = (starts(sql, "INSERT") || starts(sql, "DELETE")) && !strcasestr(sql, "RETURNING");
	*out = &s->h;
	return 0;
}

static int p_bind(struct wdb_stmt *sh, int idx, int kind, int64_t v, const void *p, size_t n, struct world_err *err)
{
	struct pstmt *s = PST(sh);
	struct pdb *d = PDB(sh->db);
	if (idx > s->nparams) {
		char m[96];
		snprintf(m, sizeof m, "parameter %d of a statement of %d", idx, s->nparams);
		return pfail(d, WDB_FAIL, WX_IO, "bind", m, NULL, err);
	}
	if (n > (size_t)0x7fffffff) return pfail(d, WDB_FAIL, WX_IO, "bind", "a value over 2 GiB", NULL, err);
	int i = idx - 1;
	clear_val(s, i);
	if (kind == 'i') {
		char num[24];
		int len = snprintf(num, sizeof num, "%lld", (long long)v);
		s->vals[i] = strndup(num, (size_t)len);
	} else if (kind == 't' || kind == 'b') {
		s->vals[i] = malloc(n + 1);
		if (s->vals[i]) {
			memcpy(s->vals[i], p, n);
			s->vals[i][n] = 0;
		}
		s->lens[i] = (int)n;
		s->fmts[i] = kind == 'b'; /* bytea in binary; text and numbers as text, typed by the server */
	} else {
		s->kinds[i] = 'n';
		return 0;
	}
	if (!s->vals[i]) return pfail(d, WDB_FAIL, WX_IO, "bind", "out of memory", NULL, err);
	s->kinds[i] = (char)kind;
	return 0;
}

/* prepared on this connection, with bytea where the bindings are blobs */
static int ready(struct pstmt *s, struct world_err *err)
{
	struct pdb *d = PDB(s->h.db);
	int same = s->gen == d->gen;
	for (int i = 0; same && i < s->nparams; i++)
		if ((s->kinds[i] == 'b') != (s->prepared_blob[i] != 0)) same = 0;
	if (same) return 0;
	if (d->pipe) {
		/* prepared in the pipeline, answered with the statement's own */
		if (s->gen == d->gen) {
			char sql[64];
			snprintf(sql, sizeof sql, "DEALLOCATE %s", s->name);
			int rc = pipe_send(d, sql, 'x', "prepare: deallocate", err);
			if (rc < 0) return rc;
		}
		Oid types[s->nparams ? s->nparams : 1];
		for (int i = 0; i < s->nparams; i++) {
			types[i] = s->kinds[i] == 'b' ? OID_BYTEA : 0;
			s->prepared_blob[i] = s->kinds[i] == 'b';
		}
		if (!PQsendPrepare(d->conn, s->name, s->sql, s->nparams, types) || qpush(d, 'p', s) < 0)
			return pfail(d, PQstatus(d->conn) == CONNECTION_BAD ? WDB_UNAVAILABLE : WDB_FAIL, WX_IO, "prepare",
			             PQerrorMessage(d->conn), NULL, err);
		s->gen = d->gen;
		return 0;
	}
	if (s->gen == d->gen) {
		char sql[64];
		snprintf(sql, sizeof sql, "DEALLOCATE %s", s->name);
		exchanged(d, "deallocate", s->sql);
		PGresult *res = PQexec(d->conn, sql);
		if (!res || PQresultStatus(res) != PGRES_COMMAND_OK) return res_fail(d, res, "prepare: deallocate", err);
		PQclear(res);
	}
	s->gen = 0;
	Oid *types = calloc(s->nparams ? (size_t)s->nparams : 1, sizeof *types);
	if (!types) return pfail(d, WDB_FAIL, WX_IO, "prepare", "out of memory", NULL, err);
	for (int i = 0; i < s->nparams; i++) {
		types[i] = s->kinds[i] == 'b' ? OID_BYTEA : 0;
		s->prepared_blob[i] = s->kinds[i] == 'b';
	}
	exchanged(d, "prepare", s->sql);
	PGresult *res = PQprepare(d->conn, s->name, s->sql, s->nparams, types);
	free(types);
	if (!res || PQresultStatus(res) != PGRES_COMMAND_OK) return res_fail(d, res, "prepare", err);
	PQclear(res);
	s->gen = d->gen;
	return 0;
}

static int p_step(struct wdb_stmt *sh, struct world_err *err)
{
	struct pstmt *s = PST(sh);
	struct pdb *d = PDB(sh->db);
	if (s->ran) {
		if (s->res && ++s->row < s->nrows) return WDB_ROW;
		return WDB_DONE;
	}
	int rc;
	PGresult *res;
	if (d->in_tx && d->pipelining) {
		if ((rc = pipe_start(d, "step", err)) < 0 || (rc = ready(s, err)) < 0) return rc;
		if (!PQsendQueryPrepared(d->conn, s->name, s->nparams, (const char *const *)s->vals, s->lens, s->fmts, 1))
			return pfail(d, PQstatus(d->conn) == CONNECTION_BAD ? WDB_UNAVAILABLE : WDB_FAIL, WX_IO, "step",
			             PQerrorMessage(d->conn), NULL, err);
		if (s->deferrable && d->sp_depth == 0) {
			/* nothing to read: answered at the next wait */
			if (qpush(d, 'w', NULL) < 0) return pfail(d, WDB_FAIL, WX_IO, "step", "out of memory", NULL, err);
			s->ran = 1;
			return WDB_DONE;
		}
		if (qpush(d, 'r', s) < 0) return pfail(d, WDB_FAIL, WX_IO, "step", "out of memory", NULL, err);
		rc = pipe_sync(d, &res, "step", s->sql, err);
		if (rc < 0) {
			if (res) PQclear(res);
			return rc;
		}
	} else {
		rc = ensure(d, "step", err);
		if (rc < 0) return rc;
		if ((rc = ready(s, err)) < 0) return rc;
		exchanged(d, "step", s->sql);
		res = PQexecPrepared(d->conn, s->name, s->nparams, (const char *const *)s->vals, s->lens, s->fmts, 1);
	}
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	s->ran = 1;
	if (st == PGRES_TUPLES_OK) {
		s->res = res;
		s->nrows = PQntuples(res);
		s->row = 0;
		return s->nrows > 0 ? WDB_ROW : WDB_DONE;
	}
	if (st == PGRES_COMMAND_OK) {
		const char *t = PQcmdTuples(res);
		if (t && *t) d->changes = strtoll(t, NULL, 10);
		PQclear(res);
		return WDB_DONE;
	}
	s->ran = 0;
	return res_fail(d, res, "step", err);
}

static void p_clear_bindings(struct wdb_stmt *sh)
{
	struct pstmt *s = PST(sh);
	for (int i = 0; i < s->nparams; i++) clear_val(s, i);
}

static void p_reset(struct wdb_stmt *sh)
{
	struct pstmt *s = PST(sh);
	if (s->res) PQclear(s->res);
	s->res = NULL;
	s->ran = 0;
	s->row = s->nrows = 0;
}

static int p_column_count(struct wdb_stmt *sh)
{
	struct pstmt *s = PST(sh);
	return s->res && s->row < s->nrows ? PQnfields(s->res) : 0;
}

static int p_column_is_null(struct wdb_stmt *sh, int col)
{
	struct pstmt *s = PST(sh);
	return PQgetisnull(s->res, s->row, col);
}

static uint64_t be(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++) v = v << 8 | p[i];
	return v;
}

/* binary numeric (src/backend/utils/adt/numeric.c, numeric_send): int16
 * ndigits, int16 weight, uint16 sign, uint16 dscale, ndigits base-10000
 * int16 digits; an integral value in int64 range, else *bad. */
static int64_t numeric_int64(const unsigned char *p, int len, int *bad)
{
	if (len < 8) goto no;
	int nd = (int16_t)be(p, 2), weight = (int16_t)be(p + 2, 2);
	unsigned sign = (unsigned)be(p + 4, 2);
	if (nd < 0 || len != 8 + 2 * nd || (sign != 0 && sign != 0x4000)) goto no;
	int64_t v = 0;
	for (int i = 0; i < nd; i++) {
		int64_t dg = (int16_t)be(p + 8 + 2 * i, 2);
		if (i > weight) {
			if (dg) goto no; /* a fraction */
			continue;
		}
		if (__builtin_mul_overflow(v, 10000, &v) || __builtin_add_overflow(v, sign ? -dg : dg, &v)) goto no;
	}
	for (int i = nd; i <= weight; i++)
		if (__builtin_mul_overflow(v, 10000, &v)) goto no;
	return v;
no:
	if (bad) *bad = 1;
	return 0;
}

static int64_t p_column_int64(struct wdb_stmt *sh, int col, int *bad)
{
	struct pstmt *s = PST(sh);
	if (PQgetisnull(s->res, s->row, col)) return 0;
	const unsigned char *p = (const unsigned char *)PQgetvalue(s->res, s->row, col);
	int len = PQgetlength(s->res, s->row, col);
	switch (PQftype(s->res, col)) {
	case OID_INT8:
		if (len == 8) return (int64_t)be(p, 8);
		break;
	case OID_INT4:
		if (len == 4) return (int32_t)be(p, 4);
		break;
	case OID_INT2:
		if (len == 2) return (int16_t)be(p, 2);
		break;
	case OID_BOOL:
		if (len == 1) return p[0] != 0;
		break;
	case OID_NUMERIC: return numeric_int64(p, len, bad);
	}
	if (bad) *bad = 1;
	return 0;
}

static const char *p_column_text(struct wdb_stmt *sh, int col)
{
	struct pstmt *s = PST(sh);
	if (PQgetisnull(s->res, s->row, col)) return NULL;
	switch (PQftype(s->res, col)) {
	case OID_TEXT:
	case OID_VARCHAR:
	case OID_BPCHAR:
	case OID_NAME:
	case OID_UNKNOWN:
	case OID_BYTEA: return PQgetvalue(s->res, s->row, col); /* libpq ends every value with a NUL */
	case OID_INT8:
	case OID_INT4:
	case OID_INT2:
	case OID_BOOL:
	case OID_NUMERIC: {
		int bad = 0;
		int64_t v = p_column_int64(sh, col, &bad);
		if (bad) return NULL;
		snprintf(s->numbuf, sizeof s->numbuf, "%lld", (long long)v);
		return s->numbuf;
	}
	default: return NULL; /* binary of another type: cast it to text in the SQL */
	}
}

static const void *p_column_blob(struct wdb_stmt *sh, int col, size_t *n)
{
	struct pstmt *s = PST(sh);
	if (PQgetisnull(s->res, s->row, col)) return "";
	*n = (size_t)PQgetlength(s->res, s->row, col);
	return PQgetvalue(s->res, s->row, col);
}

static int64_t p_changes(struct wdb *h)
{
	struct pdb *d = PDB(h);
	/* the rows of the last write: its answer read first (a failure is the
	 * transaction's, returned by the commit; none changed meanwhile) */
	if (d->pipe && d->nq && pipe_sync(d, NULL, "changes", NULL, NULL) < 0) return -1;
	return d->changes;
}

/* ---- transactions ---- */

static int p_rollback(struct wdb *h, struct world_err *err);

static int p_begin(struct wdb *h, struct world_err *err)
{
	struct pdb *d = PDB(h);
	if (d->in_tx) return pfail(d, WDB_FAIL, WX_IO, "begin", "a transaction is already open on this handle", NULL, err);
	d->tx_lock = d->next_lock;
	d->next_lock = NULL;
	if (d->pipelining) {
		/* BEGIN (and the write queue's lock) go with the transaction's
		 * first statement */
		int rc = ensure(d, "begin", err);
		if (rc < 0) return rc;
		d->in_tx = 1;
		d->tx_fail = 0;
		d->begun = 0;
		d->sp_depth = 0;
		return 0;
	}
	int rc = p_exec(h, "BEGIN ISOLATION LEVEL SERIALIZABLE", err);
	if (rc < 0) return rc;
	d->in_tx = 1;
	d->tx_fail = 0;
	if (d->tx_lock) {
		exchanged(d, "exec", d->tx_lock);
		PGresult *res = PQexec(d->conn, d->tx_lock);
		if (!res || PQresultStatus(res) != PGRES_COMMAND_OK) {
			rc = queue_fail(d, res, err);
			struct world_err ig;
			p_rollback(h, &ig);
			return rc;
		}
		PQclear(res);
	}
	return 0;
}

static int p_commit(struct wdb *h, struct world_err *err)
{
	struct pdb *d = PDB(h);
	if (!d->in_tx) return pfail(d, WDB_FAIL, WX_IO, "commit", "no transaction is open on this handle", NULL, err);
	if (d->pipelining && !d->begun && !d->pipe) {
		d->in_tx = 0; /* nothing was sent: nothing to commit */
		return 0;
	}
	if (d->pipe) {
		if (PQstatus(d->conn) != CONNECTION_OK) {
			d->in_tx = 0;
			pipe_lost(d);
			return pfail(d, WDB_UNAVAILABLE, WX_IO, "commit",
			             "connection lost inside the transaction; nothing of it is committed", NULL, err);
		}
		int rc = pipe_send(d, "COMMIT", 'c', "commit", err);
		if (rc == 0) rc = pipe_sync(d, NULL, "commit", "COMMIT", err);
		d->in_tx = 0;
		if (rc < 0 && PQstatus(d->conn) == CONNECTION_BAD) {
			pipe_lost(d);
			return pfail(d, WDB_UNAVAILABLE, WX_IO, "commit", "connection lost at COMMIT: whether it committed is not known",
			             NULL, err);
		}
		pipe_end(d);
		if (rc < 0) {
			/* a failure before COMMIT left the transaction open and
			 * failed: end it */
			if (PQstatus(d->conn) == CONNECTION_OK && PQtransactionStatus(d->conn) != PQTRANS_IDLE) {
				exchanged(d, "rollback", NULL);
				PGresult *res = PQexec(d->conn, "ROLLBACK");
				if (res) PQclear(res);
			}
			return rc;
		}
		return 0;
	}
	if (PQstatus(d->conn) != CONNECTION_OK) {
		d->in_tx = 0;
		return pfail(d, WDB_UNAVAILABLE, WX_IO, "commit", "connection lost inside the transaction; nothing of it is committed",
		             NULL, err);
	}
	exchanged(d, "commit", NULL);
	PGresult *res = PQexec(d->conn, "COMMIT");
	d->in_tx = 0;
	if (!res || PQresultStatus(res) != PGRES_COMMAND_OK) {
		/* the server's answer is unknown when the connection died here */
		if (PQstatus(d->conn) == CONNECTION_BAD) {
			if (res) PQclear(res);
			return pfail(d, WDB_UNAVAILABLE, WX_IO, "commit",
			             "connection lost at COMMIT: whether it committed is not known", NULL, err);
		}
		return res_fail(d, res, "commit", err);
	}
	/* COMMIT of a transaction that had failed answers ROLLBACK */
	int rolled = strcmp(PQcmdStatus(res), "ROLLBACK") == 0;
	PQclear(res);
	if (rolled) {
		int cls = d->tx_fail ? d->tx_fail : WDB_FAIL;
		return pfail(d, cls, WX_IO, "commit", "the transaction had failed and was rolled back", NULL, err);
	}
	return 0;
}

static int p_rollback(struct wdb *h, struct world_err *err)
{
	struct pdb *d = PDB(h);
	int was = d->in_tx;
	d->in_tx = 0;
	d->tx_fail = 0;
	if (d->pipe) {
		/* what was queued is answered (and dropped), then undone */
		struct world_err ig;
		if (d->nq && PQstatus(d->conn) == CONNECTION_OK) pipe_sync(d, NULL, "rollback", NULL, &ig);
		pipe_end(d);
		d->tx_fail = 0;
	} else if (was && d->pipelining && !d->begun) {
		return 0; /* nothing was sent */
	}
	if (!was || PQstatus(d->conn) != CONNECTION_OK) return 0; /* a lost connection took the transaction with it */
	exchanged(d, "rollback", NULL);
	PGresult *res = PQexec(d->conn, "ROLLBACK");
	if (!res || PQresultStatus(res) != PGRES_COMMAND_OK) return res_fail(d, res, "rollback", err);
	PQclear(res);
	return 0;
}

static int p_lock_next(struct wdb *h, const char *lock_sql)
{
	if (!lock_sql || strncasecmp(lock_sql, "LOCK ", 5) != 0 || strchr(lock_sql, ';')) return -1;
	PDB(h)->next_lock = lock_sql;
	return 0;
}

static const struct wdb_driver pg_driver = {
	.kind = WDB_PG,
	.open = p_open,
	.close = p_close,
	.exec = p_exec,
	.prepare = p_prepare,
	.bind = p_bind,
	.step = p_step,
	.reset = p_reset,
	.finalize = p_finalize,
	.column_count = p_column_count,
	.column_is_null = p_column_is_null,
	.column_int64 = p_column_int64,
	.column_text = p_column_text,
	.column_blob = p_column_blob,
	.changes = p_changes,
	.begin = p_begin,
	.commit = p_commit,
	.rollback = p_rollback,
	.clear_bindings = p_clear_bindings,
	.lock_next = p_lock_next,
};

void wdb_pg_enable(void) { wdb_pg_driver_enabled = &pg_driver; }
