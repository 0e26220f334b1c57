// The checks of how the plugin handles messages as such: ids of every type, unknown methods,
// notifications, batches and lines that are not JSON-RPC 2.0.

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "conformance/bench_run.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/wire_error.hpp"

namespace escouade::conformance {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr std::chrono::milliseconds kAnswerWait{5000};  // x-defaultTimeoutMs
constexpr int kMethodNotFound = static_cast<int>(proto::ErrorCode::method_not_found);
const std::string kNotFoundText = proto::code_text(proto::ErrorCode::method_not_found);
constexpr std::string_view kUnknownMethod = "bench/no-such-method";

}  // namespace

asio::awaitable<void> BenchRun::check_ids_and_unknown_method() {
  // An integer, a string that needs escaping, and the largest integer a double holds exactly
  // (2^53 - 1): an id is echoed with its type and its every digit.
  const std::vector<json::value> ids = {json::value(std::int64_t{1000041}),
                                        json::string("bench-id-\xC3\xA9 \"q\" \\ /"),
                                        json::value(std::int64_t{9007199254740991})};
  for (const auto& id : ids)
    link_.send_raw(request_line(id, kUnknownMethod, json::object{{"probe", true}}));

  std::optional<std::string> unknown_fault;
  std::optional<std::string> unknown_line;
  for (const auto& id : ids) {
    co_await link_.until([&] { return answer_like(id) != nullptr; }, delay(kAnswerWait));
    const SeenAnswer* a = answer_like(id);
    const std::string sent = json::serialize(id);
    if (!a) {
      id_problems_.emplace_back(sent, "no answer came with it");
      if (!unknown_fault) {
        if (link_.exited()) {
          died_in("unknown-method", "on the unknown method " + std::string(kUnknownMethod));
        } else {
          unknown_fault = "it did not answer the unknown method " + std::string(kUnknownMethod) +
                          " (id " + sent + ") within " + delay_text(kAnswerWait) +
                          "; it should answer " + kNotFoundText;
        }
      }
      continue;
    }
    if (unknown_fault) continue;
    if (a->message.kind == proto::MessageKind::response) {
      unknown_fault = "it answered the unknown method " + std::string(kUnknownMethod) +
                      " with a result; it should answer the error " + kNotFoundText;
      unknown_line = a->text;
    } else if (a->message.error.code != kMethodNotFound) {
      unknown_fault = "it answered the unknown method " + std::string(kUnknownMethod) +
                      " with the error " + std::to_string(a->message.error.code) +
                      "; it should be " + kNotFoundText;
      unknown_line = a->text;
    }
  }
  if (unknown_fault) {
    set("unknown-method", Verdict::fail, *unknown_fault, unknown_line);
  } else {
    set("unknown-method", Verdict::pass,
        "an unknown method got " + kNotFoundText + ", three times");
  }
}

asio::awaitable<void> BenchRun::check_notification() {
  if (auto reason = gone()) {
    set("notification", Verdict::skip, *reason);
    co_return;
  }
  const std::size_t since = link_.lines_seen();
  std::string sent;
  const auto names = fact_names();
  if (!names.empty()) {
    link_.notify("events/fact", fact(names.front()));
    sent = "events/fact (" + names.front() + ") and ";
  }
  link_.notify("bench/no-such-notification", json::object{{"probe", true}});
  sent += "an unknown notification";
  const bool answered = co_await barrier();
  if (const auto strays = link_.stray_answers(since); !strays.empty()) {
    set("notification", Verdict::fail,
        "it answered a notification (" + sent + " were sent); a notification gets no answer",
        strays.front()->text);
  } else if (link_.exited()) {
    died_in("notification", "after " + sent);
  } else if (!answered) {
    set("notification", Verdict::fail,
        "it stopped answering after " + sent + ": a request sent next had no answer in " +
            delay_text(kAnswerWait));
  } else {
    set("notification", Verdict::pass, sent + " got no answer");
  }
}

