#pragma once

// escouade-host as a child of the harness: the real program, started without a shell through
// runtime::ProcessProgram, and driven with JSON-RPC 2.0 through an rpc::Session, as an app
// drives it (docs/host-protocol.md). Its host/statusChanged notifications, the lines of its
// stderr and its end are handed to callbacks.
//
// Thread: the io_context's thread; every callback runs there. The HostLink outlives the
// coroutines that call through it.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "rpc/session.hpp"
#include "runtime/process_program.hpp"

namespace escouade::harness {

// One host/statusChanged notification.
struct StatusChange {
  std::string id;
  std::string state;
  std::string reason;  // empty when null
};

struct HostEvents {
  std::function<void(const StatusChange&)> status_changed;
  std::function<void(std::string_view line)> stderr_line;
  // It ended (after its last output line was handled).
  std::function<void(const runtime::ExitStatus&)> exited;
};

// How a host/* call ended: a result, or an error (the host's, or "no answer", or "the host
// has ended") with its code.
struct HostAnswer {
  boost::json::value result;
  std::optional<int> error_code;
  std::string error_message;
  bool ok() const noexcept { return !error_code; }
};

class HostLink {
 public:
  HostLink(boost::asio::io_context& io, HostEvents events);
  ~HostLink();
  HostLink(const HostLink&) = delete;
  HostLink& operator=(const HostLink&) = delete;

  // Starts `program` with `args`, in the current directory, with this process's environment.
  Result<void> start(const std::filesystem::path& program, const std::vector<std::string>& args);

  // Calls a host/* method; completes with its answer, or with an error when no answer came
  // within `limit` or the host ended first.
  boost::asio::awaitable<HostAnswer> call(std::string method, boost::json::value params,
                                          std::chrono::milliseconds limit);

  // Closes the session (calls in flight complete as closed) and ends the host's tree if it
  // still runs; its exit is then not reported. Idempotent.
  void close();

  // Whether the host still runs.
  bool running() const noexcept { return running_; }
  // Its exit status, once it has ended.
  const std::optional<runtime::ExitStatus>& exit_status() const noexcept { return exit_; }

 private:
  boost::asio::io_context& io_;
  HostEvents events_;
  runtime::ProcessContext context_;
  std::unique_ptr<runtime::ProcessProgram> program_;
  std::unique_ptr<rpc::Session> session_;
  bool running_ = false;
  std::optional<runtime::ExitStatus> exit_;
};

}  // namespace escouade::harness
