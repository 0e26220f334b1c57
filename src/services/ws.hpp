#pragma once

// ws/open, ws/send, ws/close, ws/message and ws/closed (the schema's ws/* methods), served to
// sandboxed plugins only: wss to the hosts of net/fetch, judged the same way (policy/egress,
// then every address by src/net), 4 sockets at once, 1 MiB a message. A socket's handshake
// headers never reach the journal. What a run opened closes with it.

#include <memory>

#include "rpc/session.hpp"
#include "services/context.hpp"
#include "services/run_scope.hpp"

namespace escouade::services {

inline constexpr std::size_t kSocketsAtOnce = 4;

// Binds ws/* to `session`; its sockets go to `run`. Call on the host's thread, for a sandboxed
// plugin's session only.
void serve_ws(rpc::Session& session, RunScope& run, const NetContext& ctx,
              std::shared_ptr<ServedPlugin> plugin);

}  // namespace escouade::services
