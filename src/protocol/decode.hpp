#pragma once

// Parses one line into JSON-RPC 2.0 messages and checks each against the JSON-RPC 2.0
// specification. Never throws on input: whatever the line holds, the result says what to do.

#include <boost/json/parser.hpp>
#include <cstddef>
#include <string_view>

#include "protocol/message.hpp"

namespace escouade::proto {

struct DecodeOptions {
  // Nesting deeper than this is a parse error: it bounds the parser's work and stack. The
  // protocol's own messages nest a few levels; 64 leaves room for a fact's free-form data.
  std::size_t max_depth = 64;
  // A batch holds this many messages at most; a longer one is refused whole, with one answer.
  // Each element owes an answer of about 100 bytes even when it is a 2-byte `1,`: without a
  // bound, an 8 MiB line would make the host build 400 MB of answers (the same bound as
  // go-ethereum's batch limit, a JSON-RPC server long exposed to hostile peers).
  std::size_t max_batch = 1000;
};

// Reuses its parser's buffers from one line to the next; one per stream, not thread-safe.
class Decoder {
 public:
  explicit Decoder(DecodeOptions options = {});

  // The line without its '\n'. A parse error or a value that is neither an object nor a
  // non-empty array gives one Invalid entry, batch false, as does a batch longer than
  // max_batch; a batch gives one entry per element.
  Parsed decode(std::string_view line);

 private:
  boost::json::parser parser_;
  std::size_t max_batch_;
};

// Checks one JSON value as a single message (an element of a batch, or a whole line).
Entry classify(boost::json::value&& v);

}  // namespace escouade::proto
