/* cli/attended.h: the attended-step fences (docs/design.md §7, §8.1).
 *
 * Owns: deciding whether a human at the controlling terminal is confirming
 * a write, for every verb that must never run headless (world-publish
 * transitions, worldd session mint). The fences, in order:
 *   ci            CI or GITHUB_ACTIONS is set (a declared tripwire:
 *                 `env -u CI` defeats it; the tty fence is the real one)
 *   tty           /dev/tty does not open (reason no-controlling-terminal:
 *                 setsid, cron, CI, an agent harness); stdin is not a
 *                 character device (reason stdin-not-a-terminal) or not the
 *                 same device as /dev/tty (reason
 *                 stdin-is-not-the-controlling-terminal), so a redirected
 *                 stdin (`echo phrase |`, `< /dev/null`) never confirms
 *   confirmation  the prompt is written to the terminal and one line read
 *                 from it: EOF before a line (reason eof), anything but the
 *                 phrase / `y` / `yes` (reason mismatch)
 * A refusal is printed as `STOP fence=NAME[ reason=R]` and one indented
 * detail line on stderr, and the verb exits WX_ATTENDED (20).
 * What they prove is a terminal, not a human: any pseudo-terminal answers
 * them (util-linux `script -c CMD`, a pty library), so they stop unattended
 * automation -- cron, CI, a harness without a terminal -- and not an agent
 * with a shell acting as the operator (docs/security.md, "The attended
 * fence"; tests/publish/attended.sh shows it). */
#ifndef WORLD_CLI_ATTENDED_H
#define WORLD_CLI_ATTENDED_H
#include <stdio.h>

struct attended_stop {
	char fence[32];
	char reason[64];   /* "" = none */
	char detail[1024]; /* one line, printed indented by two spaces */
};

/* Fill stop (fence, reason may be NULL) and return -1. */
int attended_stop_set(struct attended_stop *stop, const char *fence, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Print the STOP line and its detail line to f; returns WX_ATTENDED. */
int attended_report(FILE *f, const struct attended_stop *stop);

/* Typed phrase: after the fences, write "INTRO\n  PHRASE\n> " to the
 * terminal and read one line; it must equal PHRASE (surrounding spaces and
 * the line end ignored). 0 when confirmed, -1 with stop filled. */
int attended_confirm_phrase(const char *intro, const char *phrase, struct attended_stop *stop);

/* y/N question: after the fences, write QUESTION (verbatim, e.g. the mint
 * prompt ending in "[y/N] ") and read one line; only `y` or `yes`
 * proceeds (anything else: reason mismatch, "aborted (not confirmed)").
 * 0 when confirmed, -1 with stop filled. */
int attended_confirm_yes(const char *question, struct attended_stop *stop);
#endif
