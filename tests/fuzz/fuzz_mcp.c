/* tests/fuzz/fuzz_mcp.c: libFuzzer target over the MCP JSON-RPC dispatch
 * (daemon/mcp.c's mcp_handle: headers, single messages and batches, every
 * method and protocol version) against the small real store of
 * rpc_env.h. Fails on a crash, a sanitizer report, a status outside
 * 100..599, any 5xx (no input is a host failure), a body without a
 * content type, or a log entry written (nothing may run). */
#include "tests/fuzz/rpc_env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rpc_env_run(data, size, "/mcp/", mcp_handle);
	return 0;
}
