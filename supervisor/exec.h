/* supervisor/exec.h: one toolchain command run in an exec capsule
 * (Workspace.Exec, docs/exec.md).
 *
 * Owns: the mechanism of one project command -- a fresh user, mount, pid,
 * net, ipc and uts namespace; the host's system directories and the
 * profile's read roots read-only; the episode's worktree read-write; the
 * episode's exec cache read-write; the protected names inside the worktree
 * read-only; no network; execve allowed under the exec seccomp allowlist and
 * landlock rules matching the mounts; memory, pids and CPU-time limits; a
 * wall deadline after which the whole process tree is killed; output
 * capture (head and tail kept, whole stream hashed, a flood killed). No
 * policy lives here: which command, which args, which environment is the
 * caller's (broker/exec_profile.h decides; this runs exactly what it is
 * given). Nothing of the tree survives the call.
 *
 * Layering (../shared/LAYOUT.md): the broker's Workspace.Exec handler calls
 * this; this calls capsule/. */
#ifndef WORLD_SUPERVISOR_EXEC_H
#define WORLD_SUPERVISOR_EXEC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/error.h"

struct sup_cancel;

/* Where things are inside an exec capsule. */
#define SUP_EXEC_WORKTREE "/work"   /* the episode's worktree, read-write */
#define SUP_EXEC_CACHE "/cache"     /* the episode's exec cache (HOME, TMPDIR, caches), read-write */

/* Defaults when the request leaves a limit 0. */
#define SUP_EXEC_MEMORY_MAX ((uint64_t)2 << 30)      /* 2 GiB */
#define SUP_EXEC_PIDS_MAX 256u
#define SUP_EXEC_CPU_MS 120000u
#define SUP_EXEC_WALL_MS 120000u
#define SUP_EXEC_OUTPUT_MAX ((uint64_t)64 << 20)     /* --exec-max-output-bytes */
#define SUP_EXEC_HEAD_KEEP ((size_t)8 << 10)         /* first 8 KiB of a stream kept */
#define SUP_EXEC_TAIL_KEEP ((size_t)56 << 10)        /* and its last 56 KiB */

struct sup_exec_req {
	/* What runs. argv[0] is the absolute path of the resolved binary (the
	 * same path inside: system directories and read roots are bound at their
	 * host paths); argv is NULL-terminated. argv0_fd is that binary, opened
	 * O_RDONLY by the caller, which hashed it from this fd: the capsule
	 * executes this fd (execveat AT_EMPTY_PATH), so what runs is what was
	 * hashed. */
	const char *const *argv;
	int argv0_fd;
	const char *const *envp;          /* exactly the environment, NULL-terminated; nothing inherited */
	/* Where. worktree (host, a directory) is bound read-write at
	 * SUP_EXEC_WORKTREE; the command starts in SUP_EXEC_WORKTREE/cwd_rel
	 * (cwd_rel "" or "." = the worktree). protected_names are names
	 * relative to the worktree (".git", ".github", ".gitmodules", ...)
	 * made read-only when they exist (a directory or a file). */
	const char *worktree;
	const char *cwd_rel;
	const char *const *protected_names;  /* NULL-terminated, may be NULL */
	const char *cache_dir;               /* host dir bound read-write at SUP_EXEC_CACHE, or NULL */
	const char *const *read_roots;       /* host dirs bound read-only at their own paths, NULL-terminated */
	/* Limits (0 = the default above). wall_ms is already min(profile
	 * timeout, the daemon's cap on an exec run). */
	unsigned wall_ms;
	uint64_t memory_max;
	unsigned pids_max;
	unsigned cpu_ms;
	uint64_t output_max;                 /* stdout + stderr bytes before the tree is killed */
	/* The call's cancel handle (supervisor.h; NULL = none): once fired the
	 * tree is killed as at the deadline (exit_code 137, res->cancelled). */
	const struct sup_cancel *cancel;
};

struct sup_exec_stream {
	char *text;            /* the kept bytes: the whole stream if it fit in head+tail, else head + tail
	                        * (NUL-terminated; the caller frees) */
	size_t len;
	uint64_t bytes;        /* the whole stream's length */
	bool truncated;        /* bytes > SUP_EXEC_HEAD_KEEP + SUP_EXEC_TAIL_KEEP */
	char sha256[65];       /* hex of the whole stream */
};

struct sup_exec_result {
	int exit_code;         /* the exit status, or 128+n for a signal death */
	bool timed_out;        /* the wall deadline killed it */
	bool cancelled;        /* req->cancel fired and the tree was killed */
	char limit[16];        /* "" or "output", "memory", "pids", "time" */
	long duration_ms;
	struct sup_exec_stream out, err;
	char profile_name[32]; /* the capsule profile's name: "exec" */
	char profile_digest[72]; /* "sha256:..." of its settings (worldd profile show exec) */
	char layers[512];      /* confinement applied, as the capsule reports it */
	/* Added by the mechanism: */
	char denied[96];       /* "" or the call the seccomp filter refused, e.g. "ptrace": the tree was
	                        * killed at it (exit_code 137) */
	char protected_created[256]; /* protected names absent before the run that exist after it
	                        * ("," separated; an absent name cannot be bound read-only: docs/exec.md) */
};
void sup_exec_result_free(struct sup_exec_result *r);
/* "sha256:..." of the exec capsule profile's settings (res->profile_digest). */
const char *sup_exec_profile_digest(void);

/* The host trees an exec capsule shows besides the worktree, the cache and
 * the read roots: the system directories bound read-only at their own path
 * (NULL-terminated), and the names under /etc it hides (NULL-terminated).
 * For the policy's check of the daemon's own secrets (broker/exec_probe.h). */
void sup_exec_shown(const char *const **system, const char *const **etc_masked);

/* One command. Returns 0 when it ran and ended (normally, by a signal, or
 * killed at a limit or the deadline: see res), -1 with err when it could
 * not be set up (WX_SETUP, WX_BAD_INPUT, WX_IO, ...): then nothing ran and
 * res holds no allocation. Thread-safe: concurrent calls are independent. */
int sup_run_exec(const struct sup_exec_req *req, struct sup_exec_result *res, struct world_err *err);
#endif
