#include "policy/grants.hpp"

#include "policy/secret_keys.hpp"

namespace escouade::policy {

Grants::Grants(const manifest::Manifest& m)
    : events_(m.permissions.events),
      activation_(m.activation),
      decide_(m.permissions.decide),
      secrets_(m.permissions.secrets) {}

FactAudience Grants::fact_audience(OnFor on, std::string_view fact_name,
                                   bool fact_names_project) const noexcept {
  return policy::fact_audience(events_, activation_, on, fact_name, fact_names_project);
}

bool Grants::asked_to_decide(bool on_for_request_project) const noexcept {
  return decide_ && on_for_request_project;
}

std::optional<std::string> Grants::secret_refusal(std::string_view key) const {
  return secret_key_refusal(secrets_, key);
}

}  // namespace escouade::policy
