/* cli/verbs_supervisor.c: the worldd verbs of supervisor/ (see cli/verbs.h). */
#include "cli/verbs.h"
#include <stddef.h>

const struct worldd_verb supervisor_verbs[] = {
	{ NULL, NULL, NULL, NULL },
};
