/* common/error.c: see error.h. */
#include "common/error.h"
#include <stdio.h>
#include <string.h>

int werr_v(struct world_err *err, int code, const char *fmt, va_list ap)
{
	if (!err) return -1;
	err->code = code;
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	/* Messages are one line: fold any newline a detail brought in. */
	for (char *p = err->msg; *p; p++)
		if (*p == '\n' || *p == '\r') *p = ' ';
	return -1;
}

int werr(struct world_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	werr_v(err, code, fmt, ap);
	va_end(ap);
	return -1;
}

int werr_prefix(struct world_err *err, const char *fmt, ...)
{
	if (!err) return -1;
	char prefix[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	/* Shift the old message right and put "PREFIX: " in front; the tail is
	 * cut if the whole no longer fits (messages stay one bounded line). */
	size_t cap = sizeof err->msg, pl = strlen(prefix);
	size_t old_len = strnlen(err->msg, cap - 1);
	if (pl + 2 + old_len >= cap) old_len = cap - 1 - (pl + 2);
	memmove(err->msg + pl + 2, err->msg, old_len);
	err->msg[pl + 2 + old_len] = '\0';
	memcpy(err->msg, prefix, pl);
	err->msg[pl] = ':';
	err->msg[pl + 1] = ' ';
	return -1;
}
