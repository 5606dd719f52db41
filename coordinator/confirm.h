/* coordinator/confirm.h: input a transition asks its caller for before it
 * runs (MCP 2026-07-28 multi round-trip requests, SEP-2322), the decision
 * whether a call has it, and the request state that carries a call between
 * its rounds.
 *
 * Owns: the descriptor member "inputRequests" (its shape, checked by
 * world-publish and again here), the rule that decides for one request
 * whether it runs, is asked again, is declined, or needs a client
 * capability it lacks; the request state token (its format, its key file,
 * sealing and opening it); the inputs block the transition sees and the
 * call's stored input keeps. Knows no transport: the daemon's MCP
 * projection (daemon/mcp_input.c) puts the verdicts on the wire; the
 * coordinator (coord_call) refuses a call of such a descriptor that comes
 * without them and runs a state's call at most once.
 *
 * The declaration (docs/publishing.md, "Asking the caller"):
 *   "inputRequests": [ROUND, ...]        1..CONFIRM_ROUNDS_MAX rounds, asked in order
 *   ROUND = {KEY: REQUEST, ...}          1..CONFIRM_KEYS_MAX keys, [A-Za-z0-9._-]{1,64},
 *                                        unique across the rounds
 *   REQUEST = {"method": "elicitation/create" | "sampling/createMessage" | "roots/list",
 *              "params": {...}, "optional": true?}
 * elicitation params hold "message" (string) and "requestedSchema" (an
 * object schema); sampling params "messages" (a non-empty array) and
 * "maxTokens" (>= 1). A request is required unless "optional": a required
 * one whose capability (elicitation, sampling, roots) the client did not
 * declare is refused (-32021 on the wire); an optional one is then left
 * out. An elicitation answered "decline" or "cancel" ends the call: the
 * transition does not run.
 *
 * What the transition sees: its arguments with one member added,
 *   "world": {"input": {"requests": {KEY: REQUEST, ...}, "responses": {KEY: RESPONSE, ...}}}
 * (every request asked, "optional" dropped, and every answer), the same
 * bytes stored as the call's world/invocation-input/v1 -- so the record
 * names what was asked and answered, and a replay sees it again.
 *
 * The request state: "v1." base64url(PAYLOAD) "." base64url(HMAC-SHA256(key, PAYLOAD)),
 * PAYLOAD canonical JSON {"args":REF,"decl":REF,"exp":UNIX_S,"method":M,
 * "name":N,"principal":CREDENTIAL_ID,"responses":{...},"round":K,"task":TASK}:
 * bound to the session's credential, the request (method, name, the
 * arguments' hash), the declaration it answers (its hash: a republished
 * one asks anew), the call's task id, and an expiry (CONFIRM_TTL_S). The
 * key is 32 random bytes in a file of the store's secret files
 * (world_input_key_path: <db>.input-key, 0600), made by the first daemon
 * that needs it, so every daemon of a store on this host opens the states
 * of the others and a restart keeps them. */
#ifndef WORLD_COORDINATOR_CONFIRM_H
#define WORLD_COORDINATOR_CONFIRM_H
#include <jansson.h>
#include <stddef.h>
#include "common/error.h"

struct world_store;

#define CONFIRM_KEY_LEN 32
#define CONFIRM_TTL_S 600              /* a state's life */
#define CONFIRM_ROUNDS_MAX 8
#define CONFIRM_KEYS_MAX 16
#define CONFIRM_DECL_MAX (64 * 1024)   /* the declaration's canonical bytes */
#define CONFIRM_STATE_MAX (96 * 1024)  /* a state's bytes (the answers it carries) */

/* The declaration d is well formed: 0, else -1 with why (one line, naming
 * the round and key). */
int confirm_decl_check(const json_t *d, char *why, size_t n);

/* The key: read from the store's input key file, made (O_EXCL, 0600) when
 * there is none. Errors name the file. */
int confirm_key_load(struct world_store *st, unsigned char key[CONFIRM_KEY_LEN], struct world_err *err);

enum confirm_verdict {
	CONFIRM_RUN,        /* every round answered: run with out->inputs */
	CONFIRM_ASK,        /* answer input_required: out->ask, out->state */
	CONFIRM_DECLINED,   /* an elicitation declined or cancelled: out->inputs, out->why; nothing runs */
	CONFIRM_MISSING,    /* a required request's capability is not declared: out->capability */
};

struct confirm_req {
	const unsigned char *key;       /* CONFIRM_KEY_LEN bytes */
	const char *principal;          /* the session's credential id */
	const char *method, *name;      /* "tools/call" and the skill id */
	const char *args_ref;           /* the hash of the arguments' canonical bytes */
	const json_t *caps;             /* the client's capabilities (an object) */
	const json_t *responses;        /* params.inputResponses (NULL = absent) */
	const char *state;              /* params.requestState (NULL = absent) */
	const char *task;               /* the caller's own task id (NULL = none) */
	long long now;                  /* unix seconds */
	long long ttl_s;                /* 0 = CONFIRM_TTL_S */
};

struct confirm_out {
	enum confirm_verdict v;
	json_t *ask;                    /* ASK: the inputRequests to send */
	char *state;                    /* ASK: the request state */
	json_t *inputs;                 /* RUN, DECLINED: {"requests":..., "responses":...} */
	char task[129];                 /* RUN, DECLINED, ASK: the call's task id */
	int from_state;                 /* RUN, DECLINED: the answers came with a state (its task id runs once) */
	int round;                      /* the round asked (ASK) or last answered, 1-based */
	char capability[32];            /* MISSING: "elicitation", "sampling" or "roots" */
	char why[300];                  /* DECLINED: which key and how */
};

/* The verdict for one request of a descriptor whose declaration is d.
 * -1 (WX_BAD_INPUT, one line for a -32602 answer): inputResponses not an
 * object, an answer of the wrong shape, or a state that does not verify,
 * belongs to another session, request or declaration, or expired. A state
 * that verifies does not say the call has not run: coord_call's "once"
 * refuses its task id when the journal has it. */
int confirm_decide(const json_t *d, const struct confirm_req *rq, struct confirm_out *out, struct world_err *err);
void confirm_out_free(struct confirm_out *o);
/* The canonical input of a call with inputs (JSON text of out->inputs):
 * args with "world":{"input":INPUTS} added. args holding a member "world"
 * is refused (WX_BAD_INPUT): that name is the input's, as it is the
 * output's. NULL with err on failure. */
char *confirm_input(const json_t *args, const char *inputs, size_t *len, struct world_err *err);
#endif
