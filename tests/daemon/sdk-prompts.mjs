// tests/daemon/sdk-prompts.mjs: the official MCP SDK clients, unmodified --
// v1 (@modelcontextprotocol/sdk, 2025-11-25 through initialize) and v2
// (@modelcontextprotocol/client, pinned to 2026-07-28) -- list and get the
// prompts a package published, read its resources (a fixed one, a template,
// a blob) and ask for completions, against worldd serve with
// tests/daemon/prompts.sh's manifest published.
// Usage: node sdk-prompts.mjs BASE_URL CREDENTIAL. Prints TAP lines (no plan).
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as Client2, StreamableHTTPClientTransport as Transport2 } from '@modelcontextprotocol/client';

const [base, cred] = process.argv.slice(2);
let n = 0;
function ok(cond, name, extra) {
  n++;
  if (cond) console.log(`ok ${n} - ${name}`);
  else { console.log(`not ok ${n} - ${name}`); if (extra !== undefined) console.log(`#   got: ${JSON.stringify(extra)}`); }
}
const requestInit = { headers: { Authorization: `Bearer ${cred}` } };

async function exercise(client, label) {
  const list = await client.listPrompts();
  const greet = list.prompts.find(p => p.name === 'greet');
  ok(greet && greet.arguments?.some(a => a.name === 'who' && a.required === true),
    `${label}: listPrompts lists greet with its required argument`, list.prompts);
  const got = await client.getPrompt({ name: 'greet', arguments: { who: 'Ada', tone: 'dry' } });
  ok(got.messages?.[0]?.content?.text === 'Say hello to Ada (dry).' && got.messages?.[1]?.content?.resource?.uri === 'note://Ada',
    `${label}: getPrompt puts the arguments into the text and the embedded resource`, got.messages);
  let refused = null;
  try { await client.getPrompt({ name: 'greet', arguments: {} }); } catch (e) { refused = e; }
  ok(refused && /argument "who" is required/.test(String(refused.message)), `${label}: getPrompt without a required argument throws -32602`, String(refused));
  const t = await client.readResource({ uri: 'pkg://item/7/json' });
  ok(t.contents?.[0]?.text === '{"n":"7"}', `${label}: readResource of a template's URI`, t.contents);
  const f = await client.readResource({ uri: 'pkg://readme' });
  ok(f.contents?.[0]?.text === 'read me' && f.contents?.[0]?.mimeType === 'text/plain', `${label}: readResource of a fixed resource`, f.contents);
  const tl = await client.listResourceTemplates();
  ok(tl.resourceTemplates?.some(x => x.uriTemplate === 'pkg://item/{n}/json'), `${label}: listResourceTemplates has the package's template`, tl);
  const c = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'wom' } });
  ok(JSON.stringify(c.completion?.values) === '["wombat"]', `${label}: complete offers the argument's values starting with what was typed`, c);
  const ci = await client.complete({ ref: { type: 'ref/resource', uri: 'world://log/{index}' }, argument: { name: 'index', value: '1' } });
  ok(ci.completion?.values?.[0] === '1', `${label}: complete offers the session's own entry indexes`, ci);
}

try {
  const c1 = new Client1({ name: 'world-test-v1', version: '1.0.0' });
  await c1.connect(new Transport1(new URL(`${base}/mcp/`), { requestInit }));
  await exercise(c1, 'MCP SDK v1');
  await c1.close();
} catch (e) { ok(false, `MCP SDK v1 threw: ${e?.stack || e}`); }
try {
  const c2 = new Client2({ name: 'world-test-v2', version: '2.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await c2.connect(new Transport2(new URL(`${base}/mcp/`), { requestInit }));
  ok(c2.getNegotiatedProtocolVersion() === '2026-07-28', 'MCP SDK v2: pinned to 2026-07-28', c2.getNegotiatedProtocolVersion());
  await exercise(c2, 'MCP SDK v2 (2026-07-28)');
  await c2.close();
} catch (e) { ok(false, `MCP SDK v2 threw: ${e?.stack || e}`); }
