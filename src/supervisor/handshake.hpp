#pragma once

// The handshake of protocol 1 as this host speaks it (spec: "The handshake"), in one place: the
// supervisor and the conformance bench build `initialize` and judge its answer with these.

#include <boost/json/value.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/gen/types.hpp"
#include "rpc/session.hpp"

namespace escouade::supervisor {

// The version of Escouade this host stands for, given to plugins in `initialize` and as
// ESCOUADE_VERSION unless the app says otherwise. Sandboxed plugins need 2.2.0 or later.
inline constexpr std::string_view kEscouadeVersion = "2.2.0";

// What the host announces in `initialize`: batches both ways, secrets/get, the log notification,
// what each agent attached given again after a restart, and settings/get, which the schema's
// EscouadeCapabilities does not name and which goes beside them.
proto::EscouadeCapabilities host_capabilities();
inline constexpr std::string_view kSettingsCapability = "settings";

// Who speaks: the plugin as its manifest says, the Escouade it is told about, the interface's
// language.
struct HandshakeParties {
  std::string plugin_id;
  std::string plugin_version;
  std::string escouade_version{kEscouadeVersion};
  std::string lang = "en";
};

// The params of `initialize`, as they go on the wire.
boost::json::value initialize_params(const HandshakeParties& parties);

// How a plugin answered `initialize`.
struct HandshakeVerdict {
  // Set when the plugin may not run, in the spec's words: "it speaks version 2 of the protocol;
  // this Escouade speaks version 1", "it did not answer initialize within 10 s"...
  std::optional<std::string> stop;
  // Set when it may run but its answer breaks the schema (no capabilities object): the host
  // journals it, the bench fails the check.
  std::optional<std::string> fault;
  // Its answer, when it gave one that holds a version (capabilities empty when not an object).
  std::optional<proto::InitializeResult> result;
};

// Judges the outcome of the `initialize` call, made with `delay`. A closed outcome (the program
// ended first) is neither a stop nor a result: the caller reports the end itself.
HandshakeVerdict judge_initialize(const rpc::CallOutcome& outcome, std::chrono::milliseconds delay);

}  // namespace escouade::supervisor
