/* cli/output.c: see output.h. */
#include "cli/output.h"
#include "common/error.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

int cli_close_stdout(const char *who, int rc)
{
	int bad = fflush(stdout) != 0 || ferror(stdout);
	int e = errno;
	if (fclose(stdout) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (bad) {
		fprintf(stderr, "%s: write standard output: %s\n", who, strerror(e ? e : EIO));
		if (rc == WX_OK) rc = WX_IO;
	}
	return rc;
}
