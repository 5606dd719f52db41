/* cli/verbs_store.c: the worldd verbs of store/ (see cli/verbs.h). */
#include "cli/verbs.h"
#include <stddef.h>

const struct worldd_verb store_verbs[] = {
	{ NULL, NULL, NULL, NULL },
};
