/* coordinator/registry.h: the published transitions and the epoch
 * registry in the store: reading them, and writing their revisions.
 *
 * Owns: the stored formats of both registries, looking a descriptor up by
 * id, and every write of a registry revision: a publish (the merge of a
 * manifest's descriptors, prompts and resources over the head, the
 * compare-and-swap of the head, merging again over another writer's
 * revision) and a retire, each in transactions of its own, and the epoch
 * registry's bootstrap, admissions and nominations. Its callers parse
 * their flags, check what they publish and hold the attended confirmation
 * (cli/world-publish.c, `worldd epoch`); nothing here asks anything. Every
 * object here is canonical JSON (common/canon.h).
 *
 * Transition registry: head "world/transition-registry/v1" (store registry
 * head) -> object with semanticId world/transition-registry/v1, payload
 *   {"parent":REF|null,"retired":[{"id":ID,"revision":N},...],"revision":N,
 *    "transitions":[DESCRIPTOR,...]}
 * (transitions sorted by id, ids unique; revision = the head's revision;
 * parent = the previous head's ref). "retired" (absent when empty, so a
 * registry that never retired anything keeps its bytes) lists, sorted by id,
 * the ids `world-publish retire` took out of "transitions" and the revision
 * that did it; a retired id is in no session's view (the coordinator reads
 * "transitions" only), its descriptor stays in the parent revisions, and
 * publishing the id again takes it off the list. "prompts" and "resources"
 * (each absent when empty, for the same reason) hold the prompt templates
 * and package resources a manifest's "kind" entries published, in the
 * stored forms of coordinator/catalog.h, sorted by name / URI; a publish
 * replaces those it names and keeps the others, a retire keeps them all.
 * A DESCRIPTOR is
 *   {"access":{"cost":N,"effect":E,"scope":S}|null,
 *    "declaredEffects":[{"cost":N,"effect":E,"scope":S},...],
 *    "description":TEXT,"id":ID,"inputSchema":OBJ,"interpreter":REF,
 *    "outputSchema":OBJ,"semanticsEpoch":N,"title":TEXT,"transitionFn":REF}
 * where transitionFn is a stored world/transition-source/v1 object and
 * interpreter an archived interpreter the source was checked under.
 * access null = visible to every live session.
 *
 * Epoch registry: head "world/epoch-registry/v1" -> object with semanticId
 * world/epoch-registry/v1, payload
 *   {"epochs":[{"epoch":1,"interpreters":[ADMISSION,...],"release":"AILANG-lite v0.1.0"},...]}
 * (one entry per release string; epochs start at 1). An ADMISSION is
 *   {"admission":"bootstrap"|"attended"|"upgrade","ref":REF}
 * naming the bytes (sha256 of the archived interpreter) admitted to the
 * epoch: the release string alone admits nothing. A
 * registry written before the list existed is upgraded by the first writer
 * that checks it (a new revision, like a schema migration, whatever the
 * check's outcome): an epoch without "interpreters" gets the distinct
 * interpreter refs the current transition registry's descriptors of that
 * epoch name, or, when none does, the binary presented by that first check
 * (what the release-string rule admitted then), each as "upgrade". */
#ifndef WORLD_COORDINATOR_REGISTRY_H
#define WORLD_COORDINATOR_REGISTRY_H
#include <jansson.h>
#include "common/error.h"
#include "common/ref.h"

struct world_store;

#define REGISTRY_TRANSITIONS "world/transition-registry/v1"
#define REGISTRY_EPOCHS "world/epoch-registry/v1"

/* The current transition registry payload (*out NULL and *revision 0 when
 * nothing was ever published). The object is re-hashed on read. */
int registry_load(struct world_store *st, json_t **out, long long *revision, char head[WORLD_REF_SIZE],
                  struct world_err *err);
/* The descriptor with this id in a loaded registry (borrowed), or NULL. */
const json_t *registry_find(const json_t *registry, const char *id);
/* The {"id","revision"} entry of a retired id (borrowed), or NULL. */
const json_t *registry_retired_find(const json_t *registry, const char *id);

