/* coordinator/replay.h: operator replay of committed invocations (docs/design.md §9,
 * docs/provenance.md).
 *
 * Owns: re-running one committed log entry from the store alone and
 * comparing every stage with what was committed, byte for byte:
 *   input    the invocation record (v1|v2, header = the entry's), the
 *            input object (canonical, hashing to the record's input), the
 *            transition source, the archived interpreter file and its
 *            manifest (world_interp_verify; the run itself pins the bytes
 *            again: launcher_capsule_new with the recorded ref), and the
 *            journal's committed outcome naming the record;
 *   plan     (effectful) the plan phase re-run on the stored input under the
 *            recorded interpreter, its plan canonicalised as the coordinator
 *            does, compared with the stored plan bytes;
 *   effects  every planned effect answered from its recorded effect record
 *            (record law, effect/scope/cost = the re-run plan's, the request
 *            the broker would build = the stored request bytes, the stored
 *            result), NEVER by a handler; the finish-phase results entry is
 *            rebuilt exactly as the broker builds it (id, effect, status,
 *            record, output = the stored result object or null);
 *   finish   (plan says finish) the finish phase re-run, its output compared
 *            with the stored output less its world block;
 *   output   the output rebuilt (pure: the run's output; effectful: the
 *            coordinator's rule of docs/design.md §3 plus the world block) and
 *            compared with the stored output bytes.
 * A divergence names its stage and, for byte comparisons, the first
 * differing byte offset (-1 when the stage failed without bytes to compare).
 *
 * Writes nothing: the store is only read (open it WORLD_STORE_READER), no
 * handler runs, no worktree is touched. Capsules run as for a call
 * (supervisor/, the transition profile). One struct replayer per thread. */
#ifndef WORLD_COORDINATOR_REPLAY_H
#define WORLD_COORDINATOR_REPLAY_H
#include "common/error.h"
#include "common/ref.h"
#include "supervisor/supervisor.h"

struct world_store;
struct replayer;

struct replay_report {
	long long entry_index;
	char invocation_id[256];
	int effectful;
	int diverged;              /* 0: every stage identical */
	char stage[16];            /* "input", "plan", "effects", "finish", "output" */
	long long offset;          /* first differing byte, -1 when none applies */
	char detail[700];          /* one line: what differed */
	long elapsed_ms;
};

/* st: a READER (or writer) handle the caller keeps; lim: capsule limits. */
struct replayer *replay_new(struct world_store *st, const struct sup_limits *lim, struct world_err *err);
void replay_free(struct replayer *r);
/* Replay entry index. 0: rep filled (diverged or not); -1: it could not be
 * replayed at all (WX_NOT_FOUND: no such entry; WX_SETUP / WX_CAPACITY: no
 * capsule could start; store errors). */
int replay_entry(struct replayer *r, long long index, struct replay_report *rep, struct world_err *err);
/* {"entry","invocationId","effectful","diverged","stage","offset","detail"} */
#include <jansson.h>
json_t *replay_report_json(const struct replay_report *rep);
#endif
