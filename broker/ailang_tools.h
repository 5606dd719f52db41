/* broker/ailang_tools.h: the Ailang.Check, Ailang.Run, Ailang.Discover and
 * Ailang.CLI effect handlers (docs/design.md §5.4, docs/broker.md "Ailang
 * handlers").
 *
 * Owns: turning each payload into one tool run of the pinned tool
 * interpreter (ctx->tool_sup, a supervisor over launcher_capsule_new) in a
 * `tool-run` capsule through sup_run_tool, with the episode's worktree
 * <workspace_root>/<episode> mounted read-only at /work and nothing else of
 * the host; the diagnostics parser of Ailang.Check; the run envelope of
 * Ailang.Run, whose exit_code and limit are the supervisor's (the kernel's
 * wait status, the supervisor's own timer, caps and seccomp listener), never
 * read from the program's output; and the examples search of
 * Ailang.Discover, done on the trusted side over ctx->examples_dir (bounded:
 * file count, file size, lines per file, output size).
 *
 * Paths follow broker/workspace.h (workspace_open_file: lexical rules, the
 * kernel-confined resolution beneath the worktree, one link, size cap), so
 * a path these handlers accept is one Workspace.Read would read. Unknown ops,
 * unknown keys, wrong types and bad paths are refusals ({"ok":false,
 * "refused":WHY}, a succeeded effect); a capsule that cannot run, is not
 * admitted (except Ailang.Run, which reports admission in its envelope),
 * hits the handler's deadline (ctx->wall_ms), or whose output would exceed
 * ctx->output_max is a failed effect (-1, err set). Results follow
 * broker/handler.h. */
#ifndef WORLD_BROKER_AILANG_TOOLS_H
#define WORLD_BROKER_AILANG_TOOLS_H
#include <jansson.h>
#include "broker/handler.h"
#include "common/error.h"

/* Where the worktree is inside a tool-run capsule (capsule/profile.c). */
#define AILANG_WORKTREE_IN_CAPSULE "work"

/* Ailang.Check: {"op":"ai_check","path":P} ->
 * {"ok":PASSED,"argv":["check",P],"exit_code":N,"stdout":TEXT}, TEXT the
 * JSON {"file":P,"check":{"passed":B,"error_count":N,"errors":[{"code",
 * "message","file"}]}} built from the interpreter's diagnostics. */
int ailang_check(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
                 struct world_err *err);

/* Ailang.Run: {"path":P,"args_json":TEXT?} (TEXT: JSON text, default "{}")
 * -> {"ok","admitted","exit_code","decision","limit","stdout","stderr"}:
 * ok = exit 0 and no limit; exit_code null when a signal ended it; limit
 * null or the supervisor's word ("stdout cap", "stderr cap", "memory",
 * "pids", "cpu", "syscall denied: NAME"); not admitted (capacity) is
 * {"ok":false,"admitted":false,"decision":"refused: capacity",...}. The
 * handler's deadline is a failed effect. */
int ailang_run(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
               struct world_err *err);

/* Ailang.Discover: {"op":"builtins_list","flags":{}} -> {"ok":true,
 * "stdout":TEXT} with TEXT the tool interpreter's `builtins --json` (checked
 * to be a JSON object); {"op":"examples_search","query":Q} -> {"ok":true,
 * "stdout":TEXT} with TEXT the JSON {"query":Q,"count":N,"examples":[{"file",
 * "name_match":B,"lines":[{"line":L,"text":T}]}]} over ctx->examples_dir. */
int ailang_discover(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
                    struct world_err *err);

/* Ailang.CLI: {"op":"version"|"builtins"} or {"op":"check"|"iface","path":P}
 * -> {"ok":EXIT0,"argv":[...],"exit_code":N,"stdout":TEXT,"stderr":TEXT}
 * (capsule paths in the text shown as P). */
int ailang_cli(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
               struct world_err *err);
#endif
