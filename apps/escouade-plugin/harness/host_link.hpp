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
#include <boost/json/value_from.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "protocol/gen/host_methods.hpp"
#include "protocol/wire_error.hpp"
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
  std::function<void(const runtime::ProgramEnd&)> exited;
};

// How a host/* call ended: a result, or an error (the host's, or "no answer", or "the host
// has ended") with its code.
struct HostAnswer {
  boost::json::value result;
  std::optional<int> error_code;
  std::string error_message;
  bool ok() const noexcept { return !error_code; }
};

// The same, with the result read into the method's generated type (host_methods.hpp).
template <class R>
struct TypedAnswer {
  HostAnswer answer;  // its result as it came, for expectations that compare JSON
  R result{};
  bool ok() const noexcept { return answer.ok(); }
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
  boost::asio::awaitable<HostAnswer> call(rpc::Outgoing request, std::chrono::milliseconds limit);
  // The same with the method's generated types (schema/host-protocol-1.json). A result that
  // does not hold to the schema is an error that says so.
  template <class M>
  boost::asio::awaitable<TypedAnswer<typename M::Result>> call(const typename M::Params& params,
                                                               std::chrono::milliseconds limit);

  // Closes the session (calls in flight complete as closed) and ends the host's tree if it
  // still runs; its exit is then not reported. Idempotent.
  void close();

  // Whether the host still runs.
  bool running() const noexcept { return running_; }
  // Its exit status, once it has ended.
  const std::optional<runtime::ProgramEnd>& exit_status() const noexcept { return exit_; }

 private:
  boost::asio::io_context& io_;
  HostEvents events_;
  runtime::ProcessContext context_;
  std::unique_ptr<runtime::Program> program_;
  std::unique_ptr<rpc::Session> session_;
  bool running_ = false;
  std::optional<runtime::ProgramEnd> exit_;
};

template <class M>
boost::asio::awaitable<TypedAnswer<typename M::Result>> HostLink::call(
    const typename M::Params& params, std::chrono::milliseconds limit) {
  using proto::read_value;  // and, by ADL, the host protocol's
  TypedAnswer<typename M::Result> typed;
  auto request = rpc::Outgoing::request<M>(params);
  if (!request) {
    typed.answer.error_code = proto::wire_code(proto::ErrorCode::internal);
    typed.answer.error_message = request.error().message;
    co_return typed;
  }
  typed.answer = co_await call(std::move(*request), limit);
  proto::ReadContext ctx;
  if (typed.ok() && !read_value(typed.answer.result, typed.result, ctx)) {
    typed.answer.error_code = proto::wire_code(proto::ErrorCode::failed);
    typed.answer.error_message = "escouade-host's answer to " + std::string(M::kName) +
                                 " does not hold: " + ctx.message("result");
  }
  co_return typed;
}

}  // namespace escouade::harness
