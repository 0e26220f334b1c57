#include "policy/audience.hpp"

#include <algorithm>

namespace escouade::policy {

namespace {

bool names(const std::vector<manifest::EventSelector>& selectors, std::string_view fact) {
  return std::any_of(selectors.begin(), selectors.end(),
                     [&](const auto& s) { return s.matches(fact); });
}

}  // namespace

FactAudience fact_audience(const std::vector<manifest::EventSelector>& events,
                           const std::vector<manifest::EventSelector>& activation, OnFor on,
                           std::string_view fact_name, bool fact_names_project) noexcept {
  if (!on.anywhere) return {};
  if (fact_names_project && !on.fact_project) return {};  // a project it is not on for
  return FactAudience{names(events, fact_name), names(activation, fact_name)};
}

bool asked_to_decide(const manifest::Manifest& m, bool on_for_request_project) noexcept {
  return m.permissions.decide && on_for_request_project;
}

}  // namespace escouade::policy
