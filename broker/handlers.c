/* broker/handlers.c: the table of the product's effect handlers (docs/design.md
 * §5.4). An effect a transition declares but no entry here handles is a
 * refusal before execution (coordinator/coordinator.c). */
#include "broker/effect.h"
#include "broker/ailang_tools.h"
#include "broker/exec.h"
#include "broker/workspace.h"

const struct broker_handler_entry broker_handlers[] = {
	{ "Workspace.Read", workspace_read },
	{ "Workspace.Write", workspace_write },
	{ "Ailang.Check", ailang_check },
	{ "Ailang.Run", ailang_run },
	{ "Ailang.Discover", ailang_discover },
	{ "Ailang.CLI", ailang_cli },
	{ "Workspace.Exec", workspace_exec },
	{ NULL, NULL },
};
