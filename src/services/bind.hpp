#pragma once

// Binds what the host serves a plugin to one of its rpc sessions: secrets/get, settings/get,
// files/read and the log notification. Any other method of the plugin's answers -32601.

#include <memory>

#include "rpc/session.hpp"
#include "services/context.hpp"

namespace escouade::services {

// Call on the host's thread, once per session (a new process gets a new session). The handlers
// hold `plugin` for as long as the session or work of theirs in flight lives.
void bind_services(rpc::Session& session, const ServiceContext& ctx,
                   std::shared_ptr<ServedPlugin> plugin);

}  // namespace escouade::services
