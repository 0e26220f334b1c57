#pragma once

// Writes messages as lines: JSON-RPC 2.0 with "jsonrpc":"2.0" first, one line ended by '\n'.
// The JSON writer escapes every control character, so a message never holds a raw line break;
// and a message whose text is not valid UTF-8 is refused rather than sent.

#include <optional>
#include <span>
#include <string>

#include "base/result.hpp"
#include "protocol/json_write.hpp"
#include "protocol/message.hpp"

namespace escouade::proto {

// The line for one message, '\n' included. Fails with internal (-32603) when a string in it is
// not valid UTF-8.
Result<std::string> encode(const Message& message);

// The line of a request, '\n' included, without a Message made around its params: the bytes
// encode(Message::request(id, method, params)) gives, refused as it refuses them.
Result<std::string> encode_request(std::int64_t id, std::string_view method,
                                   const std::optional<boost::json::value>& params);

// The line for a notification, without copying its params: what a fact sent to many plugins
// is encoded with, once.
Result<std::string> encode_notification(std::string_view method, const boost::json::value& params);

// The line for a batch: a JSON array of the messages, '\n' included. An empty batch is refused:
// JSON-RPC 2.0 sends nothing at all when a batch has no answer.
Result<std::string> encode_batch(std::span<const Message> messages);

// The line that answers a line, by JSON-RPC 2.0's rules: nothing when it called for no answer
// (only notifications, or only answers), an array when it was a batch (even of one answer),
// a single message otherwise.
Result<std::optional<std::string>> encode_answer(bool batch, std::span<const Message> answers);

// The params of a request sent to many (a decision asked of every plugin): serialised and
// checked once, then spliced into each plugin's line, which differs only by its id.
struct EncodedParams {
  std::string json;  // valid UTF-8, no raw line break
};
// Fails with internal (-32603) as encode() does.
Result<EncodedParams> encode_params(const boost::json::value& params);
// The same for params written as text already (`json`: one JSON value): checked as a line is.
Result<EncodedParams> checked_params(std::string json);
// The same for params of a generated type, written without making its value (json_write.hpp):
// the bytes encode_params(json::value_from(params)) gives.
template <class T>
Result<EncodedParams> encode_params_of(const T& params) {
  std::string json;
  json.reserve(256);
  write_json(json, params);
  return checked_params(std::move(json));
}
// The line of a request with params encoded before, '\n' included; the same bytes encode()
// writes for that request.
std::string encode_request(std::int64_t id, std::string_view method, const EncodedParams& params);

// Appends the JSON of one message (without '\n' and without the UTF-8 check) to `out`.
void append_message(std::string& out, const Message& message);

}  // namespace escouade::proto
