// The run.js plugin of bench_host's sandbox figures: what the fixture plugin's good mode does,
// over node:readline (test/echo gives its params back, permissions/decide denies "rm -rf" and
// allows the rest).
import { createInterface } from 'node:readline';

const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const decide = (p) =>
  ((p.request.input || {}).command || '').includes('rm -rf') ? 'deny' : 'allow';

createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  switch (m.method) {
    case 'initialize':
      return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: 1, capabilities: {} } });
    case 'test/echo':
      return send({ jsonrpc: '2.0', id: m.id, result: m.params });
    case 'permissions/decide':
      return send({ jsonrpc: '2.0', id: m.id, result: { decision: decide(m.params) } });
    case 'shutdown':
      send({ jsonrpc: '2.0', id: m.id, result: null });
      return process.exit(0);
    default:
      if (m.id !== undefined)
        send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no ' + m.method } });
  }
});
