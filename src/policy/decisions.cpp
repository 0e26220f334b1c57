#include "policy/decisions.hpp"

#include <algorithm>
#include <array>
#include <span>

#include "protocol/json_text.hpp"

namespace escouade::policy {

std::optional<proto::Decision> decision_of_text(std::string_view text) {
  std::array<proto::MemberText, 8> found;
  const auto n = proto::object_members(text, found);
  if (!n) return std::nullopt;
  const std::span<const proto::MemberText> members(found.data(), *n);
  if (proto::has_escaped_key(members)) return std::nullopt;
  // A plain string's text, between its quotes; nullopt for anything else.
  auto plain_string = [](std::string_view value) -> std::optional<std::string_view> {
    if (value.size() < 2 || value.front() != '"' || value.find('\\') != std::string_view::npos) {
      return std::nullopt;
    }
    return value.substr(1, value.size() - 2);
  };
  const auto word = proto::member(members, "decision");
  const auto decision = word ? plain_string(*word) : std::nullopt;
  const auto kind = decision ? proto::decision_decision_from_string(*decision) : std::nullopt;
  if (!kind) return std::nullopt;
  proto::Decision d;
  d.decision = *kind;
  int messages = 0;
  for (const proto::MemberText& m : members) {
    if (m.key != "message") continue;
    const auto text_of = plain_string(m.value);
    if (!text_of || ++messages > 1) return std::nullopt;
    d.message.emplace(*text_of);
  }
  return d;
}

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
