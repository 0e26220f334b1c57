#include "conformance/plugin_link.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>

#include "protocol/gen/methods.hpp"
#include "runtime/program_session.hpp"
#include "services/bind.hpp"

namespace escouade::conformance {

namespace asio = boost::asio;
namespace json = boost::json;
using proto::MessageKind;

namespace {

constexpr std::size_t kStderrKept = 5;

std::string id_text(const json::value& id) {
  return json::serialize(id);
}

// An id as a careless echo would keep it: 41, "41" and 41.0 all read 41.
std::string loose(const json::value& id) {
  if (id.is_string()) return std::string(id.get_string());
  if (id.is_int64()) return std::to_string(id.get_int64());
  if (id.is_uint64()) return std::to_string(id.get_uint64());
  if (id.is_double()) {
    const double d = id.get_double();
    if (std::trunc(d) == d && std::fabs(d) < 9.3e18) {
      return std::to_string(static_cast<std::int64_t>(d));
    }
  }
  return json::serialize(id);
}

std::string_view kind_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::string:
      return "a string";
    case json::kind::int64:
    case json::kind::uint64:
      return "an integer";
    case json::kind::double_:
      return "a floating-point number";
    case json::kind::null:
      return "null";
    default:
      return "another kind of value";
  }
}

// The errors that say the plugin asked for what it may not have: a secret that is not its own,
// what it may not reach, a method Escouade does not serve, parameters that do not hold.
bool is_refusal(int code) {
  using proto::ErrorCode;
  return code == static_cast<int>(ErrorCode::not_yours) ||
         code == static_cast<int>(ErrorCode::refused) ||
         code == static_cast<int>(ErrorCode::method_not_found) ||
         code == static_cast<int>(ErrorCode::invalid_params);
}

}  // namespace

PluginLink::PluginLink(asio::any_io_executor executor, runtime::ProgramFactory& programs,
                       const services::ServiceContext& services,
                       std::shared_ptr<services::ServedPlugin> plugin, runtime::ProgramSpec spec)
    : executor_(std::move(executor)),
      plugin_(std::move(plugin)),
      kind_(spec.kind),
      program_(programs.make(spec)) {
  // As the supervisor's: the bench sends what the host sends, the way the host sends it.
  session_ = runtime::session_for(
      program_.get(), executor_,
      [this](std::string_view sentence) { plugin_->journal->warn(sentence); }, steady_clock(),
      [this](std::string_view line) { outgoing(line); });
  session_->set_redactor([journal = plugin_->journal](std::string& text) { journal->mask(text); });
  session_->set_notice([journal = plugin_->journal](std::string_view s) { journal->info(s); });
  run_ = std::make_unique<services::RunScope>(*session_);
  services::bind_services(*session_, *run_, services, plugin_);
}

PluginLink::~PluginLink() {
  session_->close();
}

Result<void> PluginLink::start() {
  runtime::ProgramEvents events;
  events.output_line = [this](std::string_view line) { incoming(line); };
  events.output_too_long = [this](std::size_t limit) {
    stdout_faults_.push_back({lines_++,
                              "it wrote a line longer than " + std::to_string(limit) +
                                  " bytes on stdout; it was dropped",
                              ""});
    session_->line_too_long(limit);
    wake();
  };
  events.error_line = [this](std::string_view line) {
    plugin_->journal->info("stderr: " + std::string(line));
    std::string kept(line);
    plugin_->journal->mask(kept);
    stderr_tail_.push_back(std::move(kept));
    if (stderr_tail_.size() > kStderrKept) stderr_tail_.erase(stderr_tail_.begin());
  };
  events.exited = [this](const runtime::ProgramEnd& end) {
    exit_ = end;
    plugin_->journal->info("exited: " + end.reason);
    session_->close();
    wake();
  };
  if (!program_) {
    return Error{proto::ErrorCode::internal,
                 "no program runs " + std::string(runtime::to_string(kind_)) + " plugins here"};
  }
  auto started = program_->start(std::move(events));
  if (!started) {
    plugin_->journal->error("could not start: " + started.error().message);
    return started;
  }
  plugin_->journal->info("started: " + program_->describe());
  return {};
}

void PluginLink::stop() {
  if (!exit_ && program_) program_->stop();
}

void PluginLink::close() {
  session_->close();
  stop();
}

asio::awaitable<rpc::CallOutcome> PluginLink::call(std::string method,
                                                   std::optional<json::value> params,
                                                   std::chrono::milliseconds timeout) {
  auto message = params ? rpc::Outgoing::request_value(method, *params)
                        : rpc::Outgoing::request_value(method, std::nullopt);
  if (!message) {
    rpc::CallOutcome refused;
    refused.kind = rpc::CallOutcome::Kind::error;
    refused.error = {static_cast<int>(proto::ErrorCode::internal), message.error().message,
                     std::nullopt};
    co_return refused;
  }
  const bool decision = method == proto::method::PermissionsDecide::kName;
  rpc::CallOutcome outcome =
      co_await session_->async_call(std::move(*message), timeout, asio::use_awaitable);
  // No answer within its delay: the host stops counting it held then, and so does the bench
  // (the calls of the checks go one at a time: the open ones not sent raw are this one).
  if (decision && (outcome.kind == rpc::CallOutcome::Kind::timeout ||
                   outcome.kind == rpc::CallOutcome::Kind::closed)) {
    std::erase_if(decisions_open_, [](const auto& open) { return !open.second; });
    decisions_changed();
  }
  co_return outcome;
}

