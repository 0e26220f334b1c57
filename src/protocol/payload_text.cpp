#include "protocol/payload_text.hpp"

#include <array>
#include <span>
#include <string>

#include "protocol/decode.hpp"
#include "protocol/json_text.hpp"
#include "protocol/json_write.hpp"

namespace escouade::proto {

std::optional<std::string_view> params_member_text(std::string_view line, std::string_view method,
                                                   std::string_view member) {
  std::array<MemberText, 8> top, inner;
  // Checked as the decoder would check it (grammar, depth, UTF-8, numbers) in the pass that
  // finds the members.
  const auto n = checked_object_members(line, DecodeOptions{}.max_depth, top, "params", inner);
  if (!n || !n->inner) return std::nullopt;
  const std::span<const MemberText> members(top.data(), n->outer);
  std::string quoted;
  write_json(quoted, method);
  if (proto::member(members, "method") != quoted ||
      proto::member(members, "jsonrpc") != R"("2.0")" || !proto::member(members, "id") ||
      !proto::member(members, "params")) {
    return std::nullopt;
  }
  const std::span<const MemberText> fields(inner.data(), *n->inner);
  if (has_escaped_key(members) || has_escaped_key(fields)) return std::nullopt;
  const auto payload = proto::member(fields, member);
  if (!payload || payload->empty() || (payload->front() != '{' && payload->front() != '[') ||
      payload->find('\r') != std::string_view::npos) {
    return std::nullopt;
  }
  return payload;
}

}  // namespace escouade::proto
