// The notifier: when a ticket reaches the column "done", it prepares a message for the
// project's channel (the setting `channel`, "#dev" by default, a project's .escouade.yml over
// it) with the token kept in the keychain (secrets/get "token"). It posts nothing: it writes
// what it would post to its journal, and never the token.

#include <string>

#include "escouade/plugin.hpp"

namespace {

std::string text_of(const boost::json::object& o, std::string_view key) {
  if (const auto* v = o.if_contains(key); v && v->is_string()) return std::string(v->get_string());
  return {};
}

}  // namespace

int main() {
  escouade::Plugin plugin{"dev.example.notifier"};

  plugin.on_fact([](const escouade::Fact& f, escouade::Context& c) {
    if (f.name != escouade::FactName::ticket_column || text_of(f.data, "to") != "done") return;
    const std::string project = f.project ? f.project->id : "";

    std::string channel = "#dev";
    auto settings = project.empty() ? c.settings() : c.settings(project);
    if (settings) {
      const std::string set = text_of(*settings, "channel");
      if (!set.empty()) channel = set;
    } else {
      c.log(escouade::Level::warn, "settings: " + settings.error().message);
    }

    auto token = c.secret("token");
    if (!token) {
      c.log(escouade::Level::error, "no message to " + channel + ": " + token.error().message);
      return;
    }
    if (!*token || (*token)->empty()) {
      c.log(escouade::Level::warn,
            "no message to " + channel +
                ": no token is kept (set the secret \"token\" of this plugin)");
      return;
    }

    std::string what = f.ticket ? f.ticket->key + " \"" + f.ticket->title + "\"" : "a ticket";
    const std::string where = f.project ? " in " + f.project->name : "";
    const std::string message = what + " is done" + where;
    // The request a real notifier would send; the token goes in a header, never in a log line.
    c.log(escouade::Level::info, "would post to " + channel + ": " + message +
                                     " (authorized with the token, " +
                                     std::to_string((*token)->size()) + " characters)");
  });

  return plugin.run();
}
