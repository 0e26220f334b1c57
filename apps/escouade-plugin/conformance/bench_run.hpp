#pragma once

// One run of the checks against a started PluginLink (bench.cpp sets up the world around it).
// The checks are members, in checks_*.cpp; run() calls them in an order where an early fatal
// failure (no start, no handshake) marks those that depend on it as skipped, with the reason.
//
// Thread: the link's executor; run() is its only coroutine.

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/bench.hpp"
#include "conformance/plugin_link.hpp"
#include "manifest/manifest.hpp"

namespace escouade::conformance {

class BenchRun {
 public:
  // `run_token` marks the plugin's processes (leftovers.hpp). All referenced objects outlive it.
  BenchRun(PluginLink& link, const manifest::Manifest& manifest, const BenchOptions& options,
           std::string run_token);

  boost::asio::awaitable<void> run();

  // A verdict given before the run (the manifest check).
  void set(std::string_view name, Verdict verdict, std::string reason,
           std::optional<std::string> message = std::nullopt);
  // Every check without a verdict yet is skipped with `reason`.
  void skip_rest(const std::string& reason);
  // The verdicts in kCheckNames order.
  std::vector<CheckResult> results() const;

 private:
  using ms = std::chrono::milliseconds;

  bool has(std::string_view name) const { return results_.count(std::string(name)) > 0; }
  // The reason for a check that cannot run because the plugin exited before it, or nullopt.
  std::optional<std::string> gone();
  // Fails `name` because the plugin exited during it, and remembers it for the later ones.
  void died_in(std::string_view name, const std::string& doing);
  // A sandboxed instance stopped in a turn past its budget (ProgramEnd::turn) is the fault of
  // the check whose message the turn handled, whichever check saw the end: that check fails
  // with the stop's sentence and the message, and the later ones are skipped because of it.
  // Whether it was so.
  bool blame_the_turn();

  boost::asio::awaitable<bool> handshake();
  boost::asio::awaitable<void> check_ids_and_unknown_method();
  boost::asio::awaitable<void> check_notification();
  boost::asio::awaitable<void> check_decide();
  boost::asio::awaitable<void> check_batch();
  boost::asio::awaitable<void> check_facts();
  boost::asio::awaitable<void> check_malformed();
  boost::asio::awaitable<void> check_burst();
  boost::asio::awaitable<void> check_calls();
  boost::asio::awaitable<void> check_shutdown();
  void check_stdout();
  void check_answers();

  // A delay of the spec, times options_.time_scale; and how the checks' sentences name it ("500
  // ms", or "5000 ms (500 ms x 10, --time-scale)").
  ms delay(ms spec) const { return spec * options_.time_scale; }
  std::string delay_text(ms spec) const;

  // Sends a request for an unknown method with a fresh string id and waits (5 s at most) for an
  // answer carrying that id in any form: proof the plugin read everything sent before it.
  boost::asio::awaitable<bool> barrier();
  // A raw request line for `method` with `id`.
  static std::string request_line(const boost::json::value& id, std::string_view method,
                                  const boost::json::value& params);
  // The answers whose id reads as `id` (exactly, or echoed with another type).
  const SeenAnswer* answer_like(const boost::json::value& id) const;
  // The last answer to a call of `method` from line `since` on.
  const SeenAnswer* last_answer(std::string_view method, std::size_t since) const;

  boost::json::object fact(std::string_view name);
  static boost::json::object decide_params(std::string_view kind, std::string_view tool,
                                           boost::json::object input, int n);
  // The facts of the protocol that permissions.events names.
  std::vector<std::string> fact_names() const;

  PluginLink& link_;
  const manifest::Manifest& manifest_;
  const BenchOptions& options_;
  std::string run_token_;
  std::map<std::string, CheckResult, std::less<>> results_;
  bool batch_ = false;  // the plugin announced capabilities.batch
  std::optional<std::string> died_;
  std::int64_t seq_ = 0;
  int barriers_ = 0;
  // Probes of id echo: (id sent, what was wrong), for the answers check.
  std::vector<std::pair<std::string, std::string>> id_problems_;
};

}  // namespace escouade::conformance