/* Epoch of a release string: 0 with *epoch set; WX_NOT_FOUND when the
 * registry is absent or does not nominate it; WX_CONFLICT when ambiguous. */
int registry_epoch_for(struct world_store *st, const char *release, long long *epoch, struct world_err *err);
/* Bootstrap: when no epoch registry exists, write one nominating wi's
 * release as epoch 1 with wi's ref admitted ("bootstrap"; head CAS from
 * none). When one exists it must nominate this release and admit wi's ref
 * (*epoch set, nothing written but an upgrade); a store bootstrapped for
 * another release is refused with WX_CONFLICT "store is bound to interpreter
 * release \"R\" (epoch N); refusing release \"R2\"", new bytes under the
 * release as by registry_epoch_admitted. *created = 1 when written. */
struct world_interp;
int registry_epoch_bootstrap(struct world_store *st, const struct world_interp *wi, long long *epoch, int *created,
                             struct world_err *err);
/* wi's ref is admitted to the epoch of wi's release: 0 with *epoch set;
 * WX_NOT_FOUND / WX_CONFLICT as registry_epoch_for for the release, and
 * WX_CONFLICT "interpreter NEW prints release \"R\" of epoch N, which admits
 * OLD[, OLD2...], not these bytes; ..." when the bytes are new. Needs a
 * writer when the registry predates admission lists (see above). */
int registry_epoch_admitted(struct world_store *st, const struct world_interp *wi, long long *epoch,
                            struct world_err *err);
/* What the epoch of wi's release admits: *epoch, *admitted (wi's ref is
 * among them) and refs ("REF, REF2", truncated to n). Errors as above. */
int registry_epoch_admission(struct world_store *st, const struct world_interp *wi, long long *epoch, int *admitted,
                             char *refs, size_t n, struct world_err *err);
/* Records wi's ref as admitted ("attended") to the epoch of wi's release
 * (a new revision, head CAS); *added = 0 when it already was (nothing
 * written). The caller holds the attended confirmation. */
int registry_epoch_admit(struct world_store *st, const struct world_interp *wi, long long *epoch, int *added,
                         char head[WORLD_REF_SIZE], struct world_err *err);

/* Nomination of wi's release as the next epoch (attended, the caller holds
 * the confirmation for registry_epoch_nominate). registry_epoch_nominee
 * reads only: *epoch = highest epoch + 1 and *already = 0 when no epoch
 * nominates wi's release; *already = 1 with *epoch = that epoch when one
 * does and admits wi's ref (nothing to do). Refused: no epoch registry
 * (WX_NOT_FOUND, pointing to worldd epoch bootstrap), the release
 * nominated but wi's bytes not admitted (WX_CONFLICT naming the epoch:
 * worldd epoch admit), nominated twice (WX_CONFLICT).
 * registry_epoch_nominate writes the next revision with
 * {"epoch":N,"interpreters":[{"admission":"attended","ref":wi->ref}],
 * "release":wi->version} appended, in one transaction with the head moved
 * by compare-and-swap; the N it would write must be `expect` (what the
 * operator confirmed) or it writes nothing (WX_CONFLICT, "re-run"); the
 * release found nominated meanwhile with wi's bytes admitted is *created
 * = 0, nothing written. */
int registry_epoch_nominee(struct world_store *st, const struct world_interp *wi, long long *epoch, int *already,
                           struct world_err *err);
int registry_epoch_nominate(struct world_store *st, const struct world_interp *wi, long long expect, long long *epoch,
                            int *created, char head[WORLD_REF_SIZE], struct world_err *err);
/* 1 when the store has a world/epoch-registry/v1 head, 0 when not, -1 on
 * a read error. */
int registry_epochs_exist(struct world_store *st, struct world_err *err);
/* ---- writing the transition registry ----
 * A revision holds at most REGISTRY_ENTRIES_MAX descriptors, and as many
 * prompts and resources each (docs/design.md §10). */
