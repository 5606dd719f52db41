// tests/daemon/sdk-clients.mjs: the official MCP TypeScript SDK client and
// the A2A JS SDK client, unmodified, against a running worldd serve.
// Usage: node sdk-clients.mjs BASE_URL CREDENTIAL   (NODE_PATH = the npm
// prefix's node_modules). Prints TAP lines (no plan: the shell test counts).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';

const [base, cred, mode] = process.argv.slice(2);
let n = 0, failed = 0;
function ok(cond, name, extra) {
  n++;
  if (cond) console.log(`ok ${n} - ${name}`);
  else { failed++; console.log(`not ok ${n} - ${name}`); if (extra !== undefined) console.log(`#   got: ${JSON.stringify(extra)}`); }
}
const auth = { Authorization: `Bearer ${cred}` };

async function mcp() {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/`), { requestInit: { headers: auth } });
  const client = new Client({ name: 'world-test', version: '1.0.0' });
  await client.connect(transport);
  ok(client.getServerVersion()?.name === 'worldd', 'MCP SDK: initialize names the server worldd', client.getServerVersion());
  ok(client.getServerCapabilities()?.tools?.listChanged === true, 'MCP SDK: capabilities.tools.listChanged is true (the GET /mcp/ stream sends notifications/tools/list_changed)');
  const tools = await client.listTools();
  const names = tools.tools.map(t => t.name);
  ok(names.includes('tools_decho'), 'MCP SDK: tools/list lists tools_decho (escaped name)', names);
  const echo = tools.tools.find(t => t.name === 'tools_decho');
  const a = echo?.annotations;
  ok(a && a.readOnlyHint === true && a.destructiveHint === false && a.idempotentHint === true && a.openWorldHint === false && a.title === 'tools.echo',
    'MCP SDK: a pure tool is annotated read-only, not destructive, idempotent, closed-world, with its title', a);
  const good = await client.callTool({ name: 'tests_dshape', arguments: { ok: true, n: 1 } });
  ok(!good.isError && good.structuredContent?.n === 1, 'MCP SDK: a result inside its outputSchema is isError:false with structuredContent', good);
  const nf = await client.callTool({ name: 'tests_dshape', arguments: { ok: false, refused: 'no such file' } });
  ok(nf.isError === true && nf.structuredContent?.ok === false && /no such file/.test(nf.content?.[0]?.text),
    'MCP SDK: a result reporting "ok": false is isError:true and keeps its structuredContent', nf);
  ok(typeof nf._meta?.['world/invocation']?.entry_index === 'number', 'MCP SDK: ... and names its committed log entry', nf._meta);
  const bad = await client.callTool({ name: 'tests_dshape', arguments: { n: 'x' } });
  ok(bad.isError === true && bad.structuredContent === undefined && /^OutputSchema: .*\/n: expected type integer, got string/.test(bad.content?.[0]?.text),
    'MCP SDK: a result outside its outputSchema is isError:true naming the JSON pointer, without structuredContent', bad);
  ok(bad._meta?.['world/error']?.class === 'OutputSchema', 'MCP SDK: ... _meta["world/error"].class is OutputSchema', bad._meta);
  const r = await client.callTool({ name: 'tools_decho', arguments: { b: [1, 2], a: 'x' } });
  ok(!r.isError, 'MCP SDK: tools/call succeeded', r);
  ok(r.structuredContent?.echo?.a === 'x' && r.structuredContent?.echo?.b?.[1] === 2, 'MCP SDK: structuredContent carries the output', r.structuredContent);
  ok(r.content?.[0]?.type === 'text' && JSON.parse(r.content[0].text).echo.a === 'x', 'MCP SDK: content[0] is the output text');
  ok(typeof r._meta?.['world/invocation']?.invocation_id === 'string' && r._meta['world/invocation'].invocation_id.startsWith('mcp:'), 'MCP SDK: the invocation id is mcp:EPISODE:TASK', r._meta);
  // resources: the provenance of this episode's calls
  const idx = r._meta['world/invocation'].entry_index;
  const listed = await client.listResources();
  ok(listed.resources.some(x => x.uri === `world://log/${idx}`), 'MCP SDK: resources/list lists this call\'s log entry', listed.resources.map(x => x.uri));
  const tpl = await client.listResourceTemplates();
  ok(['world://log/{index}', 'world://why/{index}', 'world://objects/{ref}'].every(u => tpl.resourceTemplates.some(t => t.uriTemplate === u)), 'MCP SDK: resources/templates/list names the three templates', tpl.resourceTemplates);
  const le = await client.readResource({ uri: `world://log/${idx}` });
  const entry = JSON.parse(le.contents[0].text);
  ok(le.contents[0].mimeType === 'application/json' && (entry.entryHash || entry.entry?.entryHash), 'MCP SDK: resources/read world://log/N is the log entry', entry);
  const why = JSON.parse((await client.readResource({ uri: `world://why/${idx}` })).contents[0].text);
  ok(why.entry === idx && why.broken === 0 && why.verified > 0, 'MCP SDK: world://why/N is the provenance walk, every link verified', why);
  const rec = why.record;
  const obj = await client.readResource({ uri: `world://objects/${rec}` });
  ok(/invocation-record/.test(obj.contents[0].text), 'MCP SDK: world://objects/REF reads the invocation record', obj.contents[0].text.slice(0, 200));
  let missing;
  try { await client.readResource({ uri: 'world://log/999999' }); } catch (e) { missing = e; }
  ok(missing && missing.code === -32002 && /resource not found/.test(missing.message), 'MCP SDK: an absent entry is -32002 resource not found', String(missing));
  let unknown;
  try { await client.callTool({ name: 'no_dsuch', arguments: {} }); } catch (e) { unknown = e; }
  ok(unknown && /unknown tool "no_dsuch"/.test(String(unknown.message)) && unknown.code === -32602, 'MCP SDK: an unknown tool is -32602 unknown tool "NAME"', String(unknown));
  await client.ping();
  ok(true, 'MCP SDK: ping');
  await client.close();
}

