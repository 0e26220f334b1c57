#pragma once

// How the answers of several plugins to one permission request make one decision.
//
// The rule (docs/decisions.md): a refusal wins over everything; otherwise any plugin that asks,
// answers too late or fails leaves it to the user (ask); the request is allowed only when every
// plugin that took part allowed it. No plugin taking part: ask, as without plugins.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/gen/types.hpp"

namespace escouade::policy {

// One plugin's part in a decision.
struct Vote {
  enum class Kind { allow, deny, ask, timeout, error };
  std::string id;
  Kind kind = Kind::error;
  std::optional<std::string> message;  // the plugin's own, with its decision
  std::string reason;                  // why `error`, in English
};

std::string_view to_string(Vote::Kind k) noexcept;

struct Verdict {
  proto::DecisionDecision decision = proto::DecisionDecision::ask;
  // With a refusal: the message of the first plugin (in load order) that refused with one.
  std::optional<std::string> message;
  std::vector<Vote> by;  // in load order
};

// A plugin's answer as its part: allow, deny or ask.
Vote::Kind vote_kind(proto::DecisionDecision d) noexcept;

// `votes` in load order.
Verdict combine(std::vector<Vote> votes);

}  // namespace escouade::policy
