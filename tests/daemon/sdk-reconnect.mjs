// tests/daemon/sdk-reconnect.mjs: the official MCP TypeScript SDK client
// (v1, @modelcontextprotocol/sdk), unmodified, connecting and closing in a
// row with one credential (tests/daemon/stream.sh drives it). After
// initialize the SDK opens the GET /mcp/ notification stream by itself;
// this script watches the HTTP status of each such GET (through the
// transport's fetch option, which only observes) and waits for it before
// it closes the client, so every stream is open when its client leaves.
//   node sdk-reconnect.mjs BASE_URL CRED cycle N   connect, wait for the stream, close; N times
//   node sdk-reconnect.mjs BASE_URL CRED hold N    connect N clients and keep them all open
// Prints one line per client: "client K: stream HTTP S" (S the GET's
// status), then "statuses: S1 S2 ..." and, for each error the SDK
// reported, "error: ...". Exits 0 when it ran to its end.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [base, cred, mode, count] = process.argv.slice(2);
const n = Number(count);
const statuses = [];
const errors = [];

async function connect(k) {
  let seen;
  const streamSeen = new Promise((resolve) => { seen = resolve; });
  const watch = async (url, init = {}) => {
    const res = await fetch(url, init);
    if ((init.method || 'GET').toUpperCase() === 'GET') seen(res.status);
    return res;
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/`),
    { requestInit: { headers: { Authorization: `Bearer ${cred}` } }, fetch: watch });
  const client = new Client({ name: `world-reconnect-${k}`, version: '1.0.0' });
  client.onerror = (e) => errors.push(`client ${k}: ${e?.message || e}`);
  await client.connect(transport);
  // the SDK opens its GET stream after initialize, without waiting for it
  const status = await Promise.race([streamSeen, new Promise((r) => setTimeout(() => r('none within 30 s'), 30000))]);
  statuses.push(status);
  console.log(`client ${k}: stream HTTP ${status}`);
  return client;
}

const held = [];
for (let k = 1; k <= n; k++) {
  const c = await connect(k);
  if (mode === 'cycle') await c.close();
  else held.push(c);
}
console.log(`statuses: ${statuses.join(' ')}`);
for (const e of errors) console.log(`error: ${e}`);
for (const c of held) await c.close();
process.exit(0);
