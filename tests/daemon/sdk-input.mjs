// tests/daemon/sdk-input.mjs: the MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client 2.x), unmodified, pinned to 2026-07-28,
// calls tests.replace (tests/daemon/input_required.json): the daemon
// answers input_required with a confirm elicitation, the SDK's own
// multi-round-trip driver hands it to the elicitation handler registered
// here and retries with the answer and the request state.
// Usage: node sdk-input.mjs MCP_URL CREDENTIAL accept|decline.
// Prints one line; exits 0 when the outcome is the one the action wants.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, cred, action] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${cred}` } } });
const client = new Client({ name: 'world-test-input', version: '2.0.0' },
  { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
let asked = null;
client.setRequestHandler('elicitation/create', async request => {
  asked = request.params.message;
  return action === 'accept' ? { action: 'accept', content: { ok: true } } : { action: 'decline' };
});
await client.connect(transport);
const r = await client.callTool({ name: 'tests_dreplace', arguments: { path: 'notes.txt', content: 'replaced\n' } });
await client.close();
const text = r.content?.[0]?.text ?? '';
const good = asked === 'Replace the file with the content given?' &&
  (action === 'accept' ? r.isError !== true : r.isError === true && /declined|decline/.test(text));
console.log(`asked ${JSON.stringify(asked)}; isError ${r.isError}; ${text.slice(0, 120)}`);
process.exit(good ? 0 : 1);
