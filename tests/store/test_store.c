/* tests/store/test_store.c: the SQLite store -- objects and labels, the log
 * chain and head CAS checked by the store, grouped transactions, registry
 * heads, journal, sessions, a second writer, schema versions, the scan and
 * its resume cursors, the interpreter archive. */
#include "common/canon.h"
#include "store/scan.h"
#include "store/store.h"
#include "tests/store/sfix.h"
#include "tests/tap.h"
#include <fcntl.h>
#include <sqlite3.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256], db[300];
static struct sfix F; /* source, archived interpreter, records (sfix.h) */

static struct world_store *open_w(void)
{
	struct world_store *st = NULL;
	struct world_err err = {0};
	if (world_store_open(db, WORLD_STORE_WRITER, &st, &err) < 0) bail("open %s: %s", db, err.msg);
	return st;
}

static long long count(struct world_store *st, const char *table)
{
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(world_store_db(st), sql, -1, &s, NULL) != SQLITE_OK) return -1;
	long long n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_finalize(s);
	return n;
}

static void put(struct world_store *st, const char *sid, const char *payload, char ref[WORLD_REF_SIZE])
{
	struct world_err err = {0};
	if (world_object_put(st, sid, "test", payload, strlen(payload), ref, NULL, &err) < 0) bail("put: %s", err.msg);
}

static int append(struct world_store *st, long long idx, const char *prev, const char *tref, const char *root,
                  const char *expect, struct world_log_result *r, struct world_err *err)
{
	struct world_log_append a = { idx, 1, F.src, F.interp, prev, "test", tref, root, expect };
	return world_log_append(st, &a, r, err);
}

