// The plugin of bench_host's figures that have a floor (decisions, facts, calls one at a time and
// pipelined, the cold start): it does per message what the floors' children do (bench/floors.cpp)
// and nothing more, so that what a figure adds to its floor is the host's. It reads its input
// with read(2) into one buffer, parses each line with Boost.JSON, answers with one write(2),
// its envelope written as text around the result (bench/json_lines.hpp) as the floors' children
// write theirs.
//
// It serves initialize, shutdown (answered, then it exits), permissions/decide (deny when the
// command holds "rm -rf", as the fan-out floor's children do; else allow), test/echo (its params
// back), test/facts (how many events/fact it heard, as the notify floor's child answers: a count,
// not the list, which the host would have to read and parse); another request is answered
// -32601. The fixture plugin (tests/fixtures/fixture_plugin) is the one of the tests: its many
// modes cost a string compare each before any method is served, and it reads through std::cin.

#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "../json_lines.hpp"
#include "../pipe_lines.hpp"
#include "protocol/gen/errors.hpp"

namespace json = boost::json;
using bench::append_answer;

namespace {

std::int64_t g_facts = 0;
bool g_shutdown = false;

// The error answer to `id`, appended.
void append_failure(std::string& out, const json::value& id, std::int64_t code,
                    std::string_view message) {
  out += R"({"jsonrpc":"2.0","id":)";
  bench::append_json(out, id);
  out += R"(,"error":)";
  bench::append_json(out, json::object{{"code", code}, {"message", message}});
  out += '}';
}

// Appends the answer to one message; false for a notification (and for what is not a message),
// which is answered with nothing.
bool serve(json::value& message, std::string& out) {
  json::object* m = message.if_object();
  if (!m) return false;
  const json::value* method_value = m->if_contains("method");
  if (!method_value || !method_value->is_string()) return false;
  const std::string_view method = method_value->get_string();
  json::value* params = m->if_contains("params");
  json::value* id = m->if_contains("id");
  if (!id) {
    if (method == "events/fact") ++g_facts;
    return false;
  }
  if (method == "permissions/decide") {
    json::error_code ec;
    const json::value* command = message.find_pointer("/params/request/input/command", ec);
    const bool denied =
        command && command->is_string() &&
        std::string_view(command->get_string()).find("rm -rf") != std::string_view::npos;
    append_answer(out, *id, json::object{{"decision", denied ? "deny" : "allow"}});
  } else if (method == "test/echo") {
    static const json::value none;
    append_answer(out, *id, params ? *params : none);  // no copy: both are lvalues
  } else if (method == "test/facts") {
    append_answer(out, *id, g_facts);
  } else if (method == "initialize") {
    append_answer(out, *id,
                  json::object{{"protocolVersion", 1}, {"capabilities", {{"batch", true}}}});
  } else if (method == "shutdown") {
    g_shutdown = true;  // answered, then it exits, as the spec asks
    append_answer(out, *id, nullptr);
  } else {
    append_failure(out, *id,
                   static_cast<std::int64_t>(escouade::proto::ErrorCode::method_not_found),
                   "method not found");
  }
  return true;
}

}  // namespace

int main() {
  bench::LineReader reader(STDIN_FILENO);
  std::string_view line;
  std::string out;
  while (reader.next_line(line)) {
    json::error_code ec;
    json::value message = json::parse(line, ec);
    if (ec) continue;
    out.clear();
    if (json::array* batch = message.if_array()) {
      out += '[';
      for (json::value& m : *batch) {
        if (serve(m, out)) out += ',';
      }
      if (out.size() == 1) {
        out.clear();
      } else {
        out.back() = ']';
        out += '\n';
      }
    } else if (serve(message, out)) {
      out += '\n';
    }
    if (!out.empty()) bench::write_all(STDOUT_FILENO, out);
    if (g_shutdown) break;
  }
  return 0;
}
