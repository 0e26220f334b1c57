#include "lint.hpp"

#include <fmt/format.h>

#include <boost/json/serialize.hpp>
#include <cctype>
#include <map>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/decode.hpp"
#include "protocol/framing.hpp"
#include "protocol/params_check.hpp"
#include "protocol/wire_error.hpp"

namespace escouade::cli {

namespace json = boost::json;
using proto::Direction;
using proto::Message;
using proto::MessageKind;

namespace {

enum class Sender { unknown, escouade, plugin };

std::string_view arrow(Sender s) {
  switch (s) {
    case Sender::escouade:
      return "-->";
    case Sender::plugin:
      return "<--";
    case Sender::unknown:
      break;
  }
  return "   ";
}

std::string_view kind_name(MessageKind k) {
  switch (k) {
    case MessageKind::request:
      return "request";
    case MessageKind::notification:
      return "notification";
    case MessageKind::response:
      return "response";
    case MessageKind::error_response:
      return "error";
  }
  return "";
}

Sender other(Sender s) {
  return s == Sender::escouade ? Sender::plugin
         : s == Sender::plugin ? Sender::escouade
                               : Sender::unknown;
}

// One finding about one message: empty `problem` means it holds.
struct Finding {
  std::string what;     // "request initialize #1"
  std::string problem;  // what is wrong, empty when nothing is
  std::string note;     // worth saying, not wrong
};

class Linter {
 public:
  // `label`: the plugin of a trace of several (its id), said before each finding; or empty.
  Linter(std::ostream& out, const LintOptions& options, std::string label = {})
      : out_(out), options_(options), label_(std::move(label)) {}

  void line(std::size_t number, std::string_view text, LintSummary& s) {
    Sender sender = Sender::unknown;
    if (text.starts_with("--> ")) {
      sender = Sender::escouade;
      text.remove_prefix(4);
    } else if (text.starts_with("<-- ")) {
      sender = Sender::plugin;
      text.remove_prefix(4);
    }
    proto::Parsed parsed = decoder_.decode(text);
    std::vector<std::pair<Sender, Finding>> findings;
    for (auto& entry : parsed.entries) {
      if (auto* invalid = std::get_if<proto::Invalid>(&entry)) {
        Finding f;
        f.what = invalid->code == proto::wire_code(proto::ErrorCode::parse) ? "not JSON"
                                                                            : "not JSON-RPC 2.0";
        f.problem = fmt::format("{} ({})", invalid->reason, invalid->code);
        if (invalid->answer_due) {
          f.note = fmt::format("answered with error {} and id {}", invalid->code,
                               json::serialize(invalid->id));
        }
        findings.emplace_back(sender, std::move(f));
        continue;
      }
      auto& m = std::get<Message>(entry);
      ++s.messages;
      Sender who = sender;
      findings.emplace_back(who, m.is_call() ? call(m, who, s) : answer(m, who, s));
      if (findings.back().first == Sender::unknown) findings.back().first = who;
    }
    if (parsed.batch) ++s.batches;
    for (auto& [who, f] : findings) {
      if (!f.problem.empty()) ++s.problems;
      if (options_.quiet && f.problem.empty()) continue;
      print(number, who, parsed.batch, f);
    }
  }

  void too_long(std::size_t number, std::size_t limit, LintSummary& s) {
    ++s.problems;
    print(number, Sender::unknown, false,
          Finding{"line", fmt::format("longer than the limit of {} bytes: dropped", limit), ""});
  }

 private:
  Finding call(const Message& m, Sender& who, LintSummary& s) {
    ++s.calls;
    Finding f;
    f.what = fmt::format("{} {}", kind_name(m.kind), m.method);
    if (m.kind == MessageKind::request) f.what += " #" + json::serialize(m.id);
    const proto::MethodInfo* info = proto::find_method(m.method);
    if (!info) {
      f.note = "not a method of protocol 1: the other side answers " +
               proto::code_text(proto::ErrorCode::method_not_found);
      if (m.kind == MessageKind::request) pending_[{who, json::serialize(m.id)}] = m.method;
      return f;
    }
    const Sender expected =
        info->direction == Direction::to_plugin ? Sender::escouade : Sender::plugin;
    if (who == Sender::unknown) {
      who = expected;
    } else if (who != expected) {
      f.problem = fmt::format(
          "{} goes from {} only", m.method,
          expected == Sender::escouade ? "Escouade to the plugin" : "the plugin to Escouade");
      return f;
    }
    if (info->notification && m.kind == MessageKind::request) {
      f.problem = fmt::format("{} is a notification: it carries no id", m.method);
      return f;
    }
    if (!info->notification && m.kind == MessageKind::notification) {
      f.problem = fmt::format("{} expects an answer: it needs an id", m.method);
      return f;
    }
    if (auto ok = proto::check_params(*info, m.params ? &*m.params : nullptr); !ok) {
      f.problem = ok.error().message;
      return f;
    }
    if (m.kind == MessageKind::request) {
      pending_[{who, json::serialize(m.id)}] = m.method;
      f.note = fmt::format("answer due within {} ms", info->timeout_ms);
    }
    return f;
  }

