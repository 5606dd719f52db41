/* cli/verbs.h: the worldd verb table.
 *
 * Owns: how a verb is declared. Each component contributes one table in its
 * own file (cli/verbs_<component>.c), terminated by an entry with name NULL,
 * so components add verbs without editing each other's code. A verb is
 * named by one or two words ("scan", "object put"); the dispatcher matches
 * the longest name first. A verb's run() gets argv starting after its name and
 * returns an exit code from common/error.h. Errors are printed by the verb as
 * one line: "worldd VERB: what failed: on what". */
#ifndef WORLD_CLI_VERBS_H
#define WORLD_CLI_VERBS_H
#include "cli/default_interp.h"
#include "common/error.h"

struct worldd_verb {
	const char *name;     /* "scan", "object put" */
	const char *summary;  /* one line for `worldd --help` */
	const char *help;     /* full text for `worldd VERB --help`: flags and exit codes */
	int (*run)(int argc, char **argv);
};

extern const struct worldd_verb store_verbs[];
extern const struct worldd_verb capsule_verbs[];
extern const struct worldd_verb broker_verbs[];
extern const struct worldd_verb epoch_verbs[];
extern const struct worldd_verb prov_verbs[];
extern const struct worldd_verb daemon_verbs[];
extern const struct worldd_verb ops_verbs[];
extern const struct worldd_verb copy_verbs[];
extern const struct worldd_verb audit_verbs[];
extern const struct worldd_verb log_verbs[];

/* Print "worldd VERB: MSG" for err to stderr and return its exit code. */
int worldd_fail(const char *verb, const struct world_err *err);
/* Print "worldd VERB: usage: ..." and return WX_USAGE. */
int worldd_usage(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when argv[i] is --help or -h anywhere in argv. */
int worldd_wants_help(int argc, char **argv);
#endif
