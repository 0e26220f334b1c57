#pragma once

// The tests' way to wait for a call through host::Host: its answer's values, or its error.

#include <boost/json/value.hpp>
#include <optional>

#include "host/host.hpp"

namespace escouade::testing {

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
