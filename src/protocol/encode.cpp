#include "protocol/encode.hpp"

#include <cstring>
#include <optional>
#include <string_view>

#include "base/utf8.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/json_write.hpp"

namespace escouade::proto {

namespace json = boost::json;

std::optional<Error> line_problem(std::string_view out) {
  // The serializer escapes control characters; this check keeps that promise whatever
  // a future writer does.
  if (std::memchr(out.data(), '\n', out.size()) || std::memchr(out.data(), '\r', out.size())) {
    return Error{ErrorCode::internal, "a message would hold a raw line break"};
  }
  if (!is_valid_utf8(out)) {
    return Error{ErrorCode::internal,
                 "a message holds text that is not valid UTF-8; it was not sent"};
  }
  return std::nullopt;
}

namespace {

// Past this, a result given as text is written straight into a line of its own size.
constexpr std::size_t kLongResult = 16 * 1024;

Result<std::string> finish_line(std::string out) {
  if (auto problem = line_problem(out)) return *problem;
  out += '\n';
  return out;
}

// The line `write` makes, written into a buffer of this thread's and copied out at its size:
// one allocation a line however it grew (a request of 419 bytes grew 128 -> 256 -> 512 bytes),
// and no room kept past its size by a line that waits in a queue. A long line's room is not
// kept either.
template <class Write>
Result<std::string> line_of(Write&& write) {
  thread_local std::string scratch;
  scratch.clear();
  write(scratch);
  Result<std::string> out = [&]() -> Result<std::string> {
    if (auto problem = line_problem(scratch)) return *problem;
    std::string line;
    line.reserve(scratch.size() + 1);
    line.append(scratch).push_back('\n');
    return line;
  }();
  if (scratch.capacity() > 64 * 1024) std::string().swap(scratch);
  return out;
}

// A request's members after "jsonrpc" (a notification's when `id` is null). The host's own
// requests and notifications are written by rpc::Outgoing, in the same order.
void append_call_members(std::string& out, const json::value* id, std::string_view method,
                         const std::optional<json::value>& params) {
  if (id) {
    out += R"(,"id":)";
    write_json(out, *id);
  }
  out += R"(,"method":)";
  write_json(out, method);
  if (params) {
    out += R"(,"params":)";
    write_json(out, *params);
  }
}

}  // namespace

void append_message(std::string& out, const Message& m) {
  out += R"({"jsonrpc":"2.0")";
  switch (m.kind) {
    case MessageKind::request:
    case MessageKind::notification:
      append_call_members(out, m.kind == MessageKind::request ? &m.id : nullptr, m.method,
                          m.params);
      break;
    case MessageKind::response:
      out += R"(,"id":)";
      write_json(out, m.id);
      out += R"(,"result":)";
      if (m.result_text.empty()) {
        write_json(out, m.result);
      } else {
        out += m.result_text;  // checked JSON, as it came
      }
      break;
    case MessageKind::error_response:
      out += R"(,"id":)";
      write_json(out, m.id);
      out += R"(,"error":{"code":)";
      out += std::to_string(m.error.code);
      out += R"(,"message":)";
      write_json(out, m.error.message);
      if (m.error.data) {
        out += R"(,"data":)";
        write_json(out, *m.error.data);
      }
      out += '}';
      break;
  }
  out += '}';
}

Result<std::string> encode(const Message& message) {
  // A result that came as text is copied once, into a line of its size: a long one (a file of
  // 256 KiB) grew the thread's buffer by doubling, each step a fresh allocation, then was copied
  // again.
  if (message.kind == MessageKind::response && message.result_text.size() > kLongResult) {
    std::string out;
    out.reserve(message.result_text.size() + 64);
    append_message(out, message);
    return finish_line(std::move(out));
  }
  return line_of([&](std::string& out) { append_message(out, message); });
}

Result<std::string> encode_notification(std::string_view method, const json::value& params) {
  return line_of([&](std::string& out) {
    out += R"({"jsonrpc":"2.0","method":)";
    write_json(out, method);
    out += R"(,"params":)";
    write_json(out, params);
    out += '}';
  });
}

Result<std::string> encode_batch(std::span<const Message> messages) {
  if (messages.empty()) {
    return Error{ErrorCode::internal, "an empty batch is never sent"};
  }
  std::string out = "[";
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (i) out += ',';
    append_message(out, messages[i]);
  }
  out += ']';
  return finish_line(std::move(out));
}

std::optional<std::string> take_long_answer_line(Message& answer) {
  if (answer.kind != MessageKind::response || answer.result_text.size() <= kLongResult)
    return std::nullopt;
  std::string head = R"({"jsonrpc":"2.0","id":)";
  write_json(head, answer.id);
  head += R"(,"result":)";
  // Checked apart, as encode() checks the whole line: both parts end on ASCII, so neither can
  // complete a UTF-8 sequence the other began.
  if (line_problem(head) || line_problem(answer.result_text)) return std::nullopt;
  std::string line = std::move(answer.result_text);
  answer.result_text.clear();
  line.reserve(head.size() + line.size() + 2);
  line.insert(0, head);
  line += "}\n";
  return line;
}

Result<std::optional<std::string>> encode_answer(bool batch, std::span<const Message> answers) {
  if (answers.empty()) return std::optional<std::string>();
  auto line = batch ? encode_batch(answers) : encode(answers.front());
  if (!line) return line.error();
  return std::optional<std::string>(std::move(*line));
}

}  // namespace escouade::proto
