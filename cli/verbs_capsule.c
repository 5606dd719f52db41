/* cli/verbs_capsule.c: the worldd verbs of capsule/ (see cli/verbs.h). */
#include "cli/verbs.h"
#include <stddef.h>

const struct worldd_verb capsule_verbs[] = {
	{ NULL, NULL, NULL, NULL },
};
