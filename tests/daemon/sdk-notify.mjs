// tests/daemon/sdk-notify.mjs: two official MCP TypeScript SDK clients,
// unmodified, each with a handler for notifications/tools/list_changed,
// against a running worldd serve (tests/daemon/stream.sh drives it).
// Usage: node sdk-notify.mjs BASE_URL CRED_A CRED_B DIR
// The SDK opens the GET /mcp/ stream by itself after initialize. Each
// notification a client X receives is written, in order, as DIR/X.N (N =
// 1, 2, ...) holding the tool names its tools/list gives right after it;
// DIR/X.caps holds the server's capabilities, DIR/X.tools the first list.
// DIR/ready is written once both clients are connected; the script ends
// when DIR/done appears (the shell's loops bound every wait).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { writeFileSync, existsSync } from 'node:fs';

const [base, credA, credB, dir] = process.argv.slice(2);

async function connect(name, cred) {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/`),
    { requestInit: { headers: { Authorization: `Bearer ${cred}` } } });
  const client = new Client({ name: `world-notify-${name}`, version: '1.0.0' });
  let n = 0;
  // handlers run one after another per notification, so the files are in order
  let chain = Promise.resolve();
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    chain = chain.then(async () => {
      const k = ++n;
      const t = await client.listTools();
      writeFileSync(`${dir}/${name}.${k}`, t.tools.map(x => x.name).sort().join('\n') + '\n');
    }).catch(e => writeFileSync(`${dir}/${name}.error`, String(e)));
  });
  transport.onerror = e => writeFileSync(`${dir}/${name}.transport-error`, String(e));
  await client.connect(transport);
  writeFileSync(`${dir}/${name}.caps`, JSON.stringify(client.getServerCapabilities()));
  const t = await client.listTools();
  writeFileSync(`${dir}/${name}.tools`, t.tools.map(x => x.name).sort().join('\n') + '\n');
  return client;
}

const a = await connect('A', credA);
const b = await connect('B', credB);
writeFileSync(`${dir}/ready`, 'ready\n');
while (!existsSync(`${dir}/done`)) await new Promise(r => setTimeout(r, 50));
await a.close();
await b.close();
process.exit(0);
