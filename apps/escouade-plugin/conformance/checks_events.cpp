// The checks of what the plugin is for: permission decisions, the facts it hears, and both
// under a burst.

#include <boost/json/serialize.hpp>

#include "conformance/bench_run.hpp"
#include "protocol/gen/methods.hpp"
#include "protocol/gen/types.hpp"

namespace escouade::conformance {

namespace asio = boost::asio;
namespace json = boost::json;
using rpc::CallOutcome;

namespace {

constexpr std::chrono::milliseconds kDecideDelay{proto::method::PermissionsDecide::kTimeoutMs};
constexpr std::chrono::milliseconds kAnswerWait{proto::kDefaultTimeoutMs};
constexpr int kBurstFacts = 1000;
constexpr std::string_view kBurst = "a burst of 1,000 facts";

json::object project() {
  return {{"id", "bench-project"}, {"name", "Bench project"}, {"private", false}};
}

json::object data_for(std::string_view name) {
  if (name == "agent.status") return {{"status", "working"}, {"was", "idle"}};
  if (name == "ticket.column") return {{"from", "todo"}, {"to", "doing"}};
  if (name == "turn.ended") return {{"end", "done"}};
  return {};
}

json::object npm_test() {
  return {{"command", "npm test"}};
}

std::string ms_text(std::chrono::steady_clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

}  // namespace

std::vector<std::string> BenchRun::fact_names() const {
  std::vector<std::string> out;
  const int last = static_cast<int>(proto::FactName::workflow_changed);
  for (int i = 0; i <= last; ++i) {
    const std::string_view name = proto::to_string(static_cast<proto::FactName>(i));
    for (const auto& selector : manifest_.permissions.events) {
      if (selector.matches(name)) {
        out.emplace_back(name);
        break;
      }
    }
  }
  return out;
}

json::object BenchRun::fact(std::string_view name) {
  return {{"name", name},
          {"version", 1},
          {"seq", ++seq_},
          {"at", "2026-01-05T10:00:00.000Z"},
          {"project", project()},
          {"ticket", {{"id", "bench-ticket-1"}, {"key", "ESC-12"}, {"title", "Bench ticket"}}},
          {"agent", {{"id", "bench-agent-1"}, {"name", "Bench agent"}}},
          {"data", data_for(name)}};
}

json::object BenchRun::decide_params(std::string_view kind, std::string_view tool,
                                     json::object input, int n) {
  return {{"request",
           {{"id", "bench-request-" + std::to_string(n)},
            {"kind", kind},
            {"tool", tool},
            {"input", std::move(input)}}},
          {"project", project()},
          {"ticket", {{"id", "bench-ticket-1"}, {"key", "ESC-12"}, {"title", "Bench ticket"}}},
          {"agent", {{"id", "bench-agent-1"}, {"name", "Bench agent"}}}};
}

asio::awaitable<void> BenchRun::check_decide() {
  if (!manifest_.permissions.decide) {
    set("decide", Verdict::skip, "it does not ask for permissions.decide");
    co_return;
  }
  if (auto reason = gone()) {
    set("decide", Verdict::skip, *reason);
    co_return;
  }
  struct Ask {
    std::string what;
    std::string kind;
    std::string tool;
    json::object input;
  };
  const std::vector<Ask> asks = {
      {"Bash `npm test`", "command", "Bash", {{"command", "npm test"}}},
      {"Bash `rm -rf /`", "command", "Bash", {{"command", "rm -rf /"}}},
      {"Edit src/main.ts",
       "edit",
       "Edit",
       {{"file_path", "/home/dev/bench-project/src/main.ts"},
        {"old_string", "let a = 1;"},
        {"new_string", "let a = 2;"}}},
      {"WebFetch https://example.com/docs",
       "fetch",
       "WebFetch",
       {{"url", "https://example.com/docs"}, {"prompt", "Summarize the page"}}},
  };
  std::string summary;
  int n = 0;
  for (const auto& ask : asks) {
    const std::size_t since = link_.lines_seen();
    CallOutcome o =
        co_await link_.call("permissions/decide", decide_params(ask.kind, ask.tool, ask.input, ++n),
                            delay(kDecideDelay));
    const SeenAnswer* seen = last_answer("permissions/decide", since);
    const std::optional<std::string> line =
        seen ? std::optional<std::string>(seen->text) : std::nullopt;
    switch (o.kind) {
      case CallOutcome::Kind::closed:
        died_in("decide", "on permissions/decide for " + ask.what);
        co_return;
      case CallOutcome::Kind::timeout:
        for (const auto& a : link_.answers()) {
          if (a.line >= since && !a.matched && a.method == "permissions/decide") {
            set("decide", Verdict::fail,
                "it answered permissions/decide for " + ask.what +
                    " with the id echoed as another type, so no answer came within " +
                    delay_text(kDecideDelay),
                a.text);
            co_return;
          }
        }
        set("decide", Verdict::fail,
            "it did not answer permissions/decide for " + ask.what + " within " +
                delay_text(kDecideDelay));
        co_return;
      case CallOutcome::Kind::error:
        set("decide", Verdict::fail,
            "it answered permissions/decide for " + ask.what + " with the error " +
                std::to_string(o.error.code) + "; it should give a Decision",
            line);
        co_return;
      case CallOutcome::Kind::result:
        break;
    }
    proto::ReadContext ctx;
    const proto::MethodInfo* info = proto::find_method("permissions/decide");
    if (!info->check_result(o.result, ctx)) {
      set("decide", Verdict::fail,
          "its answer to permissions/decide for " + ask.what +
              " is not a Decision: " + ctx.message("result"),
          line);
      co_return;
    }
    summary += (summary.empty() ? "" : ", ") + ask.what + ": " +
               std::string(o.result.at("decision").as_string()) + " (" + ms_text(o.elapsed) + ")";
  }
  set("decide", Verdict::pass, summary);
}

asio::awaitable<void> BenchRun::check_facts() {
  const auto names = fact_names();
  if (names.empty()) {
    set("facts", Verdict::skip, "it hears no facts (permissions.events is empty)");
    co_return;
  }
  if (auto reason = gone()) {
    set("facts", Verdict::skip, *reason);
    co_return;
  }
  const std::size_t since = link_.lines_seen();
  struct Round {
    std::string what;
    std::vector<json::object> facts;
  };
  std::vector<Round> rounds(3);
  rounds[0].what = std::to_string(names.size()) + " fact" + (names.size() == 1 ? "" : "s") +
                   " of its permissions.events";
  for (const auto& name : names)
    rounds[0].facts.push_back(fact(name));
  rounds[1].what = "a fact with fields it cannot know (bench_extra, data.unknownField)";
  json::object extra = fact(names.front());
  extra["bench_extra"] = json::object{{"nested", json::array{1, "two", nullptr}}};
  extra["data"].as_object()["unknownField"] = true;
  extra["version"] = 2;
  rounds[1].facts.push_back(std::move(extra));
  rounds[2].what = "a fact of a name it cannot know (bench.unknown-fact)";
  rounds[2].facts.push_back(fact("bench.unknown-fact"));

  for (const auto& round : rounds) {
    for (const auto& f : round.facts)
      link_.notify("events/fact", f);
    const bool answered = co_await barrier();
    if (const auto strays = link_.stray_answers(since); !strays.empty()) {
      set("facts", Verdict::fail, "it answered a fact; facts are notifications",
          strays.front()->text);
      co_return;
    }
    if (link_.exited()) {
      died_in("facts", "on " + round.what);
      co_return;
    }
    if (!answered) {
      set("facts", Verdict::fail,
          "it stopped answering after " + round.what + ": a request sent next had no answer in " +
              delay_text(kAnswerWait));
      co_return;
    }
  }
  set("facts", Verdict::pass,
      "it heard " + rounds[0].what +
          ", one with unknown fields and one of an unknown name, "
          "answering none and answering on");
}

asio::awaitable<void> BenchRun::check_burst() {
  const auto names = fact_names();
  if (names.empty()) {
    set("burst", Verdict::skip, "it hears no facts (permissions.events is empty)");
    co_return;
  }
  if (auto reason = gone()) {
    set("burst", Verdict::skip, *reason);
    co_return;
  }
  const std::size_t since = link_.lines_seen();
  for (int i = 0; i < kBurstFacts; ++i)
    link_.notify("events/fact", fact(names[static_cast<std::size_t>(i) % names.size()]));
  const std::string burst(kBurst);
  std::string result;
  if (manifest_.permissions.decide) {
    json::object params = decide_params("command", "Bash", npm_test(), 1000);
    CallOutcome o =
        co_await link_.call("permissions/decide", std::move(params), delay(kDecideDelay));
    if (o.kind == CallOutcome::Kind::closed) {
      died_in("burst", "during " + burst);
      co_return;
    }
    if (o.kind == CallOutcome::Kind::timeout) {
      // One that dies while it works through the burst may take longer than the delay to do
      // so on a loaded machine: the fault to name is its death, if a request sent next shows it.
      if (!co_await barrier() && link_.exited()) {
        died_in("burst", "during " + burst);
        co_return;
      }
      set("burst", Verdict::fail,
          "it did not answer permissions/decide within " + delay_text(kDecideDelay) + " after " +
              burst);
      co_return;
    }
    result = "permissions/decide answered in " + ms_text(o.elapsed);
  } else {
    const json::value id = json::string("bench-burst");
    link_.send_raw(request_line(id, "bench/no-such-method", json::object{}));
    const auto start = std::chrono::steady_clock::now();
    const bool answered =
        co_await link_.until([&] { return answer_like(id) != nullptr; }, delay(kAnswerWait));
    if (link_.exited() && !answered) {
      died_in("burst", "during " + burst);
      co_return;
    }
    if (!answered) {
      set("burst", Verdict::fail,
          "it did not answer an unknown method within " + delay_text(kAnswerWait) + " after " +
              burst);
      co_return;
    }
    result = "an unknown method answered in " + ms_text(std::chrono::steady_clock::now() - start);
  }
  if (const auto strays = link_.stray_answers(since); !strays.empty()) {
    set("burst", Verdict::fail, "it answered facts of " + burst, strays.front()->text);
    co_return;
  }
  set("burst", Verdict::pass, result + " after " + burst);
}

}  // namespace escouade::conformance