async function a2a() {
  const fetchImpl = (url, init = {}) => fetch(url, { ...init, headers: { ...(init.headers || {}), ...auth } });
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }));
  const client = await factory.createFromUrl(base);
  const card = client.agentCard;
  ok(card.skills.some(s => s.id === 'tools.echo'), 'A2A SDK: the agent card lists the tools.echo skill', card.skills);
  const messageId = `m-${process.pid}-${Date.now()}`;
  const res = await client.sendMessage({
    message: { messageId, role: 1, parts: [{ content: { $case: 'data', value: { hello: 'world' } } }], metadata: { skill_id: 'tools.echo' } },
  });
  ok(res.status?.state === 3, 'A2A SDK: sendMessage -> task completed', res.status);
  const data = res.artifacts?.[0]?.parts?.[0]?.content;
  ok(data?.$case === 'data' && data.value?.echo?.hello === 'world', 'A2A SDK: the artifact carries the output', res.artifacts);
  ok(res.id === messageId, 'A2A SDK: the task id is the message id', res.id);
  ok(typeof res.metadata?.invocation_id === 'string' && res.metadata.invocation_id.startsWith('a2a:'), 'A2A SDK: metadata.invocation_id is a2a:EPISODE:TASK', res.metadata);
  const again = await client.sendMessage({
    message: { messageId, role: 1, parts: [{ content: { $case: 'data', value: { hello: 'world' } } }], metadata: { skill_id: 'tools.echo' } },
  });
  ok(again.metadata?.entry_index === res.metadata?.entry_index, 'A2A SDK: the same message id again returns the committed task (same entry)', [again.metadata, res.metadata]);
  const got = await client.getTask({ id: messageId });
  ok(got.id === messageId && got.status?.state === 3, 'A2A SDK: getTask returns the completed task', got);
  const fid = `f-${process.pid}-${Date.now()}`;
  const failed = await client.sendMessage({
    message: { messageId: fid, role: 1, parts: [{ content: { $case: 'data', value: { ok: false, refused: 'no such file' } } }], metadata: { skill_id: 'tests.shape' } },
  });
  const ftext = failed.status?.message?.parts?.[0]?.content;
  ok(failed.status?.state === 4 && ftext?.$case === 'text' && /no such file/.test(ftext.value), 'A2A SDK: a result reporting "ok": false is a failed task whose status message says why', failed.status);
  ok(failed.artifacts?.[0]?.parts?.[0]?.content?.value?.ok === false && typeof failed.metadata?.invocation_id === 'string', 'A2A SDK: ... keeping its artifact and invocation (it committed)', failed);
  const fgot = await client.getTask({ id: fid });
  ok(fgot.status?.state === 4, 'A2A SDK: getTask of it says failed too', fgot.status);
  const sbad = await client.sendMessage({
    message: { messageId: `s-${fid}`, role: 1, parts: [{ content: { $case: 'data', value: { n: 'x' } } }], metadata: { skill_id: 'tests.shape' } },
  });
  ok(sbad.status?.state === 4 && /OutputSchema: .*\/n: expected type integer/.test(sbad.status?.message?.parts?.[0]?.content?.value), 'A2A SDK: a result outside its outputSchema is a failed task naming the JSON pointer', sbad.status);

  ok(Array.isArray(got.history) && got.history[0]?.role === 1 && got.history[0]?.parts?.[0]?.content?.value?.hello === 'world',
    'A2A SDK: the task history holds the caller\'s message (its arguments)', got.history);
  // a text part holding a JSON object is the input; prose is refused saying what is expected
  const tid = `t-${process.pid}-${Date.now()}`;
  const tres = await client.sendMessage({
    message: { messageId: tid, role: 1, parts: [{ content: { $case: 'text', value: '{"from":"text"}' } }], metadata: { skill_id: 'tools.echo' } },
  });
  ok(tres.status?.state === 3 && tres.artifacts?.[0]?.parts?.[0]?.content?.value?.echo?.from === 'text', 'A2A SDK: a text part holding a JSON object is the arguments', tres);
  let prose;
  try { await client.sendMessage({ message: { messageId: `p-${tid}`, role: 1, parts: [{ content: { $case: 'text', value: 'please echo hello' } }], metadata: { skill_id: 'tools.echo' } } }); }
  catch (e) { prose = e; }
  ok(prose && /not a JSON object: a skill takes its arguments as one JSON object/.test(String(prose.message)), 'A2A SDK: a prose text part is refused saying what is expected', String(prose));
  // ListTasks: this episode's committed tasks, paged
  const all = await client.listTasks({ pageSize: 100 });
  const ids = all.tasks.map(t => t.id);
  ok([messageId, fid, tid].every(i => ids.includes(i)) && !ids.includes(`p-${tid}`), 'A2A SDK: listTasks lists the committed tasks (not the refused one)', ids);
  const failedOnly = await client.listTasks({ status: 4, pageSize: 100 });
  ok(failedOnly.tasks.length > 0 && failedOnly.tasks.every(t => t.status?.state === 4) && failedOnly.tasks.some(t => t.id === fid), 'A2A SDK: listTasks filters by status (failed)', failedOnly.tasks.map(t => [t.id, t.status?.state]));
  const p1 = await client.listTasks({ pageSize: 1 });
  const p2 = p1.nextPageToken ? await client.listTasks({ pageSize: 1, pageToken: p1.nextPageToken }) : { tasks: [] };
  ok(p1.tasks.length === 1 && p2.tasks.length === 1 && p1.tasks[0].id !== p2.tasks[0].id, 'A2A SDK: listTasks pages with pageSize and nextPageToken', [p1.tasks.map(t => t.id), p1.nextPageToken, p2.tasks.map(t => t.id)]);
  // CancelTask of a finished task: the A2A error; of an unknown one: not found
  let nc, nf;
  try { await client.cancelTask({ id: messageId }); } catch (e) { nc = e; }
  ok(nc && /cannot be canceled.*completed/.test(String(nc.message)), 'A2A SDK: cancelTask of a completed task is TaskNotCancelable', String(nc));
  try { await client.cancelTask({ id: 'never-sent' }); } catch (e) { nf = e; }
  ok(nf && /task not found/.test(String(nf.message)), 'A2A SDK: cancelTask of an unknown task is TaskNotFound', String(nf));
  // the extended card: the session's skills (tests.shape needs no grant but this session sees it too)
  const ext = await client.getAgentCard();
  ok(ext.skills.some(s => s.id === 'tools.echo') && ext.securitySchemes?.worldSession?.scheme?.$case === 'httpAuthSecurityScheme', 'A2A SDK: getAgentCard fetches the extended card (GetExtendedAgentCard) with the skills and the bearer scheme', [ext.skills.map(s => s.id), ext.securitySchemes]);
  // push notifications (tests/daemon/a2a_push.sh delivers them): this
  // daemon has no --a2a-webhook-allow, so every webhook is refused; a
  // committed task changes no more, so no config is made for it
  ok(card.capabilities?.pushNotifications === true, 'A2A SDK: the card says pushNotifications: true', card.capabilities);
  let pe;
  try { await client.createTaskPushNotificationConfig({ taskId: messageId, id: 'c1', url: 'http://127.0.0.1:9/hook' }); } catch (e) { pe = e; }
  ok(pe && /terminal state \(completed\)/.test(String(pe.message)), 'A2A SDK: createTaskPushNotificationConfig for a completed task is UnsupportedOperation (it changes no more)', String(pe));
  const pl = await client.listTaskPushNotificationConfig({ taskId: messageId });
  ok(Array.isArray(pl.configs) && pl.configs.length === 0, 'A2A SDK: listTaskPushNotificationConfig of it: none', pl);
  let pg;
  try { await client.getTaskPushNotificationConfig({ taskId: messageId, id: 'c1' }); } catch (e) { pg = e; }
  ok(pg && /push notification config not found/.test(String(pg.message)), 'A2A SDK: getTaskPushNotificationConfig of an absent config is TaskNotFound', String(pg));
  let pn;
  try {
    await client.sendMessage({ message: { messageId: `w-${messageId}`, role: 1, parts: [{ content: { $case: 'data', value: { w: 1 } } }], metadata: { skill_id: 'tools.echo' } },
      configuration: { taskPushNotificationConfig: { url: 'http://127.0.0.1:9/hook' } } });
  } catch (e) { pn = e; }
  ok(pn && /none given: every webhook is refused/.test(String(pn.message)), 'A2A SDK: sendMessage with a webhook and no --a2a-webhook-allow is refused', String(pn));
  let pnf;
  try { await client.getTask({ id: `w-${messageId}` }); } catch (e) { pnf = e; }
  ok(pnf && /task not found/.test(String(pnf.message)), 'A2A SDK: ... and nothing ran (getTask: not found)', String(pnf));
  // the public card, fetched without a credential: the service, its scheme, the open skills
  const pub = await new DefaultAgentCardResolver({}).resolve(base);
  ok(pub.skills.some(s => s.id === 'tools.echo') && !pub.skills.some(s => s.id === 'tests.secret') && /session credential/.test(JSON.stringify(pub.securitySchemes)),
    'A2A SDK: the public card lists the skills open to every session and the bearer security scheme', [pub.skills.map(s => s.id), pub.securitySchemes]);

  // SendStreamingMessage: the task (submitted), working, its artifact, then completed
  const sid = `st-${process.pid}-${Date.now()}`;
  const events = [];
  for await (const ev of client.sendMessageStream({
    message: { messageId: sid, role: 1, parts: [{ content: { $case: 'data', value: { s: 1 } } }], metadata: { skill_id: 'tools.echo' } },
  })) events.push(ev);
  const last = events[events.length - 1]?.payload;
  const art = events.find(e => e.payload?.$case === 'artifactUpdate')?.payload;
  ok(events[0]?.payload?.$case === 'task' && events[1]?.payload?.value?.status?.state === 2 && last?.$case === 'statusUpdate' && last.value.status?.state === 3 &&
     art?.value?.artifact?.parts?.[0]?.content?.value?.echo?.s === 1,
    'A2A SDK: sendMessageStream streams the task, working, the artifact, then completed', events);
  let sub;
  try { for await (const ev of client.resubscribeTask({ id: sid })) { void ev; } } catch (e) { sub = e; }
  ok(sub && /terminal state \(completed\)/.test(String(sub.message)), 'A2A SDK: resubscribeTask (SubscribeToTask) of a finished task is UnsupportedOperation', String(sub));
  const v9 = await (await fetch(`${base}/a2a/`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json', 'A2A-Version': '9.9' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: messageId } }) })).json();
  ok(v9.error?.code === -32009 && /unsupported A2A-Version "9.9"/.test(v9.error?.message), 'A2A: an A2A-Version this agent does not speak is -32009 VersionNotSupported', v9);

  // the same SDK in its A2A 0.3 compatibility mode, on the reference's card
  const legacyCompat = { enabled: true };
  const lf = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
  }));
  const lc = await lf.createFromUrl(base, '/.well-known/agent.json');
  const lid = `legacy-${process.pid}-${Date.now()}`;
  const lr = await lc.sendMessage({
    message: { messageId: lid, role: 1, parts: [{ content: { $case: 'data', value: { v: 3 } } }], metadata: { skill_id: 'tools.echo' } },
  });
  ok(lr.status?.state === 3 && lr.artifacts?.[0]?.parts?.[0]?.content?.value?.echo?.v === 3, 'A2A SDK (0.3 compat, agent.json): message/send -> completed task with the output', lr);
  const lg = await lc.getTask({ id: lid });
  ok(lg.id === lid && lg.status?.state === 3, 'A2A SDK (0.3 compat): tasks/get returns the committed task', lg);
  const lev = [];
  for await (const ev of lc.sendMessageStream({
    message: { messageId: `ls-${lid}`, role: 1, parts: [{ content: { $case: 'data', value: { v: 4 } } }], metadata: { skill_id: 'tools.echo' } },
  })) lev.push(ev);
  ok(lev.length >= 3 && lev[0]?.payload?.$case === 'task' && lev[1]?.payload?.value?.status?.state === 2 && lev.at(-1)?.payload?.value?.status?.state === 3,
    'A2A SDK (0.3 compat): message/stream streams the task, working, then completed', lev);
  let lcn;
  try { await lc.cancelTask({ id: lid }); } catch (e) { lcn = e; }
  ok(lcn && /cannot be canceled/.test(String(lcn.message)), 'A2A SDK (0.3 compat): tasks/cancel of a completed task is TaskNotCancelable', String(lcn));
  const lext = await lc.getAgentCard();
  ok(lext.skills.some(s => s.id === 'tools.echo'), 'A2A SDK (0.3 compat): the card (agent/getAuthenticatedExtendedCard when advertised) lists the skills', lext.skills?.map(s => s.id));
}

