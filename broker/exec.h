/* broker/exec.h: the Workspace.Exec effect handler (docs/exec.md,
 * docs/broker.md "Workspace.Exec").
 *
 * Owns: the policy of one exec call -- the payload {command, args?}
 * (unknown keys refused), the episode's profile (broker/exec_profile.h),
 * the command and its args grammar, the environment (built, never
 * inherited), the episode's exec cache on the host (created 0700, seeds
 * copied on first use), the re-hash of argv[0] from the fd the capsule then
 * executes, and the result object. The capsule itself is
 * supervisor/exec.h's; this never runs a process of its own.
 *
 * Refusals ({"ok":false,"refused":WHY}, a succeeded effect): a payload
 * outside the tool's bounds, no profile (which flag to start serve with),
 * the profile's start-up probe failed (naming the arm), a command id not in
 * the profile, args outside its grammar (naming the first bad arg), the
 * profile's root missing in the worktree. Failures (-1, a failed effect): a
 * swapped argv[0] (WX_HASH_MISMATCH: never run), the cache or worktree not
 * preparable, the capsule not set up. */
#ifndef WORLD_BROKER_EXEC_H
#define WORLD_BROKER_EXEC_H
#include <jansson.h>
#include "broker/handler.h"
#include "broker/exec_profile.h"
#include "common/error.h"

/* The per-episode exec caches: <root>/<episode>/<project> (root default
 * <workspace-root>/.world-exec, beside the worktrees and outside every one:
 * an episode id cannot begin with '.'). */
#define EXEC_CACHE_DIR ".world-exec"

int workspace_exec(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output, struct world_err *err);

/* The episode's exec cache for profile p, made when absent (every level
 * 0700, never through a symlink): home/, tmp/, pycache/, npm/ and one
 * var-<VAR>/ per cache, seeded from its seed on first use (copied under a
 * temporary name, then renamed). out gets the directory. */
int exec_cache_prepare(const char *cache_root, const char *episode, const struct exec_profile *p, char *out,
                       size_t outlen, struct world_err *err);

/* Remove a directory tree the exec code made (the probe's scratch), never
 * following a symlink; best effort. */
void exec_rm_tree(const char *path);

/* The child's environment for p (NULL-terminated, exec_argv_free): HOME,
 * TMPDIR, PATH, LANG, LC_ALL, CI, PYTHONPYCACHEPREFIX, npm_config_cache,
 * the caches' variables, then the profile's env. */
int exec_build_env(const struct exec_profile *p, char ***envp, struct world_err *err);
#endif
