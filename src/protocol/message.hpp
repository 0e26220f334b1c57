#pragma once

// The JSON-RPC 2.0 message model: what one line carries once parsed and checked.

#include <boost/container/small_vector.hpp>
#include <boost/json/value.hpp>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace escouade::proto {

enum class MessageKind { request, notification, response, error_response };

// The error member of an error response.
struct ErrorObject {
  int code = 0;
  std::string message;
  std::optional<boost::json::value> data;

  friend bool operator==(const ErrorObject&, const ErrorObject&) = default;
};

// A valid JSON-RPC 2.0 message. Which members mean something depends on `kind`:
// request: id, method, params; notification: method, params; response: id, result;
// error_response: id, error.
struct Message {
  MessageKind kind = MessageKind::notification;
  // A string, a number or null, echoed with its type in the answer.
  boost::json::value id;
  std::string method;
  // nullopt when the message had no params (or "params": null, taken as none).
  std::optional<boost::json::value> params;
  boost::json::value result;
  // A response whose result is JSON text taken as it came (Message::response_text): written as
  // it is, `result` then null. Empty otherwise.
  std::string result_text;
  ErrorObject error;

  static Message request(boost::json::value id, std::string method,
                         std::optional<boost::json::value> params = std::nullopt);
  static Message notification(std::string method,
                              std::optional<boost::json::value> params = std::nullopt);
  static Message response(boost::json::value id, boost::json::value result);
  // `result`: one JSON value that proto::is_json_text accepted, with no raw line break.
  static Message response_text(boost::json::value id, std::string result);
  static Message error_response(boost::json::value id, int code, std::string message,
                                std::optional<boost::json::value> data = std::nullopt);

  bool is_call() const noexcept {
    return kind == MessageKind::request || kind == MessageKind::notification;
  }
  bool is_answer() const noexcept { return !is_call(); }

  friend bool operator==(const Message&, const Message&) = default;
};

// Something a line carried that is not a valid message: the whole line (a parse error, or a
// value that is neither an object nor a non-empty array) or one element of a batch.
struct Invalid {
  int code = 0;        // -32700 (parse) or -32600 (invalid request)
  std::string reason;  // why, in English, for the journal
  // The id to answer with: the message's own when it could be read, null otherwise.
  boost::json::value id;
  // False for something shaped as a response (it has result or error but no method): an
  // answer is never answered, which keeps two peers from answering each other forever.
  bool answer_due = true;
};

using Entry = std::variant<Message, Invalid>;

// What one line carried: a single entry, or a batch of them in their order. A single entry is
// held inline: nearly every line is one message, and a list on the heap cost an allocation and
// its free a line (callgrind, bench_host call).
struct Parsed {
  bool batch = false;
  boost::container::small_vector<Entry, 1> entries;
};

// Moves `from` into `to` keeping `from`'s memory resource. A decoded message's values live in
// the arena of their line; json::value's move assignment would copy them into `to`'s resource
// (the heap), one allocation per key and string, where they can as well stay in the arena,
// which they then keep alive (as does a copy made by json::value's copy constructor, which
// keeps its source's resource; assigning to such a value allocates in the arena, which frees
// nothing until it goes: a value to keep and change for long is to be copied out first, into
// the default resource). Callgrind, a call's 400-byte answer: 4.4k instructions, and as
// many frees later, each time a message's value is handed on (docs/PERFORMANCE.md).
inline void adopt(boost::json::value& to, boost::json::value&& from) noexcept {
  std::destroy_at(&to);
  std::construct_at(&to, std::move(from));
}
inline void adopt(std::optional<boost::json::value>& to, boost::json::value&& from) noexcept {
  to.emplace(std::move(from));
}

// The error response JSON-RPC 2.0 asks for when `invalid.answer_due`.
Message error_reply(const Invalid& invalid);

}  // namespace escouade::proto
