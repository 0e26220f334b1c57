#include "protocol/decision_text.hpp"

#include <array>
#include <span>

#include "protocol/json_text.hpp"

namespace escouade::proto {

std::optional<Decision> decision_of_text(std::string_view text) {
  std::array<MemberText, 8> found;
  const auto n = object_members(text, found);
  if (!n) return std::nullopt;
  const std::span<const MemberText> members(found.data(), *n);
  if (has_escaped_key(members)) return std::nullopt;
  // A plain string's text, between its quotes; nullopt for anything else.
  auto plain_string = [](std::string_view value) -> std::optional<std::string_view> {
    if (value.size() < 2 || value.front() != '"' || value.find('\\') != std::string_view::npos) {
      return std::nullopt;
    }
    return value.substr(1, value.size() - 2);
  };
  const auto word = member(members, "decision");
  const auto decision = word ? plain_string(*word) : std::nullopt;
  const auto kind = decision ? decision_decision_from_string(*decision) : std::nullopt;
  if (!kind) return std::nullopt;
  Decision d;
  d.decision = *kind;
  int messages = 0;
  for (const MemberText& m : members) {
    if (m.key != "message") continue;
    const auto text_of = plain_string(m.value);
    if (!text_of || ++messages > 1) return std::nullopt;
    d.message.emplace(*text_of);
  }
  return d;
}

}  // namespace escouade::proto
