/* cli/verbs_prov.c: the worldd verbs of provenance (see cli/verbs.h):
 * `why` (walk a committed call back to every byte it depends on) and
 * `replay` (re-run committed invocations and compare every stage). Argument
 * parsing and printing only: the work is in coordinator/provenance.c and
 * coordinator/replay.c. Both open the store read-only. */
#include "cli/store_uri.h"
#include "cli/flags.h"
#include "cli/verbs.h"
#include "coordinator/provclient.h"
#include "coordinator/provenance.h"
#include "common/file.h"
#include "coordinator/replay.h"
#include "store/store.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RESULT_READ_MAX ((size_t)8 << 20)

/* Lost output is exit 9 and wins over a broken link or a divergence (the
 * verdict never reached its reader). The line is printed here, where errno
 * still names the failed write; the stream's error is then cleared so that
 * worldd's exit check (cli/worldd.c) does not print a second one. */
static int flush_out(const char *verb)
{
	if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
	fprintf(stderr, "worldd %s: write standard output: %s\n", verb, strerror(errno ? errno : EIO));
	clearerr(stdout);
	return WX_IO;
}

static int open_reader(const char *verb, const char *path, struct world_store **st)
{
	struct world_err e = { 0 };
	if (worldd_store_open(path, WORLD_STORE_READER, 0, st, &e) < 0) return worldd_fail(verb, &e);
	return 0;
}

/* ---- why ---- */

static const char why_help[] =
    "usage: worldd why (N|head|REF|INVOCATION-ID|-) (--store DB | --addr URL\n"
    "                  [--session CRED | --token-file FILE]) [--json]\n"
    "\n"
    "Walks one committed call back to every byte it depends on and re-checks\n"
    "each link (docs/provenance.md): the entry's hash, the chain, the invocation\n"
    "record against the entry header, the world, the journal, the input, the\n"
    "plan, each effect record under its law with its request, result and journal\n"
    "rows, the output and its world block, the transition source, and the\n"
    "archived interpreter file and manifest.json. The store is opened read-only\n"
    "(a read-only copy works).\n"
    "\n"
    "  N | head               the log entry N, or the last one\n"
    "  REF                    sha256:... of the entry, its invocation record, its\n"
    "                         world or its output\n"
    "  INVOCATION-ID          mcp:|a2a:|cli:EPISODE:TASK (through the journal)\n"
    "  -                      a result object on standard input (as worldd call\n"
    "                         printed it): its entry, found by its bytes or by its\n"
    "                         world block; the result itself is one more link\n"
    "  --store DB             the store\n"
    "  --addr URL             a daemon (http://HOST:PORT): read through its routes\n"
    "                         (/v1/objects, /v1/log, /v1/worlds, /v1/head); every object\n"
    "                         is re-hashed and every entry hash recomputed here. The daemon\n"
    "                         serves no journal or interpreter archive: those links are\n"
    "                         listed as not reachable (\"-\"), neither verified nor broken\n"
    "  --session CRED         the bearer credential for --addr (a session credential)\n"
    "  --token-file FILE      or the operator token from FILE (e.g. DB.operator-token)\n"
    "  --json                 one JSON object {entry, invocationId, record, links:\n"
    "                         [{name, ok, ref, detail}], verified, broken}\n"
    "\n"
    "Prints one line per link (\"✓\" or \"✗\", name, ref, detail), then\n"
    "\"all N link(s) verified\" or \"N of M link(s) BROKEN\" (with --addr followed by\n"
    "\", K not reachable through daemon URL\").\n"
    "\n"
    "exit codes:\n"
    "  0  every link verified\n"
    "  2  usage\n"
    "  3  bad input: the result on stdin is not a JSON object\n"
    "  4  not found: no such store, entry, ref or committed invocation\n"
    "  6  unknown schema\n"
    "  7  at least one link broken\n"
    "  9  I/O error (also: the daemon cannot be reached)\n"
    " 22  the daemon refused the credential\n";

/* The bearer for --addr: --session CRED, or the first line of --token-file. */
static int bearer_of(const char *verb, const char *cred, const char *file, char out[80])
{
	out[0] = 0;
	if (cred && file) return worldd_usage(verb, "give --session or --token-file, not both");
	if (cred) {
		snprintf(out, 80, "%s", cred);
		return 0;
	}
	if (!file) return 0;
	struct world_err e = { 0 };
	char *b;
	size_t n;
	if (world_read_file(file, 4096, &b, &n, &e) < 0) return worldd_fail(verb, &e);
	while (n && (b[n - 1] == '\n' || b[n - 1] == '\r' || b[n - 1] == ' ')) b[--n] = 0;
	snprintf(out, 80, "%s", b);
	free(b);
	return 0;
}

