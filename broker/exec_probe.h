/* broker/exec_probe.h: the start-up probe of an exec profile, fail closed
 * (docs/exec.md "The start-up probe").
 *
 * Owns: before serve offers Workspace.Exec for a profile, running that
 * profile's real capsule (its read roots, environment, limits and the
 * protected names; sup_run_exec) on a scratch episode under the workspace
 * root, with arms that each need a POSITIVE token printed by the probe
 * program and a host-side check:
 *
 *   write-inside   a write inside the worktree lands (the host reads it back)
 *   write-sibling  a write to a sibling episode's directory: host file absent
 *   write-store    a write into the store's folder: host file absent
 *   write-tmp      a write into the host's /tmp: host file absent
 *   read-home      a decoy planted in the daemon's $HOME: unreadable
 *   read-store     a decoy planted in the store's folder: unreadable
 *   read-workspace a decoy planted in the workspace root: unreadable
 *   network        a connect to a live 127.0.0.1 listener the probe opened
 *                  fails and its accept count does not move (the control
 *                  connects unconfined first: count 1)
 *   toolchain      the profile's probe argv (default argv0 --version) exits 0
 *
 * Before them, the policy arm "secrets" (exec_secrets_check): none of the
 * daemon's own secret files lies under a tree the capsule shows unmasked.
 *
 * Each write and read arm has its control: the daemon itself can write the
 * place (the file is made and removed unconfined) and reads the decoy back.
 * The probe program is /usr/bin/bash run through a probe-only argv (no
 * profile binary); a missing bash, a capsule that cannot start, or a
 * program that did not run to its end token fails the probe. Any failure
 * sets p->probe_failure to one line naming the arm; then every exec call
 * of that profile is the refusal naming it. Never an unconfined run. */
#ifndef WORLD_BROKER_EXEC_PROBE_H
#define WORLD_BROKER_EXEC_PROBE_H
#include "broker/exec_profile.h"
#include "common/error.h"

struct sup_exec_req;
struct sup_exec_result;

/* One of the daemon's own secret files (its store password file, operator
 * token file, log signing key file...), by the path the daemon uses. */
struct exec_secret {
	const char *what;             /* "store password file (--store-password-file)" */
	const char *path;             /* may not exist yet (a token written later): its folder is checked */
};

struct exec_probe_env {
	const char *workspace_root;   /* required */
	const char *store_dir;        /* the store's folder (NULL: a URI store; its arms are skipped, said so) */
	const char *home;             /* the daemon's $HOME (NULL: its arm is skipped, said so) */
	const struct exec_secret *secrets; /* the daemon's secret files (arm "secrets") */
	size_t nsecrets;
	const char *cache_root;       /* the exec cache root (NULL: <workspace_root>/.world-exec, under it) */
};

/* The policy arm "secrets", run first by exec_probe_run: each of
 * pe->secrets, by its literal path and by its realpath (or its folder's,
 * when the file is not there yet), must lie under no tree the exec capsule
 * shows -- the system directories bound read-only (supervisor/exec.h:
 * sup_exec_shown; under /etc, not under one of its masks), the profile's
 * read roots, the workspace root, the exec cache root. 0, or 1 with
 * p->probe_failure naming the file and the tree (the arm fails closed: the
 * profile is not offered). */
int exec_secrets_check(struct exec_profile *p, const struct exec_probe_env *pe);

/* 0: every arm passed (p->probe_failure ""); 1: an arm failed
 * (p->probe_failure = "ARM: what was seen"). note (may be NULL) gets the
 * arms run and skipped, for the start-up log. */
int exec_probe_run(struct exec_profile *p, const struct exec_probe_env *pe, char *note, size_t notelen);

/* The runner every exec goes through: sup_run_exec, or in a test build
 * (--enable-test-hooks) one a test installs (NULL restores the capsule). */
typedef int (*exec_runner_fn)(const struct sup_exec_req *req, struct sup_exec_result *res, struct world_err *err);
exec_runner_fn exec_runner(void);
void exec_runner_set_for_test(exec_runner_fn fn);
#endif
