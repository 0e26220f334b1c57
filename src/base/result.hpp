#pragma once

#include <boost/assert/source_location.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>
#include <string>
#include <utility>

namespace escouade {

// An error as the project carries it: a typed code and a sentence a person reads. Values, not
// exceptions: functions that can fail return Result<T>.
//
// The code is an error_code in one of three categories: the protocol's (proto::ErrorCode,
// protocol/gen/errors.hpp), the OS layer's (platform::Errc, platform/errors.hpp), which each
// service maps to a protocol code in one place before it reaches a peer, or a peer's own code
// passed on as it came (proto::peer_error). proto::wire_code turns it into what goes on the wire.
struct Error {
  boost::system::error_code code;
  std::string message;

  friend bool operator==(const Error&, const Error&) = default;
};

// Called by Result<T>::value() on an error; the only place an Error becomes an exception.
[[noreturn]] void throw_exception_from_error(const Error& e, const boost::source_location& loc);

template <class T>
using Result = boost::system::result<T, Error>;

inline Error make_error(boost::system::error_code code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace escouade
