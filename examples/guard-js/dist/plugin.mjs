// The guard of examples/guard, in plain JavaScript: a run.js plugin that Escouade runs inside
// itself. Its rules are read with the spec's own line, readFileSync of a URL beside dist/; a
// timer tells the journal how many requests it decided once a quiet second has passed.
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';

const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const answer = (id, result) => send({ jsonrpc: '2.0', id, result });

const strings = (v) => (Array.isArray(v) ? v.filter((s) => typeof s === 'string') : []);
function loadRules() {
  try {
    const doc = JSON.parse(
      readFileSync(new URL('../rules.json', globalThis._importMeta_.url), 'utf8'));
    const deny = (Array.isArray(doc.deny) ? doc.deny : []).map((r) => ({
      contains: typeof r.contains === 'string' ? r.contains : '',
      pushTo: strings(r.pushTo),
      message: typeof r.message === 'string' && r.message ? r.message
                                                         : "refused by the guard's rules",
    }));
    const rules = { deny, allowKinds: strings(doc.allowKinds),
                    allowCommands: strings(doc.allowCommands) };
    console.log(`rules loaded: ${deny.length} refusals, ${rules.allowCommands.length} commands ` +
                'allowed');
    return rules;
  } catch (e) {
    console.log(`no rules (${e.message}): every request is left to the user`);
    return { deny: [], allowKinds: [], allowCommands: [] };
  }
}
const rules = loadRules();

const wordsOf = (text) => text.split(/\s+/).filter((w) => w !== '');
// `git push <remote> main`, `HEAD:main`, `feature:master`...
function pushesTo(words, branch) {
  for (let i = 0; i + 1 < words.length; i++) {
    if (words[i] !== 'git' || words[i + 1] !== 'push') continue;
    for (let j = i + 2; j < words.length; j++) {
      const w = words[j];
      if ([';', '&&', '||', '|'].includes(w)) break;
      const target = w.slice(w.lastIndexOf(':') + 1);
      if (target === branch || target === 'refs/heads/' + branch) return true;
    }
  }
  return false;
}
const chains = (command) => /[;|&`$<>\n]/.test(command);

function decide(request) {
  const input = request.input || {};
  const command = typeof input.command === 'string' ? input.command : '';
  const words = wordsOf(command);
  const spaced = words.join(' ');
  for (const rule of rules.deny) {
    if (rule.contains && spaced.includes(rule.contains))
      return { decision: 'deny', message: rule.message };
    if (rule.pushTo.some((b) => pushesTo(words, b)))
      return { decision: 'deny', message: rule.message };
  }
  if (rules.allowKinds.includes(request.kind))
    return { decision: 'allow', message: `a ${request.kind} is allowed` };
  if (words.length && !chains(command)) {
    for (const allowed of rules.allowCommands) {
      const prefix = wordsOf(allowed);
      if (prefix.length && prefix.every((w, i) => words[i] === w))
        return { decision: 'allow', message: `${allowed} only reads` };
    }
  }
  if (!command) return { decision: 'ask', message: `a ${request.kind} the guard has no rule for` };
  return { decision: 'ask', message: `no rule of the guard covers: ${command}` };
}

// How many it decided since the journal last heard of it: told a second after the last one.
let decided = 0;
let quiet;
function count() {
  decided++;
  clearTimeout(quiet);
  quiet = setTimeout(() => {
    console.log(`decided ${decided} request${decided === 1 ? '' : 's'}`);
    decided = 0;
  }, 1000);
}

function handle(m) {
  switch (m.method) {
    case 'initialize':
      return answer(m.id, { protocolVersion: 1, capabilities: {} });
    case 'shutdown':
      answer(m.id, null);
      return process.exit(0);
    case 'permissions/decide':
      count();
      return answer(m.id, decide((m.params && m.params.request) || {}));
    default:
      if (m.id !== undefined && m.method !== undefined)
        send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `no ${m.method}` } });
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch (e) {
    return send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'not JSON' } });
  }
  if (m !== null && typeof m === 'object' && !Array.isArray(m)) handle(m);
  else send({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'not a request' } });
});
