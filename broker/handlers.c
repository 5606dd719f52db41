/* broker/handlers.c: the table of the product's effect handlers (DESIGN
 * §5.4). An effect a transition declares but no entry here handles is a
 * refusal before execution (coordinator/coordinator.c). */
#include "broker/effect.h"

const struct broker_handler_entry broker_handlers[] = {
	{ NULL, NULL },
};
