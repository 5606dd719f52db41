// tests/daemon/sdk-cancel.mjs: cancellation and progress through the
// official MCP TypeScript SDK client, unmodified (its AbortSignal sends
// notifications/cancelled; its onprogress sets _meta.progressToken).
// Usage: node sdk-cancel.mjs BASE CRED_A CRED_B PAUSE_DIR DAEMON_ERR_LOG
// The daemon runs with WORLD_TEST_PAUSE=sup.running@1,sup.running@2: the
// first two calls' capsules are held at their start (common/pause.h) until
// this script releases them, so the cancel lands while both run.
// Prints TAP lines (no plan: the shell test counts).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const [base, credA, credB, pauseDir, errLog, mode] = process.argv.slice(2);
let n = 0;
function ok(cond, name, extra) {
  n++;
  if (cond) console.log(`ok ${n} - ${name}`);
  else { console.log(`not ok ${n} - ${name}`); if (extra !== undefined) console.log(`#   got: ${JSON.stringify(extra)}`); }
}
const sleep = ms => new Promise(r => setTimeout(r, ms));
async function until(what, cond) { // bounded: 30 s of 20 ms looks
  for (let i = 0; i < 1500; i++) { if (cond()) return true; await sleep(20); }
  console.log(`# timed out waiting for ${what}`);
  return false;
}

