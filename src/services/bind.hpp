#pragma once

// Binds what the host serves a plugin to one of its rpc sessions: secrets/get, settings/get,
// files/read and the log notification; timer/set and timer/cancel for a sandboxed plugin (run.js,
// run.wasm) only. Any other method of the plugin's answers -32601.

#include <memory>

#include "rpc/session.hpp"
#include "services/context.hpp"
#include "services/run_scope.hpp"

namespace escouade::services {

// Call on the host's thread, once per session (a new program gets a new session and a new
// `run`). The handlers hold `plugin` for as long as the session or work of theirs in flight
// lives. What a service opens for the plugin goes to `run` and ends with it: the services of
// sandboxed plugins (timer/*, net/*, ws/*, proc/*) do: timer/set does today.
void bind_services(rpc::Session& session, RunScope& run, const ServiceContext& ctx,
                   std::shared_ptr<ServedPlugin> plugin);

}  // namespace escouade::services
