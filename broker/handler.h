/* broker/handler.h: the interface every effect handler implements.
 *
 * Owns: the contract between the broker's effect pipeline (broker/effect.c)
 * and the handlers of docs/design.md §5.4 (broker/workspace.c for Workspace.Read /
 * Workspace.Write, broker/ailang_tools.c for Ailang.Check / Ailang.Run /
 * Ailang.Discover / Ailang.CLI, broker/exec.c for Workspace.Exec). The pipeline has already decided that the
 * effect is allowed, stored the request and made the intent durable; the
 * handler only does the work.
 *
 * A handler returns:
 *   0 with *output = a JSON object it owns the reference to: the effect
 *     SUCCEEDED. That includes a refusal, which is the tool's own answer
 *     {"ok":false,"refused":"WHY"} (bad path, unknown op or key, file too
 *     large, not UTF-8, ...): the caller asked for something the tool will
 *     not do, and that is recorded as a succeeded effect.
 *  -1 with err set: the effect FAILED (a breakage: I/O error, capsule
 *     failure, deadline, output over the cap). *output stays NULL.
 * Handlers never throw away an error silently and never print. */
#ifndef WORLD_BROKER_HANDLER_H
#define WORLD_BROKER_HANDLER_H
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "common/error.h"

struct supervisor;
struct exec_profiles;
struct sup_cancel;

struct broker_handler_ctx {
	const char *workspace_root;   /* <workspace-root>; NULL when the caller gave none */
	const char *episode;          /* the session's episode: worktree = <workspace-root>/<episode> */
	struct supervisor *tool_sup;  /* the pinned tool interpreter's supervisor; NULL = none */
	const char *examples_dir;     /* packages/se-tools/examples (Ailang.Discover); NULL = none */
	unsigned wall_ms;             /* this handler's wall-time cap */
	size_t output_max;            /* cap on the handler output's JSON text (bytes) */
	size_t file_max;              /* cap on a file read or written (bytes) */
	/* Workspace.Exec (broker/exec.h): the loaded profiles (NULL = none:
	 * every exec call is the refusal naming --exec-profile), the root of
	 * the per-episode exec caches (NULL = <workspace-root>/.world-exec) and
	 * the output cap of one command (0 = SUP_EXEC_OUTPUT_MAX). */
	const struct exec_profiles *exec_profiles;
	const char *exec_cache_root;
	uint64_t exec_output_max;
	/* An exec run's wall time is the profile's timeout_ms, up to this
	 * daemon-wide cap (serve --exec-max-ms; 0 = EXEC_MAX_MS_DEFAULT), not
	 * wall_ms above: a test suite outlives the 10 s of a tool run. */
	unsigned exec_max_ms;
	/* The call's cancel handle (NULL = none): an exec run watches it and
	 * kills its tree once fired (supervisor/exec.h). */
	const struct sup_cancel *cancel;
};

typedef int (*broker_handler_fn)(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
                                 struct world_err *err);

/* Refusal helper: *output = {"ok":false,"refused":WHY}; returns 0. */
int broker_refuse(json_t **output, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Defaults (docs/broker.md). */
#define BROKER_HANDLER_WALL_MS 10000u
#define BROKER_HANDLER_OUTPUT_MAX ((size_t)1 << 20)
#define BROKER_FILE_MAX ((size_t)512 << 10)
#endif
