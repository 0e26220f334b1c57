#pragma once

// The tests' way to wait for a call through host::Host: its answer's values, or its error.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "host/host.hpp"

namespace escouade::testing {

// A permission request of kind "command" for `command`, with the id `id`, in project p1.
inline proto::DecideParams command_request(std::string id, std::string_view command) {
  proto::DecideParams request;
  request.request.id = std::move(id);
  request.request.kind = "command";
  request.request.input = boost::json::object{{"command", command}};
  request.project = {"p1", "Project One", false};
  return request;
}

// What Host::call's completion gives, kept in `out` as the values (or the error) the tests
// compare.
inline void keep_answer(std::optional<Result<boost::json::value>>& out, Result<host::Answer> r) {
  if (r) {
    out.emplace(std::move(r->value));
  } else {
    out.emplace(r.error());
  }
}

}  // namespace escouade::testing
