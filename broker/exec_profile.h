/* broker/exec_profile.h: the operator's exec profiles (world/exec-profile/v1)
 * and the grammar of an agent's args (Workspace.Exec, docs/exec.md).
 *
 * Owns: loading and validating one profile file (`serve --exec-profile
 * FILE`, read once, digested, never re-read), the set of loaded profiles
 * with the episode -> project mapping (`--exec-episode-project EP=PROJECT`),
 * the resolution of every command's argv[0] on the profile's `path` (once,
 * at load, recorded by path and sha256; re-hashed before every call by
 * exec_profile_open_argv0), and the matching of an agent's args against a
 * command's grammar (flags, positional class, max_args, passthrough), which
 * gives the argv as run. No process is run here: broker/exec.c builds the
 * environment and calls supervisor/exec.h; broker/exec_probe.c probes the
 * capsule at start-up.
 *
 * Every load refusal is one line naming the file and the field as a JSON
 * pointer ("profile p.json: /commands/test/argv/0: ..."), WX_BAD_INPUT (or
 * WX_NOT_FOUND / WX_IO for the file itself). Nothing of a refused profile
 * is kept. */
#ifndef WORLD_BROKER_EXEC_PROFILE_H
#define WORLD_BROKER_EXEC_PROFILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/error.h"
#include "common/ref.h"

#define EXEC_PROFILE_FORMAT "world/exec-profile/v1"
#define EXEC_PROFILE_FILE_MAX ((size_t)1 << 20)
#define EXEC_ARGS_MAX 16u          /* the tool's bound on args (and the max_args default) */
#define EXEC_ARG_BYTES_MAX 512u    /* each arg 1..512 bytes */
#define EXEC_VALUE_REGEX_MAX 256u  /* a "regex" flag value: 1..256 bytes */
#define EXEC_VALUE_INT_MAX 1000000 /* an "int" flag value: 0..10^6 */
#define EXEC_TIMEOUT_MS_MAX 3600000u
/* The daemon-wide cap on one exec run's wall time (serve --exec-max-ms):
 * a profile's timeout_ms above it is refused at load; an absent timeout_ms
 * is min(SUP_EXEC_WALL_MS, the cap). */
#define EXEC_MAX_MS_DEFAULT 600000u
#define EXEC_PROFILES_MAX 64

enum exec_flag_kind { EXEC_FLAG_BOOL, EXEC_FLAG_REGEX, EXEC_FLAG_INT, EXEC_FLAG_RELPATH, EXEC_FLAG_ENUM };
enum exec_positional { EXEC_POS_NONE, EXEC_POS_RELPATH, EXEC_POS_PKGPATTERN, EXEC_POS_TESTFILE };

struct exec_flag {
	char *name;                 /* exact, e.g. "-run", "--maxfail", "-v" */
	enum exec_flag_kind kind;
	char *pattern;              /* "regex:P": the value must match the POSIX ERE P whole; else NULL */
	void *re;                   /* compiled pattern (regex_t *), or NULL */
	char **values;              /* enum: the allowed values */
	size_t nvalues;
};

struct exec_binary {
	char path[4096];            /* absolute, as resolved on `path` (the argv[0] as run) */
	char sha256[65];            /* hex of its bytes at load */
};

struct exec_command {
	char *id;
	char **argv;                /* the profile's prefix; argv[0] as written */
	size_t argc;
	struct exec_binary bin;     /* argv[0] resolved */
	struct exec_flag *flags;
	size_t nflags;
	enum exec_positional positional;
	unsigned max_args;          /* default EXEC_ARGS_MAX */
	bool passthrough;           /* "passthrough": "--" */
};

struct exec_cache {
	char *var;                  /* the variable the child sees, pointing at /cache/<var-dir> */
	char *seed;                 /* host directory copied in on first use (realpath), or NULL */
};

