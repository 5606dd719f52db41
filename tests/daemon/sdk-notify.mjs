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
import { writeFileSync, renameSync, existsSync } from 'node:fs';

const [base, credA, credB, dir] = process.argv.slice(2);

// Every file appears whole: written under a dot name (which `ls` and the
// shell's globs leave out) and renamed. The shell waits for a file to exist
// and then reads it; a plain write makes it exist empty first.
function put(name, text) {
  writeFileSync(`${dir}/.tmp-${name}`, text);
  renameSync(`${dir}/.tmp-${name}`, `${dir}/${name}`);
}

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
      put(`${name}.${k}`, t.tools.map(x => x.name).sort().join('\n') + '\n');
    }).catch(e => put(`${name}.error`, String(e)));
  });
  transport.onerror = e => put(`${name}.transport-error`, String(e));
  await client.connect(transport);
  put(`${name}.caps`, JSON.stringify(client.getServerCapabilities()));
  const t = await client.listTools();
  put(`${name}.tools`, t.tools.map(x => x.name).sort().join('\n') + '\n');
  return client;
}

const a = await connect('A', credA);
const b = await connect('B', credB);
put('ready', 'ready\n');
while (!existsSync(`${dir}/done`)) await new Promise(r => setTimeout(r, 50));
await a.close();
await b.close();
process.exit(0);
