#pragma once

#include <boost/assert/source_location.hpp>
#include <boost/system/result.hpp>
#include <string>
#include <utility>

namespace escouade {

// An error as the protocol carries it: a JSON-RPC error code and a sentence a person reads.
// Values, not exceptions: functions that can fail return Result<T>.
struct Error {
  int code = 0;
  std::string message;

  friend bool operator==(const Error&, const Error&) = default;
};

// Called by Result<T>::value() on an error; the only place an Error becomes an exception.
[[noreturn]] void throw_exception_from_error(const Error& e, const boost::source_location& loc);

template <class T>
using Result = boost::system::result<T, Error>;

inline Error make_error(int code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace escouade
