// escouade.call: a synchronous call from a run.wasm plugin to Escouade (docs/sandbox.md, "The
// escouade.call import"). The request goes out on the protocol like any line the plugin
// writes, with an id of the form "escouade.call/<n>" that the plugin's own ids must not take;
// the instance's thread then waits, outside any turn, for the line that answers it. Lines that
// come meanwhile stay in the instance's input, in order, for fd_read.
//
//   call(method, method_len, params, params_len, answer, answer_cap, answer_len) -> i32
//
// returns 0 (the result's JSON written at `answer`, its length at `answer_len`), 1 (Escouade
// answered an error: the error object's JSON written the same way), 2 (answer_cap too small:
// the size needed written at `answer_len`, the answer kept: a call with method_len 0 gives it
// without sending anything), 3 (arguments that do not hold: a pointer or length outside the
// memory, params that are not JSON, a request longer than a protocol line, no method and no
// kept answer), 4 (its input ended before the answer came). When the instance must stop, the guest
// unwinds.
//
// Nothing here builds a JSON value: a document's nodes take about 16 times its text (an array of
// zeros), which the instance's 64 MB would not hold for a few MB of params (issue 26). The params
// and the answers are checked as text (protocol/json_text.hpp) and copied as they are; the sizes
// are checked before anything is read.

#include <array>

#include "base/utf8.hpp"
#include "protocol/json_text.hpp"
#include "protocol/json_write.hpp"
#include "sandbox/spidermonkey/wasm_guest.hpp"

namespace escouade::sandbox::spidermonkey {

namespace {

constexpr std::int32_t kResult = 0;
constexpr std::int32_t kErrorAnswer = 1;
constexpr std::int32_t kTooSmall = 2;
constexpr std::int32_t kBadArguments = 3;
constexpr std::int32_t kNoAnswer = 4;

constexpr std::string_view kIdPrefix = "escouade.call/";
// The nesting a request's params and an answer may have (the codec's own bound).
constexpr std::size_t kMaxDepth = 64;
// The members an answer may have: jsonrpc, id, and result or error (a few more are ignored).
constexpr std::size_t kAnswerMembers = 8;

bool returns(const JS::CallArgs& args, std::int32_t code) {
  args.rval().setInt32(code);
  return true;
}

// Whether `line` answers request `id` (its JSON string, quotes included): the answer's result,
// or its error object, as the text it was written with.
struct Answer {
  std::string text;
  std::int32_t code = 0;
};
bool answers(std::string_view line, std::string_view quoted_id, Answer& out) {
  // A cheap look first: most lines meanwhile are other messages.
  if (line.find(quoted_id) == std::string_view::npos) return false;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
    line.remove_suffix(1);
  std::array<proto::MemberText, kAnswerMembers> members;
  const auto count = proto::checked_object_members(line, kMaxDepth, members);
  if (!count) return false;
  const std::span<const proto::MemberText> found(members.data(), *count);
  if (proto::has_escaped_key(found)) return false;
  const auto id = proto::member(found, "id");
  if (!id || *id != quoted_id) return false;
  if (const auto result = proto::member(found, "result")) {
    out = Answer{std::string(*result), 0};
    return true;
  }
  if (const auto error = proto::member(found, "error")) {
    out = Answer{std::string(*error), 1};
    return true;
  }
  return false;
}

// Writes the kept answer into the guest's buffer, or says how much room it needs.
std::int32_t give(WasmGuest& g, std::uint32_t at, std::uint32_t cap, std::uint32_t len_at) {
  const GuestMemory m = g.memory_now();
  if (!m.fits(len_at, 4) || !m.fits(at, cap)) return kBadArguments;
  const std::string& a = *g.kept_answer;
  m.put(len_at, a.size(), 4);
  if (a.size() > cap) return kTooSmall;
  std::memcpy(m.at(at), a.data(), a.size());
  const std::int32_t code = g.kept_code;
  g.kept_answer.reset();
  return code;
}

}  // namespace

bool native_escouade_call(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::uint32_t a[7] = {};
  for (unsigned i = 0; i < 7; ++i)
    if (!arg_u32(cx, args, i, &a[i])) return false;
  const auto method_at = a[0], method_len = a[1], params_at = a[2], params_len = a[3];
  const auto answer_at = a[4], answer_cap = a[5], len_at = a[6];
  WasmGuest& g = guest_of(cx);

  if (method_len == 0) {
    if (!g.kept_answer) return returns(args, kBadArguments);
    return returns(args, give(g, answer_at, answer_cap, len_at));
  }
  GuestMemory m = g.memory_now();
  if (!m.fits(method_at, method_len) || !m.fits(params_at, params_len) ||
      !m.fits(answer_at, answer_cap) || !m.fits(len_at, 4))
    return returns(args, kBadArguments);
  // A line longer than the protocol allows would be dropped on its way: nothing would answer.
  // Checked first, before anything of it is read or copied.
  constexpr std::size_t kEnvelopeBytes = 128;
  if (std::uint64_t{method_len} + params_len + kEnvelopeBytes >= runtime::kMaxPluginLineBytes)
    return returns(args, kBadArguments);
  const std::string_view method(reinterpret_cast<const char*>(m.at(method_at)), method_len);
  const std::string_view params(reinterpret_cast<const char*>(m.at(params_at)), params_len);
  // A method that is not UTF-8, or params that are not one JSON value, would make a line
  // Escouade cannot read. Checked as text: no value is built.
  if (!is_valid_utf8(method) || (params_len > 0 && !proto::is_json_text(params, kMaxDepth)))
    return returns(args, kBadArguments);
  const std::string id = std::string(kIdPrefix) + std::to_string(++g.calls);
  std::string line = R"({"jsonrpc":"2.0","id":")" + id + R"(","method":)";
  proto::write_json(line, method);
  if (params_len > 0) {
    line += R"(,"params":)";
    line += params;
  }
  line += "}\n";
  g.kept_answer.reset();  // a new call forgets an answer never taken
  g.channel.write_out(line);

  // It waits for its answer alone: the lines that come meanwhile stay in its input, in order
  // and under the input's bound, for fd_read to give after.
  const std::string quoted_id = "\"" + id + "\"";
  Answer answer;
  g.turn_pauses();
  std::optional<std::string> got =
      g.channel.next_input_where([&](std::string_view l) { return answers(l, quoted_id, answer); });
  g.turn_resumes();
  if (g.channel.stop_cause() != StopCause::none) return false;  // the guest unwinds
  if (!got) return returns(args, kNoAnswer);
  g.kept_answer = std::move(answer.text);
  g.kept_code = answer.code == 0 ? kResult : kErrorAnswer;
  return returns(args, give(g, answer_at, answer_cap, len_at));
}

}  // namespace escouade::sandbox::spidermonkey