void PluginLink::notify(std::string_view method, std::optional<json::value> params) {
  auto message = params ? rpc::Outgoing::notification_value(method, *params)
                        : rpc::Outgoing::notification_value(method, std::nullopt);
  if (message) session_->notify(std::move(*message));
}

void PluginLink::send_raw(std::string line) {
  if (exit_ || !program_) return;
  const proto::Parsed parsed = out_decoder_.decode(line);
  for (const auto& e : parsed.entries) {
    const auto* m = std::get_if<proto::Message>(&e);
    if (m && m->kind == MessageKind::request) issued_[id_text(m->id)] = {m->method, true};
  }
  sent(line, parsed, true);
  line += '\n';
  program_->write(std::move(line), proto::Delivery::kept);
}

asio::awaitable<bool> PluginLink::until(std::function<bool()> done,
                                        std::chrono::milliseconds timeout,
                                        std::optional<std::chrono::milliseconds> poll) {
  const auto deadline = Clock::now() + timeout;
  asio::steady_timer timer(executor_);
  for (;;) {
    if (done()) co_return true;
    const auto now = Clock::now();
    if (exit_ || now >= deadline) co_return false;
    timer.expires_at(poll ? std::min(deadline, now + *poll) : deadline);
    waiter_ = [&timer] { timer.cancel(); };
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    waiter_ = nullptr;
  }
}

asio::awaitable<const SeenAnswer*> PluginLink::answer_to(const json::value& id,
                                                         std::chrono::milliseconds timeout) {
  co_await until([&] { return find_answer(id) != nullptr; }, timeout);
  co_return find_answer(id);
}

const SeenAnswer* PluginLink::find_answer(const json::value& id) const {
  const std::string key = id_text(id);
  for (const auto& a : answers_) {
    if (a.matched && id_text(a.message.id) == key) return &a;
  }
  return nullptr;
}

namespace {

bool is_own_call_id(const std::vector<CallRecord>& calls, const std::string& id) {
  return std::any_of(calls.begin(), calls.end(), [&](const CallRecord& c) { return c.id == id; });
}

}  // namespace

std::vector<const SeenAnswer*> PluginLink::stray_answers(std::size_t since) const {
  std::vector<const SeenAnswer*> out;
  for (const auto& a : answers_) {
    if (a.line >= since && !a.matched && a.method.empty() &&
        !is_own_call_id(calls_, id_text(a.message.id)))
      out.push_back(&a);
  }
  return out;
}

std::vector<const SeenAnswer*> PluginLink::answers_to_answers() const {
  std::vector<const SeenAnswer*> out;
  for (const auto& a : answers_) {
    if (!a.matched && a.method.empty() && is_own_call_id(calls_, id_text(a.message.id)))
      out.push_back(&a);
  }
  return out;
}

bool PluginLink::leader_ended() const {
  if (exit_) return true;
  const auto pid = program_ ? program_->pid() : std::nullopt;
  if (!pid) return true;
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(*pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno == ECHILD;  // reaped already
  }
  return info.si_pid == *pid;
}

std::string PluginLink::last_stderr() const {
  std::string out;
  for (const auto& line : stderr_tail_)
    out += (out.empty() ? "" : " | ") + line;
  return out;
}

void PluginLink::incoming(std::string_view line) {
  const std::size_t index = lines_++;
  if (trace_) {
    trace_->write({}, TraceFile::Direction::from_plugin, line,
                  [journal = plugin_->journal](std::string& text) { journal->mask(text); });
  }
  proto::Parsed parsed = in_decoder_.decode(line);
  bool only_raw_answers = !parsed.entries.empty();
  for (auto& e : parsed.entries) {
    if (auto* invalid = std::get_if<proto::Invalid>(&e)) {
      const bool parse = invalid->code == static_cast<int>(proto::ErrorCode::parse);
      Fault f{index,
              parse ? std::string("a line that is not JSON")
                    : "a message that is not JSON-RPC 2.0 (" + invalid->reason + ")",
              quote(line)};
      if (!invalid->answer_due) answer_faults_.push_back(f);
      stdout_faults_.push_back(std::move(f));
      only_raw_answers = false;
      continue;
    }
    auto& m = std::get<proto::Message>(e);
    if (m.is_answer()) {
      auto it = issued_.find(id_text(m.id));
      if (it == issued_.end() || !it->second.raw) only_raw_answers = false;
      note_answer(std::move(m), parsed.batch, line);
    } else {
      only_raw_answers = false;
      note_call(m);
    }
  }
  if (!only_raw_answers) session_->feed_line(line);
  wake();
}