static char *file_sha(const char *path)
{
	static char out[WORLD_REF_SIZE];
	int fd = open(path, O_RDONLY);
	unsigned char d[32];
	if (fd < 0 || world_sha256_fd(fd, path, d, NULL, NULL) < 0) return "";
	close(fd);
	world_ref_format(d, out);
	return out;
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/world-test-store.XXXXXX");
	if (!mkdtemp(dir)) bail("mkdtemp");
	snprintf(db, sizeof db, "%s/world.db", dir);
	struct world_err err = {0};
	struct world_store *st = open_w();

	/* objects */
	char r1[WORLD_REF_SIZE], r2[WORLD_REF_SIZE], r3[WORLD_REF_SIZE];
	int created = -1;
	ok(world_object_put(st, "world/invocation-output/v1", "first", "{\"a\":1}", 7, r1, &created, &err) == 0 &&
	   created == 1, "object put");
	char want[WORLD_REF_SIZE];
	world_hash_ref("{\"a\":1}", 7, want, NULL);
	is_str(r1, want, "ref = sha256 of the payload only");
	ok(world_object_put(st, "other/kind", "second", "{\"a\":1}", 7, r2, &created, &err) == 0 && created == 0,
	   "same payload again: not created");
	struct world_object o;
	ok(world_object_get(st, r1, &o, &err) == 0, "object get");
	is_str(o.semantic_id, "world/invocation-output/v1", "first writer's semanticId wins");
	is_str(o.provenance, "first", "first writer's provenance wins");
	ok(o.len == 7 && memcmp(o.payload, "{\"a\":1}", 7) == 0, "payload round-trips");
	world_object_free(&o);
	ok(world_object_put(st, "", "p", "x", 1, r2, NULL, &err) < 0 && err.code == WX_BAD_INPUT, "empty semanticId refused");
	ok(world_object_put(st, "bad id", "p", "x", 1, r2, NULL, &err) < 0 && err.code == WX_BAD_INPUT,
	   "semanticId with a space refused");
	ok(world_object_put(st, "k", "a\nb", "x", 1, r2, NULL, &err) < 0 && err.code == WX_BAD_INPUT,
	   "provenance with a newline refused");
	ok(world_object_get(st, "sha256:0000000000000000000000000000000000000000000000000000000000000000", &o, &err) < 0 &&
	   err.code == WX_NOT_FOUND, "absent object: not found");
	ok(world_object_get(st, "sha256:ABC", &o, &err) < 0 && err.code == WX_BAD_INPUT, "bad ref: bad input");
	is_int(count(st, "objects"), 1, "bad input wrote nothing");
	ok(world_object_put(st, "empty", NULL, "", 0, r3, NULL, &err) == 0, "empty payload is an object");
	world_hash_ref("", 0, want, NULL);
	is_str(r3, want, "empty payload ref");

	/* log and worlds */
	char rec[WORLD_REF_SIZE], out[WORLD_REF_SIZE], bogus[WORLD_REF_SIZE];
	if (sfix_init(st, dir, &F, &err) < 0) bail("fixture: %s", err.msg);
	put(st, "world/invocation-output/v1", "{\"o\":1}", out);
	if (sfix_record(st, &F, out, 1, "t", rec, &err) < 0) bail("record: %s", err.msg);
	struct world_log_result l1, l2, lx;
	/* the store refuses an entry that does not name an invocation record
	 * agreeing with its header and stateRoot */
	put(st, "world/invocation-record/v0", "{\"r\":1}", bogus);
	ok(append(st, 1, NULL, bogus, out, NULL, &l1, &err) < 0 && err.code == WX_BAD_INPUT &&
	   strstr(err.msg, "not an invocation record"), "a transitionRef that is no invocation record is refused (%s)", err.msg);
	ok(append(st, 1, NULL, out, out, NULL, &l1, &err) < 0 && err.code == WX_BAD_INPUT,
	   "an output as transitionRef is refused (%s)", err.msg);
	{
		struct world_log_append x = { 1, 2, F.src, F.interp, NULL, "test", rec, out, NULL };
		ok(world_log_append(st, &x, &l1, &err) < 0 && err.code == WX_BAD_INPUT && strstr(err.msg, "semanticsEpoch"),
		   "a header whose semanticsEpoch differs from the record's is refused (%s)", err.msg);
		struct world_log_append y = { 1, 1, F.interp, F.interp, NULL, "test", rec, out, NULL };
		ok(world_log_append(st, &y, &l1, &err) < 0 && err.code == WX_BAD_INPUT && strstr(err.msg, "transitionFn"),
		   "a header whose transitionFn differs is refused (%s)", err.msg);
		struct world_log_append z = { 1, 1, F.src, F.src, NULL, "test", rec, out, NULL };
		ok(world_log_append(st, &z, &l1, &err) < 0 && err.code == WX_BAD_INPUT && strstr(err.msg, "interpreter"),
		   "a header whose interpreter differs is refused (%s)", err.msg);
		struct world_log_append v = { 1, 1, F.src, F.interp, NULL, "test", rec, rec, NULL };
		ok(world_log_append(st, &v, &l1, &err) < 0 && err.code == WX_BAD_INPUT && strstr(err.msg, "stateRoot"),
		   "a stateRoot that is not the record's output is refused (%s)", err.msg);
		is_int(count(st, "log_entries"), 0, "refused entries wrote nothing");
	}
	ok(append(st, 1, NULL, rec, out, NULL, &l1, &err) == 0, "first entry appended (%s)", err.msg);
	struct world_world w;
	ok(world_head_get(st, &w, &err) == 0 && strcmp(w.ref, l1.world_ref) == 0 && w.revision == 1 &&
	   strcmp(w.log_head, l1.entry_hash) == 0 && strcmp(w.state_root, out) == 0, "head = world of entry 1");
	ok(append(st, 3, l1.entry_hash, rec, out, l1.world_ref, &lx, &err) < 0 && err.code == WX_CONFLICT,
	   "index gap refused (%s)", err.msg);
	ok(append(st, 2, r1, rec, out, l1.world_ref, &lx, &err) < 0 && err.code == WX_CONFLICT,
	   "wrong prevEntryHash refused (%s)", err.msg);
	ok(append(st, 2, NULL, rec, out, l1.world_ref, &lx, &err) < 0 && err.code == WX_CONFLICT,
	   "missing prevEntryHash refused");
	ok(append(st, 2, l1.entry_hash, rec, out, NULL, &lx, &err) < 0 && err.code == WX_CONFLICT,
	   "stale head CAS refused (%s)", err.msg);
	ok(append(st, 2, l1.entry_hash, rec, "sha256:1111111111111111111111111111111111111111111111111111111111111111",
	          l1.world_ref, &lx, &err) < 0 && err.code == WX_NOT_FOUND, "unstored stateRoot refused (%s)", err.msg);
	ok(append(st, 2, l1.entry_hash, "sha256:xyz", out, l1.world_ref, &lx, &err) < 0 && err.code == WX_BAD_INPUT,
	   "bad transitionRef refused");
	is_int(count(st, "log_entries"), 1, "refused appends wrote no entry");
	is_int(count(st, "worlds"), 1, "refused appends wrote no world");
	ok(append(st, 2, l1.entry_hash, rec, out, l1.world_ref, &l2, &err) == 0, "second entry appended");
	struct world_log_entry e;
	ok(world_log_get(st, 2, &e, &err) == 0, "log get 2");
	is_str(e.prev_entry_hash, l1.entry_hash, "entry 2 links to entry 1");
	char hashed[2048];
	snprintf(hashed, sizeof hashed,
	         "{\"entryIndex\":2,\"interpreter\":\"%s\",\"prevEntryHash\":\"%s\",\"semanticsEpoch\":1,"
	         "\"transitionFn\":\"%s\",\"transitionRef\":\"%s\",\"writtenBy\":\"test\"}",
	         F.interp, l1.entry_hash, F.src, rec);
	world_hash_ref(hashed, strlen(hashed), want, NULL);
	is_str(e.entry_hash, want, "entryHash = sha256 of the canonical seven fields");
	ok(strstr(e.json, "\"entryHash\":\"") != NULL && world_canon_is_canonical(e.json, e.json_len),
	   "stored entry is canonical JSON with entryHash");
	world_log_entry_free(&e);
	ok(world_log_get(st, 1, &e, &err) == 0 && e.prev_entry_hash[0] == 0 && strstr(e.json, "\"prevEntryHash\":null"),
	   "first entry has prevEntryHash null");
	world_log_entry_free(&e);
	ok(world_log_get(st, 9, &e, &err) < 0 && err.code == WX_NOT_FOUND, "absent entry: not found");

	/* grouped transaction: all or nothing */
	long long before = count(st, "objects");
	ok(world_store_begin(st, &err) == 0, "begin");
	char a[WORLD_REF_SIZE], b[WORLD_REF_SIZE];
	put(st, "world/invocation-input/v1", "{\"in\":3}", a);
	put(st, "world/invocation-output/v1", "{\"out\":3}", b);
	if (sfix_record(st, &F, b, 1, "g", r3, &err) < 0) bail("record: %s", err.msg);
	ok(append(st, 3, l2.entry_hash, r3, b, l2.world_ref, &lx, &err) == 0, "append inside a group (%s)", err.msg);
	ok(append(st, 5, lx.entry_hash, r3, b, lx.world_ref, NULL, &err) < 0, "a failed write inside the group");
	ok(world_object_exists(st, a, &err) == 1, "the group keeps its earlier writes after a failed one");
	world_store_rollback(st);
	is_int(count(st, "objects"), before, "rollback: no object of the group kept");
	is_int(count(st, "log_entries"), 2, "rollback: no entry of the group kept");
	ok(world_head_get(st, &w, &err) == 0 && strcmp(w.ref, l2.world_ref) == 0, "rollback: head unchanged");
	ok(world_store_begin(st, &err) == 0, "begin again");
	put(st, "world/invocation-input/v1", "{\"in\":3}", a);
	put(st, "world/invocation-output/v1", "{\"out\":3}", b);
	if (sfix_record(st, &F, b, 1, "g", r3, &err) < 0) bail("record: %s", err.msg);
	ok(append(st, 3, l2.entry_hash, r3, b, l2.world_ref, &lx, &err) == 0 && world_store_commit(st, &err) == 0,
	   "group committed");
	ok(world_head_get(st, &w, &err) == 0 && w.revision == 3, "head moved to revision 3");

	/* a writtenBy that needs escaping round-trips and verifies */
	{
		char r4[WORLD_REF_SIZE];
		if (sfix_record(st, &F, out, 2, "q", r4, &err) < 0) bail("record: %s", err.msg);
		struct world_log_append q = { 4, 2, F.src, F.interp, lx.entry_hash, "agent \"q\" \\ caf\xc3\xa9", r4, out, lx.world_ref };
		ok(world_log_append(st, &q, &lx, &err) == 0, "entry with an escaped writtenBy (%s)", err.msg);
		ok(world_log_get(st, 4, &e, &err) == 0 && strcmp(e.written_by, "agent \"q\" \\ caf\xc3\xa9") == 0 &&
		   strstr(e.json, "\"writtenBy\":\"agent \\\"q\\\" \\\\ caf\xc3\xa9\"") != NULL,
		   "escaped writtenBy read back and verified (%s)", err.msg);
		world_log_entry_free(&e);
	}

	/* helpers for the daemon's commit */
	{
		long long nx;
		char pv[WORLD_REF_SIZE], wr[WORLD_REF_SIZE];
		ok(world_log_next(st, &nx, pv, wr, &err) == 0 && nx == 5 && strcmp(pv, lx.entry_hash) == 0 &&
		   strcmp(wr, lx.world_ref) == 0, "world_log_next gives index, prev and head");
		json_t *j = json_pack("{sisi}", "b", 1, "a", 2);
		char jr[WORLD_REF_SIZE];
		ok(world_object_put_json(st, "world/invocation-input/v1", "t", j, jr, &err) == 0 &&
		   world_object_get(st, jr, &o, &err) == 0 && strcmp((char *)o.payload, "{\"a\":2,\"b\":1}") == 0,
		   "world_object_put_json stores canonical bytes");
		world_object_free(&o);
		json_decref(j);
	}

	/* registry heads */
	char reg1[WORLD_REF_SIZE], reg2[WORLD_REF_SIZE], hr[WORLD_REF_SIZE];
	long long rev = 0;
	put(st, "world/transition-registry/v1", "{\"rev\":1}", reg1);
	put(st, "world/transition-registry/v1", "{\"rev\":2}", reg2);
	ok(world_registry_head_get(st, "world/transition-registry/v1", hr, &rev, &err) < 0 && err.code == WX_NOT_FOUND,
	   "no registry head yet");
	ok(world_registry_head_cas(st, "world/transition-registry/v1", NULL, reg1, &rev, &err) == 0 && rev == 1,
	   "registry head created at revision 1");
	ok(world_registry_head_cas(st, "world/transition-registry/v1", NULL, reg2, &rev, &err) < 0 &&
	   err.code == WX_CONFLICT, "CAS from absent loses once a head exists (%s)", err.msg);
	ok(world_registry_head_cas(st, "world/transition-registry/v1", reg2, reg1, &rev, &err) < 0 &&
	   err.code == WX_CONFLICT, "CAS with a wrong expected head loses");
	ok(world_registry_head_cas(st, "world/transition-registry/v1", reg1, reg2, &rev, &err) == 0 && rev == 2,
	   "CAS moves the head to revision 2");
	ok(world_registry_head_get(st, "world/transition-registry/v1", hr, &rev, &err) == 0 && strcmp(hr, reg2) == 0 &&
	   rev == 2, "registry head read back");
	ok(world_registry_head_cas(st, "Bad Name", NULL, reg1, &rev, &err) < 0 && err.code == WX_BAD_INPUT,
	   "bad registry name refused");

	/* journal */
	long long i1, i2;
	struct world_journal_intent in1 = { "effect", "mcp:ep1:t1/e1", "ep1", "Workspace.Write", "repo", 3, NULL };
	struct world_journal_intent in2 = { "effect", "mcp:ep1:t2/e1", "ep1", "Workspace.Write", "repo", 4, rec };
	ok(world_journal_intent(st, &in1, &i1, &err) == 0 && world_journal_intent(st, &in2, &i2, &err) == 0,
	   "journal intents");
	long long spent = -1;
	ok(world_journal_spent(st, "ep1", "Workspace.Write", "repo", &spent, &err) == 0 && spent == 7,
	   "spent sums the episode's intents");
	ok(world_journal_outcome(st, i1, "succeeded", NULL, &err) == 0, "outcome recorded");
	ok(world_journal_outcome(st, i1, "failed", NULL, &err) < 0 && err.code == WX_CONFLICT, "second outcome refused");
	ok(world_journal_outcome(st, 999, "failed", NULL, &err) < 0 && err.code == WX_NOT_FOUND, "unknown intent");
	ok(world_journal_outcome(st, i2, "maybe", NULL, &err) < 0 && err.code == WX_BAD_INPUT, "bad status refused");

	/* sessions */
	const char *cred = "wsess_0123456789abcdef0123456789abcdef";
	ok(world_session_put(st, cred, "ep1", "{\"grants\":[\"Workspace.Write=repo:10\"]}", 1999999999, &err) == 0,
	   "session stored");
	struct world_session ss;
	ok(world_session_get(st, cred, &ss, &err) == 0 && strcmp(ss.episode, "ep1") == 0 && ss.expires_at == 1999999999,
	   "session found by credential");
	world_session_free(&ss);
	ok(world_session_get(st, "wsess_other_credential_000000", &ss, &err) < 0 && err.code == WX_NOT_FOUND,
	   "unknown credential");

	/* no writer lock: a second writer opens beside the first, in this
	 * process and in another, and writes (tests/store/test_writers has the
	 * rest: the chain's CAS across writers, the busy timeout) */
	struct world_store *st2 = NULL;
	ok(world_store_open(db, WORLD_STORE_WRITER, &st2, &err) == 0, "a second writer opens beside the first (%s)", err.msg);
	ok(st2 && world_object_put(st2, "world/x/v1", "second", "2nd", 3, r2, NULL, &err) == 0 &&
	   world_object_exists(st, r2, &err) == 1, "... writes, and the first sees it at once");
	world_store_close(st2);
	pid_t pid = fork();
	if (pid == 0) {
		struct world_store *c = NULL;
		struct world_err e2;
		char rr[WORLD_REF_SIZE];
		if (world_store_open(db, WORLD_STORE_WRITER, &c, &e2) < 0) _exit(e2.code);
		_exit(world_object_put(c, "world/x/v1", "third", "3rd", 3, rr, NULL, &e2) < 0 ? e2.code : 0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a writer in another process opens and writes too");
	ok(world_store_open(db, WORLD_STORE_READER, &st2, &err) == 0, "a reader opens beside the writer");
	ok(world_head_get(st2, &w, &err) == 0 && w.revision == 4, "the reader sees committed data");
	ok(world_object_put(st2, "k", NULL, "x", 1, r2, NULL, &err) < 0, "a reader cannot write");
	world_store_close(st2);

	/* the scan: clean, then in budgeted steps with resume */
	char buf[4096] = "";
	FILE *f = fmemopen(buf, sizeof buf, "w");
	struct world_scan_opts so = { 0 };
	struct world_scan_result sr;
	ok(world_scan(st, &so, f, &sr, &err) == 0 && sr.complete && sr.holes == 0 && sr.log_rows == 4 &&
	   sr.world_rows == 4, "clean complete scan");
	fclose(f);
	is_str(buf, "", "clean complete scan prints nothing");
	long long total_log = 0, total_world = 0, steps = 0;
	char cursor[WORLD_REF_SIZE] = "";
	long long li = 0;
	do {
		buf[0] = 0;
		f = fmemopen(buf, sizeof buf, "w");
		struct world_scan_opts s2 = { .max_rows = 2, .resume_log_index = li, .resume_world_ref = cursor[0] ? cursor : NULL };
		if (world_scan(st, &s2, f, &sr, &err) < 0) bail("scan: %s", err.msg);
		fclose(f);
		total_log += sr.log_rows;
		total_world += sr.world_rows;
		li = sr.resume_log_index;
		strcpy(cursor, sr.resume_world_ref);
		if (!sr.complete) {
			char line[512];
			snprintf(line, sizeof line,
			         "integrity_scan_incomplete log_rows=%lld world_rows=%lld holes=0 resume_log_index=%lld "
			         "resume_world_ref=%s\n", sr.log_rows, sr.world_rows, li, cursor);
			is_str(buf, line, "incomplete scan prints its cursors (step %lld)", steps);
		}
	} while (!sr.complete && ++steps < 10);
	ok(sr.complete && total_log == 4 && total_world == 4, "resumed scans cover every row exactly once (%lld, %lld)",
	   total_log, total_world);

	/* interpreter archive: only a static ELF whose --version prints a release
	 * line; every refusal leaves no file, directory or row behind */
	char bin[400], arts[4200], adb[400];
	/* a store of its own: the fixture above archived an interpreter already */
	snprintf(adb, sizeof adb, "%s/arch.db", dir);
	snprintf(arts, sizeof arts, "%s.artifacts", adb);
	struct world_store *ast;
	ok(world_store_open(adb, WORLD_STORE_WRITER, &ast, &err) == 0, "archive store opened (%s)", err.msg);
	snprintf(bin, sizeof bin, "%s/fake-ailang", dir);
	FILE *bf = fopen(bin, "w");
	fprintf(bf, "#!/bin/sh\necho\necho 'AILANG-test v9.9.9  '\n");
	fclose(bf);
	chmod(bin, 0755);
	struct world_interp wi, wi2;
	struct stat sb;
	ok(world_archive_interpreter(ast, bin, &wi, &err) < 0 && err.code == WX_BAD_INPUT && strstr(err.msg, bin) &&
	   strstr(err.msg, "not an ELF"), "a script is not an interpreter: refused naming BIN (%s)", err.msg);
	ok(stat(arts, &sb) < 0 && errno == ENOENT, "... and nothing is left behind (no %s)", arts);
	char stub[600];
	snprintf(stub, sizeof stub, "%s/tests/capsule/fixture", getenv("top_builddir") ? getenv("top_builddir") : ".");
	ok(world_archive_interpreter(ast, stub, &wi, &err) < 0 && err.code == WX_INTERP && strstr(err.msg, "not a release line"),
	   "a static ELF whose --version is not a release line is refused (%s)", err.msg);
	ok(stat(arts, &sb) < 0 && errno == ENOENT, "... and nothing is left behind");
	const char *lite = getenv("AILANG_LITE");
	ok(lite && world_archive_interpreter(ast, lite, &wi, &err) == 0 && wi.created == 1, "interpreter archived (%s)",
	   err.msg);
	ok(strncmp(wi.version, "AILANG-lite v0.1.0", 18) == 0, "release = first non-empty --version line (%s)", wi.version);
	ok(stat(wi.path, &sb) == 0 && (sb.st_mode & 07777) == 0555, "archived binary has mode 0555");
	ok(strstr(wi.path, ".artifacts/interpreters/sha256/") && strstr(wi.path, wi.ref + 7), "archive path by hash");
	char man[4200];
	snprintf(man, sizeof man, "%.*s/manifest.json", (int)(strlen(wi.path) - 7), wi.path);
	struct stat ms1, ms2;
	ok(stat(man, &ms1) == 0, "manifest.json beside it");
	ok(world_archive_interpreter(ast, lite, &wi2, &err) == 0 && wi2.created == 0 && strcmp(wi2.ref, wi.ref) == 0 &&
	   strcmp(wi2.version, wi.version) == 0, "re-archiving the same bytes is a no-op");
	ok(stat(man, &ms2) == 0 && ms1.st_ino == ms2.st_ino, "manifest not rewritten");
	ok(world_interp_get(ast, wi.ref, &wi2, &err) == 0 && strcmp(wi2.path, wi.path) == 0, "interpreter looked up by ref");
	ok(world_archive_interpreter(ast, "/nonexistent/ailang", &wi2, &err) < 0 && err.code == WX_NOT_FOUND &&
	   strstr(err.msg, "/nonexistent/ailang"), "missing binary refused, named");
	world_store_close(ast);
	world_store_close(st);

	/* schema versions: a future version is refused and left byte-identical */
	sqlite3 *raw;
	sqlite3_open(db, &raw);
	sqlite3_exec(raw, "PRAGMA journal_mode=DELETE; PRAGMA user_version=99", NULL, NULL, NULL);
	sqlite3_close(raw);
	char before_sha[WORLD_REF_SIZE];
	strcpy(before_sha, file_sha(db));
	ok(world_store_open(db, WORLD_STORE_WRITER, &st, &err) < 0 && err.code == WX_SCHEMA &&
	   strstr(err.msg, "schema version 99"), "future user_version refused (%s)", err.msg);
	ok(world_store_open(db, WORLD_STORE_READER, &st, &err) < 0 && err.code == WX_SCHEMA, "also for readers");
	is_str(file_sha(db), before_sha, "refused store left byte-identical");
	/* not a store */
	char junk[400];
	snprintf(junk, sizeof junk, "%s/junk.db", dir);
	FILE *jf = fopen(junk, "w");
	fprintf(jf, "this is not sqlite, it is just some text long enough to look like a header......................");
	fclose(jf);
	ok(world_store_open(junk, WORLD_STORE_WRITER, &st, &err) < 0 && err.code == WX_NOT_STORE &&
	   strstr(err.msg, "not a SQLite database"), "non-database refused with its own code (%s)", err.msg);
	char junk_side[500];
	snprintf(junk_side, sizeof junk_side, "%s-wal", junk);
	ok(access(junk_side, F_OK) < 0, "no -wal left beside the refused file");
	ok(world_store_open(junk, WORLD_STORE_READER, &st, &err) < 0 && err.code == WX_NOT_STORE, "also for readers");
	/* no lock file is made at all (a store of an older build may keep one: unused) */
	char fut_lock[500];
	snprintf(fut_lock, sizeof fut_lock, "%s.writer.lock", db);
	ok(world_store_open(db, WORLD_STORE_WRITER, &st, &err) < 0 && err.code == WX_SCHEMA && access(fut_lock, F_OK) < 0,
	   "a store refused for its version: no lock file beside it");
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("cleanup failed");
	return done_testing();
}
