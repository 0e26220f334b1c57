#include "conformance/bench_run.hpp"

#include <algorithm>
#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include "conformance/leftovers.hpp"
#include "protocol/gen/methods.hpp"
#include "protocol/gen/types.hpp"
#include "supervisor/handshake.hpp"

namespace escouade::conformance {

namespace asio = boost::asio;
namespace json = boost::json;
using rpc::CallOutcome;

namespace {

constexpr std::chrono::milliseconds kBarrierWait{5000};
constexpr std::chrono::milliseconds kShutdownDelay{proto::method::Shutdown::kTimeoutMs};

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words)
    out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

BenchRun::BenchRun(PluginLink& link, const manifest::Manifest& manifest,
                   const BenchOptions& options, std::string run_token)
    : link_(link), manifest_(manifest), options_(options), run_token_(std::move(run_token)) {}

void BenchRun::set(std::string_view name, Verdict verdict, std::string reason,
                   std::optional<std::string> message) {
  if (has(name)) return;  // the first verdict stands
  results_[std::string(name)] =
      CheckResult{std::string(name), verdict, std::move(reason), std::move(message)};
}

void BenchRun::skip_rest(const std::string& reason) {
  for (const char* name : kCheckNames)
    set(name, Verdict::skip, reason);
}

std::vector<CheckResult> BenchRun::results() const {
  std::vector<CheckResult> out;
  for (const char* name : kCheckNames) {
    auto it = results_.find(name);
    out.push_back(it != results_.end() ? it->second
                                       : CheckResult{name, Verdict::skip, "not run", {}});
  }
  return out;
}

std::optional<std::string> BenchRun::gone() {
  if (died_) return died_;
  if (blame_the_turn()) return died_;
  if (link_.exited()) {
    return "because it exited earlier (" + link_.exit_status()->reason + ")";
  }
  return std::nullopt;
}

bool BenchRun::blame_the_turn() {
  const auto& end = link_.exit_status();
  if (!end || end->turn.empty()) return false;
  const auto by = link_.sent_by(end->turn);
  if (!by || by->check.empty()) return false;
  results_[by->check] =
      CheckResult{by->check, Verdict::fail,
                  "its instance was stopped in the turn that handled " +
                      (by->method.empty() ? std::string("a line of the bench") : by->method) +
                      ": " + end->reason,
                  "the turn's message: " + quote(end->turn)};
  died_ = "because it exited during the " + by->check + " check (" + end->reason + ")";
  return true;
}

void BenchRun::died_in(std::string_view name, const std::string& doing) {
  if (blame_the_turn()) {
    set(name, Verdict::skip, *died_);
    return;
  }
  const std::string status = link_.exit_status() ? link_.exit_status()->reason : "ended";
  std::string reason = "it exited (" + status + ") " + doing;
  const std::string err = link_.last_stderr();
  set(name, Verdict::fail, reason,
      err.empty() ? std::nullopt : std::optional<std::string>("stderr: " + quote(err)));
  died_ = "because it exited during the " + std::string(name) + " check (" + status + ")";
}

std::string BenchRun::request_line(const json::value& id, std::string_view method,
                                   const json::value& params) {
  return json::serialize(
      json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
}

const SeenAnswer* BenchRun::answer_like(const json::value& id) const {
  if (const SeenAnswer* exact = link_.find_answer(id)) return exact;
  const std::string key = json::serialize(id);
  for (const auto& a : link_.answers()) {
    if (a.matched || a.method.empty()) continue;
    // An inexact echo of this id (PluginLink names the method it answers).
    const std::string got = json::serialize(a.message.id);
    const std::string bare =
        a.message.id.is_string() ? std::string(a.message.id.get_string()) : got;
    const std::string want = id.is_string() ? std::string(id.get_string()) : key;
    if (bare == want || got == want) return &a;
  }
  return nullptr;
}

const SeenAnswer* BenchRun::last_answer(std::string_view method, std::size_t since) const {
  const SeenAnswer* found = nullptr;
  for (const auto& a : link_.answers()) {
    if (a.line >= since && a.method == method) found = &a;
  }
  return found;
}

std::string BenchRun::delay_text(ms spec) const {
  const auto text = [](ms d) {
    const auto n = d.count();
    return n % 1000 == 0 ? std::to_string(n / 1000) + " s" : std::to_string(n) + " ms";
  };
  if (options_.time_scale == 1) return text(spec);
  return text(delay(spec)) + " (" + text(spec) + " x " + std::to_string(options_.time_scale) +
         ", --time-scale)";
}

asio::awaitable<bool> BenchRun::barrier() {
  const json::value id = json::string("bench-barrier-" + std::to_string(++barriers_));
  link_.send_raw(request_line(id, "bench/barrier", json::object{}));
  co_return co_await link_.until([&] { return answer_like(id) != nullptr; }, delay(kBarrierWait));
}

asio::awaitable<void> BenchRun::run() {
  // Each line sent is remembered with the check that sent it (blame_the_turn).
  link_.checking("handshake");
  if (co_await handshake()) {
    link_.checking("unknown-method");
    co_await check_ids_and_unknown_method();
    link_.checking("notification");
    co_await check_notification();
    link_.checking("decide");
    co_await check_decide();
    link_.checking("batch");
    co_await check_batch();
    link_.checking("facts");
    co_await check_facts();
    link_.checking("malformed");
    co_await check_malformed();
    link_.checking("burst");
    co_await check_burst();
    link_.checking("calls");
    co_await check_calls();
    link_.checking("shutdown");
    co_await check_shutdown();
    check_stdout();
    check_answers();
  }
  // Whatever happened, nothing of the plugin outlives the run.
  if (!link_.exited()) {
    link_.stop();
    co_await link_.until([] { return false; }, std::chrono::seconds(5));
  }
  kill_leftovers(run_token_);
}

asio::awaitable<bool> BenchRun::handshake() {
  if (auto started = link_.start(); !started) {
    set("starts", Verdict::fail, started.error().message);
    skip_rest("because it did not start");
    co_return false;
  }
  const supervisor::HandshakeParties parties{manifest_.id, manifest_.version};
  const std::size_t since = link_.lines_seen();
  json::value params = supervisor::initialize_params(parties);  // named: GCC 12 and co_await
  CallOutcome o = co_await link_.call(std::string(proto::method::Initialize::kName),
                                      std::move(params), options_.initialize_timeout);
  const SeenAnswer* seen = last_answer("initialize", since);
  const std::optional<std::string> line =
      seen ? std::optional<std::string>(seen->text) : std::nullopt;

  if (o.kind == CallOutcome::Kind::closed) {
    // Stopped in the turn of initialize: it started, and the handshake is at fault.
    if (blame_the_turn()) {
      set("starts", Verdict::pass, "it started (" + link_.describe() + ")");
      skip_rest(*died_);
      co_return false;
    }
    died_in("starts", "before answering initialize");
    skip_rest("because it did not start");
    co_return false;
  }
  // A sandboxed plugin's pid is its helper's: the module says more of what started.
  set("starts", Verdict::pass,
      link_.pid() && !link_.sandboxed() ? "it started (pid " + std::to_string(*link_.pid()) + ")"
                                        : "it started (" + link_.describe() + ")");
  // The host's own judgment (supervisor/handshake.hpp); the bench also fails what the host only
  // journals: an answer that breaks the schema.
  const supervisor::HandshakeVerdict verdict =
      supervisor::judge_initialize(o, options_.initialize_timeout);
  const std::optional<std::string> failure = verdict.stop ? verdict.stop : verdict.fault;
  if (!failure) {
    link_.handshake_passed();
    const json::value* batch = verdict.result->capabilities.if_contains("batch");
    batch_ = batch && batch->is_bool() && batch->get_bool();
    set("handshake", Verdict::pass,
        "protocol " + std::to_string(proto::kProtocolVersion) + " in " +
            std::to_string(std::chrono::duration_cast<ms>(o.elapsed).count()) +
            " ms, capabilities " + quote(json::serialize(verdict.result->capabilities)));
    co_return true;
  }
  set("handshake", Verdict::fail, *failure, line);
  skip_rest("because handshake failed");
  co_return false;
}

asio::awaitable<void> BenchRun::check_calls() {
  // The bench's own answers may still be on the workers (the keychain, files).
  co_await link_.until([&] { return link_.calls_unanswered() == 0; }, kBarrierWait);
  const auto& calls = link_.calls();
  if (calls.empty()) {
    set("calls", Verdict::skip, "it made no call to Escouade during the run");
    co_return;
  }
  // Its reply to those answers, if it makes one, comes before its answer to a request sent after
  // them: without this round trip, a plugin slow to read them (a loaded machine) passed.
  (void)co_await barrier();
  // Escouade's answer to one of its calls answered back: the plugin took it for a request (an
  // error -32600 with the call's id is the usual sign).
  if (const auto back = link_.answers_to_answers(); !back.empty()) {
    const std::string id = json::serialize(back.front()->message.id);
    const auto call =
        std::find_if(calls.begin(), calls.end(), [&](const CallRecord& c) { return c.id == id; });
    set("calls", Verdict::fail,
        "it answered Escouade's answer to its own call " + call->method + " (id " + id +
            ") as if it were a request; an answer gets no answer",
        back.front()->text);
    co_return;
  }
  std::vector<std::string> methods;
  for (const auto& c : calls) {
    if (c.refused) {
      set("calls", Verdict::fail,
          "it called " + c.method + " for what it may not have: " + c.outcome,
          c.method + " " + c.params);
      co_return;
    }
    if (std::find(methods.begin(), methods.end(), c.method) == methods.end())
      methods.push_back(c.method);
  }
  set("calls", Verdict::pass,
      std::to_string(calls.size()) + " call" + (calls.size() == 1 ? "" : "s") +
          ", each served: " + joined(methods) + " (-v lists them)");
}

asio::awaitable<void> BenchRun::check_shutdown() {
  if (auto reason = gone()) {
    set("shutdown", Verdict::skip, *reason);
    co_return;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::size_t since = link_.lines_seen();
  CallOutcome o = co_await link_.call("shutdown", std::nullopt, kShutdownDelay);
  const SeenAnswer* seen = last_answer("shutdown", since);
  if (o.kind == CallOutcome::Kind::timeout) {
    set("shutdown", Verdict::fail, "it did not answer shutdown within 1 s");
  } else if (o.kind == CallOutcome::Kind::error) {
    set("shutdown", Verdict::fail,
        "it answered shutdown with the error " + std::to_string(o.error.code) + ": " +
            quote(o.error.message),
        seen ? std::optional<std::string>(seen->text) : std::nullopt);
  } else if (o.kind == CallOutcome::Kind::closed && !seen) {
    set("shutdown", Verdict::fail,
        "it exited (" + link_.exit_status()->reason + ") without answering shutdown");
  }
  const auto left = kShutdownDelay - (std::chrono::steady_clock::now() - start);
  const bool ended =
      co_await link_.until([&] { return link_.leader_ended(); },
                           std::max(std::chrono::duration_cast<ms>(left), ms(1)), ms(5));
  const auto took = std::chrono::duration_cast<ms>(std::chrono::steady_clock::now() - start);
  if (!ended) {
    set("shutdown", Verdict::fail, "it answered shutdown but did not exit within 1 s");
    co_return;
  }
  const auto leftovers = find_leftovers(run_token_);
  if (!leftovers.empty()) {
    std::string which;
    for (const auto& l : leftovers)
      which +=
          (which.empty() ? "" : ", ") + ("pid " + std::to_string(l.pid) + " (" + l.command + ")");
    set("shutdown", Verdict::fail,
        "it exited but left " + std::to_string(leftovers.size()) + " process" +
            (leftovers.size() == 1 ? "" : "es") + " running: " + which);
    co_return;
  }
  set("shutdown", Verdict::pass,
      "answered and exited in " + std::to_string(took.count()) + " ms, leaving no process behind");
}

void BenchRun::check_stdout() {
  const auto& faults = link_.stdout_faults();
  if (!faults.empty()) {
    set("stdout", Verdict::fail,
        "it wrote " + faults.front().reason + " on stdout" +
            (faults.size() > 1 ? " (and " + std::to_string(faults.size() - 1) + " more)" : "") +
            "; traces go to stderr",
        faults.front().text.empty() ? std::nullopt
                                    : std::optional<std::string>(faults.front().text));
    return;
  }
  set("stdout", Verdict::pass, std::to_string(link_.lines_seen()) + " lines, each JSON-RPC 2.0");
}

void BenchRun::check_answers() {
  const auto& faults = link_.answer_faults();
  if (!faults.empty()) {
    set("answers", Verdict::fail,
        faults.front().reason +
            (faults.size() > 1 ? " (and " + std::to_string(faults.size() - 1) + " more)" : ""),
        faults.front().text);
    return;
  }
  if (!id_problems_.empty()) {
    set("answers", Verdict::fail,
        "it did not echo the id " + id_problems_.front().first + ": " +
            id_problems_.front().second);
    return;
  }
  set("answers", Verdict::pass,
      std::to_string(link_.answers().size()) +
          " answers, each with its id echoed exactly; every result holds to its method's schema");
}

}  // namespace escouade::conformance
