/* audit/audit.h: `worldd audit`, the security reviewer's one command, and
 * the escape suite's judge (tests/escape/ drives it; docs/escape-suite.md).
 *
 * Owns: the audit matrix (which profiles, users and capsule makers are run,
 * and which attempts in each), the verdicts (what counts as blocked, as an
 * escape, as a failed control, as a posture that differs from the profile)
 * and the report (one row per check, in JSON and text). It runs capsules by
 * running a worldd (`worldd run`, `worldd check`; `--spawner` for the
 * daemon's capsule maker) with the probe (audit/probe.c, installed as
 * $(pkglibexecdir)/world-probe) as the interpreter, so each capsule is made
 * by the same code as every other call; the expected posture is the
 * profile's own data (capsule_profile_json, what `worldd profile show
 * --format json` prints). The host side (targets, processes, cleanup) is
 * audit/host.h. Layering: cli/ -> audit/ -> capsule/ (profile data only)
 * and store/ (errors); it never includes the supervisor or the daemon. */
#ifndef WORLD_AUDIT_AUDIT_H
#define WORLD_AUDIT_AUDIT_H
#include "common/error.h"
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

enum audit_part {
	AUDIT_CONTROLS = 1, /* every attempt unconfined: it must get through */
	AUDIT_POSTURE = 2,  /* the capsule seen from inside and from the host's /proc */
	AUDIT_ATTEMPTS = 4, /* every escape attempt, one capsule each, plus the batch */
	AUDIT_RESOURCE = 8, /* fork/memory/disk/cpu/sleep/flood attempts (transition) */
	AUDIT_ALL = 15,
};

struct audit_opts {
	const char *worldd;          /* the program that makes capsules (worldd itself) */
	const char *probe;           /* world-probe */
	const char *const *profiles; /* NULL: every profile the daemon uses */
	size_t nprofiles;
	int spawner;                 /* capsules made by the daemon's capsule spawner
	                                (worldd run --spawner) instead of worldd run's
	                                own launcher; source-check always by worldd check */
	const char *expect;          /* the profile JSON to compare the posture with
	                                (profile show --format json, e.g. a release's
	                                archived copy); NULL: the built-in profile */
	const char *attempts;        /* comma list; NULL: every attempt of the probe */
	unsigned parts;              /* enum audit_part bits; 0 = all */
	int standin;                 /* test hooks: worldd is a stand-in that confines
	                                nothing (tests/escape/unconfined-run.sh) */
	int jobs;                    /* capsule runs at a time (default 2) */
	FILE *progress;              /* one line per phase, or NULL */
};

/* Run the audit. Returns the report (rows, summary, elapsed time) or NULL
 * with err when it could not run at all (setup, interrupt). Everything it
 * started is ended and its directory removed on every path. */
json_t *audit_run(const struct audit_opts *o, struct world_err *err);
/* The report as text. -1 on a write error. */
int audit_print_text(const json_t *report, FILE *out);
/* WX_OK when nothing escaped, every control got through and every posture
 * and host check passed; else WX_ESCAPE. */
int audit_exit_code(const json_t *report);
#endif