// Every POST answer's body, recorded (a clone: the SDK reads the original).
function recorder(bodies) {
  return async (url, init) => {
    // the request is recorded when sent; its answer when it arrives
    const rec = init?.method === 'POST' && typeof init.body === 'string' ? { req: JSON.parse(init.body) } : null;
    if (rec) bodies.push(rec);
    const res = await fetch(url, init);
    if (rec) Object.assign(rec, { status: res.status, ctype: res.headers.get('content-type'), text: res.clone().text() });
    return res;
  };
}
async function connect(cred, bodies) {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/`), {
    requestInit: { headers: { Authorization: `Bearer ${cred}` } }, fetch: recorder(bodies) });
  const client = new Client({ name: 'world-cancel', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function mcp() {
const bodiesA = [], bodiesB = [];
const a = await connect(credA, bodiesA);
const b = await connect(credB, bodiesB);

// 1. A's call held in its capsule; B's call with the same JSON-RPC id held too
const ac = new AbortController();
const pa = a.callTool({ name: 'tests_dslow', arguments: {}, _meta: { 'world/task_id': 'tc1' } }, undefined, { signal: ac.signal, timeout: 60000 });
const aErr = pa.then(() => null, e => e);
ok(await until('A at sup.running', () => existsSync(`${pauseDir}/sup.running.1.reached`)), 'A\'s call reached its capsule (held at sup.running)');
const pb = b.callTool({ name: 'tests_dslow', arguments: {}, _meta: { 'world/task_id': 'tc1' } }, undefined, { timeout: 60000 });
ok(await until('B at sup.running', () => existsSync(`${pauseDir}/sup.running.2.reached`)), 'B\'s call reached its capsule (held at sup.running)');
const idA = bodiesA.find(x => x.req.method === 'tools/call')?.req.id, idB = bodiesB.find(x => x.req.method === 'tools/call')?.req.id;
ok(idA !== undefined && idA === idB, 'both calls have the same JSON-RPC request id', [idA, idB]);
ac.abort('the user pressed stop');
const cancelled = await until('the cancel in the daemon log', () =>
  /cancel episode=ep-a request_id=\d+: the call in flight is cancelled/.test(readFileSync(errLog, 'utf8')));
ok(cancelled, 'the SDK\'s AbortSignal sent notifications/cancelled, and the daemon fired A\'s call');
const sent = bodiesA.find(x => x.req.method === 'notifications/cancelled');
ok(sent && sent.req.params.requestId === idA && (await until('its answer', () => sent.status)) && sent.status === 202, 'notifications/cancelled {requestId, reason} answered 202', sent && [sent.req, sent.status]);
writeFileSync(`${pauseDir}/sup.running.1.go`, '');
writeFileSync(`${pauseDir}/sup.running.2.go`, '');
const e = await aErr;
ok(e && /pressed stop/.test(String(e.message ?? e)), 'A\'s callTool rejects with the abort reason', String(e));
const rb = await pb;
ok(!rb.isError && rb.structuredContent?.spun > 0, 'control: B\'s call with the same request id was not cancelled and committed', rb);
const ab = bodiesA.find(x => x.req.method === 'tools/call');
const atext = ab ? await ab.text : '';
ok(ab && ab.status === 200 && !/"result"/.test(atext) && !/"error"/.test(atext), 'the cancelled request got no response (an empty event stream)', ab && [ab.status, ab.ctype, atext]);

// 2. a retry of the cancelled task id runs again and commits
const retry = await a.callTool({ name: 'tests_dslow', arguments: {}, _meta: { 'world/task_id': 'tc1' } }, undefined, { timeout: 60000 });
ok(!retry.isError && retry._meta?.['world/invocation']?.replayed === false && /^mcp:ep-a:tc1$/.test(retry._meta?.['world/invocation']?.invocation_id),
  'retry of the cancelled task id tc1: runs again and commits (not a replay)', retry._meta);

// 3. progress: with onprogress the POST answers as an event stream
const seen = [];
const pr = await a.callTool({ name: 'tools_decho', arguments: { p: 1 } }, undefined, { onprogress: p => seen.push(p) });
ok(!pr.isError && pr.structuredContent?.echo?.p === 1, 'a call with a progressToken still answers its result', pr);
const stages = seen.map(p => (p.message || '').split(':')[0]);
ok(JSON.stringify(stages) === JSON.stringify(['admitted', 'finish', 'commit']), 'progress notifications arrive in stage order: admitted, finish, commit', seen);
ok(seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress) && seen.at(-1)?.progress === seen.at(-1)?.total, 'progress increases to its total', seen);
const pbody = await bodiesA.filter(x => x.req.method === 'tools/call').at(-1).text;
const evs = pbody.split('\n\n').filter(s => s.startsWith('event: message'));
ok(evs.length === 4 && /notifications\/progress/.test(evs[0]) && /"result"/.test(evs[3]), 'on the wire: three progress events, then the response as the last event', pbody);
// control: without onprogress, no progress and one answer
const plain = await a.callTool({ name: 'tools_decho', arguments: { p: 2 } });
const qbody = await bodiesA.filter(x => x.req.method === 'tools/call').at(-1).text;
ok(!plain.isError && !/notifications\/progress/.test(qbody) && qbody.split('\n\n').filter(s => s.startsWith('event:')).length === 1,
  'control: without a progressToken, no progress events and the one answer', qbody);
await a.close();
await b.close();
}

// A2A (the A2A JS SDK client, unmodified): CancelTask of a working task,
// streaming status updates, ListTasks newest first with its total.
async function a2a() {
  const auth = { Authorization: `Bearer ${credA}` };
  const fetchImpl = (url, init = {}) => fetch(url, { ...init, headers: { ...(init.headers || {}), ...auth } });
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }));
  const client = await factory.createFromUrl(base);
  const msg = (id, skill, value) => ({ message: { messageId: id, role: 1, parts: [{ content: { $case: 'data', value } }], metadata: { skill_id: skill } } });
  // a working task (held in its capsule at sup.running), cancelled
  const ps = client.sendMessage(msg('ac1', 'tests.slow', {}));
  ok(await until('the task at sup.running', () => existsSync(`${pauseDir}/sup.running.1.reached`)), 'A2A: the task ac1 is working (its capsule held at sup.running)');
  const pc = client.cancelTask({ id: 'ac1' });
  const fired = await until('the cancel in the daemon log', () => /cancel episode=ep-a task=ac1: the call in flight is cancelled/.test(readFileSync(errLog, 'utf8')));
  ok(fired, 'A2A SDK: cancelTask reached the working task');
  writeFileSync(`${pauseDir}/sup.running.1.go`, '');
  const ct = await pc, st = await ps;
  ok(ct.id === 'ac1' && ct.status?.state === 5, 'A2A SDK: cancelTask answers the task, TASK_STATE_CANCELED', ct);
  ok(st.id === 'ac1' && st.status?.state === 5 && !st.artifacts?.length && /^Cancelled: /.test(st.status?.message?.parts?.[0]?.content?.value),
    'A2A SDK: the cancelled sendMessage ends canceled, no artifact, its status message says Cancelled', st);
  const gt = await client.getTask({ id: 'ac1' });
  ok(gt.status?.state === 5, 'A2A SDK: getTask of it says canceled (from the journal)', gt.status);
  let again;
  try { await client.cancelTask({ id: 'ac1' }); } catch (e) { again = e; }
  ok(again && /cannot be canceled.*canceled already/.test(String(again.message)), 'A2A SDK: cancelTask of a canceled task is TaskNotCancelable', String(again));
  // SubscribeToTask of a working task (ar1, held at sup.running@2): the
  // task as it is (working) at once, then its artifact and completed
  const pw = client.sendMessage(msg('ar1', 'tests.slow', {}));
  ok(await until('ar1 at sup.running', () => existsSync(`${pauseDir}/sup.running.2.reached`)), 'A2A: the task ar1 is working (its capsule held at sup.running)');
  const sub = [];
  const subDone = (async () => { for await (const ev of client.resubscribeTask({ id: 'ar1' })) sub.push(ev.payload); })().then(() => null, e => e);
  ok(await until('the subscription\'s first event', () => sub.length >= 1) && sub[0]?.$case === 'task' && sub[0].value?.id === 'ar1' && sub[0].value?.status?.state === 2,
    'A2A SDK: resubscribeTask (SubscribeToTask) of a working task streams the task, working, while its call runs', sub);
  writeFileSync(`${pauseDir}/sup.running.2.go`, '');
  const subErr = await subDone, wr = await pw;
  const subKinds = sub.map(p => `${p.$case}${p.value?.status ? ':' + p.value.status.state : ''}`);
  ok(!subErr && JSON.stringify(subKinds) === JSON.stringify(['task:2', 'artifactUpdate', 'statusUpdate:3']) &&
     sub[1]?.value?.artifact?.parts?.[0]?.content?.value?.spun > 0,
    'A2A SDK: ... then, when the call ends, its artifact and completed, and the stream ends', [subKinds, String(subErr)]);
  ok(wr.status?.state === 3 && wr.artifacts?.[0]?.parts?.[0]?.content?.value?.spun === sub[1]?.value?.artifact?.parts?.[0]?.content?.value?.spun,
    'A2A SDK: the subscriber saw the same output its sendMessage got', [wr.status, sub[1]]);
  // control: the same skill, not cancelled, completes
  const done = await client.sendMessage(msg('ac2', 'tests.slow', {}));
  ok(done.status?.state === 3 && done.artifacts?.[0]?.parts?.[0]?.content?.value?.spun > 0, 'control: the same task not cancelled completes', done.status);
  // streaming: the Task, working, the artifact, then completed
  const evs = [];
  for await (const ev of client.sendMessageStream(msg('as1', 'tools.echo', { s: 1 }))) evs.push(ev.payload);
  const kinds = evs.map(p => `${p.$case}${p.value?.status ? ':' + p.value.status.state : ''}`);
  ok(JSON.stringify(kinds) === JSON.stringify(['task:1', 'statusUpdate:2', 'artifactUpdate', 'statusUpdate:3']),
    'A2A SDK: sendMessageStream: the task (submitted), working, the artifact, then completed', kinds);
  ok(evs[2]?.value?.artifact?.parts?.[0]?.content?.value?.echo?.s === 1, 'A2A SDK: ... the artifact update carries the output', evs[2]);
  // ListTasks: newest first, totalSize the whole count
  const l = await client.listTasks({ pageSize: 1 });
  ok(l.tasks.length === 1 && l.tasks[0].id === 'as1' && l.totalSize === 3 && l.nextPageToken,
    'A2A SDK: listTasks is newest first (as1), totalSize counts every committed task (3; the canceled one has no entry)', [l.tasks.map(t => t.id), l.totalSize, l.nextPageToken]);
  const l2 = await client.listTasks({ pageSize: 1, pageToken: l.nextPageToken });
  ok(l2.tasks.length === 1 && l2.tasks[0].id === 'ac2' && l2.totalSize === 3 && l2.nextPageToken,
    'A2A SDK: its next page is the older task (ac2)', [l2.tasks.map(t => t.id), l2.totalSize, l2.nextPageToken]);
  const l3 = await client.listTasks({ pageSize: 1, pageToken: l2.nextPageToken });
  ok(l3.tasks.length === 1 && l3.tasks[0].id === 'ar1' && !l3.nextPageToken,
    'A2A SDK: and the oldest (ar1) is the last page', [l3.tasks.map(t => t.id), l3.totalSize, l3.nextPageToken]);
}

if (mode === 'a2a') await a2a(); else await mcp();
