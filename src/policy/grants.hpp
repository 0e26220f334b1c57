#pragma once

// What one plugin's manifest grants it, made once when the manifest is loaded (a new manifest, a
// new Grants) and asked by the host and by each service instead of the manifest. Deny by
// default: a Grants made from nothing grants nothing, and what a manifest does not name is
// refused. Each verdict is one of this folder's rules (audience.hpp, secret_keys.hpp); the
// families to come (the egress policy of net/* and ws/*, the roots of fs/*, the programs of
// proc/*) add theirs here, each built from its permission once.
//
// Immutable once made: shared by the host and the handlers of the plugin's sessions, on any
// thread.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/manifest.hpp"
#include "policy/audience.hpp"

namespace escouade::policy {

class Grants {
 public:
  // Grants nothing.
  Grants() = default;
  explicit Grants(const manifest::Manifest& m);

  // Whether a fact reaches the plugin and whether it starts it (audience.hpp).
  FactAudience fact_audience(OnFor on, std::string_view fact_name,
                             bool fact_names_project) const noexcept;
  // Whether a permission request of a project is asked of it (audience.hpp).
  bool asked_to_decide(bool on_for_request_project) const noexcept;
  // secrets/get of `key`: nullopt when permissions.secrets grant it, else why not, as a
  // sentence (secret_keys.hpp).
  std::optional<std::string> secret_refusal(std::string_view key) const;

 private:
  std::vector<manifest::EventSelector> events_;      // permissions.events: the facts it hears
  std::vector<manifest::EventSelector> activation_;  // the facts that start it
  bool decide_ = false;
  std::vector<std::string> secrets_;
};

}  // namespace escouade::policy
