#pragma once

// One run of the harness: the host it started, the plugins it loaded, what it has printed and
// how many steps failed. setup() loads and switches on the plugins; play() runs the steps of a
// source; finish() shuts the host down. runner.cpp strings them together; steps.cpp runs
// each kind of step.
//
// Thread: the io_context's thread; every member is used there only.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/host_link.hpp"
#include "harness/journal_tail.hpp"
#include "harness/line_source.hpp"
#include "harness/printer.hpp"
#include "harness/runner.hpp"
#include "harness/scenario.hpp"

namespace escouade::harness {

class RunSession {
 public:
  RunSession(boost::asio::io_context& io, const RunOptions& options,
             const std::filesystem::path& data_dir, Printer& printer);

  // Starts the host; false (and printed why) when it cannot start.
  bool start_host(const std::vector<std::string>& args);
  // Loads each folder, switches each plugin on, sets the secrets and settings of the options.
  boost::asio::awaitable<void> setup();
  // Runs each line of `source` until its end, or until the host ends.
  boost::asio::awaitable<void> play(LineSource& source);
  // host/shutdown, then waits for the host to exit; the journals' last lines are shown.
  boost::asio::awaitable<void> finish();

  // Stops after the step under way: the source ends, finish() follows.
  void interrupt(LineSource* source);
  // Once the loop has stopped: the journals are no longer followed, and the host's session is
  // closed and its tree ended if it still runs (HostLink::close).
  void close();

  std::size_t steps() const noexcept { return steps_; }
  std::size_t failed() const noexcept { return failed_; }
  void fail(std::string_view why);

  // Shows the journals' new lines now: before a step's outcome, so that what a plugin wrote
  // while it handled the step comes first.
  void flush_journals();

 private:
  // steps.cpp
  boost::asio::awaitable<void> run_step(const Step& step);
  boost::asio::awaitable<void> fact(const Step& step);
  boost::asio::awaitable<void> decide(const Step& step);
  boost::asio::awaitable<void> call(const Step& step);
  boost::asio::awaitable<void> status(const Step& step);
  boost::asio::awaitable<void> kill(const Step& step);
  boost::asio::awaitable<void> await_state(const Step& step);
  boost::asio::awaitable<void> journal(const Step& step);
  boost::asio::awaitable<void> simple(const Step& step);
  void expectation(const Step& step, const boost::json::value& result);
  // One plugin's status, or nullopt (the step failed, and said why).
  boost::asio::awaitable<std::optional<proto::host::PluginStatus>> status_of(const std::string& id);
  // A step whose argument is the params of M as they are: read into them, then called.
  template <class M>
  boost::asio::awaitable<HostAnswer> typed_step(const boost::json::value& arg);

  // Waits `ms`, showing journals and status changes meanwhile.
  boost::asio::awaitable<void> sleep(std::chrono::milliseconds ms);
  // Waits for a host/statusChanged of `id`, received from the `from`th on, whose state is one
  // of `states`; its index, or nullopt when none came within `limit` or the host ended.
  boost::asio::awaitable<std::optional<std::size_t>> status_change(
      const std::string& id, const std::vector<std::string>& states, std::size_t from,
      std::chrono::milliseconds limit);
  void follow_journals();
  // The project of the options, as host/enable and the facts name it.
  proto::host::HostProject project(bool with_folder) const;

  boost::asio::io_context& io_;
  const RunOptions& options_;
  std::filesystem::path data_dir_;
  Printer& print_;
  HostLink link_;
  JournalTail journals_;
  boost::asio::steady_timer journal_timer_;
  ParseContext context_;
  std::vector<StatusChange> changes_;
  std::int64_t next_seq_ = 1;
  std::int64_t next_request_ = 1;
  std::size_t steps_ = 0;
  std::size_t failed_ = 0;
  bool interrupted_ = false;
  LineSource* source_ = nullptr;  // the one play() reads, ended when the host ends
  bool shut_down_ = false;
  bool following_ = false;  // the journals are followed (follow_journals)
};

template <class M>
boost::asio::awaitable<HostAnswer> RunSession::typed_step(const boost::json::value& arg) {
  using proto::read_value;
  typename M::Params params{};
  proto::ReadContext ctx;
  if (!read_value(arg, params, ctx)) {
    HostAnswer refused;
    refused.error_code = proto::wire_code(proto::ErrorCode::invalid_params);
    refused.error_message = "not the params of " + std::string(M::kName) + ": " + ctx.message();
    co_return refused;
  }
  auto typed = co_await link_.call<M>(params, std::chrono::milliseconds(30'000));
  co_return typed.answer;
}

}  // namespace escouade::harness
