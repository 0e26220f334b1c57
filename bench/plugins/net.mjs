// The run.js plugin of bench_net: a fetch whose body it reads whole (test/fetch), and a stream
// it drains with a reader, each piece credited back as it is read (test/drain).
import { createInterface } from 'node:readline';

const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const answer = (id, result) => send({ jsonrpc: '2.0', id, result });

async function handle(m) {
  switch (m.method) {
    case 'initialize':
      return answer(m.id, { protocolVersion: 1, capabilities: { batch: false } });
    case 'shutdown':
      answer(m.id, null);
      return process.exit(0);
    case 'test/fetch': {
      const res = await fetch(m.params.url);
      const text = await res.text();
      return answer(m.id, { status: res.status, bytes: text.length });
    }
    case 'test/drain': {
      const res = await fetch(m.params.url);
      const reader = res.body.getReader();
      let bytes = 0;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        bytes += value.length;
      }
      return answer(m.id, { status: res.status, bytes });
    }
    default:
      if (m.id !== undefined)
        send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: m.method } });
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim()) handle(JSON.parse(line));
});
