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

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "sandbox/spidermonkey/wasm_guest.hpp"

namespace escouade::sandbox::spidermonkey {

namespace {

namespace json = boost::json;

constexpr std::int32_t kResult = 0;
constexpr std::int32_t kErrorAnswer = 1;
constexpr std::int32_t kTooSmall = 2;
constexpr std::int32_t kBadArguments = 3;
constexpr std::int32_t kNoAnswer = 4;

constexpr std::string_view kIdPrefix = "escouade.call/";

bool returns(const JS::CallArgs& args, std::int32_t code) {
  args.rval().setInt32(code);
  return true;
}

// Whether `line` answers request `id`.
bool answers(std::string_view line, std::string_view id, json::value& out) {
  // A cheap look first: most lines meanwhile are other messages.
  if (line.find(id) == std::string_view::npos) return false;
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec || !v.is_object()) return false;
  const json::object& o = v.as_object();
  const json::value* got = o.if_contains("id");
  if (!got || !got->is_string() || got->as_string() != id) return false;
  if (!o.contains("result") && !o.contains("error")) return false;
  out = std::move(v);
  return true;
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
  const std::string id = std::string(kIdPrefix) + std::to_string(++g.calls);
  json::object request{{"jsonrpc", "2.0"}, {"id", id}};
  request["method"] = json::string(reinterpret_cast<const char*>(m.at(method_at)), method_len);
  if (params_len > 0) {
    boost::system::error_code ec;
    json::value params = json::parse(
        std::string_view(reinterpret_cast<const char*>(m.at(params_at)), params_len), ec);
    if (ec) return returns(args, kBadArguments);
    request["params"] = std::move(params);
  }
  std::string line = json::serialize(request);
  // A line longer than the protocol allows would be dropped on its way: nothing would answer.
  if (line.size() >= Channel::kMaxLineBytes) return returns(args, kBadArguments);
  {
    // A method that is not UTF-8 would make a line Escouade cannot read: read it back first.
    boost::system::error_code ec;
    (void)json::parse(line, ec);
    if (ec) return returns(args, kBadArguments);
  }
  line += '\n';
  g.kept_answer.reset();  // a new call forgets an answer never taken
  g.channel.write_out(line);

  // It waits for its answer alone: the lines that come meanwhile stay in its input, in order
  // and under the input's bound, for fd_read to give after.
  json::value answer;
  g.turn_pauses();
  std::optional<std::string> got =
      g.channel.next_input_where([&](std::string_view l) { return answers(l, id, answer); });
  g.turn_resumes();
  if (g.channel.stop_cause() != StopCause::none) return false;  // the guest unwinds
  if (!got) return returns(args, kNoAnswer);
  const json::object& o = answer.as_object();
  if (const json::value* result = o.if_contains("result")) {
    g.kept_answer = json::serialize(*result);
    g.kept_code = kResult;
  } else {
    g.kept_answer = json::serialize(o.at("error"));
    g.kept_code = kErrorAnswer;
  }
  return returns(args, give(g, answer_at, answer_cap, len_at));
}

}  // namespace escouade::sandbox::spidermonkey
