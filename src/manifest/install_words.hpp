#pragma once

// What the install window says of a plugin (spec: "What a plugin in WASM cannot do"): how it runs,
// then each capability it asks for, in words a person reads before saying yes. `escouade-plugin
// check` prints them and host/load answers them, so that an author sees what a user will.

#include <string>
#include <vector>

#include "manifest/manifest.hpp"

namespace escouade::manifest {

// "Runs inside Escouade, isolated" (js, wasm), "Runs a program on your computer, with your
// rights" (command), "Runs nothing: it only declares what it adds" (declarative).
std::string runs_as(const Manifest& m);

// Each capability its permissions ask for, one sentence each, in the manifest's order:
// "Sees the facts agent.status, ticket.*", "Answers the agents' permission requests", "Reads its
// secrets token, account:*", "Connects to slack.com and its subdomains", "Reads and writes the
// files of the agent's repository", "Runs the program npm test *"... Empty: it asks for nothing.
std::vector<std::string> capabilities_asked(const Manifest& m);

}  // namespace escouade::manifest
