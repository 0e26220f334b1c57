// The vscode-jsonrpc peer's server: a child process the harness (bench.mjs) spawns with its
// stdin/stdout as pipes. vscode-jsonrpc frames each message with a Content-Length header
// (as LSP does), not one message a line: this is the library as it ships.
//   request "echo"   returns its params
//   request "count"  returns how many "bench/fact" notifications were handled so far
//   notification "bench/fact"  counted, after the library has parsed it
import rpc from 'vscode-jsonrpc/node';

const connection = rpc.createMessageConnection(
  new rpc.StreamMessageReader(process.stdin),
  new rpc.StreamMessageWriter(process.stdout),
);
let handled = 0;
connection.onRequest('echo', (params) => params);
connection.onRequest('count', () => handled);
connection.onNotification('bench/fact', () => {
  handled += 1;
});
connection.onClose(() => process.exit(0));
// 256 calls in flight leave more than 10 writes waiting for 'drain' at once; Node's warning
// about that many listeners is noise here (it changes nothing of the measure).
process.stdout.setMaxListeners(0);
connection.listen();
