#pragma once

// Who a fact reaches (spec: "events/fact: a fact of permissions.events, from a project where the
// plugin is on"; "A private project: nothing of it goes to a plugin that is not on for it").
//
// A plugin that is on nowhere gets nothing. A fact about a project reaches only the plugins on
// for that project; a fact about no project, those on anywhere. Of those, a plugin whose
// permissions.events names the fact hears it (an events/fact notification), and one whose
// activation names it is started by it, whether it hears it or not: an activation alone gives
// no fact.
//
// A project's `private` asks nothing more here: its facts already reach only the plugins on for
// it, as every project's do. It is kept for the fence of fs/* ("Projet privé") and the dir of
// proc/spawn, the services that give a plugin a project's files and programs.

#include <string_view>
#include <vector>

#include "manifest/manifest.hpp"

namespace escouade::policy {

// Where the plugin is on, as far as one fact is concerned: the host's facts, not a verdict.
struct OnFor {
  bool anywhere = false;      // on for at least one project
  bool fact_project = false;  // on for the project the fact names (false when it names none)
};

struct FactAudience {
  bool hears = false;      // it gets the fact
  bool activates = false;  // the fact starts it
};

// `fact_names_project`: the fact has a project.id. `events`: its permissions.events;
// `activation`: its activation's facts.
FactAudience fact_audience(const std::vector<manifest::EventSelector>& events,
                           const std::vector<manifest::EventSelector>& activation, OnFor on,
                           std::string_view fact_name, bool fact_names_project) noexcept;
// The same, of a manifest.
inline FactAudience fact_audience(const manifest::Manifest& m, OnFor on, std::string_view fact_name,
                                  bool fact_names_project) noexcept {
  return fact_audience(m.permissions.events, m.activation, on, fact_name, fact_names_project);
}

// Whether a permission request of a project is asked of the plugin: it declares
// permissions.decide and is on for that project (a private project's requests reach no other).
bool asked_to_decide(const manifest::Manifest& m, bool on_for_request_project) noexcept;

}  // namespace escouade::policy
