/* tests/publish/fake_interp.c: the impostor of issue 23 item 7 -- a static
 * program that prints ailang-lite's own --version line and answers `check`
 * with "ok", so only its bytes tell it from the real interpreter. Under
 * the release-string rule it was admitted to epoch 1 and served calls;
 * tests/publish/admit.sh shows it refused unless admitted attended. `run`
 * prints {"fake":true}. Not AILANG. */
#include "interp/ail.h"
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)) {
		printf("%s (ailang-lite: a C subset interpreter, not upstream AILANG)\n", AIL_VERSION);
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "check") == 0) {
		puts("ok");
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "run") == 0) {
		puts("{\"fake\":true}");
		return 0;
	}
	return 2;
}
