// @ID@: an Escouade plugin (protocol 1): a plain ES module over node:readline.
// Escouade runs it inside itself, isolated ("run": {"js": "plugin.mjs"}): it may import
// node:readline and node:fs, and nothing else. Standard output carries the protocol alone:
// write traces with console.log (it goes to the plugin's journal) or send a log notification.
import { createInterface } from 'node:readline';

const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const result = (id, value) => ({ jsonrpc: '2.0', id, result: value });
const error = (id, code, message) => ({ jsonrpc: '2.0', id, error: { code, message } });
// JSON-RPC 2.0's own error codes.
const kParse = @PARSE@, kInvalidRequest = @INVALID_REQUEST@, kMethodNotFound = @METHOD_NOT_FOUND@;
const log = (level, message) =>
  send({ jsonrpc: '2.0', method: 'log', params: { level, message } });

// Calls to Escouade (settings/get, secrets/get...): each has an id of the plugin's own, and its
// answer comes back on standard input among Escouade's requests, told apart by having no method.
const waiting = new Map();
let lastId = 0;
function call(method, params) {
  const id = `@TARGET@-${++lastId}`;
  send({ jsonrpc: '2.0', id, method, params });
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}

// Its settings (contributes.settings in the manifest), as the user set them; read once it is
// initialized, and again whenever it wants (they may change between two calls).
let settings = { verbose: false };
const seen = new Set();  // the kinds of fact already written into the journal

async function loadSettings() {
  try {
    settings = { ...settings, ...(await call('settings/get', {})) };
  } catch (e) {
    log('warn', `settings/get failed: ${e.message}`);
  }
}

// One message: its answer, or undefined when none is owed (a notification, an answer).
function handle(m) {
  if (m === null || typeof m !== 'object' || Array.isArray(m) || m.jsonrpc !== '2.0')
    return error(m && (typeof m.id === 'number' || typeof m.id === 'string') ? m.id : null,
                 kInvalidRequest, 'not a JSON-RPC 2.0 message');
  if (m.method === undefined && ('result' in m || 'error' in m)) {
    // An answer to one of its own calls.
    const pending = waiting.get(m.id);
    if (!pending) return undefined;  // not one of its calls: nothing is owed to an answer
    waiting.delete(m.id);
    if ('error' in m) pending.reject(new Error(m.error && m.error.message));
    else pending.resolve(m.result);
    return undefined;
  }
  if (typeof m.method !== 'string')
    return error(typeof m.id === 'number' || typeof m.id === 'string' ? m.id : null,
                 kInvalidRequest, 'not a JSON-RPC 2.0 request');
  const answers = m.id !== undefined;
  switch (m.method) {
    case 'initialize':
      // Answered first; its settings are asked for once Escouade has the answer.
      queueMicrotask(loadSettings);
      return result(m.id, { protocolVersion: 1, capabilities: { batch: true } });
    case 'shutdown':
      // Answered first; the plugin ends once its answer is on its way.
      queueMicrotask(() => process.exit(0));
      return result(m.id, null);
    case 'permissions/decide': {
      // Escouade asks before an agent runs a command, edits a file or fetches a URL, and waits
      // 500 ms for the answer: allow, deny (with a reason) or ask (the user decides, as without
      // a plugin). This one has no rule yet, so it leaves every request to the user.
      const kind = m.params && m.params.request ? m.params.request.kind : 'unknown';
      const message = `@ID@ has no rule for a request of kind ${kind} yet`;
      return result(m.id, { decision: 'ask', message });
    }
    case 'events/fact': {
      // The facts of permissions.events (agent.status, ticket.*) into the journal: the first of
      // each kind, or every one when the setting verbose is on.
      const fact = m.params || {};
      if (settings.verbose || !seen.has(fact.name)) {
        seen.add(fact.name);
        log('info', `fact ${fact.name}` + (fact.project ? ` in ${fact.project.name}` : ''));
      }
      return undefined;
    }
    default:
      return answers ? error(m.id, kMethodNotFound, `no method ${m.method}`) : undefined;
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch (e) {
    return send(error(null, kParse, 'not JSON'));
  }
  if (!Array.isArray(message)) {
    const answer = handle(message);
    if (answer !== undefined) send(answer);
    return;
  }
  // A batch: one array of the answers its requests are owed, or nothing when it holds none.
  if (message.length === 0) return send(error(null, kInvalidRequest, 'an empty batch'));
  const answers = message.map(handle).filter((a) => a !== undefined);
  if (answers.length) send(answers);
});
