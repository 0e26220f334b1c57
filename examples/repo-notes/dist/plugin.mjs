// Repo notes: when an agent's turn ends, adds a note to ESCOUADE-NOTES.md in the agent's
// repository: the files changed and not committed (git status --porcelain, in the agent's
// folder) and its last commits (git log). A run.js plugin: Escouade runs it inside itself, and
// its only reach is what its manifest declares: the agent's repository (files: agentRepo,
// write) and two git commands, word for word. escouade.fs and escouade.proc are the prelude's
// helpers over fs/* and proc/* (docs/files-and-programs.md).
import { createInterface } from 'node:readline';

const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');

// Calls to Escouade the prelude does not make for us, matched to their answers by id.
let nextId = 1;
const waiting = new Map();
const call = (method, params) => new Promise((resolve, reject) => {
  const id = nextId++;
  waiting.set(id, { resolve, reject });
  send({ jsonrpc: '2.0', id, method, params });
});

const kNotes = 'ESCOUADE-NOTES.md';
const { fs, proc } = globalThis.escouade;

// A program's output, or the reason it could not run (Escouade's own sentence).
async function git(agent, args) {
  const r = await proc.run({ command: 'git', args, dir: 'agent', agent });
  if (r.code !== 0) throw new Error(`git ${args[0]} ended with ${r.code}: ${r.stderr.trim()}`);
  return r.stdout;
}

async function note(fact) {
  const agent = fact.agent && fact.agent.id;
  if (!agent) return;
  let commits = 3;
  try {
    const settings = await call('settings/get', fact.project ? { project: fact.project.id } : {});
    if (Number.isInteger(settings.commits) && settings.commits > 0) commits = settings.commits;
  } catch (e) {
    console.error(`settings: ${e.message}`);
  }
  try {
    const changed = (await git(agent, ['status', '--porcelain'])).trimEnd();
    const log = (await git(agent, ['log', '-n', String(commits), '--format=%h %s'])).trimEnd();
    const where = { root: 'agentRepo', agent, path: kNotes };
    let before = '';
    try {
      before = await fs.readText(where);
    } catch (e) {
      if (e.code !== -32005) throw e;  // not found: the first note
    }
    const name = fact.agent.name || agent;
    const text = `## ${fact.at} ${name}\n\n` +
                 `Not committed:\n\n${changed ? indent(changed) : '    (nothing)'}\n\n` +
                 `Last commits:\n\n${log ? indent(log) : '    (none)'}\n\n`;
    const written = await fs.write(where, (before ? before : '# Escouade notes\n\n') + text);
    console.log(`noted ${name}'s turn in ${written.path} (${written.bytes} bytes)`);
  } catch (e) {
    // A refusal (a root, a command, a private project) or a failure, in Escouade's words.
    console.error(`no note for agent ${agent}: ${e.message}`);
  }
}

// One note at a time (Escouade runs 4 programs of a plugin at once at most): the turns that end
// while one is being noted are noted once after it, with what git says then.
let running = null;
const waitingFacts = new Map();  // agent -> its last fact not noted yet
function queue(fact) {
  const agent = fact.agent && fact.agent.id;
  if (!agent) return;
  waitingFacts.set(agent, fact);
  if (running) return;
  running = (async () => {
    while (waitingFacts.size) {
      const [key, next] = waitingFacts.entries().next().value;
      waitingFacts.delete(key);
      await note(next);
    }
    running = null;
  })();
}

const indent = (s) => s.split('\n').map((l) => `    ${l}`).join('\n');

function handle(m) {
  if (m.method === undefined) {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.error) w.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
    else w.resolve(m.result);
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
      if (m.params && m.params.name === 'turn.ended') queue(m.params);
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
