// The peers measured beside the host (bench/run.sh calls bench/peers/run.sh, which runs this):
// the MCP TypeScript SDK (stdio client and server) and vscode-jsonrpc, each with its server a
// real child process on two pipes, measured the way bench/host_bench.cpp measures the host.
//
//   call       one request with the benches' ~400-byte payload, echoed back; p50/p99 µs
//   ping       MCP only: client.ping(), an empty request and result; p50/p99 µs
//   notify     ~400-byte fact notifications client -> server, from the first sent until a
//              request queued behind the last has answered with the count the server handled
//   pipelined  the same call as "call", 256 in flight at all times; calls/s
//
// One JSON object per line on stdout, nothing else. Measures, never asserts a time.
// Usage: node bench.mjs [--peer mcp-sdk|vscode-jsonrpc] [--calls N] [--warmup N]
//                       [--notifications N] [--pipelined N] [--in-flight N] [--pinned]
// (--pinned only labels the lines; run.sh does the pinning with taskset.)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import rpc from 'vscode-jsonrpc/node';

const here = dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const o = {
    peers: ['mcp-sdk', 'vscode-jsonrpc'],
    calls: 5000,
    warmup: 1000,
    notifications: 100000,
    pipelined: 50000,
    inFlight: 256,
    pinned: false,
  };
  const number = (i) => {
    const v = Number(argv[i]);
    if (!Number.isInteger(v) || v <= 0) throw new Error(`${argv[i - 1]} wants a positive integer`);
    return v;
  };
  for (let i = 0; i < argv.length; ++i) {
    switch (argv[i]) {
      case '--peer': o.peers = [argv[++i]]; break;
      case '--calls': o.calls = number(++i); break;
      case '--warmup': o.warmup = number(++i); break;
      case '--notifications': o.notifications = number(++i); break;
      case '--pipelined': o.pipelined = number(++i); break;
      case '--in-flight': o.inFlight = number(++i); break;
      case '--pinned': o.pinned = true; break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  for (const p of o.peers) {
    if (!(p in PEERS)) throw new Error(`unknown peer ${p} (mcp-sdk, vscode-jsonrpc)`);
  }
  return o;
}

// bench/host_bench.cpp, payload(): about 400 bytes on the wire.
function payload() {
  return {
    ticket: { id: 't-19', key: 'ESC-12', title: 'Retry failed invoices after a timeout' },
    agent: { id: 'a-2', name: 'Ada' },
    data: { from: 'todo', to: 'doing', by: 'user', note: 'n'.repeat(180) },
  };
}

// bench/host_bench.cpp, fact(seq): a fact notification's params.
function fact(seq) {
  return {
    name: 'agent.status',
    version: 1,
    seq,
    at: '2026-11-29T09:12:05Z',
    project: { id: 'p1', name: 'billing', private: false },
    data: { status: 'working', was: 'idle', note: 'x'.repeat(200) },
  };
}

function versionOf(pkg) {
  return JSON.parse(readFileSync(join(here, 'node_modules', pkg, 'package.json'), 'utf8')).version;
}

// As bench/host_bench.cpp's pct(): the sample at floor(p * (n - 1)) of the sorted samples.
function pct(sorted, p) {
  return sorted[Math.floor(p * (sorted.length - 1))];
}

const round1 = (x) => Math.round(x * 10) / 10;

async function timedCalls(once, warmup, iterations) {
  for (let i = 0; i < warmup; ++i) await once();
  const us = new Float64Array(iterations);
  for (let i = 0; i < iterations; ++i) {
    const a = process.hrtime.bigint();
    await once();
    us[i] = Number(process.hrtime.bigint() - a) / 1000;
  }
  us.sort();
  return { iterations, p50_us: round1(pct(us, 0.5)), p99_us: round1(pct(us, 0.99)) };
}

// `total` calls, `inFlight` of them outstanding at all times until the last are sent.
function pipelinedCalls(once, total, inFlight) {
  return new Promise((resolve, reject) => {
    let started = 0;
    let done = 0;
    const launch = () => {
      started += 1;
      once().then(() => {
        done += 1;
        if (started < total) launch();
        else if (done === total) resolve();
      }, reject);
    };
    for (let i = 0; i < Math.min(inFlight, total); ++i) launch();
  });
}

async function timedPipelined(once, total, inFlight) {
  await pipelinedCalls(once, Math.min(total, 5000), inFlight); // warm-up
  const a = process.hrtime.bigint();
  await pipelinedCalls(once, total, inFlight);
  const s = Number(process.hrtime.bigint() - a) / 1e9;
  return { in_flight: inFlight, calls: total, calls_per_s: Math.round(total / s) };
}

// Sends `n` notifications (each awaited, so the library's own flow control holds), then one
// request queued behind them whose answer is the server's count: the time covers the server
// having parsed and handled every one of them.
async function timedNotify(notify, count, n) {
  let seq = 0;
  for (let i = 0; i < Math.min(n, 5000); ++i) await notify(fact(++seq)); // warm-up
  const before = await count();
  const a = process.hrtime.bigint();
  for (let i = 0; i < n; ++i) await notify(fact(++seq));
  const after = await count();
  const s = Number(process.hrtime.bigint() - a) / 1e9;
  if (after - before !== n) {
    throw new Error(`the server handled ${after - before} notifications of ${n}`);
  }
  return { notifications: n, per_s: Math.round(n / s) };
}

async function mcpSdk(o, emit) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(here, 'mcp-server.mjs')],
    cwd: here,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'escouade-bench', version: '0.0.0' });
  await client.connect(transport);
  // 256 calls in flight leave more than 10 writes waiting for 'drain' on the child's stdin;
  // Node's warning about so many listeners is noise here. (The transport keeps its process
  // in a private field: no public way to reach the stream.)
  transport._process?.stdin?.setMaxListeners(0);
  try {
    const p = payload();
    const expected = JSON.stringify(p);
    const first = await client.callTool({ name: 'echo', arguments: p });
    if (first.content?.[0]?.text !== expected) {
      throw new Error(`echo answered ${JSON.stringify(first)}`);
    }
    const echo = () => client.callTool({ name: 'echo', arguments: p });
    emit('call', await timedCalls(echo, o.warmup, o.calls));
    emit('ping', await timedCalls(() => client.ping(), o.warmup, o.calls));
    const count = async () =>
      Number((await client.callTool({ name: 'count', arguments: {} })).content[0].text);
    const notify = (params) => client.notification({ method: 'bench/fact', params });
    emit('notify', await timedNotify(notify, count, o.notifications));
    emit('pipelined', await timedPipelined(echo, o.pipelined, o.inFlight));
  } finally {
    await client.close();
  }
}

