/* coordinator/provenance.h: provenance walks (docs/design.md §9, docs/provenance.md).
 *
 * Owns: finding the log entry a caller names (an index, the head, a ref of
 * the entry, its invocation record, its world or its output, an invocation
 * id through the journal, or a result object itself), and walking from that
 * entry to every byte the committed call depends on, re-checking each link
 * on the way rather than trusting the store's own read checks:
 *   entry        entryHash recomputed from the entry's canonical JSON
 *   chain        prevEntryHash is entry N-1's entryHash; entry N+1 names N
 *   record       transitionRef is a stored invocation record (v1 pure, v2
 *                effectful), canonical, its transitionFn, interpreter and
 *                semanticsEpoch those of the entry header
 *   world        the world {revision N, stateRoot = record.output, logHead
 *                = entryHash} is stored under the ref its bytes hash to
 *   journal      the invocation's intent names the input and its
 *                "committed" outcome names this record
 *   input        world/invocation-input/v1, canonical JSON object
 *   plan         (v2) world/effect-plan/v1, canonical, the plan laws of
 *                docs/design.md §5.2 (the declared triples are not in the record:
 *                "declared" is checked against the effect's record instead)
 *   effects[i].record   world/effect-record/v1 under the record law
 *                (broker_record_check), its effect/scope/cost the plan's
 *   effects[i].request  (allowed) world/effect-request/v1 = the request the
 *                broker builds from the plan's effect, byte for byte
 *   effects[i].result   (succeeded) world/effect-result/v1, a JSON object
 *   effects[i].journal  (allowed) the effect intent names the request, its
 *                outcome (succeeded|failed) the record
 *   output       world/invocation-output/v1, canonical; pure: no world
 *                member; effectful: its world block is the one the
 *                coordinator builds from the plan and the effect records
 *   source       world/transition-source/v1, in canonical source form
 *   interpreter  the archived file hashes to the ref (store/store.h,
 *                world_interp_verify)
 *   interpreter.manifest  manifest.json is the file's {hash,size,version}
 *   result       (only when walking from a result) the given object is the
 *                stored output, byte for byte after canonicalisation
 * A link whose object cannot be read is broken, and links below it that
 * need its content are not listed (the count says how many were checked).
 *
 * Reads only: works on a READER handle of a read-only copy. */
#ifndef WORLD_COORDINATOR_PROVENANCE_H
#define WORLD_COORDINATOR_PROVENANCE_H
#include <jansson.h>
#include <stddef.h>
#include "common/error.h"
#include "common/ref.h"

struct world_store;

struct prov_link {
	int ok;
	int skipped;                    /* not reachable through the source (counted in neither) */
	char name[48];                  /* "entry", "effects[0].record", ... */
	char ref[WORLD_REF_SIZE];       /* the ref the link is about ("" when none) */
	char detail[700];               /* what was checked, or what is wrong */
};

struct prov_walk {
	long long entry_index;
	char invocation_id[256];
	char record_ref[WORLD_REF_SIZE];
	struct prov_link *links;
	size_t nlinks, cap, broken, skipped;
};

/* Where a walk reads from: the store (prov_src_store), or the daemon's
 * read routes (coordinator/provclient.h). object re-hashes what it returns
 * (a mismatch is WX_INTEGRITY); entry fills json with the canonical entry
 * JSON including entryHash (the walk recomputes the hash from it). journal
 * and interp are NULL when the source cannot reach them: those links are
 * listed as not reachable, neither verified nor broken. */
#include "store/store.h"
struct prov_src {
	void *ctx;
	char where[4200];                /* "store PATH", "daemon URL" */
	int (*object)(void *ctx, const char *ref, struct world_object *o, struct world_err *err);
	int (*entry)(void *ctx, long long index, struct world_log_entry *e, struct world_err *err);
	int (*last)(void *ctx, long long *index, struct world_err *err);
	int (*world)(void *ctx, const char *ref, struct world_world *w, struct world_err *err);
	int (*journal)(void *ctx, const char *kind, const char *subject, struct world_journal_row *r, struct world_err *err);
	int (*interp)(void *ctx, const char *ref, int *what, struct world_interp *wi, struct world_err *err);
};
void prov_src_store(struct prov_src *s, struct world_store *st);

/* The entry a target names: "N", "head", "sha256:..." (entry, record, world
 * or output ref; store.h world_log_find_ref) or an invocation id
 * "mcp:|a2a:|cli:EPISODE:TASK" (its committed journal outcome's record).
 * WX_NOT_FOUND when nothing matches, WX_USAGE for a malformed target. */
int prov_resolve(struct world_store *st, const char *target, long long *index, struct world_err *err);
/* The entry of a result object (bytes as `worldd call` printed them): the
 * entry whose output is its canonical form, else the entry its world block's
 * plan or first effect record belongs to (so a tampered result is still
 * walked, and its `result` link is broken). WX_BAD_INPUT when it is not a
 * JSON object, WX_NOT_FOUND when it leads nowhere. */
int prov_resolve_result(struct world_store *st, const char *bytes, size_t len, long long *index,
                        struct world_err *err);
/* The first step of both resolvers (this one and provclient.h's): parse a
 * result, require a JSON object, and give its canonical ref. Returns the
 * object (the caller decrefs it), or NULL with err (WX_BAD_INPUT "result:
 * ..." when it is not a JSON object). */
json_t *prov_result_parse(const char *bytes, size_t len, char ref[WORLD_REF_SIZE], struct world_err *err);

/* Walk entry index. result (may be NULL): the result object to compare with
 * the stored output. 0: w filled (broken links or not; see w->broken);
 * -1: the entry does not exist (WX_NOT_FOUND) or the store failed. */
int prov_walk(struct world_store *st, long long index, const char *result, size_t result_len, struct prov_walk *w,
              struct world_err *err);
int prov_walk_src(const struct prov_src *src, long long index, const char *result, size_t result_len,
                  struct prov_walk *w, struct world_err *err);
void prov_walk_free(struct prov_walk *w);
/* {"entry":N,"invocationId":ID,"record":REF,"links":[{"detail","name","ok","ref"}],"verified":N,"broken":K,
 *  "unreachable":U} (ok null for a link the source cannot reach) */
json_t *prov_walk_json(const struct prov_walk *w);

/* An object's label and payload as stored, NOT re-hashed (for byte
 * comparisons that report the first differing offset). The caller frees
 * both. WX_NOT_FOUND when absent. */
int prov_object_raw(struct world_store *st, const char *ref, char **semantic_id, char **payload, size_t *len,
                    struct world_err *err);
/* First byte offset where a and b differ (the shorter length when one is a
 * prefix of the other), or -1 when equal. */
long long prov_first_diff(const char *a, size_t alen, const char *b, size_t blen);
#endif
