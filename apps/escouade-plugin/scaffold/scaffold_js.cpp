// `escouade-plugin new js <dir>`: a plain ES module over node:readline that Escouade runs in
// its sandbox (scaffold.hpp). Its three files are small and need no build, so they are kept
// here rather than embedded from a template folder.

#include <string>
#include <utility>

#include "protocol/gen/errors.hpp"
#include "scaffold/scaffold.hpp"

namespace escouade::scaffold {

namespace {

// The same manifest as the C++ template's but for its run: settle_identity checks that one
// without its run, so it holds for this one too.
constexpr std::string_view kManifest = R"JSON({
  "id": "@ID@",
  "version": "0.1.0",
  "name": "@NAME@",
  "run": { "js": "plugin.mjs" },
  "activation": ["event:agent.status"],
  "permissions": {
    "events": ["agent.status", "ticket.*"],
    "decide": true
  }
}
)JSON";

constexpr std::string_view kModule =
    R"JS(// @ID@: an Escouade plugin (protocol 1): a plain ES module over node:readline.
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

// One message: its answer, or undefined for a notification.
function handle(m) {
  if (m === null || typeof m !== 'object' || Array.isArray(m) || m.jsonrpc !== '2.0' ||
      typeof m.method !== 'string')
    return error(m && (typeof m.id === 'number' || typeof m.id === 'string') ? m.id : null,
                 kInvalidRequest, 'not a JSON-RPC 2.0 request');
  const answers = m.id !== undefined;
  switch (m.method) {
    case 'initialize':
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
      // The facts of permissions.events (agent.status, ticket.*), each into the journal.
      const fact = m.params || {};
      log('info', `fact ${fact.name}` + (fact.project ? ` in ${fact.project.name}` : ''));
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
)JS";

constexpr std::string_view kReadme = R"MD(# @NAME@

An Escouade plugin, `@ID@`, written in plain JavaScript: one ES module over `node:readline`,
with nothing to build. Escouade runs it inside itself, isolated (no Node needed, no process
started), and it speaks protocol 1 on its standard input and output:

- `escouade-plugin.json`: the manifest: who it is, what runs (`"run": {"js": "plugin.mjs"}`),
  when it starts (`event:agent.status`), what it may reach (the facts `agent.status` and
  `ticket.*`, permission decisions).
- `plugin.mjs`: the plugin. It leaves every permission request to the user (`ask`, with a
  message) and writes each fact it hears into its journal (a `log` notification).

Inside Escouade it may import `node:readline` and `node:fs` (`readFileSync` of the JSON files
at its root) and nothing else; it has `setTimeout`, `URL`, `TextEncoder` and `TextDecoder`,
64 MB of memory and 2 s of CPU a turn (500 ms while it holds a decision). It runs under Node
as it is, too.

## Test

```sh
escouade-plugin check .   # the manifest alone
escouade-plugin test .    # the conformance bench: the plugin against protocol 1
escouade-plugin run .     # the plugin in Escouade's host: type facts and decisions, read its journal
```
)MD";

// kModule with its error codes written in, from the protocol's generated ones.
std::string module_with_codes() {
  std::string text(kModule);
  const std::pair<std::string_view, proto::ErrorCode> codes[] = {
      {"@PARSE@", proto::ErrorCode::parse},
      {"@INVALID_REQUEST@", proto::ErrorCode::invalid_request},
      {"@METHOD_NOT_FOUND@", proto::ErrorCode::method_not_found}};
  for (const auto& [placeholder, code] : codes)
    if (const auto at = text.find(placeholder); at != std::string::npos)
      text.replace(at, placeholder.size(), std::to_string(static_cast<int>(code)));
  return text;
}

}  // namespace

std::vector<PlannedFile> plan_js(const Identity& who) {
  return {{"escouade-plugin.json", fill(kManifest, who, true)},
          {"plugin.mjs", fill(module_with_codes(), who, false)},
          {"README.md", fill(kReadme, who, false)}};
}

Result<Scaffolded> scaffold_js(const Request& request) {
  return scaffold_with(request, plan_js);
}

}  // namespace escouade::scaffold
