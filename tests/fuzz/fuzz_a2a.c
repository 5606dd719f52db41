/* tests/fuzz/fuzz_a2a.c: libFuzzer target over the A2A JSON-RPC dispatch
 * (daemon/a2a.c's a2a_handle: both dialects, every method) against the
 * small real store of rpc_env.h; the same failures as fuzz_mcp.c. */
#include "tests/fuzz/rpc_env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rpc_env_run(data, size, "/a2a/", a2a_handle);
	return 0;
}