static int verb_why(int argc, char **argv)
{
	const char *verb = "why";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--json" },
		                   { .name = "--addr", .has_value = 1 }, { .name = "--session", .has_value = 1 },
		                   { .name = "--token-file", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 1, &npos);
	if (rc) return rc;
	if (!f[0].value == !f[2].value) return worldd_usage(verb, "give exactly one of --store DB or --addr URL");
	if (!f[2].value && (f[3].value || f[4].value)) return worldd_usage(verb, "--session and --token-file go with --addr");
	if (npos != 1) return worldd_usage(verb, "give exactly one of N, head, REF, INVOCATION-ID or -");
	int json = f[1].value != NULL;
	char bearer[80];
	if ((rc = bearer_of(verb, f[3].value, f[4].value, bearer))) return rc;
	struct world_err e = { 0 };
	char *result = NULL;
	size_t rlen = 0;
	if (strcmp(pos[0], "-") == 0) {
		int rrc = worldd_read_input(verb, "result", "-", RESULT_READ_MAX, &result, &rlen);
		if (rrc) return rrc;
		/* `worldd call` ends its output with one newline */
		while (rlen && (result[rlen - 1] == '\n' || result[rlen - 1] == '\r')) result[--rlen] = 0;
	}
	struct world_store *st = NULL;
	struct prov_client *cl = NULL;
	struct prov_src src;
	if (f[0].value) {
		if ((rc = open_reader(verb, f[0].value, &st))) { free(result); return rc; }
		prov_src_store(&src, st);
	} else {
		if (!(cl = prov_client_new(f[2].value, bearer[0] ? bearer : NULL, &e))) { free(result); return worldd_fail(verb, &e); }
		prov_src_client(&src, cl);
	}
	long long idx;
	int r = st ? (result ? prov_resolve_result(st, result, rlen, &idx, &e) : prov_resolve(st, pos[0], &idx, &e))
	           : (result ? prov_client_resolve_result(cl, result, rlen, &idx, &e) : prov_client_resolve(cl, pos[0], &idx, &e));
	struct prov_walk w = { 0 };
	if (r == 0) r = prov_walk_src(&src, idx, result, rlen, &w, &e);
	if (r < 0) {
		rc = worldd_fail(verb, &e);
		goto out;
	}
	if (json) {
		json_t *j = prov_walk_json(&w);
		char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;
		json_decref(j);
		if (!s) { e.code = WX_FAIL; snprintf(e.msg, sizeof e.msg, "out of memory"); rc = worldd_fail(verb, &e); goto out; }
		printf("%s\n", s);
		free(s);
	} else {
		printf("entry %lld %s record %s\n", w.entry_index, w.invocation_id[0] ? w.invocation_id : "-",
		       w.record_ref[0] ? w.record_ref : "-");
		for (size_t i = 0; i < w.nlinks; i++)
			printf("%s %s %s %s\n", w.links[i].skipped ? "-" : w.links[i].ok ? "\u2713" : "\u2717", w.links[i].name,
			       w.links[i].ref[0] ? w.links[i].ref : "-", w.links[i].detail);
		size_t checked = w.nlinks - w.skipped;
		if (w.broken) printf("%zu of %zu link(s) BROKEN", w.broken, checked);
		else printf("all %zu link(s) verified", checked);
		if (w.skipped) printf(", %zu not reachable through %s", w.skipped, src.where);
		printf("\n");
	}
	rc = flush_out(verb);
	if (!rc && w.broken) rc = WX_INTEGRITY;
out:
	prov_walk_free(&w);
	if (st) world_store_close(st);
	prov_client_free(cl);
	free(result);
	return rc;
}

/* ---- replay ---- */

static const char replay_help[] =
    "usage: worldd replay (N|INVOCATION-ID) --store DB [--json]\n"
    "       worldd replay --all --store DB [--from N] [--to M] [--json]\n"
    "\n"
    "Re-runs committed invocations from the store alone (docs/design.md §9,\n"
    "docs/provenance.md) and compares every stage with what was committed:\n"
    "  input    the invocation record, input, transition source, archived\n"
    "           interpreter (file and manifest, pinned again for the run) and\n"
    "           the journal's committed outcome\n"
    "  plan     the plan phase re-run under the recorded interpreter, compared\n"
    "           byte for byte with the stored plan\n"
    "  effects  each effect answered from its recorded effect record, request\n"
    "           and result (no handler runs)\n"
    "  finish   the finish phase re-run, compared with the stored output less\n"
    "           its world block\n"
    "  output   the rebuilt output with its world block, compared byte for byte\n"
    "Nothing is written to the store and no worktree is touched.\n"
    "\n"
    "  N | INVOCATION-ID      one entry (mcp:|a2a:|cli:EPISODE:TASK through the journal)\n"
    "  --all                  every entry, or those from --from N to --to M\n"
    "  --store DB             the store (opened read-only)\n"
    "  --json                 one JSON object per entry {entry, invocationId, effectful,\n"
    "                         diverged, stage, offset, detail}\n"
    "\n"
    "Prints one line per entry: \"entry N ID identical\" or \"entry N ID diverged\n"
    "at stage S, byte offset O: DETAIL\" (offset \"-\" when no bytes compare);\n"
    "--all ends with \"replayed N, diverged K\" and shows a progress line on\n"
    "standard error when it is a terminal.\n"
    "\n"
    "exit codes:\n"
    "  0  every replayed entry identical\n"
    "  2  usage\n"
    "  4  not found: no such store, entry or committed invocation\n"
    "  6  unknown schema\n"
    "  7  at least one entry diverged\n"
    "  9  I/O error\n"
    " 10, 16  no capsule could start (setup, capacity): not replayed\n";