  Finding answer(const Message& m, Sender& who, LintSummary& s) {
    ++s.answers;
    Finding f;
    const std::string id = json::serialize(m.id);
    f.what = fmt::format("{} #{}", kind_name(m.kind), id);
    // The request it answers was sent by the other side; without a prefix, either side.
    auto it = pending_.end();
    for (Sender asker : {other(who), Sender::escouade, Sender::plugin, Sender::unknown}) {
      if (who != Sender::unknown && asker != other(who)) continue;
      it = pending_.find({asker, id});
      if (it != pending_.end()) break;
    }
    if (it == pending_.end()) {
      f.problem = fmt::format("answers no request in flight with id {}", id);
      return f;
    }
    if (who == Sender::unknown) who = other(it->first.first);
    const std::string method = it->second;
    pending_.erase(it);
    f.what = fmt::format("{} {} #{}", kind_name(m.kind), method, id);
    const proto::MethodInfo* info = proto::find_method(method);
    if (!info) return f;
    if (m.kind == MessageKind::response) {
      if (auto ok = proto::check_result(*info, m.result); !ok) f.problem = ok.error().message;
    } else {
      f.note = fmt::format("error {}: {}", m.error.code, m.error.message);
    }
    return f;
  }

  void print(std::size_t number, Sender who, bool in_batch, const Finding& f) {
    const bool bad = !f.problem.empty();
    std::string verdict = bad ? f.problem : (f.note.empty() ? "ok" : "ok (" + f.note + ")");
    if (bad && !f.note.empty()) verdict += "; " + f.note;
    if (options_.color) verdict = (bad ? "\033[31m" : "\033[32m") + verdict + "\033[0m";
    out_ << fmt::format("{:>5} {} {:<2} {:<40} {}\n", number, arrow(who), in_batch ? "[]" : "",
                        label_.empty() ? f.what : label_ + ": " + f.what, verdict);
  }

  std::ostream& out_;
  const LintOptions& options_;
  std::string label_;
  proto::Decoder decoder_;
  // Requests in flight: who sent it and its id -> its method.
  std::map<std::pair<Sender, std::string>, std::string> pending_;
};

// What a trace puts before the direction (escouade-plugin test/run --trace,
// journal/trace_file.hpp): "2026-12-04T22:51:12.123Z " and, when it holds several plugins,
// "dev.example.guard ". Taken off `text`; the plugin's id, or empty.
std::string trace_prefix(std::string_view& text) {
  const auto is_time = [](std::string_view t) {
    return t.size() >= 20 && std::isdigit(static_cast<unsigned char>(t[0])) && t[4] == '-' &&
           t[10] == 'T' && t.back() == 'Z';
  };
  const auto space = text.find(' ');
  if (space == std::string_view::npos || !is_time(text.substr(0, space))) return {};
  std::string_view rest = text.substr(space + 1);
  if (rest.starts_with("--> ") || rest.starts_with("<-- ")) {
    text = rest;
    return {};
  }
  const auto next = rest.find(' ');
  if (next == std::string_view::npos) return {};
  const std::string_view after = rest.substr(next + 1);
  if (!after.starts_with("--> ") && !after.starts_with("<-- ")) return {};
  text = after;
  return std::string(rest.substr(0, next));
}

}  // namespace

LintSummary lint(std::istream& in, const std::string& name, std::ostream& out,
                 const LintOptions& options) {
  LintSummary s;
  Linter linter(out, options);
  // A trace of several plugins: one linter each, its requests and answers its own.
  std::map<std::string, std::unique_ptr<Linter>, std::less<>> plugins;
  proto::LineFramer framer;
  std::size_t number = 0;
  std::vector<char> buffer(64 * 1024);
  auto on_line = [&](std::string_view text) {
    ++number;
    ++s.lines;
    const std::string plugin = trace_prefix(text);
    if (plugin.empty()) return linter.line(number, text, s);
    auto& of = plugins[plugin];
    if (!of) of = std::make_unique<Linter>(out, options, plugin);
    of->line(number, text, s);
  };
  auto on_too_long = [&](std::size_t limit) {
    ++number;
    linter.too_long(number, limit, s);
  };
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    s.bytes += got;
    framer.feed(std::string_view(buffer.data(), got), on_line, on_too_long);
  }
  if (std::string rest = framer.finish(); !rest.empty()) on_line(rest);

  out << fmt::format("{}: {} lines, {} messages ({} batch{}), {} calls, {} answers: {}.\n", name,
                     s.lines, s.messages, s.batches, s.batches == 1 ? "" : "es", s.calls, s.answers,
                     s.problems == 0
                         ? "everything holds to protocol 1"
                         : fmt::format("{} problem{}", s.problems, s.problems == 1 ? "" : "s"));
  return s;
}

}  // namespace escouade::cli