asio::awaitable<void> BenchRun::check_batch() {
  if (!batch_) {
    set("batch", Verdict::skip, "it does not announce capabilities.batch");
    co_return;
  }
  if (auto reason = gone()) {
    set("batch", Verdict::skip, *reason);
    co_return;
  }
  const std::size_t since = link_.lines_seen();
  std::vector<json::value> ids = {json::string("bench-batch-1"), json::value(std::int64_t{1000051}),
                                  json::string("bench-batch-3")};
  json::array batch;
  batch.push_back(json::parse(request_line(ids[0], kUnknownMethod, json::object{})));
  const auto names = fact_names();
  if (!names.empty()) {
    batch.push_back(json::object{
        {"jsonrpc", "2.0"}, {"method", "events/fact"}, {"params", fact(names.front())}});
  } else {
    batch.push_back(json::object{{"jsonrpc", "2.0"}, {"method", "bench/no-such-notification"}});
  }
  if (manifest_.permissions.decide) {
    batch.push_back(json::parse(request_line(
        ids[1], "permissions/decide",
        decide_params("command", "Bash", json::object{{"command", "npm test"}}, 100))));
  } else {
    batch.push_back(json::parse(request_line(ids[1], kUnknownMethod, json::object{})));
  }
  batch.push_back(json::parse(request_line(ids[2], kUnknownMethod, json::object{})));
  link_.send_raw(json::serialize(batch));

  co_await link_.until(
      [&] {
        for (const auto& id : ids) {
          if (!answer_like(id)) return false;
        }
        return true;
      },
      delay(kAnswerWait));

  const SeenAnswer* first = nullptr;
  for (const auto& id : ids) {
    const SeenAnswer* a = answer_like(id);
    if (!a) {
      if (link_.exited()) {
        died_in("batch", "on a batch of 4 messages");
      } else {
        set("batch", Verdict::fail,
            "its answer to a batch lacks the id " + json::serialize(id) + " (none within " +
                delay_text(kAnswerWait) + ")",
            first ? std::optional<std::string>(first->text) : std::nullopt);
      }
      co_return;
    }
    if (!a->in_batch) {
      set("batch", Verdict::fail,
          "it answered a batch with separate lines; a batch is answered with one batch", a->text);
      co_return;
    }
    if (first && a->line != first->line) {
      set("batch", Verdict::fail,
          "it answered one batch with several batches; a batch is answered with one batch",
          a->text);
      co_return;
    }
    if (!first) first = a;
  }
  if (const auto strays = link_.stray_answers(since); !strays.empty()) {
    set("batch", Verdict::fail, "it answered the notification inside a batch",
        strays.front()->text);
    co_return;
  }
  set("batch", Verdict::pass,
      "a batch of 3 requests and a notification got one batch with the 3 ids");
}

asio::awaitable<void> BenchRun::check_malformed() {
  if (auto reason = gone()) {
    set("malformed", Verdict::skip, *reason);
    co_return;
  }
  struct Bad {
    std::string line;
    std::string what;
  };
  const std::vector<Bad> bad = {
      {"this is not JSON {\"jsonrpc\":", "a line that is not JSON"},
      {R"({"hello":"world"})", "JSON that is not JSON-RPC 2.0"},
      {R"({"jsonrpc":"1.0","id":"bench-bad-version","method":"bench/x"})",
       "a message of JSON-RPC 1.0"},
  };
  for (const auto& b : bad) {
    const std::size_t since = link_.lines_seen();
    link_.send_raw(b.line);
    const bool answered = co_await barrier();
    for (const SeenAnswer* s : link_.stray_answers(since)) {
      if (s->message.kind == proto::MessageKind::response) {
        set("malformed", Verdict::fail,
            "it answered " + b.what + " with a result; such a line gets an error or nothing",
            s->text);
        co_return;
      }
    }
    if (link_.exited()) {
      died_in("malformed", "after " + b.what + ": " + quote(b.line));
      co_return;
    }
    if (!answered) {
      set("malformed", Verdict::fail,
          "it stopped answering after " + b.what + ": a request sent next had no answer in " +
              delay_text(kAnswerWait),
          quote(b.line));
      co_return;
    }
  }
  set("malformed", Verdict::pass,
      "it went on answering after a line that is not JSON and two that are not JSON-RPC 2.0");
}

}  // namespace escouade::conformance