// packages/quickstart and packages/se-tools as published (their real
// schemas: the SDK validates structuredContent against outputSchema), an
// effectful write then read in the episode's worktree.
async function packages() {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/`), { requestInit: { headers: auth } });
  const client = new Client({ name: 'world-test', version: '1.0.0' });
  await client.connect(transport);
  const names = (await client.listTools()).tools.map(t => t.name);
  ok(['tools_decho', 'ailang-read', 'ailang-write'].every(n => names.includes(n)), 'MCP SDK: tools/list lists tools_decho, ailang-read, ailang-write', names);
  const ann = Object.fromEntries((await client.listTools()).tools.map(t => [t.name, t.annotations]));
  ok(ann['ailang-read']?.readOnlyHint === true && ann['ailang-read']?.title === 'ailang-read' && ann['ailang-check']?.readOnlyHint === true &&
     ann['ailang-run']?.readOnlyHint === true && ann['examples-search']?.readOnlyHint === true && ann['ailang-cli']?.readOnlyHint === true,
    'MCP SDK: ailang-read, ailang-check, ailang-run, examples-search, ailang-cli (Workspace.Read, Ailang.*) are annotated read-only', ann);
  ok(ann['ailang-write']?.readOnlyHint === false && ann['ailang-write']?.destructiveHint === true && ann['ailang-write']?.idempotentHint === false &&
     ann['ailang-edit']?.destructiveHint === true && ann['ailang-write']?.openWorldHint === false,
    'MCP SDK: ailang-write and ailang-edit (Workspace.Write) are annotated destructive, not idempotent, closed-world', ann);
  const e = await client.callTool({ name: 'tools_decho', arguments: { hello: 'sdk' } });
  ok(!e.isError && e.structuredContent?.echo?.hello === 'sdk', 'MCP SDK: tools_decho against its published output schema', e);
  const src = 'module hello\nexport func main(input: string) -> string { "{}" }\n';
  const w = await client.callTool({ name: 'ailang-write', arguments: { path: 'src/hello.ail', content: src } });
  ok(!w.isError && w.structuredContent?.ok === true && w.structuredContent?.bytes === src.length, 'MCP SDK: ailang-write writes the file', w);
  ok(w.structuredContent?.world?.effects?.[0]?.status === 'ok' && /^sha256:/.test(w.structuredContent?.world?.plan || ''), 'MCP SDK: the effectful output carries its world block (plan, effect record)', w.structuredContent?.world);
  const r = await client.callTool({ name: 'ailang-read', arguments: { path: 'src/hello.ail' } });
  ok(!r.isError && r.structuredContent?.content === src, 'MCP SDK: ailang-read reads it back', r);
  const bad = await client.callTool({ name: 'ailang-read', arguments: { path: '../escape' } });
  ok(bad.isError === true && bad.structuredContent?.ok === false && typeof bad.structuredContent?.refused === 'string',
    'MCP SDK: a path outside the worktree is refused: isError:true, the refusal kept in structuredContent', bad);
  await client.close();
}

// A refused credential: the client's error carries the daemon's reason
// (the 401 envelope; with no OAuth provider configured the SDK stops there).
async function refused() {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/`), { requestInit: { headers: auth } });
  const client = new Client({ name: 'world-test', version: '1.0.0' });
  try { await client.connect(transport); console.log('connected (unexpected)'); process.exit(0); }
  catch (e) { console.log(`refused: ${e?.message || e}`); process.exit(1); }
}

if (mode === 'auth') {
  await refused();
} else if (mode === 'packages') {
  try { await packages(); } catch (e) { ok(false, `MCP SDK client threw: ${e?.stack || e}`); }
} else {
  try { await mcp(); } catch (e) { ok(false, `MCP SDK client threw: ${e?.stack || e}`); }
  try { await a2a(); } catch (e) { ok(false, `A2A SDK client threw: ${e?.stack || e}`); }
}
console.log(`# sdk-clients: ${n} assertions, ${failed} failed`);
process.exit(failed ? 1 : 0);