struct exec_profile {
	char *file;                 /* as given on the command line */
	char *project;
	char *root;                 /* relative to the worktree ("." = the worktree) */
	char **path;                /* absolute directories, in order */
	size_t npath;
	char **env;                 /* "K=V", the profile's env */
	size_t nenv;
	char **read_roots;          /* realpaths */
	size_t nread_roots;
	struct exec_cache *caches;
	size_t ncaches;
	unsigned timeout_ms;
	uint64_t memory_max;        /* limits (our extension; 0 = the defaults of supervisor/exec.h) */
	unsigned pids_max, cpu_ms;
	char **probe_argv;          /* the toolchain arm of the start-up probe (argv[0] resolved) */
	size_t probe_argc;
	struct exec_binary probe_bin;
	struct exec_command *commands;  /* sorted by id */
	size_t ncommands;
	char digest[WORLD_REF_SIZE];    /* sha256 of the file's canonical JSON */
	char probe_failure[512];    /* "" = offered; else the failed probe arm, one line (broker/exec_probe.c) */
};

/* Where a profile may not reach (load-time placement rules). */
struct exec_profile_env {
	const char *workspace_root; /* required */
	const char *store_dir;      /* the store's folder (NULL: a URI store has none) */
	const char *home;           /* the daemon's $HOME (NULL = none) */
	const char *homes_dir;      /* "/home" normally: each entry under it is an operator home (NULL = skip) */
	unsigned max_ms;            /* --exec-max-ms, the cap on timeout_ms (0 = EXEC_MAX_MS_DEFAULT) */
};

/* Load one file. 0 with *out (exec_profile_free), or -1 with err. */
int exec_profile_load(const char *file, const struct exec_profile_env *env, struct exec_profile **out,
                      struct world_err *err);
void exec_profile_free(struct exec_profile *p);

const struct exec_command *exec_profile_command(const struct exec_profile *p, const char *id);

/* The args grammar. args: nargs agent strings (each already within the
 * tool's bounds). On a match: 0 with *argv_out = prefix (argv[0] = the
 * resolved absolute path) + the normalised args, NULL-terminated, and
 * *argc_out (free with exec_argv_free). A refusal: 1 with why (naming the
 * first bad arg: `args[2] "-x": ...`). -1 with err: out of memory. */
int exec_args_match(const struct exec_command *c, const char *const *args, size_t nargs, char ***argv_out,
                    size_t *argc_out, char *why, size_t whylen, struct world_err *err);
void exec_argv_free(char **argv);

/* Open the resolved binary O_RDONLY|O_CLOEXEC and hash it from the fd:
 * 0 with *fd (rewound to 0) when the hash still equals the load-time one;
 * -1 with err (WX_HASH_MISMATCH naming the path and both digests, or
 * WX_IO / WX_NOT_FOUND) otherwise, no fd left open. */
int exec_binary_open(const struct exec_binary *b, int *fd, struct world_err *err);

/* The loaded set, with the episode mapping. */
struct exec_profiles {
	struct exec_profile *p[EXEC_PROFILES_MAX];
	size_t n;
	char **map_episode, **map_project;  /* --exec-episode-project EP=PROJECT */
	size_t nmap;
};
/* Add a loaded profile (takes it; a second profile of the same project
 * is refused: WX_USAGE naming both files). */
int exec_profiles_add(struct exec_profiles *s, struct exec_profile *p, struct world_err *err);
/* Add one EP=PROJECT mapping (WX_USAGE when malformed, the episode mapped
 * twice, or the project not loaded: call after every profile is added). */
int exec_profiles_map(struct exec_profiles *s, const char *ep_eq_project, struct world_err *err);
/* The profile of an episode: 0 with *out, or 1 with why (no profile loaded:
 * which flag to start serve with; no mapping and several loaded). */
int exec_profiles_for(const struct exec_profiles *s, const char *episode, const struct exec_profile **out,
                      char *why, size_t whylen);
void exec_profiles_free(struct exec_profiles *s);

/* World-owned environment names (HOME, TMPDIR, PATH, LANG, LC_ALL, CI,
 * PYTHONPYCACHEPREFIX, npm_config_cache, the proxies in any case, GIT_*):
 * NULL when name is the profile's to set, else why not. */
const char *exec_env_owned(const char *name);
#endif
