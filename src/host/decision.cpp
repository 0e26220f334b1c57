#include "host/decision.hpp"

#include <algorithm>

namespace escouade::host {

namespace json = boost::json;

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

json::object to_json(const Verdict& v) {
  json::object out;
  out["decision"] = proto::to_string(v.decision);
  if (v.message) out["message"] = *v.message;
  json::array by;
  for (const auto& x : v.by) {
    json::object o;
    o["id"] = x.id;
    o["decision"] = to_string(x.kind);
    if (x.message) o["message"] = *x.message;
    if (!x.reason.empty()) o["reason"] = x.reason;
    by.push_back(std::move(o));
  }
  out["by"] = std::move(by);
  return out;
}

}  // namespace escouade::host
