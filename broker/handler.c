/* broker/handler.c: see handler.h (the helpers every handler shares). */
#include "broker/handler.h"
#include "common/canon.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The reason may have been cut by vsnprintf in the middle of a UTF-8
 * sequence, or carry bytes a caller copied from a file name: jansson refuses
 * such a string, and a refusal must never turn into a breakage, so every
 * invalid byte becomes '?'. Returns -1 (with *output NULL) only when out of
 * memory, since handler.h's contract gives this helper no err to fill. */
int broker_refuse(json_t **output, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	if (n < 0) snprintf(why, sizeof why, "refused (reason could not be formatted)");
	size_t len = strlen(why);
	for (size_t i = 0; i < len;) {
		size_t k = world_utf8_seq((const unsigned char *)why + i, len - i);
		if (k == 0) {
			why[i++] = '?';
			continue;
		}
		i += k;
	}
	*output = json_pack("{s:b,s:s}", "ok", 0, "refused", why);
	return *output ? 0 : -1;
}