static void print_report(const struct replay_report *rep, int json)
{
	if (json) {
		json_t *j = replay_report_json(rep);
		char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;
		json_decref(j);
		if (s) printf("%s\n", s);
		free(s);
		return;
	}
	if (!rep->diverged) {
		printf("entry %lld %s identical\n", rep->entry_index, rep->invocation_id[0] ? rep->invocation_id : "-");
		return;
	}
	char off[32] = "-";
	if (rep->offset >= 0) snprintf(off, sizeof off, "%lld", rep->offset);
	printf("entry %lld %s diverged at stage %s, byte offset %s: %s\n", rep->entry_index,
	       rep->invocation_id[0] ? rep->invocation_id : "-", rep->stage, off, rep->detail);
}

static int verb_replay(int argc, char **argv)
{
	const char *verb = "replay";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--all" },
		                   { .name = "--from", .has_value = 1 }, { .name = "--to", .has_value = 1 },
		                   { .name = "--json" }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 1, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	int all = f[1].value != NULL, json = f[4].value != NULL;
	if (all == (npos == 1)) return worldd_usage(verb, "give one entry (N or INVOCATION-ID) or --all");
	if (!all && (f[2].value || f[3].value)) return worldd_usage(verb, "--from and --to need --all");
	long long from = 1, to = 0;
	for (int i = 2; i <= 3; i++) {
		if (!f[i].value) continue;
		char *end;
		errno = 0;
		long long v = strtoll(f[i].value, &end, 10);
		if (!*f[i].value || *end || errno || v < 1)
			return worldd_usage(verb, "%s '%s' is not a positive integer", f[i].name, f[i].value);
		if (i == 2) from = v;
		else to = v;
	}
	if (to && to < from) return worldd_usage(verb, "--to %lld is before --from %lld", to, from);
	struct world_store *st;
	if ((rc = open_reader(verb, f[0].value, &st))) return rc;
	struct world_err e = { 0 };
	struct sup_limits lim;
	sup_limits_default(&lim);
	struct replayer *r = replay_new(st, &lim, &e);
	if (!r) { rc = worldd_fail(verb, &e); world_store_close(st); return rc; }
	struct replay_report rep;
	if (!all) {
		long long idx;
		if (prov_resolve(st, pos[0], &idx, &e) < 0 || replay_entry(r, idx, &rep, &e) < 0) {
			rc = worldd_fail(verb, &e);
			goto out;
		}
		print_report(&rep, json);
		rc = flush_out(verb);
		if (!rc && rep.diverged) rc = WX_INTEGRITY;
		goto out;
	}
	long long last;
	char lh[WORLD_REF_SIZE];
	if (world_log_last(st, &last, lh, &e) < 0) { rc = worldd_fail(verb, &e); goto out; }
	if (!to || to > last) to = last;
	long long n = 0, k = 0;
	int err_code = 0, tty = isatty(2);
	for (long long i = from; i <= to; i++) {
		if (tty) {
			fprintf(stderr, "\rreplay: entry %lld of %lld (%lld diverged)", i, to, k);
			fflush(stderr);
		}
		if (replay_entry(r, i, &rep, &e) < 0) {
			if (tty) fprintf(stderr, "\r\033[K");
			fprintf(stderr, "worldd %s: entry %lld: %s\n", verb, i, e.msg);
			if (!err_code) err_code = e.code ? e.code : WX_FAIL;
			continue;
		}
		n++;
		if (rep.diverged) k++;
		if (tty) fprintf(stderr, "\r\033[K");
		print_report(&rep, json);
	}
	if (!json) printf("replayed %lld, diverged %lld\n", n, k);
	rc = flush_out(verb);
	if (!rc) rc = k ? WX_INTEGRITY : err_code;
out:
	replay_free(r);
	world_store_close(st);
	return rc;
}

const struct worldd_verb prov_verbs[] = {
	{ "why", "walk a committed call back to every byte it depends on", why_help, verb_why },
	{ "replay", "re-run committed invocations and compare every stage", replay_help, verb_replay },
	{ NULL, NULL, NULL, NULL },
};
