/* cli/verbs_audit.c: `worldd audit`, the security reviewer's one command
 * (see cli/verbs.h). The command line's part: flags, finding the probe and
 * this worldd, printing the report. What is run and judged is audit/'s. */
#include "cli/flags.h"
#include "cli/verbs.h"
#include "audit/audit.h"
#include "capsule/profile.h"
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmd_audit(int argc, char **argv)
{
	const char *V = "audit";
	struct worldd_flag f[] = {
		{ .name = "--json" },
		{ .name = "--spawner" },
		{ .name = "--probe", .has_value = 1 },
		{ .name = "--attempts", .has_value = 1 },
		{ .name = "--parts", .has_value = 1 },
		{ .name = "--jobs", .has_value = 1 },
		{ .name = "--quiet" },
		{ .name = "--expect", .has_value = 1 },
		{ .name = "--unconfined-test", .has_value = 1 },
		{ .name = NULL },
	};
#ifndef WORLD_TEST_HOOKS
	f[8].name = NULL; /* the stand-in exists only in test-hook builds */
#endif
	const char *pos[8];
	int npos, rc = worldd_parse_flags(V, argc, argv, f, pos, 8, &npos);
	if (rc) return rc;
	struct world_err err = { 0, "" };
	for (int i = 0; i < npos; i++)
		if (!capsule_profile_find(pos[i]))
			return worldd_fail(V, (werr(&err, WX_NOT_FOUND, "profile '%s' not found (see worldd profile list)", pos[i]), &err));
	unsigned parts = 0;
	if (f[4].value) {
		char *l = strdup(f[4].value);
		for (char *save = NULL, *w = l ? strtok_r(l, ",", &save) : NULL; w; w = strtok_r(NULL, ",", &save)) {
			if (!strcmp(w, "controls")) parts |= AUDIT_CONTROLS;
			else if (!strcmp(w, "posture")) parts |= AUDIT_POSTURE;
			else if (!strcmp(w, "attempts")) parts |= AUDIT_ATTEMPTS | AUDIT_CONTROLS;
			else if (!strcmp(w, "resource")) parts |= AUDIT_RESOURCE | AUDIT_CONTROLS;
			else {
				free(l);
				return worldd_usage(V, "--parts: '%s' unknown (posture, attempts, resource, controls)", w);
			}
		}
		free(l);
	}
	long long jobs = 2;
	if (f[5].value && (rc = worldd_flag_ll(V, "--jobs", f[5].value, 1, 16, &jobs))) return rc;
	if (f[7].value && npos != 1)
		return worldd_usage(V, "--expect FILE compares one profile: name exactly one PROFILE");
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0) return worldd_fail(V, (werr(&err, WX_IO, "readlink /proc/self/exe: cannot find this worldd"), &err));
	self[n] = 0;
	/* the runs start in the audit's own directory: absolute paths */
	char probe[PATH_MAX], standin[PATH_MAX], expect[PATH_MAX];
	const char *probe_arg = f[2].value ? f[2].value : cli_default_probe();
	if (!realpath(probe_arg, probe))
		return worldd_fail(V, (werr(&err, WX_NOT_FOUND, "probe %s: %s (--probe FILE)", probe_arg, strerror(errno)), &err));
	if (f[8].name && f[8].value && !realpath(f[8].value, standin))
		return worldd_fail(V, (werr(&err, WX_NOT_FOUND, "--unconfined-test %s: %s", f[8].value, strerror(errno)), &err));
	if (f[7].value && !realpath(f[7].value, expect))
		return worldd_fail(V, (werr(&err, WX_NOT_FOUND, "--expect %s: %s", f[7].value, strerror(errno)), &err));
	struct audit_opts o = {
		.worldd = f[8].name && f[8].value ? standin : self,
		.probe = probe,
		.expect = f[7].value ? expect : NULL,
		.profiles = npos ? pos : NULL,
		.nprofiles = (size_t)npos,
		.spawner = f[1].value != NULL,
		.attempts = f[3].value,
		.parts = parts,
		.standin = f[8].name && f[8].value,
		.jobs = (int)jobs,
		.progress = f[6].value ? NULL : stderr,
	};
	if (access(o.probe, X_OK) != 0)
		return worldd_fail(V, (werr(&err, WX_NOT_FOUND, "probe %s: not found or not executable (--probe FILE)", o.probe), &err));
	json_t *rep = audit_run(&o, &err);
	if (!rep) return worldd_fail(V, &err);
	int wrc;
	if (f[0].value) {
		char *t = json_dumps(rep, JSON_COMPACT);
		wrc = t && printf("%s\n", t) >= 0 && fflush(stdout) == 0 ? 0 : -1;
		free(t);
	} else {
		wrc = audit_print_text(rep, stdout);
	}
	int code = audit_exit_code(rep);
	json_decref(rep);
	if (wrc < 0) return worldd_fail(V, (werr(&err, WX_IO, "writing the report to standard output failed"), &err));
	return code;
}

