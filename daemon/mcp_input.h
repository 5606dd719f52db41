/* daemon/mcp_input.h: MCP 2026-07-28 multi round-trip requests on the wire
 * (SEP-2322) for a tools/call whose skill asks its caller before it runs.
 *
 * Owns: reading params.inputResponses and params.requestState, the client's
 * capabilities from params._meta, the daemon's request state key (loaded
 * once, on first use, from the store's input key file), and putting
 * coordinator/confirm.h's verdicts on the wire: an InputRequiredResult
 * (resultType "input_required", inputRequests, requestState), -32021
 * MissingRequiredClientCapability (HTTP 400) with
 * data.requiredCapabilities, -32602 for a state or answer refused; a call
 * that may run gets the inputs and task id coord_call takes. The 2025
 * revisions have no such result: a call of such a skill under them is a
 * tool error naming the revision that serves it. A prompt may declare
 * inputRequests too (prompts/get, mcp_input_prompt). */
#ifndef WORLD_DAEMON_MCP_INPUT_H
#define WORLD_DAEMON_MCP_INPUT_H
#include <jansson.h>
#include "daemon/route.h"

struct coord_session;

struct mcp_input {
	char *inputs;        /* coord_call's inputs (JSON text), NULL = the skill asks nothing */
	int once;            /* the answers came with a request state: its task id runs once */
	char task[129];      /* the task id the call runs under ("" = the caller's own, or drawn by coord_call) */
	char declined[400];  /* non-empty: the caller declined; coord_call records it, nothing runs */
	int round;           /* the rounds answered */
};

/* For a tools/call of the visible descriptor tool: NULL when the call goes
 * on to coord_call with g filled (g->inputs NULL when the skill declares
 * no inputRequests); else the answer to send as it is -- an input_required
 * result or a JSON-RPC error -- with *http the HTTP status it needs (0 =
 * the usual). task: the caller's params._meta["world/task_id"] or NULL. */
json_t *mcp_input_gate(struct dreq *rq, const struct coord_session *sess, const json_t *tool, json_t *id,
                       const json_t *params, int modern, const char *task, struct mcp_input *g, int *http);
void mcp_input_free(struct mcp_input *g);
/* The same for prompts/get of a visible prompt that declares
 * inputRequests: NULL when it may be rendered (every round answered; its
 * answers gate it, a prompt has no call to record), else the answer to
 * send; a declined elicitation is -32602. No task id: a prompt reads
 * nothing and commits nothing, so its state is not single-use. */
json_t *mcp_input_prompt(struct dreq *rq, const struct coord_session *sess, const json_t *prompt, json_t *id,
                         const json_t *params, int modern, int *http);
/* A coord_call failure of a call whose answers came with a request state,
 * refusing the state (used once already): the -32602 answer, else NULL. */
json_t *mcp_input_refused(const struct mcp_input *g, json_t *id, int code, const char *msg);
#endif
