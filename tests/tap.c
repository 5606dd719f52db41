/* tests/tap.c: TAP output for C tests (see tap.h). */
#include "tests/tap.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_count, tap_failed;

static void tap_line(bool pass, const char *directive, const char *fmt, va_list ap)
{
	tap_count++;
	printf("%s %d - ", pass ? "ok" : "not ok", tap_count);
	vprintf(fmt, ap);
	if (directive) printf(" # %s", directive);
	putchar('\n');
	fflush(stdout);
}

bool tap_ok(bool cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_line(cond, NULL, fmt, ap);
	va_end(ap);
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	return cond;
}

bool tap_is_str(const char *got, const char *want, const char *file, int line, const char *fmt, ...)
{
	bool cond = (got == NULL && want == NULL) || (got && want && strcmp(got, want) == 0);
	va_list ap;
	va_start(ap, fmt);
	tap_line(cond, NULL, fmt, ap);
	va_end(ap);
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n#   got:  %s\n#   want: %s\n", file, line,
		       got ? got : "(null)", want ? want : "(null)");
	}
	return cond;
}

bool tap_is_int(long long got, long long want, const char *file, int line, const char *fmt, ...)
{
	bool cond = got == want;
	va_list ap;
	va_start(ap, fmt);
	tap_line(cond, NULL, fmt, ap);
	va_end(ap);
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n#   got:  %lld\n#   want: %lld\n", file, line, got, want);
	}
	return cond;
}

void tap_skip(const char *why, const char *fmt, ...)
{
	char directive[512];
	snprintf(directive, sizeof directive, "SKIP %s", why);
	va_list ap;
	va_start(ap, fmt);
	tap_line(true, directive, fmt, ap);
	va_end(ap);
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	va_end(ap);
}

void tap_bail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("Bail out! ");
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	va_end(ap);
	exit(1);
}

int tap_done(void)
{
	printf("1..%d\n", tap_count);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}
