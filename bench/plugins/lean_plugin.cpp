// The plugin of bench_host's figures that have a floor (decisions, facts, calls one at a time and
// pipelined, the cold start): it does per message what the floors' children do (bench/floors.cpp)
// and nothing more, so that what a figure adds to its floor is the host's. It reads its input
// with read(2) into one buffer, parses each line with Boost.JSON, answers with one write(2).
//
// It serves initialize, shutdown (answered, then it exits), permissions/decide (deny when the
// command holds "rm -rf", as the fan-out floor's children do; else allow), test/echo (its params
// back), test/facts (the seq of each events/fact heard, in order); another request is answered
// -32601. The fixture plugin (tests/fixtures/fixture_plugin) is the one of the tests: its many
// modes cost a string compare each before any method is served, and it reads through std::cin.

#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../json_lines.hpp"
#include "../pipe_lines.hpp"
#include "protocol/gen/errors.hpp"

namespace json = boost::json;
using bench::answer;
using bench::append_line;

namespace {

std::vector<std::int64_t> g_facts;
bool g_shutdown = false;

json::value failure(json::value& id, std::int64_t code, std::string_view message) {
  json::object o;
  o.reserve(3);
  o.emplace("jsonrpc", "2.0");
  o.emplace("id", std::move(id));
  o.emplace("error", json::object{{"code", code}, {"message", message}});
  return o;
}

// The answer to one message, or null for a notification (and for what is not a message).
json::value serve(json::value& message) {
  json::object* m = message.if_object();
  if (!m) return nullptr;
  const json::value* method_value = m->if_contains("method");
  if (!method_value || !method_value->is_string()) return nullptr;
  const std::string_view method = method_value->get_string();
  json::value* params = m->if_contains("params");
  json::value* id = m->if_contains("id");
  if (!id) {
    if (method == "events/fact" && params && params->is_object()) {
      const json::value* seq = params->as_object().if_contains("seq");
      g_facts.push_back(seq && seq->is_int64() ? seq->get_int64() : -1);
    }
    return nullptr;
  }
  if (method == "permissions/decide") {
    json::error_code ec;
    const json::value* command = message.find_pointer("/params/request/input/command", ec);
    const bool denied =
        command && command->is_string() &&
        std::string_view(command->get_string()).find("rm -rf") != std::string_view::npos;
    return answer(std::move(*id), json::object{{"decision", denied ? "deny" : "allow"}});
  }
  if (method == "test/echo")
    return answer(std::move(*id), params ? std::move(*params) : json::value());
  if (method == "test/facts") {
    json::array seqs(g_facts.begin(), g_facts.end());
    return answer(std::move(*id), std::move(seqs));
  }
  if (method == "initialize") {
    return answer(std::move(*id),
                  json::object{{"protocolVersion", 1}, {"capabilities", {{"batch", true}}}});
  }
  if (method == "shutdown") {
    g_shutdown = true;  // answered, then it exits, as the spec asks
    return answer(std::move(*id), nullptr);
  }
  return failure(*id, static_cast<std::int64_t>(escouade::proto::ErrorCode::method_not_found),
                 "method not found");
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
      json::array answers;
      for (json::value& m : *batch) {
        json::value a = serve(m);
        if (!a.is_null()) answers.push_back(std::move(a));
      }
      if (!answers.empty()) append_line(out, answers);
    } else {
      json::value a = serve(message);
      if (!a.is_null()) append_line(out, a);
    }
    if (!out.empty()) bench::write_all(STDOUT_FILENO, out);
    if (g_shutdown) break;
  }
  return 0;
}
