// tests/daemon/a2a-push.mjs: A2A push notifications and the extended card
// with the official @a2a-js/sdk client, unmodified, against a running
// worldd serve --a2a-webhook-allow HOOK1 (tests/daemon/a2a_push.sh).
// Usage: node a2a-push.mjs BASE CRED CRED_GRANT HOOK1 LOG1 HOOK2 LOG2 PAUSEDIR|- DAEMON_ERR_LOG
// HOOK1 (allowed) and HOOK2 (not) are loopback receivers (a2a-hook.mjs)
// logging each request to LOG1 / LOG2. PAUSEDIR: the daemon holds its first
// call at coord.before_commit and the second in its capsule at sup.running
// (test hooks), so a config can be made for a working task and a task with
// a webhook cancelled; "-": that part is skipped. Prints TAP lines without a plan.
import fs from 'node:fs';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';

const [base, cred, credGrant, hook1, log1, hook2, log2, pd, errLog] = process.argv.slice(2);
let n = 0;
function ok(cond, name, extra) {
  n++;
  if (cond) console.log(`ok ${n} - ${name}`);
  else { console.log(`not ok ${n} - ${name}`); if (extra !== undefined) console.log(`#   got: ${JSON.stringify(extra)}`); }
}
const sleep = ms => new Promise(r => setTimeout(r, ms));
const hooks = f => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '').split('\n').filter(Boolean).map(l => JSON.parse(l));
async function until(pred, ms = 20000) { // bounded wait
  for (let t = 0; t < ms; t += 50) { if (pred()) return true; await sleep(50); }
  return pred();
}
const events = (log, path) => hooks(log).filter(h => h.path === path).map(h => ({ ...h, ev: JSON.parse(h.body) }));
async function client(c) {
  const fetchImpl = (url, init = {}) => fetch(url, { ...init, headers: { ...(init.headers || {}), Authorization: `Bearer ${c}` } });
  const f = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }));
  return f.createFromUrl(base);
}
const msg = (id, value, skill = 'tools.echo') => ({ messageId: id, role: 1, parts: [{ content: { $case: 'data', value } }], metadata: { skill_id: skill } });
async function err(p) { try { await p; } catch (e) { return e; } return undefined; }

const a = await client(cred);
ok(a.agentCard.capabilities?.pushNotifications === true, 'A2A SDK: the card says capabilities.pushNotifications: true', a.agentCard.capabilities);

// the extended card: the session's skills; the public card: only what needs no grant
const g = await client(credGrant);
const ext = await g.getAgentCard();
const pub = await new DefaultAgentCardResolver({}).resolve(base);
ok(ext.skills.some(s => s.id === 'tests.secret') && ext.skills.some(s => s.id === 'tools.echo'),
  'A2A SDK: GetExtendedAgentCard of a session granted Secret.Read lists tests.secret (the session\'s skills)', ext.skills.map(s => s.id));
ok(!pub.skills.some(s => s.id === 'tests.secret') && pub.skills.some(s => s.id === 'tools.echo'),
  'A2A SDK: the public card (no credential) lists no skill that needs a grant (tests.secret absent, tools.echo there)', pub.skills.map(s => s.id));
const extA = await a.getAgentCard();
ok(!extA.skills.some(s => s.id === 'tests.secret'), 'A2A SDK: ... and the extended card of a session without the grant lists no tests.secret (control)', extA.skills.map(s => s.id));

