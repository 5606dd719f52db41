/* cli/attended.c: the attended-step fences (see attended.h). */
#include "cli/attended.h"
#include "common/error.h"
#include "common/file.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#define LINE_MAX_BYTES 4096

/* Every terminal refusal ends with the fix: the operator needs the next
 * step, and an agent reading it learns that the step is not its to take.
 * It says "must not", not "cannot": any pseudo-terminal (util-linux
 * `script`) answers these fences (docs/security.md, "The attended fence"). */
static const char tty_fix[] =
	"fix: run it yourself from a terminal window (an IDE terminal pane works); the step is the operator's: an agent must not answer it";

int attended_stop_set(struct attended_stop *stop, const char *fence, const char *reason, const char *fmt, ...)
{
	snprintf(stop->fence, sizeof stop->fence, "%s", fence);
	snprintf(stop->reason, sizeof stop->reason, "%s", reason ? reason : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(stop->detail, sizeof stop->detail, fmt, ap);
	va_end(ap);
	/* one line, whatever the caller passed in */
	for (char *p = stop->detail; *p; p++)
		if (*p == '\n' || *p == '\r') *p = ' ';
	return -1;
}

int attended_report(FILE *f, const struct attended_stop *stop)
{
	fflush(stdout);
	if (stop->reason[0]) fprintf(f, "STOP fence=%s reason=%s\n", stop->fence, stop->reason);
	else fprintf(f, "STOP fence=%s\n", stop->fence);
	if (stop->detail[0]) fprintf(f, "  %s\n", stop->detail);
	fflush(f);
	return WX_ATTENDED;
}

/* The ci tripwire and the tty fence. On success *tty is the opened
 * controlling terminal (read-write), which is also the caller's stdin. */
static int fences(int *tty, struct attended_stop *stop)
{
	static const char *const ci_vars[] = { "CI", "GITHUB_ACTIONS" };
	for (size_t i = 0; i < sizeof ci_vars / sizeof ci_vars[0]; i++)
		if (getenv(ci_vars[i])) {
			char reason[32];
			size_t k = 0;
			for (const char *p = ci_vars[i]; *p && k + 1 < sizeof reason; p++)
				reason[k++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
			reason[k] = 0;
			return attended_stop_set(stop, "ci", reason,
			                         "%s is set; this step is never run in CI (unset it only if a human is "
			                         "at this terminal)",
			                         ci_vars[i]);
		}
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return attended_stop_set(stop, "tty", "no-controlling-terminal",
		                         "opening /dev/tty failed: %s; there is no controlling terminal here (an agent "
		                         "harness, setsid, cron or CI). %s",
		                         strerror(errno), tty_fix);
	struct stat st;
	if (fstat(0, &st) < 0 || !S_ISCHR(st.st_mode)) {
		close(fd);
		return attended_stop_set(stop, "tty", "stdin-not-a-terminal",
		                         "stdin is not a terminal (a pipe, a socket or a file is never read as the "
		                         "confirmation). %s",
		                         tty_fix);
	}
	/* /dev/null is a character device too, and /dev/tty is its own device
	 * node, so comparing device numbers proves nothing; tcgetsid() succeeds
	 * only on a descriptor of the caller's controlling terminal. */
	pid_t tsid = tcgetsid(0);
	if (tsid < 0 || tsid != getsid(0)) {
		close(fd);
		return attended_stop_set(stop, "tty", "stdin-is-not-the-controlling-terminal",
		                         "stdin is a character device but not this process's controlling terminal "
		                         "(e.g. < /dev/null). %s",
		                         tty_fix);
	}
	*tty = fd;
	return 0;
}

/* Prompt on the terminal and read one line from it. Returns 1 with line
 * (trimmed of surrounding blanks and the line end), 0 on EOF before any
 * byte, -1 on a read error (stop filled). An over-long line is consumed to
 * its end and returned truncated, which never equals a short phrase. */
static int ask(int tty, const char *prompt, char *line, size_t cap, struct attended_stop *stop)
{
	if (write_all(tty, prompt, strlen(prompt)) < 0)
		return attended_stop_set(stop, "tty", "no-controlling-terminal",
		                         "writing the prompt to /dev/tty failed: %s. %s", strerror(errno), tty_fix);
	size_t n = 0;
	int got = 0;
	for (;;) {
		char c;
		ssize_t r = read(tty, &c, 1);
		if (r < 0 && errno == EINTR) continue;
		if (r < 0 && errno != EIO)
			return attended_stop_set(stop, "tty", "no-controlling-terminal",
			                         "reading the confirmation from /dev/tty failed: %s. %s", strerror(errno),
			                         tty_fix);
		if (r <= 0) break; /* EOF, or EIO: the terminal hung up */
		got = 1;
		if (c == '\n') break;
		if (n + 1 < cap) line[n++] = c;
	}
	line[n] = 0;
	if (!got) return 0;
	size_t a = 0;
	while (line[a] == ' ' || line[a] == '\t') a++;
	while (n > a && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r')) n--;
	memmove(line, line + a, n - a);
	line[n - a] = 0;
	return 1;
}

int attended_confirm_phrase(const char *intro, const char *phrase, struct attended_stop *stop)
{
	int tty;
	if (fences(&tty, stop) < 0) return -1;
	size_t plen = strlen(intro) + strlen(phrase) + 16;
	char *prompt = malloc(plen);
	if (!prompt) {
		close(tty);
		return attended_stop_set(stop, "confirmation", "eof", "out of memory building the prompt");
	}
	snprintf(prompt, plen, "%s\n  %s\n> ", intro, phrase);
	char line[LINE_MAX_BYTES];
	int r = ask(tty, prompt, line, sizeof line, stop);
	free(prompt);
	close(tty);
	if (r < 0) return -1;
	if (r == 0)
		return attended_stop_set(stop, "confirmation", "eof",
		                         "the terminal closed before a confirmation line was typed; nothing was written");
	if (strcmp(line, phrase) != 0)
		return attended_stop_set(stop, "confirmation", "mismatch",
		                         "the typed line is not the required confirmation phrase; nothing was written "
		                         "(type it exactly as printed)");
	return 0;
}

int attended_confirm_yes(const char *question, struct attended_stop *stop)
{
	int tty;
	if (fences(&tty, stop) < 0) return -1;
	char line[LINE_MAX_BYTES];
	int r = ask(tty, question, line, sizeof line, stop);
	close(tty);
	if (r < 0) return -1;
	if (r == 0)
		return attended_stop_set(stop, "confirmation", "eof",
		                         "the terminal closed before an answer was typed; aborted (not confirmed)");
	if (strcmp(line, "y") != 0 && strcmp(line, "yes") != 0)
		return attended_stop_set(stop, "confirmation", "mismatch",
		                         "aborted (not confirmed): only y or yes proceeds");
	return 0;
}
