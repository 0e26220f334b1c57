#include "policy/decisions.hpp"

#include <algorithm>

namespace escouade::policy {

std::string_view to_string(Vote::Kind k) noexcept {
  switch (k) {
    case Vote::Kind::allow:
      return "allow";
    case Vote::Kind::deny:
      return "deny";
    case Vote::Kind::ask:
      return "ask";
    case Vote::Kind::timeout:
      return "timeout";
    case Vote::Kind::error:
      return "error";
  }
  return "error";
}

Vote::Kind vote_kind(proto::DecisionDecision d) noexcept {
  switch (d) {
    case proto::DecisionDecision::allow:
      return Vote::Kind::allow;
    case proto::DecisionDecision::deny:
      return Vote::Kind::deny;
    case proto::DecisionDecision::ask:
      break;
  }
  return Vote::Kind::ask;
}

Verdict combine(std::vector<Vote> votes) {
  Verdict v;
  const auto is = [&](Vote::Kind k) {
    return std::any_of(votes.begin(), votes.end(), [k](const Vote& x) { return x.kind == k; });
  };
  if (is(Vote::Kind::deny)) {
    v.decision = proto::DecisionDecision::deny;
    for (const auto& x : votes) {
      if (x.kind == Vote::Kind::deny && x.message && !x.message->empty()) {
        v.message = x.message;
        break;
      }
    }
  } else if (!votes.empty() && std::all_of(votes.begin(), votes.end(), [](const Vote& x) {
               return x.kind == Vote::Kind::allow;
             })) {
    v.decision = proto::DecisionDecision::allow;
  } else {
    v.decision = proto::DecisionDecision::ask;
  }
  v.by = std::move(votes);
  return v;
}

}  // namespace escouade::policy
