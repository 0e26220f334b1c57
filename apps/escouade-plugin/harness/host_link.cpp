#include "harness/host_link.hpp"

#include <boost/asio/use_awaitable.hpp>
#include <iostream>

#include "protocol/gen/host_methods.hpp"
#include "protocol/wire_error.hpp"
#include "runtime/program_session.hpp"

extern char** environ;

namespace escouade::harness {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// The code of the answers the host did not give itself: the request failed on the way.
constexpr int kRequestFailed = proto::wire_code(proto::ErrorCode::failed);

}  // namespace

HostLink::HostLink(asio::io_context& io, HostEvents events) : io_(io), events_(std::move(events)) {}

HostLink::~HostLink() {
  close();
  // The session first: calls still in flight completed as closed while the program existed.
  session_.reset();
  program_.reset();  // ends the host's tree if it still runs, and reaps it
}

void HostLink::close() {
  events_ = HostEvents{};  // nothing more is reported to the run
  if (session_) session_->close();
  if (program_ && running_) program_->stop();
}

Result<void> HostLink::start(const std::filesystem::path& program,
                             const std::vector<std::string>& args) {
  runtime::ProgramSpec spec;
  spec.plugin_id = "escouade-host";
  spec.command.push_back(program.string());
  spec.command.insert(spec.command.end(), args.begin(), args.end());
  for (char** e = environ; e && *e; ++e)
    spec.env.emplace_back(*e);
  runtime::ProcessProgramFactory programs(io_.get_executor(), context_);
  program_ = programs.make(spec);

  session_ =
      runtime::session_for(program_.get(), io_.get_executor(), [this](std::string_view sentence) {
        if (events_.stderr_line)
          events_.stderr_line("(from the harness) the host " + std::string(sentence));
      });
  session_->serve_notification<proto::host::method::HostStatusChanged>(
      [this](const proto::host::StatusChange& change) {
        StatusChange s{change.id, std::string(proto::host::to_string(change.state)),
                       change.reason.value_or(std::string())};
        if (events_.status_changed) events_.status_changed(s);
      });

  runtime::ProgramEvents ev;
  runtime::feed_session(ev, *session_);
  ev.error_line = [this](std::string_view line) {
    if (events_.stderr_line) events_.stderr_line(line);
  };
  ev.exited = [this](const runtime::ProgramEnd& status) {
    running_ = false;
    exit_ = status;
    session_->close();
    if (events_.exited) events_.exited(status);
  };
  if (auto started = program_->start(std::move(ev)); !started) return started.error();
  running_ = true;
  return {};
}

asio::awaitable<HostAnswer> HostLink::call(rpc::Outgoing request, std::chrono::milliseconds limit) {
  const std::string method(request.method());
  rpc::CallOutcome outcome =
      co_await session_->async_call(std::move(request), limit, asio::use_awaitable);
  HostAnswer a;
  switch (outcome.kind) {
    case rpc::CallOutcome::Kind::result:
      a.result = std::move(outcome.result);
      break;
    case rpc::CallOutcome::Kind::error:
      a.error_code = outcome.error.code;
      a.error_message = outcome.error.message;
      break;
    case rpc::CallOutcome::Kind::timeout:
      a.error_code = kRequestFailed;
      a.error_message = "escouade-host gave no answer to " + method + " within " +
                        std::to_string(limit.count()) + " ms";
      break;
    case rpc::CallOutcome::Kind::closed:
      a.error_code = kRequestFailed;
      a.error_message = "escouade-host has ended";
      break;
  }
  co_return a;
}

}  // namespace escouade::harness
