#pragma once

// net/fetch, net/stream, net/chunk, net/end, net/credit and net/cancel (spec: "The network,
// through Escouade"; the schema's net/* methods), served to sandboxed plugins only: a plugin run
// as a command has its own network and is answered methodNotFound. Every URL is judged by
// policy/egress against the plugin's grant of now (its permissions.network, and what the app
// said {account} and local:shared mean for it); src/net judges every address and connects.
// Refusals answer -32003, failures on the way -32004, and each goes to the plugin's journal.
// What a run opened (its fetches in flight, its streams, the connections it keeps alive: a pool
// of its own, never shared with another plugin or run) ends with the run.

#include <memory>

#include "protocol/limits.hpp"
#include "rpc/session.hpp"
#include "services/context.hpp"
#include "services/run_scope.hpp"

namespace escouade::services {

// The spec's numbers: 8 streams at once, 256 KiB handed to the plugin and not credited back,
// 120 s without a byte ends a stream not declared sse.
using proto::kStreamsAtOnce;
inline constexpr std::uint64_t kStreamWindow = 256 * 1024;
inline constexpr std::chrono::milliseconds kStreamIdle{120'000};

// Writes to `journal` why a plugin's `method` got no result ("net/fetch refused: ...",
// "ws/open failed: ...", "net/fetch: params..."); the caller answers the error.
void journal_error(Journal& journal, std::string_view method, const Error& e);
// The failure of net/* and ws/* when the host has no network to give, with its reason.
Error no_network(const NetContext& ctx);

// Binds net/* to `session`; what it opens goes to `run`. Call on the host's thread, for a
// sandboxed plugin's session only.
void serve_net(rpc::Session& session, RunScope& run, const NetContext& ctx,
               std::shared_ptr<ServedPlugin> plugin);

}  // namespace escouade::services
