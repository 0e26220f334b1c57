// The guard: decides permission requests from the rules in its rules.json (see rules.hpp).

#include "escouade/plugin.hpp"
#include "rules.hpp"

int main() {
  escouade::Plugin plugin{"dev.example.guard"};
  std::optional<guard::Rules> rules;

  plugin.on_start([&](escouade::Context& c) {
    auto text = c.file("rules.json");
    if (!text) {
      c.log(escouade::Level::error, "no rules: " + text.error().message);
      return;
    }
    auto parsed = guard::parse_rules(*text);
    if (!parsed) {
      c.log(escouade::Level::error, parsed.error().message);
      return;
    }
    rules = std::move(*parsed);
    c.log(escouade::Level::info, "rules loaded: " + std::to_string(rules->deny.size()) +
                                     " refusals, " + std::to_string(rules->allow_commands.size()) +
                                     " commands allowed");
  });

  plugin.on_decide([&](const escouade::DecideParams& d, escouade::Context&) {
    if (!rules) return escouade::ask("the guard has no rules (see its journal)");
    return guard::decide(*rules, d.request);
  });

  return plugin.run();
}