#define AUDIT_HELP \
	"usage: worldd audit [PROFILE...] [--json] [--spawner] [--attempts A,B,...]\n" \
	"                    [--parts posture,attempts,resource,controls] [--expect FILE]\n" \
	"                    [--probe FILE] [--jobs N] [--quiet]\n\n" \
	"The security reviewer's one command: tries to get out of real capsules and\n" \
	"reports, one row per check, the attempt, what was expected, what was\n" \
	"observed and what the same attempt did unconfined (its control). For each\n" \
	"PROFILE (default: transition, tool-run, source-check), as root also as uid\n" \
	"65534 (the unprivileged, user-namespace path), each capsule is made by this\n" \
	"worldd -- `worldd run` (`worldd check` for source-check), with --spawner\n" \
	"`worldd run --spawner`: the daemon's capsule spawner, as worldd serve makes\n" \
	"every capsule -- with the probe as the interpreter:\n" \
	"  posture   from inside (ids, capabilities, no_new_privs, seccomp, namespaces,\n" \
	"            fds, environment, cwd, root, hostname, rlimits) and, as root, from\n" \
	"            the host's /proc of the capsule's process (status: Uid, Cap*,\n" \
	"            NoNewPrivs, Seccomp, Seccomp_filters; uid_map/gid_map, ns/*, fds,\n" \
	"            environ, mountinfo: the profile's mounts with their flags and no\n" \
	"            other, limits: every rlimit soft/hard, cgroups), each against\n" \
	"            `worldd profile show PROFILE --format json` (or --expect FILE)\n" \
	"  attempts  every escape attempt of the probe (world-probe list), one capsule\n" \
	"            each, and all in one run; blocked = the probe's \"blocked: ...\",\n" \
	"            the filter's denial (exit 17, naming the syscall where it is\n" \
	"            certain) or SIGSYS for a non-native ABI\n" \
	"  worktree  tool-run with a worktree read-only at /work: readable, not\n" \
	"            writable, no way from it to the host (symlink, ..), unchanged\n" \
	"  resource  fork/memory bombs, disk fill, cpu spin, sleep, stdout/stderr\n" \
	"            floods (transition only): ended by the profile's limits\n" \
	"  controls  every attempt unconfined (the state-changing ones in a throwaway\n" \
	"            mount/UTS/net/pid namespace), as root and as uid 65534: each must\n" \
	"            get through, or the confined result means nothing\n" \
	"Then the host is compared with a snapshot taken first: mounts, hostname,\n" \
	"reboot setting, domain name, clock, the listener's hits, the victims alive,\n" \
	"no capsule process or cgroup left. The targets (a listener, two victim\n" \
	"processes, a SysV segment, a secret file) live in a private directory under\n" \
	"$TMPDIR (as root, searchable by others: the uid 65534 pass reads the probe\n" \
	"there) that is removed, with every process started, on every path (also on\n" \
	"SIGINT/SIGTERM). Progress lines go to stderr. About 40 s as root.\n\n" \
	"Report: text, or --json: {\"tool\",\"worldd\",\"probe\",\"kernel\",\"uid\",\"covers\",\n" \
	"\"elapsed_ms\",\"summary\":{\"rows\",\"pass\",\"escaped\",\"control_failed\",\"fail\",\n" \
	"\"skip\",\"ok\"},\"rows\":[{\"section\",\"profile\",\"user\",\"via\",\"attempt\",\"expected\",\n" \
	"\"observed\",\"control\",\"verdict\",\"detail\"}]}. A verdict is pass; escaped (the\n" \
	"attempt got through, or a resource attempt past the profile's limit);\n" \
	"control failed (unconfined it did not get through); fail (a posture or host\n" \
	"check differs, or a run ended without a verdict); or skip, with the reason\n" \
	"(this kernel lacks the feature, needs root). How to read it:\n" \
	"docs/security.md, \"Reviewing a build: worldd audit\".\n\n" \
	"  --json             the report as one JSON object\n" \
	"  --spawner          capsules made by the daemon's capsule spawner (worldd run\n" \
	"                     --spawner) instead of worldd run's own launcher;\n" \
	"                     source-check is always made by worldd check\n" \
	"  --attempts LIST    only these attempts (world-probe list names them); no batch run\n" \
	"  --parts LIST       only these parts (attempts and resource bring their controls)\n" \
	"  --expect FILE      compare the posture with this profile JSON (as profile show\n" \
	"                     --format json prints it, e.g. a release's archived copy)\n" \
	"                     instead of the built-in profile; exactly one PROFILE\n" \
	"  --probe FILE       the probe (default: the installed " WORLD_PROBE_DEFAULT ",\n" \
	"                     or the build tree's audit/world-probe beside this worldd)\n" \
	"  --jobs N           capsule runs at a time, 1..16 (default 2)\n" \
	"  --quiet            no progress lines on stderr\n\n" \
	"exit codes:\n" \
	"  0  nothing escaped, every control got through, every posture and host check passed\n" \
	"  1  interrupted (everything started was ended and removed)\n" \
	"  2  usage; --expect FILE that is not the named profile's JSON\n" \
	"  4  profile or probe not found\n" \
	"  9  writing the report failed\n" \
	" 10  the audit's own set-up failed (work directory, $TMPDIR not searchable by\n" \
	"     uid 65534, the probe's listener or list)\n" \
	" 28  an attempt escaped, a control failed, or a posture or host check failed\n"

const struct worldd_verb audit_verbs[] = {
	{ "audit", "try every escape from real capsules, with controls; print the report", AUDIT_HELP, cmd_audit },
	{ NULL, NULL, NULL, NULL },
};
