// @ID@: an Escouade plugin (protocol 1), written with the C++ SDK (docs/authors.md of
// escouade-plugins is its guide).
// Standard output carries the protocol alone: write traces with c.log(...) or on stderr.

#include <string>

#include "escouade/plugin.hpp"

int main() {
  escouade::Plugin plugin{"@ID@"};

  // Escouade asks before an agent runs a command, edits a file or fetches a URL, and waits
  // 500 ms for the answer: allow(), deny("why") or ask() (the user decides, as without a
  // plugin). This one has no rule yet, so it leaves every request to the user.
  plugin.on_decide([](const escouade::DecideParams& d, escouade::Context&) {
    return escouade::ask("@ID@ has no rule for a request of kind " + d.request.kind + " yet");
  });

  // The facts of permissions.events (agent.status, ticket.*), each into the plugin's journal.
  plugin.on_fact([](const escouade::Fact& f, escouade::Context& c) {
    std::string line = "fact " + std::string(escouade::to_string(f.name));
    if (f.project) line += " in " + f.project->name;
    c.log(escouade::Level::info, line);
  });

  return plugin.run();
}