void PluginLink::note_answer(proto::Message&& m, bool in_batch, std::string_view line) {
  SeenAnswer a;
  a.line = lines_ - 1;
  a.in_batch = in_batch;
  a.text = quote(line);
  const std::string key = id_text(m.id);
  if (decisions_open_.erase(key) > 0) decisions_changed();
  if (auto it = issued_.find(key); it != issued_.end()) {
    a.matched = true;
    a.method = it->second.method;
    const proto::MethodInfo* info = proto::find_method(a.method);
    if (m.kind == MessageKind::response && info && info->check_result) {
      if (auto checked = validator_.check_result(a.method, m.result); !checked) {
        answer_faults_.push_back({a.line,
                                  "its result to " + a.method +
                                      " does not hold to the schema: " + checked.error().message,
                                  a.text});
      }
    }
    if (find_answer(m.id)) {
      answer_faults_.push_back({a.line, "it answered the call with id " + key + " twice", a.text});
    }
  } else if (!m.id.is_null()) {
    for (const auto& [sent_key, issued] : issued_) {
      json::value sent = json::parse(sent_key);
      if (loose(sent) == loose(m.id)) {
        a.method = issued.method;  // an echo, though not an exact one: no stray answer
        answer_faults_.push_back({a.line,
                                  "it echoed the id " + sent_key + " (" +
                                      std::string(kind_name(sent)) + ") of " + issued.method +
                                      " as " + key + " (" + std::string(kind_name(m.id)) + ")",
                                  a.text});
        break;
      }
    }
  }
  a.message = std::move(m);
  answers_.push_back(std::move(a));
}

void PluginLink::note_call(const proto::Message& m) {
  CallRecord r;
  r.method = m.method;
  r.params = m.params ? quote(json::serialize(*m.params)) : "(none)";
  if (m.kind == MessageKind::notification) {
    // What the host serves as notifications: log, and timer/cancel to a sandboxed plugin
    // (services/bind.cpp), which the prelude's clearTimeout sends.
    const auto kind = plugin_->manifest.run.kind;
    const bool sandboxed = kind == manifest::RunKind::js || kind == manifest::RunKind::wasm;
    if (m.method == proto::method::Log::kName ||
        (sandboxed && m.method == proto::method::TimerCancel::kName)) {
      auto checked = validator_.check_params(m.method, m.params ? &*m.params : nullptr);
      r.refused = !checked;
      r.outcome = checked ? (m.method == proto::method::Log::kName ? "journaled" : "taken")
                          : "ignored: its params do not hold: " + checked.error().message;
    } else {
      r.refused = true;
      r.outcome = "ignored: Escouade serves no notification " + m.method;
    }
    calls_.push_back(std::move(r));
    return;
  }
  r.id = id_text(m.id);
  r.outcome = "no answer";
  owed_[r.id] = calls_.size();
  calls_.push_back(std::move(r));
}

void PluginLink::sent(std::string_view line, const proto::Parsed& parsed, bool raw) {
  if (trace_) {
    trace_->write({}, TraceFile::Direction::to_plugin, line,
                  [journal = plugin_->journal](std::string& text) { journal->mask(text); });
  }
  SentLine s{{check_, {}}, std::string(line.substr(0, kSentKept))};
  bool asked = false;
  for (const auto& e : parsed.entries) {
    const auto* m = std::get_if<proto::Message>(&e);
    if (!m) continue;
    if (s.by.method.empty()) s.by.method = m->method;
    if (m->kind == MessageKind::request && m->method == proto::method::PermissionsDecide::kName) {
      decisions_open_[id_text(m->id)] = raw;
      asked = true;
    }
  }
  sent_.push_back(std::move(s));
  if (asked) decisions_changed();
}

void PluginLink::decisions_changed() {
  if (program_ && !exit_) program_->decisions_held(decisions_open_.size());
}

std::optional<PluginLink::Sent> PluginLink::sent_by(std::string_view turn) const {
  if (turn.empty()) return std::nullopt;
  for (auto it = sent_.rbegin(); it != sent_.rend(); ++it) {
    if (std::string_view(it->start).substr(0, turn.size()) == turn) return it->by;
  }
  return std::nullopt;
}

void PluginLink::outgoing(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  const proto::Parsed parsed = out_decoder_.decode(line);
  sent(line, parsed, false);
  for (const auto& e : parsed.entries) {
    const auto* m = std::get_if<proto::Message>(&e);
    if (!m) continue;
    if (m->kind == MessageKind::request) {
      issued_[id_text(m->id)] = {m->method, false};
      continue;
    }
    if (!m->is_answer()) continue;
    auto it = owed_.find(id_text(m->id));
    if (it == owed_.end()) continue;  // an answer to a line that was not a call
    CallRecord& r = calls_[it->second];
    owed_.erase(it);
    if (m->kind == MessageKind::response) {
      std::string shown = json::serialize(m->result);
      plugin_->journal->mask(shown);  // a secret given is never shown
      r.outcome = "result " + quote(shown);
    } else {
      r.outcome = "error " + std::to_string(m->error.code) + ": " + quote(m->error.message);
      r.refused = is_refusal(m->error.code);
    }
  }
}

void PluginLink::wake() {
  if (waiter_) waiter_();
}

}  // namespace escouade::conformance
