// The fact journal: a summary per project of the facts it hears, written to its journal every
// `every` facts of a project (a setting, 5 by default) and for every project at shutdown.

#include <map>
#include <string>

#include "escouade/plugin.hpp"
#include "summary.hpp"

int main() {
  escouade::Plugin plugin{"dev.example.fact-journal"};
  std::map<std::string, fact_journal::Summary> projects;  // by project id
  std::map<std::string, std::string> names;               // project id -> its name
  std::int64_t every = 5;

  const auto write = [&](escouade::Context& c, const std::string& id) {
    c.log(escouade::Level::info,
          "summary of " + names[id] + " (" + id + "): " + projects[id].line());
  };

  plugin.on_start([&](escouade::Context& c) {
    auto settings = c.settings();
    if (!settings) {
      c.log(escouade::Level::warn, "settings: " + settings.error().message + "; every 5 facts");
      return;
    }
    if (const auto* v = settings->if_contains("every"); v && v->is_number()) {
      boost::json::error_code ec;
      const auto n = v->to_number<std::int64_t>(ec);
      if (!ec && n > 0) every = n;
    }
  });

  plugin.on_fact([&](const escouade::Fact& f, escouade::Context& c) {
    const std::string id = f.project ? f.project->id : "";
    if (f.project) names[id] = f.project->name;
    if (!f.project) names[id] = "no project";
    auto& summary = projects[id];
    summary.add(f);
    if (summary.total() % every == 0) write(c, id);
  });

  plugin.on_shutdown([&](escouade::Context& c) {
    for (const auto& [id, summary] : projects)
      write(c, id);
  });

  return plugin.run();
}
