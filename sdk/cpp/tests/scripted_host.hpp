#pragma once

// An in-memory Escouade for the SDK's tests: the lines it will send, the lines the plugin
// wrote, and a hook that sees each line as it is written (to answer a call, or to send a
// request in the middle of one). No threads, no pipes.

#include <boost/json.hpp>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "escouade/transport.hpp"

namespace escouade::testing {

class ScriptedHost final : public Transport {
 public:
  // Lines the plugin reads, in order; when they run out, its input ends.
  std::deque<std::string> input;
  // Everything the plugin wrote, one entry a line.
  std::vector<std::string> output;
  // Sees each line the plugin writes, already parsed, after it joined `output`.
  std::function<void(ScriptedHost&, const boost::json::value&)> on_write;
  bool flushed = false;

  void send(const boost::json::value& v) { input.push_back(boost::json::serialize(v)); }

  bool read_line(std::string& line) override {
    if (input.empty()) return false;
    line = std::move(input.front());
    input.pop_front();
    return true;
  }
  bool write_line(std::string_view line) override {
    output.emplace_back(line);
    if (on_write) on_write(*this, boost::json::parse(line));
    return true;
  }
  void flush() override { flushed = true; }

  // The output, each line parsed.
  std::vector<boost::json::value> parsed() const {
    std::vector<boost::json::value> out;
    for (const auto& l : output)
      out.push_back(boost::json::parse(l));
    return out;
  }
};

inline boost::json::value request(boost::json::value id, std::string_view method,
                                  boost::json::value params) {
  return boost::json::object{
      {"jsonrpc", "2.0"}, {"id", std::move(id)}, {"method", method}, {"params", std::move(params)}};
}

inline boost::json::value notification(std::string_view method, boost::json::value params) {
  return boost::json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

inline boost::json::value answer(const boost::json::value& id, boost::json::value result) {
  return boost::json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

inline boost::json::value initialize(std::int64_t id = 1,
                                     std::string_view plugin = "dev.test.sdk") {
  return request(
      id, "initialize",
      boost::json::object{{"protocolVersion", 1},
                          {"escouade", {{"version", "2.1.1"}}},
                          {"plugin", {{"id", plugin}, {"version", "1.0.0"}}},
                          {"lang", "en"},
                          {"capabilities", {{"batch", true}, {"secrets", true}, {"log", true}}}});
}

inline boost::json::value project() {
  return boost::json::object{{"id", "p1"}, {"name", "Project One"}, {"private", false}};
}

inline boost::json::value decide_params(std::string_view command) {
  return boost::json::object{
      {"request",
       {{"id", "r-1"}, {"kind", "command"}, {"tool", "Bash"}, {"input", {{"command", command}}}}},
      {"project", project()}};
}

inline boost::json::value fact(std::string_view name, std::int64_t seq) {
  return boost::json::object{{"name", name},         {"version", 1},
                             {"seq", seq},           {"at", "2026-11-29T10:00:00Z"},
                             {"project", project()}, {"data", {{"status", "working"}}}};
}

}  // namespace escouade::testing