if (pd !== '-') {
  // a working task: the daemon holds its call before the commit
  const tid = `pw-${process.pid}`;
  const pending = a.sendMessage({ message: msg(tid, { w: 1 }) });
  pending.catch(() => {});
  const reached = await until(() => fs.existsSync(`${pd}/coord.before_commit.1.reached`), 30000);
  ok(reached, 'the first call is held before its commit (working)');
  const c1 = await a.createTaskPushNotificationConfig({ taskId: tid, id: 'c1', url: `${hook1}/w`, token: 'tok-w',
    authentication: { scheme: 'Bearer', credentials: 'cred-w' } });
  ok(c1.id === 'c1' && c1.taskId === tid && c1.url === `${hook1}/w`, 'A2A SDK: createTaskPushNotificationConfig for a working task answers the config', c1);
  const c2 = await a.createTaskPushNotificationConfig({ taskId: tid, url: `${hook1}/c2` });
  ok(/^[0-9a-f]{16}$/.test(c2.id), 'A2A SDK: a config without an id gets one from the agent', c2);
  const e2 = await err(a.createTaskPushNotificationConfig({ taskId: tid, url: `${hook2}/w` }));
  ok(e2 && /webhook URL .* is not allowed.*--a2a-webhook-allow/.test(String(e2.message)), 'A2A SDK: a webhook outside the operator\'s allowlist is refused', String(e2));
  const e3 = await err(a.createTaskPushNotificationConfig({ taskId: tid, url: `${hook1}x/w` }));
  ok(e3 && /is not allowed/.test(String(e3.message)), 'A2A SDK: ... the prefix ends at a "/" (PREFIX + "x" is refused)', String(e3));
  const e4 = await err(a.createTaskPushNotificationConfig({ taskId: tid, url: `${hook1}/w`, token: 'a\r\nX-Injected: 1' }));
  ok(e4 && /printable ASCII/.test(String(e4.message)), 'A2A SDK: a token that would split the webhook\'s headers is refused', String(e4));
  const e5 = await err(a.createTaskPushNotificationConfig({ taskId: 'no-such-task', url: `${hook1}/w` }));
  ok(e5 && /task not found/.test(String(e5.message)), 'A2A SDK: a config for an unknown task: TaskNotFound', String(e5));
  const got = await a.getTaskPushNotificationConfig({ taskId: tid, id: 'c1' });
  ok(got.url === `${hook1}/w` && got.token === 'tok-w' && got.authentication?.scheme === 'Bearer', 'A2A SDK: getTaskPushNotificationConfig reads it back', got);
  const l2 = await a.listTaskPushNotificationConfig({ taskId: tid });
  ok(l2.configs.length === 2, 'A2A SDK: listTaskPushNotificationConfig lists both', l2);
  await a.deleteTaskPushNotificationConfig({ taskId: tid, id: c2.id });
  await a.deleteTaskPushNotificationConfig({ taskId: tid, id: c2.id });
  const l1 = await a.listTaskPushNotificationConfig({ taskId: tid });
  ok(l1.configs.length === 1 && l1.configs[0].id === 'c1', 'A2A SDK: deleteTaskPushNotificationConfig removes one (twice: the same, idempotent)', l1);
  fs.writeFileSync(`${pd}/coord.before_commit.1.go`, '');
  const done = await pending;
  ok(done.status?.state === 3, 'the held call completes', done.status);
  await until(() => events(log1, '/hook/w').some(h => h.ev.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED'));
  const w = events(log1, '/hook/w');
  const fin = w.find(h => h.ev.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED');
  const art = w.find(h => h.ev.artifactUpdate);
  ok(fin && fin.ev.statusUpdate.taskId === tid && typeof fin.ev.statusUpdate.metadata?.entry_index === 'number',
    'webhook: the completed status update arrives (A2A 1.0 StreamResponse), naming the task and its log entry', w.map(h => h.ev));
  ok(art && art.ev.artifactUpdate.artifact.parts[0].data.echo.w === 1 && w.indexOf(art) < w.indexOf(fin), 'webhook: ... after the artifact update carrying the output', w.map(h => h.ev));
  ok(fin && fin.headers.authorization === 'Bearer cred-w' && fin.headers['x-a2a-notification-token'] === 'tok-w' && fin.method === 'POST' &&
     fin.headers['content-type'] === 'application/a2a+json',
    'webhook: a POST carrying the configured authentication (Authorization: Bearer) and token (X-A2A-Notification-Token), application/a2a+json', fin?.headers);
  ok(events(log1, '/hook/c2').length === 0, 'webhook: the deleted config\'s URL is never called (control)');
  const e6 = await err(a.createTaskPushNotificationConfig({ taskId: tid, url: `${hook1}/late` }));
  ok(e6 && /terminal state \(completed\)/.test(String(e6.message)), 'A2A SDK: a config for the completed task is UnsupportedOperation', String(e6));
  const kept = await a.listTaskPushNotificationConfig({ taskId: tid });
  ok(kept.configs.length === 1, 'A2A SDK: the completed task\'s config is still listed until deleted', kept);
  // a task with a webhook, cancelled by CancelTask while its capsule is held
  const cid = `pc-${process.pid}`;
  const cs = a.sendMessage({ message: msg(cid, { c: 1 }), configuration: { taskPushNotificationConfig: { url: `${hook1}/c` } } });
  cs.catch(() => {});
  ok(await until(() => fs.existsSync(`${pd}/sup.running.2.reached`), 30000), 'a second call is held in its capsule (working)');
  const cc = a.cancelTask({ id: cid });
  cc.catch(() => {});
  const fired = await until(() => fs.readFileSync(errLog, 'utf8').includes(`task=${cid}: the call in flight is cancelled`));
  fs.writeFileSync(`${pd}/sup.running.2.go`, '');
  const cr = await cs;
  await until(() => events(log1, '/hook/c').some(h => h.ev.statusUpdate?.status?.state === 'TASK_STATE_CANCELED'));
  const c = events(log1, '/hook/c').map(h => h.ev);
  ok(fired && cr.status?.state === 5 && c[0]?.statusUpdate?.status?.state === 'TASK_STATE_WORKING' &&
     c.at(-1)?.statusUpdate?.status?.state === 'TASK_STATE_CANCELED' && !c.some(e => e.artifactUpdate),
    'webhook: a task cancelled by CancelTask: working, then canceled (no artifact)', [fired, cr.status, c]);
}

// the config given with the message: working, the artifact, completed
const sid = `ps-${process.pid}`;
const sres = await a.sendMessage({ message: msg(sid, { s: 2 }), configuration: { taskPushNotificationConfig: { url: `${hook1}/s`, token: 'tok-s' } } });
ok(sres.status?.state === 3, 'A2A SDK: sendMessage with configuration.taskPushNotificationConfig completes', sres.status);
await until(() => events(log1, '/hook/s').length >= 3);
const s = events(log1, '/hook/s').map(h => h.ev);
ok(s.length === 3 && s[0].statusUpdate?.status?.state === 'TASK_STATE_WORKING' && s[1].artifactUpdate?.artifact?.parts?.[0]?.data?.echo?.s === 2 &&
   s[2].statusUpdate?.status?.state === 'TASK_STATE_COMPLETED' && s.every(e => (e.statusUpdate || e.artifactUpdate).taskId === sid),
  'webhook: the task\'s updates in order: working, the artifact, completed', s);
ok(events(log1, '/hook/s').every(h => h.headers['x-a2a-notification-token'] === 'tok-s' && !h.headers.authorization), 'webhook: ... each with the token, and no Authorization (none configured)');
const sl = await a.listTaskPushNotificationConfig({ taskId: sid });
ok(sl.configs.length === 1 && sl.configs[0].url === `${hook1}/s` && sl.configs[0].taskId === sid, 'A2A SDK: the message\'s config is listed for its task', sl);

// a streamed call with a webhook: the stream and the webhook carry the same updates
const stid = `pst-${process.pid}`;
const sev = [];
for await (const ev of a.sendMessageStream({ message: msg(stid, { t: 4 }), configuration: { taskPushNotificationConfig: { url: `${hook1}/st` } } })) sev.push(ev);
await until(() => events(log1, '/hook/st').length >= 3);
const st = events(log1, '/hook/st').map(h => h.ev);
ok(sev.at(-1)?.payload?.$case === 'statusUpdate' && sev.at(-1).payload.value.status?.state === 3 && st.length === 3 &&
   st[0].statusUpdate?.status?.state === 'TASK_STATE_WORKING' && st[1].artifactUpdate?.artifact?.parts?.[0]?.data?.echo?.t === 4 &&
   st[2].statusUpdate?.status?.state === 'TASK_STATE_COMPLETED' && st[2].statusUpdate.taskId === stid,
  'A2A SDK: sendMessageStream with a webhook: the stream ends completed and the webhook gets working, the artifact, completed', [sev.map(e => e.payload?.$case), st]);

// a failed task is notified failed
const fres = await a.sendMessage({ message: msg(`pf-${process.pid}`, {}, 'tests.notobject'), configuration: { taskPushNotificationConfig: { url: `${hook1}/f` } } });
await until(() => events(log1, '/hook/f').some(h => h.ev.statusUpdate?.status?.state === 'TASK_STATE_FAILED'));
ok(fres.status?.state === 4 && events(log1, '/hook/f').some(h => h.ev.statusUpdate?.status?.state === 'TASK_STATE_FAILED' && /NotAnObject/.test(JSON.stringify(h.ev))),
  'webhook: a failed task\'s final update says failed, with its status message', events(log1, '/hook/f').map(h => h.ev));

// a webhook that answers 500: the task is unaffected (the daemon logs the drop)
const xres = await a.sendMessage({ message: msg(`px-${process.pid}`, { x: 1 }), configuration: { taskPushNotificationConfig: { url: `${hook1}/fail` } } });
await until(() => events(log1, '/hook/fail').length >= 3);
ok(xres.status?.state === 3 && events(log1, '/hook/fail').length === 3, 'a webhook answering 500 gets each update once; the task completes regardless', events(log1, '/hook/fail').length);

// outside the allowlist: refused before anything runs
const rid = `pr-${process.pid}`;
const er = await err(a.sendMessage({ message: msg(rid, { r: 1 }), configuration: { taskPushNotificationConfig: { url: `${hook2}/r` } } }));
ok(er && /is not allowed/.test(String(er.message)), 'A2A SDK: sendMessage with a webhook outside the allowlist is refused', String(er));
const ernf = await err(a.getTask({ id: rid }));
ok(ernf && /task not found/.test(String(ernf.message)), '... nothing ran (getTask: not found)', String(ernf));

// A2A 0.3: message/send with pushNotificationConfig (authentication.schemes), the 0.3 list
const rpc = async (ver, method, params) => (await fetch(`${base}/a2a/`, { method: 'POST',
  headers: { Authorization: `Bearer ${cred}`, 'Content-Type': 'application/json', 'A2A-Version': ver },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })).json();
const lid = `pl-${process.pid}`;
const lr = await rpc('0.3', 'message/send', { message: { kind: 'message', messageId: lid, role: 'user', parts: [{ kind: 'data', data: { l: 3 } }], metadata: { skill_id: 'tools.echo' } },
  configuration: { pushNotificationConfig: { url: `${hook1}/l`, authentication: { schemes: ['Bearer'], credentials: 'c03' } } } });
ok(lr.result?.status?.state === 'completed', 'A2A 0.3: message/send with configuration.pushNotificationConfig completes', lr);
await until(() => events(log1, '/hook/l').some(h => h.ev.final === true));
const l = events(log1, '/hook/l');
const lfin = l.find(h => h.ev.final === true);
ok(lfin && lfin.ev.kind === 'status-update' && lfin.ev.status?.state === 'completed' && lfin.headers.authorization === 'Bearer c03' &&
   lfin.headers['content-type'] === 'application/json', 'webhook (0.3): the final status-update, with Authorization from authentication.schemes[0]', l.map(h => [h.ev, h.headers]));
const ll = await rpc('0.3', 'tasks/pushNotificationConfig/list', { id: lid });
ok(Array.isArray(ll.result) && ll.result[0]?.taskId === lid && ll.result[0]?.pushNotificationConfig?.authentication?.schemes?.[0] === 'Bearer',
  'A2A 0.3: tasks/pushNotificationConfig/list answers the 0.3 form', ll);
const lg = await rpc('0.3', 'tasks/pushNotificationConfig/get', { id: lid });
ok(lg.result?.pushNotificationConfig?.url === `${hook1}/l`, 'A2A 0.3: tasks/pushNotificationConfig/get (no config id: the first)', lg);
const ld = await rpc('0.3', 'tasks/pushNotificationConfig/delete', { id: lid, pushNotificationConfigId: lg.result?.pushNotificationConfig?.id });
const ll2 = await rpc('0.3', 'tasks/pushNotificationConfig/list', { id: lid });
ok(ld.result === null && Array.isArray(ll2.result) && ll2.result.length === 0, 'A2A 0.3: tasks/pushNotificationConfig/delete, then the list is empty', [ld, ll2]);
// another episode's task is not this session's: not found
const og = await (await fetch(`${base}/a2a/`, { method: 'POST', headers: { Authorization: `Bearer ${credGrant}`, 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTaskPushNotificationConfigs', params: { taskId: sid } }) })).json();
ok(og.error?.code === -32001, 'A2A: another episode\'s session lists no configs of this task (-32001)', og);

ok(hooks(log2).length === 0, 'the receiver outside the allowlist was never called (control for every refusal)', hooks(log2));
