/* cli/default_interp.c: see cli/default_interp.h. */
#include "cli/default_interp.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The installed program at installed; from a build tree that was not
 * installed, the one built at ../REL beside this program; else installed,
 * so the error names where it was looked for. */
static const char *installed_or_built(const char *installed, const char *rel, char *found, size_t cap)
{
	if (access(installed, X_OK) == 0) return installed;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			if (snprintf(found, cap, "%s/../%s", self, rel) < (int)cap && access(found, X_OK) == 0) return found;
		}
	}
	return installed;
}

#ifdef WORLD_PROBE_DEFAULT
const char *cli_default_probe(void)
{
	static char found[PATH_MAX];
	return installed_or_built(WORLD_PROBE_DEFAULT, "audit/world-probe", found, sizeof found);
}
#endif

const char *cli_default_ailang_bin(void)
{
	static char found[PATH_MAX];
	return installed_or_built(WORLD_AILANG_LITE_DEFAULT, "interp/ailang-lite", found, sizeof found);
}
