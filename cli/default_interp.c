/* cli/default_interp.c: see cli/default_interp.h. */
#include "cli/default_interp.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *cli_default_ailang_bin(void)
{
	/* The installed interpreter; from a build tree (not installed), the
	 * one built beside this program. */
	static char found[PATH_MAX];
	if (access(WORLD_AILANG_LITE_DEFAULT, X_OK) == 0) return WORLD_AILANG_LITE_DEFAULT;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			if (snprintf(found, sizeof found, "%s/../interp/ailang-lite", self) < (int)sizeof found &&
			    access(found, X_OK) == 0)
				return found;
		}
	}
	return WORLD_AILANG_LITE_DEFAULT;
}
