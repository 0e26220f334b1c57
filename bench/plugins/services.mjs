// The plugin of bench_host's fs/read and proc/spawn figures (bench/host_bench_services.cpp), one
// bundle run both ways: in the sandbox (run.js) and by Node as a process. It speaks the protocol
// by hand, as bench/plugins/echo.mjs does, so that what is timed is the host's work and not an
// SDK's.
//   test/read    fs/read of {root: "plugin", path} through the host; answers the bytes' length
//   test/spawn   proc/spawn of `true` through the host, then its proc/exit; answers the code
//   test/direct-read, test/direct-spawn   the same done by the plugin itself, when run by Node
//                (bench/plugins/services-node.mjs sets globalThis.benchDirect before this runs)
import { createInterface } from 'node:readline';

const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const answer = (id, result) => send({ jsonrpc: '2.0', id, result });
const fail = (id, code, message) => send({ jsonrpc: '2.0', id, error: { code, message } });

// Requests to the host, by id; proc/exit codes by program, for an exit that comes before the
// answer to its proc/spawn.
let next = 1;
const pending = new Map();
const exited = new Map();
const waiting = new Map();

function ask(method, params) {
  const id = `b${next++}`;
  send({ jsonrpc: '2.0', id, method, params });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

function exitOf(proc) {
  if (exited.has(proc)) {
    const code = exited.get(proc);
    exited.delete(proc);
    return Promise.resolve(code);
  }
  return new Promise((resolve) => waiting.set(proc, resolve));
}

async function handle(m) {
  switch (m.method) {
    case 'initialize':
      return answer(m.id, { protocolVersion: 1, capabilities: { batch: false } });
    case 'shutdown':
      answer(m.id, null);
      return process.exit(0);
    case 'test/read': {
      const r = await ask('fs/read', { root: 'plugin', path: m.params.path });
      const size = r.text !== undefined ? r.text.length : r.dataBase64.length;
      return answer(m.id, { size });
    }
    case 'test/spawn': {
      const { proc } = await ask('proc/spawn', { command: 'true', args: [] });
      return answer(m.id, { code: await exitOf(proc) });
    }
    case 'proc/exit': {
      const resolve = waiting.get(m.params.proc);
      if (resolve) {
        waiting.delete(m.params.proc);
        resolve(m.params.code);
      } else exited.set(m.params.proc, m.params.code);
      return;
    }
    case 'proc/out':
      return;
    default: {
      const direct = globalThis.benchDirect?.[m.method];
      if (direct) return answer(m.id, await direct(m.params));
      if (m.id !== undefined) fail(m.id, -32601, m.method);
    }
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  const m = JSON.parse(line);
  if (m.method === undefined) {  // an answer to one of ours
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) p.reject(new Error(m.error.message));
    else p.resolve(m.result);
    return;
  }
  handle(m).catch((e) => m.id !== undefined && fail(m.id, -32603, String(e)));
});
