// Slack: when a ticket reaches the column "done", posts a line to the project's channel with
// Slack's Web API (chat.postMessage), authorized by the bot token kept in the keychain
// (secrets/get "token"). A run.js plugin: Escouade runs it inside itself, and its fetch reaches
// https://slack.com alone (permissions.network). The token goes in a header, never in a line of
// the journal; Escouade masks it there anyway.
import { createInterface } from 'node:readline';

const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');

// Calls to Escouade, matched to their answers by id. An answer is never answered.
let nextId = 1;
const waiting = new Map();
const call = (method, params) => new Promise((resolve, reject) => {
  const id = nextId++;
  waiting.set(id, { resolve, reject });
  send({ jsonrpc: '2.0', id, method, params });
});

const kApi = 'https://slack.com/api/chat.postMessage';

async function post(fact) {
  const data = fact.data || {};
  if (data.to !== 'done') return;
  const project = fact.project || null;
  let channel = '#dev';
  try {
    const settings = await call('settings/get', project ? { project: project.id } : {});
    if (typeof settings.channel === 'string' && settings.channel) channel = settings.channel;
  } catch (e) {
    console.error(`settings: ${e.message}`);
  }
  let token;
  try {
    token = await call('secrets/get', { key: 'token' });
  } catch (e) {
    console.error(`no message to ${channel}: ${e.message}`);
    return;
  }
  if (typeof token !== 'string' || token === '') {
    console.error(`no message to ${channel}: no token is kept (set the secret "token" of ` +
                  'this plugin: a Slack bot token, xoxb-...)');
    return;
  }
  const ticket = fact.ticket ? `${fact.ticket.key} "${fact.ticket.title}"` : 'a ticket';
  const text = `${ticket} is done` + (project ? ` in ${project.name}` : '');
  try {
    const res = await fetch(kApi, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`,
                 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ channel, text }),
      signal: AbortSignal.timeout(15000),
    });
    // Slack answers 200 with {"ok": false, "error": "..."} when it refuses.
    const answer = await res.json().catch(() => ({ ok: false, error: `HTTP ${res.status}` }));
    if (res.ok && answer.ok) console.log(`posted to ${channel}: ${text}`);
    else console.error(`Slack refused the message to ${channel}: ${answer.error || res.status}`);
  } catch (e) {
    // Escouade's own sentence: a refusal of its egress policy, or a failure on the way.
    console.error(`no message to ${channel}: ${e.message}`);
  }
}

function handle(m) {
  if (m.method === undefined) {
    // An answer to one of our calls.
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.error) w.reject(new Error(m.error.message)); else w.resolve(m.result);
    return;
  }
  switch (m.method) {
    case 'initialize':
      return send({ jsonrpc: '2.0', id: m.id,
                    result: { protocolVersion: 1, capabilities: { batch: false } } });
    case 'shutdown':
      send({ jsonrpc: '2.0', id: m.id, result: null });
      return process.exit(0);
    case 'events/fact':
      if (m.params && m.params.name === 'ticket.column') post(m.params);
      return;
    default:
      if (m.id !== undefined)
        send({ jsonrpc: '2.0', id: m.id,
               error: { code: -32601, message: `method not found: ${m.method}` } });
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === '') return;
  let m;
  try { m = JSON.parse(line); } catch (e) { return; }
  if (Array.isArray(m)) m.forEach(handle); else if (m && typeof m === 'object') handle(m);
});
