// The demo's faulty plugin (scripts/demo.sh): it speaks protocol 1 by hand, and its decide
// handler spins forever on one command. A process would hang there; in the sandbox the turn
// is stopped at 500 ms (the limit while it holds a decision), and the journal says why.
import { createInterface } from 'node:readline';

const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const answer = (id, result) => send({ jsonrpc: '2.0', id, result });

console.error(`spinner: started at ${new URL('.', import.meta.url).href}`);
for await (const line of createInterface({ input: process.stdin })) {
  const m = JSON.parse(line);
  switch (m.method) {
    case 'initialize':
      answer(m.id, { protocolVersion: 1, capabilities: {} });
      break;
    case 'permissions/decide': {
      const command = (m.params.request.input || {}).command || '';
      if (command === 'make forever') for (;;) {}  // the fault: a loop that never ends
      answer(m.id, { decision: 'ask' });
      break;
    }
    case 'shutdown':
      answer(m.id, null);
      process.exit(0);
    default:
      if (m.id !== undefined)
        send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `unknown method ${m.method}` } });
  }
}
