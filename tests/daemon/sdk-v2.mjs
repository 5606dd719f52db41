// tests/daemon/sdk-v2.mjs: the MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client 2.x), unmodified, against worldd serve:
// protocol revision 2026-07-28 (stateless: server/discover, no initialize)
// pinned, then the 'auto' negotiation, then with no option set. 2.4.0's
// default mode is 'legacy' (DEFAULT_VERSION_NEGOTIATION_MODE in its
// dist/public-*.mjs): without an option it sends initialize offering
// 2025-11-25 and accepts only a 2025 answer, so no server can make it
// negotiate 2026-07-28; the daemon serves it 2025-11-25, and the opt-in
// ('auto', which probes with server/discover) negotiates 2026-07-28.
// Usage: node sdk-v2.mjs BASE_URL CREDENTIAL.
// Prints TAP lines (no plan: tests/daemon/sdk.sh counts).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { execFileSync } from 'node:child_process';

const [base, cred] = process.argv.slice(2);
let n = 0, failed = 0;
function ok(cond, name, extra) {
  n++;
  if (cond) console.log(`ok ${n} - ${name}`);
  else { failed++; console.log(`not ok ${n} - ${name}`); if (extra !== undefined) console.log(`#   got: ${JSON.stringify(extra)}`); }
}
const headers = { Authorization: `Bearer ${cred}` };
const seen = [];
const fetchLog = (url, init = {}) => { seen.push({ headers: Object.fromEntries(new Headers(init.headers || {}).entries()), body: init.body }); return fetch(url, init); };

async function run(mode, label, want = '2026-07-28') {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/`), { requestInit: { headers }, fetch: fetchLog });
  const client = new Client({ name: 'world-test-v2', version: '2.0.0' }, mode === undefined ? {} : { versionNegotiation: { mode } });
  await client.connect(transport);
  ok(client.getNegotiatedProtocolVersion() === want,
    `MCP SDK v2 (${label}): negotiated ${want} ${want === '2026-07-28' ? 'through server/discover' : 'through initialize'}`, client.getNegotiatedProtocolVersion());
  const tools = await client.listTools();
  const echo = tools.tools.find(t => t.name === 'tools_decho');
  ok(echo && echo.annotations?.readOnlyHint === true, `MCP SDK v2 (${label}): tools/list lists tools_decho with its annotations`, tools.tools.map(t => t.name));
  const r = await client.callTool({ name: 'tools_decho', arguments: { v: 2 } });
  ok(!r.isError && r.structuredContent?.echo?.v === 2, `MCP SDK v2 (${label}): tools/call commits and answers the output`, r);
  const bad = await client.callTool({ name: 'tests_dshape', arguments: { n: 'x' } });
  ok(bad.isError === true && /OutputSchema/.test(bad.content?.[0]?.text), `MCP SDK v2 (${label}): an outputSchema violation is isError`, bad);
  await client.close();
}

try { await run({ pin: '2026-07-28' }, 'pinned'); } catch (e) { ok(false, `MCP SDK v2 (pinned) threw: ${e?.stack || e}`); }
const bodies = seen.map(s => { try { return JSON.parse(s.body); } catch { return null; } }).filter(Boolean);
ok(!bodies.some(b => b.method === 'initialize'), 'MCP SDK v2: no initialize handshake was sent', bodies.map(b => b.method));
const call = seen.find(s => { try { return JSON.parse(s.body).method === 'tools/call'; } catch { return false; } });
const h = call?.headers || {};
ok(h['mcp-protocol-version'] === '2026-07-28' && h['mcp-method'] === 'tools/call' && h['mcp-name'] === 'tools_decho',
  'MCP SDK v2: its tools/call carried the routing headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name)', h);
try { await run('auto', 'auto'); } catch (e) { ok(false, `MCP SDK v2 (auto) threw: ${e?.stack || e}`); }
const autoBodies = seen.map(s => { try { return JSON.parse(s.body); } catch { return null; } }).filter(Boolean);
ok(autoBodies.filter(b => b.method === 'server/discover').length >= 2 && !autoBodies.some(b => b.method === 'initialize'),
  'MCP SDK v2 (auto): probed with server/discover and never fell back to initialize', autoBodies.map(b => b.method));
const before = seen.length;
try { await run(undefined, 'no option set', '2025-11-25'); } catch (e) { ok(false, `MCP SDK v2 (no option set) threw: ${e?.stack || e}`); }
const plain = seen.slice(before).map(s => { try { return JSON.parse(s.body); } catch { return null; } }).filter(Boolean);
ok(plain[0]?.method === 'initialize' && plain[0]?.params?.protocolVersion === '2025-11-25',
  "MCP SDK v2 (no option set): its default 'legacy' mode opens with initialize offering 2025-11-25, and is served", plain.map(b => b.method));
// subscriptions/listen through the SDK: in 'auto' mode with a tools
// listChanged handler it opens the listen stream itself after
// server/discover (it awaits the acknowledgment), and calls the handler
// with the new list when another process publishes a tool
// (SDK_V2_PUBLISH: the publishing command, a JSON array; SDK_V2_TOOL: the
// MCP name of the tool it publishes).
if (process.env.SDK_V2_PUBLISH) {
  try {
    let changed;
    const got = new Promise((resolve) => { changed = resolve; });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/`), { requestInit: { headers }, fetch: fetchLog });
    const client = new Client({ name: 'world-test-v2-listen', version: '2.0.0' }, {
      versionNegotiation: { mode: 'auto' },
      listChanged: { tools: { debounceMs: 0, onChanged: (err, tools) => changed({ err, tools }) } },
    });
    const at = seen.length;
    await client.connect(transport);
    const listen = seen.slice(at).map(s => { try { return JSON.parse(s.body); } catch { return null; } }).find(b => b?.method === 'subscriptions/listen');
    ok(listen?.params?.notifications?.toolsListChanged === true,
      'MCP SDK v2 (auto, tools listChanged handler): it opened subscriptions/listen for tools list changes by itself', listen);
    const before = (await client.listTools()).tools.map(t => t.name);
    ok(!before.includes(process.env.SDK_V2_TOOL), `MCP SDK v2: ${process.env.SDK_V2_TOOL} is not listed before it is published`, before);
    const argv = JSON.parse(process.env.SDK_V2_PUBLISH);
    execFileSync(argv[0], argv.slice(1), { stdio: 'ignore' });
    const r = await Promise.race([got, new Promise((res) => setTimeout(() => res({ err: new Error('no notification within 30 s') }), 30000))]);
    ok(!r.err && r.tools?.some(t => t.name === process.env.SDK_V2_TOOL),
      `MCP SDK v2: the publish reached its listen stream; its handler got the new list, with ${process.env.SDK_V2_TOOL}`, r.err ? String(r.err) : r.tools?.map(t => t.name));
    await client.close();
  } catch (e) { ok(false, `MCP SDK v2 (listen) threw: ${e?.stack || e}`); }
}
console.log(`# sdk-v2: ${n} assertions, ${failed} failed`);
process.exit(failed ? 1 : 0);
