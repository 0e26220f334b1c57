// The MCP peer's server: a child process the harness (bench.mjs) spawns through the SDK's
// StdioClientTransport. Newline-delimited JSON-RPC on stdin/stdout, as the SDK frames it.
//   tool "echo"   returns its arguments (as the text content of the result)
//   tool "count"  returns how many "bench/fact" notifications were handled so far
//   notification "bench/fact"  counted, after the SDK has parsed and validated it
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'escouade-bench-peer', version: '0.0.0' });

// The shape of the benches' payload (bench/host_bench.cpp, payload()).
const payload = {
  ticket: z.object({ id: z.string(), key: z.string(), title: z.string() }),
  agent: z.object({ id: z.string(), name: z.string() }),
  data: z.object({ from: z.string(), to: z.string(), by: z.string(), note: z.string() }),
};
server.registerTool('echo', { description: 'returns its input', inputSchema: payload }, async (args) => ({
  content: [{ type: 'text', text: JSON.stringify(args) }],
}));

let handled = 0;
server.registerTool('count', { description: 'bench/fact notifications handled' }, async () => ({
  content: [{ type: 'text', text: String(handled) }],
}));

const FactNotification = z.object({
  method: z.literal('bench/fact'),
  params: z.looseObject({ seq: z.number() }),
});
server.server.setNotificationHandler(FactNotification, () => {
  handled += 1;
});

// 256 calls in flight leave more than 10 writes waiting for 'drain' at once; Node's warning
// about that many listeners is noise here (it changes nothing of the measure).
process.stdout.setMaxListeners(0);
await server.connect(new StdioServerTransport());