async function vscodeJsonrpc(o, emit) {
  const child = spawn(process.execPath, [join(here, 'jsonrpc-server.mjs')], {
    cwd: here,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const connection = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin),
  );
  connection.listen();
  try {
    const p = payload();
    const first = await connection.sendRequest('echo', p);
    if (JSON.stringify(first) !== JSON.stringify(p)) {
      throw new Error(`echo answered ${JSON.stringify(first)}`);
    }
    const echo = () => connection.sendRequest('echo', p);
    emit('call', await timedCalls(echo, o.warmup, o.calls));
    const count = () => connection.sendRequest('count');
    const notify = (params) => connection.sendNotification('bench/fact', params);
    emit('notify', await timedNotify(notify, count, o.notifications));
    emit('pipelined', await timedPipelined(echo, o.pipelined, o.inFlight));
  } finally {
    connection.dispose();
    child.stdin.end();
    await exited;
  }
}

const PEERS = {
  'mcp-sdk': {
    run: mcpSdk,
    extra: () => ({ version: versionOf('@modelcontextprotocol/sdk'), framing: 'newline' }),
  },
  'vscode-jsonrpc': {
    run: vscodeJsonrpc,
    extra: () => ({ version: versionOf('vscode-jsonrpc'), framing: 'content-length' }),
  },
};

async function main() {
  const o = parseArgs(process.argv.slice(2));
  for (const name of o.peers) {
    const peer = PEERS[name];
    const extra = { ...peer.extra(), node: process.version, pinned: o.pinned };
    const emit = (measure, fields) => {
      process.stdout.write(
        `${JSON.stringify({ bench: 'peer', peer: name, measure, ...fields, ...extra })}\n`,
      );
    };
    await peer.run(o, emit);
  }
}

main().catch((error) => {
  console.error(`bench/peers: ${error?.stack ?? error}`);
  process.exitCode = 1;
});
