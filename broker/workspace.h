/* broker/workspace.h: the Workspace.Read / Workspace.Write effect handlers
 * and the path rules every handler that touches the worktree uses.
 *
 * Owns: confinement of file access to the episode's worktree
 * <workspace_root>/<episode> (docs/design.md §5.4). The kernel does the confining:
 * the worktree directory is opened once, and every path under it is resolved
 * with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV), so
 * a symlink that stays inside is followed and anything that leads out of the
 * worktree (an absolute symlink, a relative one climbing out, a /proc magic
 * link, a mount point) is refused by the kernel at open time, with no window
 * between a check and the open. Lexical rules come first so that the
 * refusal names the reason (docs/broker.md, "Workspace handlers"):
 *
 *   - empty path, NUL byte, absolute path, a `..` component, a trailing `/`,
 *     a path over WORKSPACE_PATH_MAX bytes or a component over 255 bytes,
 *     a name that is not UTF-8 or holds a control character;
 *   - only regular files (fifos are opened O_NONBLOCK and refused after
 *     fstat, never waited on; sockets, devices, directories refused);
 *   - a file with more than one hard link is refused for reading and writing:
 *     a hard link to an outside file looks exactly like an inside file to
 *     path resolution, so the link count is the only tell;
 *   - reads and writes capped at ctx->file_max bytes (checked on the size
 *     from fstat, so a huge sparse file is refused without being read);
 *   - content must be UTF-8 without NUL bytes (the reason names the offset);
 *   - writes never under .git, .github, .gitmodules, .gitattributes,
 *     .ailang, nor the tool configurations an operator's tool runs code
 *     from on entering, status or opening the directory: .hg, .jj, _darcs,
 *     .pijul, .envrc, .direnv, .vscode, .idea (any component, ASCII
 *     case-insensitively, ignoring Unicode default-ignorable code points
 *     and trailing dots/spaces), checked on the path as given AND on the
 *     directories the parent really resolved to, so a symlink `x -> .git`
 *     inside the worktree does not open .git;
 *   - no git repository layout under another name: a write (or the mkdir
 *     of a missing parent) that would leave a directory holding HEAD with
 *     objects, refs, config, commondir or gitdir is refused, checked on the
 *     new name against the siblings on disk (folded as above), so the order
 *     of the writes does not matter; and no write lands in or under a
 *     directory that already is such a layout (git's exact names);
 *   - these write-target refusals are one line starting with the path as
 *     given, quoted (at most 200 bytes), then the rule;
 *   - writes are atomic: a temporary file in the target's directory (created
 *     through the beneath-resolved directory fd), fsync, renameat over the
 *     name, fsync of the directory. The last component is never followed:
 *     a symlink there is refused, and renameat replaces names, not targets.
 *
 * Results follow broker/handler.h: 0 with an output object (a refusal
 * {"ok":false,"refused":WHY} included), -1 with err for a breakage. */
#ifndef WORLD_BROKER_WORKSPACE_H
#define WORLD_BROKER_WORKSPACE_H
#include <stddef.h>
#include <jansson.h>
#include "broker/handler.h"
#include "common/error.h"

#define WORKSPACE_PATH_MAX 4096

/* Workspace.Read: {"op":"read","path":P} -> {"ok":true,"path":P,"content":TEXT}. */
int workspace_read(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
                   struct world_err *err);

/* Workspace.Write: {"op":"write","path":P,"content":TEXT} or
 * {"op":"edit","path":P,"old_text":A,"new_text":B} (A must occur exactly
 * once, overlapping occurrences counted) -> {"ok":true,"path":P,"bytes":N}.
 * The worktree is created (0700) on the first write; missing parent
 * directories of P are created (0755) one at a time under the resolved
 * parent, never through a symlink. */
int workspace_write(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
                    struct world_err *err);

/* The lexical rules for a worktree-relative path of len bytes (an embedded
 * NUL is refused): NULL when the path is lexically fine, else a static
 * string saying why (it never contains the path). */
const char *workspace_path_refusal_n(const char *path, size_t len);
const char *workspace_path_refusal(const char *path);

/* The write-target name rules on the path as given: NULL when no component
 * is a denied name (.git, .github, .gitmodules, .gitattributes, .ailang,
 * .hg, .jj, _darcs, .pijul, .envrc, .direnv, .vscode, .idea, matched as
 * described above), else a static reason (without the path). Lexical rules
 * and the repository-layout rule (which needs the disk) not included. */
const char *workspace_write_refusal(const char *path);

/* The denied names above (.git, .github, ...) as a NULL-terminated list,
 * for the exec capsule's read-only binds (broker/exec.c; one list, shared). */
const char *const *workspace_protected_names(void);

/* Open a regular file beneath the worktree for reading, with every rule
 * above (lexical, beneath, regular, one link, size <= file_max).
 * Returns 0 with *fd (O_RDONLY|O_CLOEXEC, the caller closes it), 1 with
 * why = the refusal (the worktree missing is "no such file"), -1 with err
 * (configuration or I/O breakage). */
int workspace_open_file(const struct broker_handler_ctx *ctx, const char *path, int *fd, char *why,
                        size_t whylen, struct world_err *err);

/* Open the worktree directory itself (O_RDONLY|O_DIRECTORY, never through
 * a symlink at <episode>); create = make it 0700 when absent. Same returns
 * as workspace_open_file (1 = absent and !create). The episode must match
 * ^[a-z0-9][a-z0-9-]{0,63}$. */
int workspace_open_worktree(const struct broker_handler_ctx *ctx, int create, int *fd, char *why,
                            size_t whylen, struct world_err *err);
#endif