#define REGISTRY_ENTRIES_MAX 1024
#define REGISTRY_SOURCE "world/transition-source/v1"

/* A source a publish stores with its revision: text, checked as ref. */
struct registry_source {
	const char *id;                 /* the descriptor's id, for messages */
	const char *text;
	size_t len;
	const char *ref;
};
/* A publish: its DESCRIPTORs (above), prompts and resources (stored forms,
 * coordinator/catalog.h; NULL = none), the sources stored with it, and the
 * provenance of every object it writes. */
struct registry_change {
	const json_t *descs;
	const json_t *prompts, *resources;
	const struct registry_source *sources;
	size_t nsources;
	const char *provenance;
};

/* 1 when the canonical bytes of v and w are equal (NULL = absent: two
 * absent are equal), else 0. */
int registry_same_json(const json_t *v, const json_t *w);

/* What a publish of c over current (the registry loaded, NULL = nothing
 * published; rev its revision) would make, by reads only: -1 WX_BAD_INPUT
 * when the next revision would hold more than REGISTRY_ENTRIES_MAX
 * descriptors, prompts or resources ("... nothing was written"); else 0,
 * *unchanged = 1 when the next revision would be current as it is. */
int registry_publish_check(const json_t *current, long long rev, const struct registry_change *c, int *unchanged,
                           struct world_err *err);
/* The publish, under the caller's attended confirmation: reads the head
 * (*before: the registry published over, the caller's; NULL when none),
 * and unless the next revision would be the head as it is (*published 0,
 * nothing written) stores the sources, re-verifies every descriptor of the
 * next revision (its source a stored transition source, its interpreter
 * archived), writes the revision and moves the head by compare-and-swap,
 * in one transaction. When another writer moved the head meanwhile, the
 * publish merges over its revision (up to 3 attempts; then WX_CONFLICT
 * "re-run the command") unless that writer set one of this publish's ids,
 * prompts or resources to other bytes (WX_CONFLICT, nothing written).
 * *rev, head: the revision written (*published 1) or the head's.
 * Test hook WORLD_PUBLISH_TEST_RIVAL (docs/publishing.md): another writer
 * played between the comparison and the swap. */
int registry_publish(struct world_store *st, const struct registry_change *c, json_t **before, long long *rev,
                     char head[WORLD_REF_SIZE], int *published, struct world_err *err);

/* A retire of ids[0..n) (valid ids, each once), by reads only: *cur the
 * registry (the caller's), *rev and head its head's, *live how many of ids
 * are published now. WX_NOT_FOUND when nothing is published, or an id is
 * neither published nor retired (a typo changes nothing). */
int registry_retire_check(struct world_store *st, char *const *ids, int n, json_t **cur, long long *rev,
                          char head[WORLD_REF_SIZE], int *live, struct world_err *err);
/* The retire, under the caller's attended confirmation, in one IMMEDIATE
 * transaction (what it reads is what it swaps from): the ids still
 * published leave "transitions" for "retired" at the next revision, the
 * prompts and resources kept. *before: the registry read (the caller's);
 * *after: the revision written (the caller's), NULL when none of ids was
 * published anymore (nothing written); *rev, head: the head's after it. */
int registry_retire(struct world_store *st, char *const *ids, int n, const char *provenance, json_t **before,
                    json_t **after, long long *rev, char head[WORLD_REF_SIZE], struct world_err *err);

/* The MCP tool name of a transition id (docs/design.md §7): '.' -> "_d",
 * '/' -> "__", and '_' -> "_u" only where the next character would make it
 * read as an escape ('d', 'u', '_', '.', '/'); every other '_' stays, so the
 * map is one-to-one and `tools.echo` is `tools_decho`. Writes at most n - 1
 * bytes and a NUL into out; returns the full escaped length (a name is
 * valid when that is 1..REGISTRY_TOOL_NAME_MAX). */
#define REGISTRY_TOOL_NAME_MAX 64
size_t registry_tool_name(const char *id, char *out, size_t n);
#endif
