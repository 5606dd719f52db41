/* broker/grants.h: grants, visibility and the decision of docs/design.md §5.1.
 *
 * Owns: the grant text form `EFFECT=SCOPE:BUDGET` (split at the first '='
 * and the last ':'), its JSON form {"budget","effect","scope"}, the
 * validation of effect names, scopes and budgets, and the decision for one
 * requested triple over a session's grants: in order effect name, exact
 * scope, not expired (live while now < expires_at), 0 <= cost <= remaining;
 * the first allowed grant wins, otherwise the best-ranked denial (the one
 * that got furthest in that order: budget > expired > scope > effect-name,
 * because it tells the caller the most). Remaining = the grant's budget
 * minus the cost of the episode's durable effect intents on that effect and
 * scope (store/store.h world_journal_spent: denials write no intent and cost
 * nothing, failed effects keep theirs and cost). */
#ifndef WORLD_BROKER_GRANTS_H
#define WORLD_BROKER_GRANTS_H
#include <jansson.h>
#include "common/error.h"

struct world_store;

#define BROKER_BUDGET_MAX 9007199254740992LL /* 2^53 */
#define BROKER_NAME_MAX 128

struct broker_grant {
	char effect[BROKER_NAME_MAX + 1];
	char scope[BROKER_NAME_MAX + 1];
	long long budget;
};

/* Effect names: dotted segments of [A-Za-z][A-Za-z0-9_]*, e.g. Workspace.Read.
 * Scopes: 1-128 bytes of [A-Za-z0-9._/:-]. Both <= 128 bytes. */
int broker_effect_name_valid(const char *s);
int broker_scope_valid(const char *s);
/* What an (effect, scope) a descriptor names (its access, a declared
 * effect) must be: what a grant can name, since nothing else could ever be
 * granted. NULL when both are, else the one-line reason. */
const char *broker_requirement_why(const char *effect, const char *scope);
#define BROKER_EFFECT_GRAMMAR "dotted segments of [A-Za-z][A-Za-z0-9_]*, at most 128 bytes"
#define BROKER_SCOPE_GRAMMAR "1-128 bytes of [A-Za-z0-9._/:-]"
/* Episode ids: ^[a-z0-9][a-z0-9-]{0,63}$ */
int broker_episode_valid(const char *s);

/* Parse "EFFECT=SCOPE:BUDGET"; err names the grant text and what is wrong. */
int broker_grant_parse(const char *text, struct broker_grant *g, struct world_err *err);
/* The JSON array of grants as stored with a session. */
json_t *broker_grants_to_json(const struct broker_grant *g, size_t n);
/* Read back a stored grants array (each element checked). */
int broker_grants_from_json(const json_t *arr, struct broker_grant **out, size_t *n, struct world_err *err);

enum broker_label {
	BROKER_ALLOWED = 0,
	BROKER_DENIED_EFFECT = 1, /* "denied:effect-name" */
	BROKER_DENIED_SCOPE = 2,  /* "denied:scope" */
	BROKER_DENIED_EXPIRED = 3,/* "denied:expired" */
	BROKER_DENIED_BUDGET = 4, /* "denied:budget" */
};
const char *broker_label_name(enum broker_label l);

struct broker_decision {
	enum broker_label label;
	long long budget_before;  /* remaining of the deciding grant (0 when no grant matched the effect) */
	int grant_index;          /* the deciding grant, -1 when none */
};
/* Decide effect/scope/cost for a session of episode with grants, expiring
 * at expires_at, at time now. Reads the episode's spending from st. */
int broker_decide(struct world_store *st, const char *episode, const struct broker_grant *g, size_t n,
                  long long expires_at, long long now, const char *effect, const char *scope, long long cost,
                  struct broker_decision *out, struct world_err *err);
/* Visibility of an access triple: the same decision, except that a cost of
 * 0 needs no look at the episode's spending (0 <= 0 <= remaining always
 * holds), so listing tools costs no journal query. *visible = 1 or 0. */
int broker_visible(struct world_store *st, const char *episode, const struct broker_grant *g, size_t n,
                   long long expires_at, long long now, const char *effect, const char *scope, long long cost,
                   int *visible, struct world_err *err);
#endif
