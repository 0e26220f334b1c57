#pragma once

// Binds what the host serves a plugin to one of its rpc sessions, by a table of the families of
// methods and the kinds of run each is served to (bind.cpp): secrets/get, settings/get,
// files/read and the log notification to every plugin; timer/*, net/*, ws/*, fs/* and proc/*
// to a sandboxed plugin (run.js, run.wasm) only. Any other method of the plugin's answers -32601.

#include <memory>
#include <string>
#include <vector>

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

// The families of methods a plugin of `kind` is served ("secrets", "timer"...), in the order
// they are bound: none for a plugin with nothing to run.
std::vector<std::string> service_families(manifest::RunKind kind);

}  // namespace escouade::services
