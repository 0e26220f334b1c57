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
};

// Reuses its parser's buffers from one line to the next; one per stream, not thread-safe.
class Decoder {
 public:
  explicit Decoder(DecodeOptions options = {});

  // The line without its '\n'. A parse error or a value that is neither an object nor a
  // non-empty array gives one Invalid entry, batch false; a batch gives one entry per element.
  Parsed decode(std::string_view line);

 private:
  boost::json::parser parser_;
};

// Checks one JSON value as a single message (an element of a batch, or a whole line).
Entry classify(boost::json::value&& v);

}  // namespace escouade::proto
