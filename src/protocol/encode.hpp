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

// Why `text` (a message, without its '\n') may not go out as a line, if it may not: a raw line
// break in it, or text that is not valid UTF-8; internal (-32603). What every writer of lines
// checks (encode, rpc::Outgoing).
std::optional<Error> line_problem(std::string_view text);

// The line for one message, '\n' included. Fails with internal (-32603) when a string in it is
// not valid UTF-8.
Result<std::string> encode(const Message& message);

// The line for a notification, without copying its params: what a fact sent to many plugins
// is encoded with, once.
Result<std::string> encode_notification(std::string_view method, const boost::json::value& params);

// The line for a batch: a JSON array of the messages, '\n' included. An empty batch is refused:
// JSON-RPC 2.0 sends nothing at all when a batch has no answer.
Result<std::string> encode_batch(std::span<const Message> messages);

// The line of a single answer whose result came as long text (a file's, past 16 KiB), made in
// that text's own buffer: what precedes the result is put in front of it and the rest after,
// so a result of 256 KiB is neither copied into a new line nor its pages touched afresh.
// `answer` then holds no result. Nothing, and `answer` untouched, for any other message or when
// encode() would fail (a raw line break, text that is not UTF-8): encode() then says why.
std::optional<std::string> take_long_answer_line(Message& answer);

// The line that answers a line, by JSON-RPC 2.0's rules: nothing when it called for no answer
// (only notifications, or only answers), an array when it was a batch (even of one answer),
// a single message otherwise.
Result<std::optional<std::string>> encode_answer(bool batch, std::span<const Message> answers);

// Appends the JSON of one message (without '\n' and without the UTF-8 check) to `out`.
void append_message(std::string& out, const Message& message);

}  // namespace escouade::proto
