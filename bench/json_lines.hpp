#pragma once

// What the floors (floors.cpp) and the lean plugin (plugins/lean_plugin.cpp) share: JSON-RPC
// lines made with Boost.JSON, as a plugin makes them.

#include <boost/json.hpp>
#include <string>

namespace bench {

// Appends `v` serialized to `out`, through a buffer on the stack: no string of its own, no
// zero-filled spare capacity. One serializer, reset for each value: a new one allocates its
// stack at its first object or array.
inline void append_json(std::string& out, const boost::json::value& v) {
  static boost::json::serializer sr;
  sr.reset(&v);
  char buffer[4096];
  while (!sr.done())
    out.append(sr.read(buffer, sizeof buffer));
}

// The same and a '\n'.
inline void append_line(std::string& out, const boost::json::value& v) {
  append_json(out, v);
  out.push_back('\n');
}

// The answer to the call `id` with `result`, as a plugin that writes its envelope as text
// makes it: `result` serialized where it is, no answer object built around it (which cost the
// lean plugin three keys, a table and the moves, a tenth of its instructions a call: callgrind).
inline void append_answer(std::string& out, const boost::json::value& id,
                          const boost::json::value& result) {
  out += R"({"jsonrpc":"2.0","id":)";
  append_json(out, id);
  out += R"(,"result":)";
  append_json(out, result);
  out += '}';
}

// The same as a line.
inline void append_answer_line(std::string& out, const boost::json::value& id,
                               const boost::json::value& result) {
  append_answer(out, id, result);
  out.push_back('\n');
}

}  // namespace bench
