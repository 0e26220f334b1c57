// Each kind of step of a scenario, as RunSession runs it: what it sends the host, what it
// prints, and when it fails.

#include <signal.h>
#include <sys/types.h>

#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <ctime>

#include "harness/session.hpp"
#include "protocol/gen/types.hpp"
#include "protocol/json_read.hpp"

namespace escouade::harness {

namespace asio = boost::asio;
namespace json = boost::json;
namespace hp = proto::host;
namespace method = proto::host::method;
using proto::read_value;  // and, by ADL, the host protocol's
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kHostLimit{30'000};
// host/decide answers within 500 ms however many plugins take part.
constexpr milliseconds kDecideLimit{10'000};
// After a kill, how long the host may take to notice the crash; a safety net only.
constexpr milliseconds kCrashSeen{10'000};
constexpr milliseconds kAwaitLimit{30'000};

std::string text(const json::value* v) {
  if (!v || v->is_null()) return {};
  return v->is_string() ? std::string(v->get_string()) : json::serialize(*v);
}

const json::value* at(const json::value& v, std::string_view name) {
  const auto* o = v.if_object();
  return o ? o->if_contains(name) : nullptr;
}

// Now, as RFC 3339 in UTC with milliseconds.
std::string now_rfc3339() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

// What a permission request asks, in a few words: "command: rm -rf /".
std::string describe_request(const json::value& request) {
  std::string kind = text(at(request, "kind"));
  const json::value* input = at(request, "input");
  for (const char* key : {"command", "file_path", "path", "url"}) {
    if (const json::value* v = input ? at(*input, key) : nullptr; v && v->is_string()) {
      return kind + ": " + std::string(v->get_string());
    }
  }
  return input ? kind + " " + json::serialize(*input) : kind;
}

}  // namespace

asio::awaitable<void> RunSession::run_step(const Step& step) {
  switch (step.kind) {
    case StepKind::comment:
      print_.heading(text(&step.arg));
      co_return;
    case StepKind::help:
      print_.text(short_forms_help());
      co_return;
    case StepKind::fact:
      ++steps_;
      co_return co_await fact(step);
    case StepKind::decide:
      ++steps_;
      co_return co_await decide(step);
    case StepKind::call:
      ++steps_;
      co_return co_await call(step);
    case StepKind::status:
      ++steps_;
      co_return co_await status(step);
    case StepKind::kill:
      ++steps_;
      co_return co_await kill(step);
    case StepKind::await_state:
      ++steps_;
      co_return co_await await_state(step);
    case StepKind::journal:
      ++steps_;
      co_return co_await journal(step);
    case StepKind::wait:
      ++steps_;
      print_.step("wait " + std::to_string(step.arg.as_int64()) + " ms");
      co_return co_await sleep(milliseconds(step.arg.as_int64()));
    case StepKind::restart:
    case StepKind::secret:
    case StepKind::settings:
    case StepKind::agent:
      ++steps_;
      co_return co_await simple(step);
  }
}

void RunSession::expectation(const Step& step, const json::value& result) {
  if (!step.expect) return;
  const std::string why = check_expectation(step.kind, *step.expect, result);
  if (why.empty()) {
    print_.passed("expected " + json::serialize(*step.expect));
  } else {
    fail(why);
  }
}

asio::awaitable<void> RunSession::fact(const Step& step) {
  json::object f = step.arg.as_object();
  if (!f.contains("version")) f["version"] = 1;
  if (!f.contains("seq")) f["seq"] = next_seq_++;
  if (!f.contains("at")) f["at"] = now_rfc3339();
  if (!f.contains("project")) f["project"] = json::value_from(project(false));
  if (!f.contains("data")) f["data"] = json::object();
  const json::value data = f["data"];
  print_.step("fact " + text(at(step.arg, "name")) + " #" + text(f.if_contains("seq")) + " " +
              json::serialize(data));
  json::value fact_value(std::move(f));
  proto::Fact checked;
  proto::ReadContext ctx;
  if (!read_value(fact_value, checked, ctx)) {
    fail("not a fact of protocol 1: " + ctx.message("fact"));
    co_return;
  }
  const hp::PublishParams published{std::move(checked)};  // named: see runner.cpp's setup
  auto a = co_await link_.call<method::HostPublish>(published, kHostLimit);
  flush_journals();
  if (!a.ok()) {
    fail("refused: " + a.answer.error_message);
    co_return;
  }
  std::string to;
  for (const auto& id : a.result.delivered)
    to += (to.empty() ? "" : ", ") + id;
  print_.outcome(to.empty() ? "delivered to no plugin" : "delivered to " + to);
  expectation(step, a.answer.result);
}

asio::awaitable<void> RunSession::decide(const Step& step) {
  json::object params;
  if (step.arg.as_object().contains("request")) {
    params = step.arg.as_object();
  } else {
    params["request"] = step.arg;
  }
  json::object& request = params["request"].as_object();
  if (!request.contains("id")) request["id"] = "r-" + std::to_string(next_request_++);
  if (!params.contains("project")) params["project"] = json::value_from(project(false));
  print_.step("decide " + describe_request(params["request"]));
  json::value params_value(std::move(params));
  proto::DecideParams checked;
  proto::ReadContext ctx;
  if (!read_value(params_value, checked, ctx)) {
    fail("not a permission request of protocol 1: " + ctx.message("decide"));
    co_return;
  }
  auto a = co_await link_.call<method::HostDecide>(checked, kDecideLimit);
  flush_journals();
  if (!a.ok()) {
    fail("host/decide: " + a.answer.error_message);
    co_return;
  }
  const hp::HostDecision& d = a.result;
  print_.outcome(std::string(hp::to_string(d.decision)) + (d.message ? ": " + *d.message : ""));
  if (d.by.empty()) print_.detail("no plugin took part: the user is asked");
  for (const auto& part : d.by) {
    std::string line = part.id + ": " + std::string(hp::to_string(part.decision));
    if (part.message && !part.message->empty()) line += ": " + *part.message;
    if (part.reason && !part.reason->empty()) line += " (" + *part.reason + ")";
    print_.detail(line);
  }
  expectation(step, a.answer.result);
}

asio::awaitable<void> RunSession::call(const Step& step) {
  const auto& o = step.arg.as_object();
  const json::value* params = o.if_contains("params");
  print_.step("call " + text(o.if_contains("id")) + " " + text(o.if_contains("method")) +
              (params ? " " + json::serialize(*params) : ""));
  hp::CallParams checked;
  proto::ReadContext ctx;
  if (!read_value(step.arg, checked, ctx)) {
    fail("not a call of host/call: " + ctx.message("call"));
    co_return;
  }
  milliseconds limit = kHostLimit;
  if (checked.timeout_ms) limit += milliseconds(*checked.timeout_ms);
  auto typed = co_await link_.call<method::HostCall>(checked, limit);
  const HostAnswer& a = typed.answer;
  flush_journals();
  json::object seen;
  if (a.ok()) {
    print_.outcome("result: " + json::serialize(a.result));
    seen["result"] = a.result;
  } else {
    seen["error"] = json::object{{"code", *a.error_code}, {"message", a.error_message}};
    const std::string error = "error " + std::to_string(*a.error_code) + ": " + a.error_message;
    if (step.expect) {
      print_.outcome(error);
    } else {
      fail(error);
    }
  }
  expectation(step, seen);
}

asio::awaitable<void> RunSession::status(const Step& step) {
  hp::StatusParams params;
  if (step.arg.is_string()) params.id = std::string(step.arg.get_string());
  print_.step(params.id ? "status " + *params.id : "status");
  auto a = co_await link_.call<method::HostStatus>(params, kHostLimit);
  if (!a.ok()) {
    fail(a.answer.error_message);
    co_return;
  }
  if (a.result.empty()) print_.outcome("no plugin");
  for (const auto& s : a.result) {
    std::string line = s.id + ": " + std::string(hp::to_string(s.state));
    if (s.pid) line += ", pid " + std::to_string(*s.pid);
    line += ", crashes " + std::to_string(s.crashes);
    if (s.reason) line += ", " + *s.reason;
    print_.outcome(line);
  }
}

asio::awaitable<std::optional<hp::PluginStatus>> RunSession::status_of(const std::string& id) {
  hp::StatusParams params;
  params.id = id;
  auto a = co_await link_.call<method::HostStatus>(params, kHostLimit);
  if (!a.ok()) {
    fail(a.answer.error_message);
    co_return std::nullopt;
  }
  if (a.result.empty()) {
    fail("escouade-host gave no status for " + id);
    co_return std::nullopt;
  }
  co_return a.result.front();
}

asio::awaitable<void> RunSession::kill(const Step& step) {
  const std::string id = text(&step.arg);
  print_.step("kill " + id);
  const auto status = co_await status_of(id);
  if (!status) co_return;
  if (!status->pid || *status->pid <= 1) {
    fail(id + " has no process to kill (it is " + std::string(hp::to_string(status->state)) + ")");
    co_return;
  }
  const std::int64_t pid = *status->pid;
  const std::size_t from = changes_.size();
  if (::kill(static_cast<pid_t>(pid), SIGKILL) != 0) {
    fail("cannot kill pid " + std::to_string(pid));
    co_return;
  }
  print_.outcome("SIGKILL to pid " + std::to_string(pid));
  const std::vector<std::string> crashed{"restarting", "stopped"};
  auto seen = co_await status_change(id, crashed, from, kCrashSeen);
  if (!seen) {
    fail("the host did not report the crash of " + id);
    co_return;
  }
  print_.outcome("the host saw it: " + changes_[*seen].state);
}

asio::awaitable<void> RunSession::await_state(const Step& step) {
  const std::string id = text(at(step.arg, "id"));
  const std::string state = text(at(step.arg, "state"));
  print_.step("await " + id + " " + state);
  const std::size_t from = changes_.size();
  const auto status = co_await status_of(id);
  if (!status) co_return;
  const std::string now(hp::to_string(status->state));
  // Nothing starts an idle, stopped or switched off plugin while the harness waits.
  if (now != state && (now == "idle" || now == "stopped" || now == "disabled")) {
    fail(id + " is " + now + ": it will not become " + state + " by itself");
    co_return;
  }
  const std::vector<std::string> wanted{state};
  if (now != state && !co_await status_change(id, wanted, from, kAwaitLimit)) {
    fail(id + " did not become " + state + " (it was " + now + ")");
    co_return;
  }
  print_.outcome(id + " is " + state);
}

asio::awaitable<void> RunSession::journal(const Step& step) {
  const std::string id = text(at(step.arg, "id"));
  print_.step("journal " + id + " (last " + text(at(step.arg, "lines")) + " lines)");
  hp::JournalParams params;
  proto::ReadContext ctx;
  if (!read_value(step.arg, params, ctx)) {
    fail("not a journal step: " + ctx.message("journal"));
    co_return;
  }
  auto a = co_await link_.call<method::HostJournal>(params, kHostLimit);
  if (!a.ok()) {
    fail(a.answer.error_message);
    co_return;
  }
  if (a.result.lines.empty()) print_.outcome("(empty)");
  for (const auto& l : a.result.lines)
    print_.detail(l);
}

asio::awaitable<void> RunSession::simple(const Step& step) {
  HostAnswer a;
  if (step.kind == StepKind::restart) {
    print_.step("restart " + text(&step.arg));
    const hp::PluginRef plugin{text(&step.arg)};
    auto typed = co_await link_.call<method::HostRestart>(plugin, kHostLimit);
    a = typed.answer;
  } else {
    if (step.kind == StepKind::secret) {
      print_.step("secret " + text(at(step.arg, "id")) + ":" + text(at(step.arg, "key")));
      a = co_await typed_step<method::HostSecretsSet>(step.arg);
    } else if (step.kind == StepKind::agent) {
      print_.step("agent " + text(at(step.arg, "key")) + " in " + text(at(step.arg, "project")));
      a = co_await typed_step<method::HostAgentsSet>(step.arg);
    } else {
      print_.step("settings " + text(at(step.arg, "id")) + " " + text(at(step.arg, "values")));
      a = co_await typed_step<method::HostSettingsSet>(step.arg);
    }
  }
  flush_journals();
  if (!a.ok()) {
    fail(a.error_message);
    co_return;
  }
  print_.outcome("done");
}

asio::awaitable<void> RunSession::sleep(milliseconds ms) {
  asio::steady_timer t(io_, ms);
  co_await t.async_wait(asio::use_awaitable);
  flush_journals();
}

asio::awaitable<std::optional<std::size_t>> RunSession::status_change(
    const std::string& id, const std::vector<std::string>& states, std::size_t from,
    milliseconds limit) {
  asio::steady_timer t(io_);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    for (std::size_t i = from; i < changes_.size(); ++i) {
      if (changes_[i].id != id) continue;
      for (const auto& s : states) {
        if (changes_[i].state == s) co_return i;
      }
    }
    from = changes_.size();
    if (!link_.running() || std::chrono::steady_clock::now() >= deadline) co_return std::nullopt;
    t.expires_after(milliseconds(10));
    co_await t.async_wait(asio::use_awaitable);
  }
}

}  // namespace escouade::harness
