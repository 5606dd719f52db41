/* tests/publish/attended_probe.c: drives cli/attended.h from the shell
 * tests (tests/publish/attended.sh), so both confirmations -- the typed
 * phrase of world-publish and the y/N question of worldd session mint --
 * are tested through a real pseudo-terminal.
 *   attended_probe phrase INTRO PHRASE
 *   attended_probe yes QUESTION
 * Prints "confirmed" and exits 0, or prints the STOP lines and exits 20. */
#include "cli/attended.h"
#include "common/error.h"
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct attended_stop stop;
	int rc;
	if (argc == 4 && strcmp(argv[1], "phrase") == 0) rc = attended_confirm_phrase(argv[2], argv[3], &stop);
	else if (argc == 3 && strcmp(argv[1], "yes") == 0) rc = attended_confirm_yes(argv[2], &stop);
	else {
		fprintf(stderr, "usage: attended_probe phrase INTRO PHRASE | yes QUESTION\n");
		return WX_USAGE;
	}
	if (rc < 0) return attended_report(stderr, &stop);
	puts("confirmed");
	return WX_OK;
}
