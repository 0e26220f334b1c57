#pragma once

// What the floors (floors.cpp) and the lean plugin (plugins/lean_plugin.cpp) share: JSON-RPC
// lines made with Boost.JSON, as a plugin makes them.

#include <boost/json.hpp>
#include <string>

namespace bench {

// Appends `v` serialized and a '\n' to `out`, through a buffer on the stack: no string of its
// own, no zero-filled spare capacity.
inline void append_line(std::string& out, const boost::json::value& v) {
  boost::json::serializer sr;
  sr.reset(&v);
  char buffer[4096];
  while (!sr.done())
    out.append(sr.read(buffer, sizeof buffer));
  out.push_back('\n');
}

// The answer to the call `id` with `result`.
inline boost::json::value answer(boost::json::value id, boost::json::value result) {
  boost::json::object o;
  o.reserve(3);
  o.emplace("jsonrpc", "2.0");
  o.emplace("id", std::move(id));
  o.emplace("result", std::move(result));
  return o;
}

}  // namespace bench
