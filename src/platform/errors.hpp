#pragma once

// The OS layer's own errors: what went wrong, as a kind a service maps to the protocol's code
// in one place (services/secrets.cpp for the keychain, the supervisor's journal for a start).
// The platform knows nothing of the protocol, so it never names a protocol code.

#include <boost/system/error_code.hpp>
#include <type_traits>

namespace escouade::platform {

enum class Errc {
  os_failure = 1,    // a system call failed: the message says which and why
  unreachable,       // the keychain cannot be reached, or is locked
  invalid_argument,  // what was given cannot be used: an empty name, a value that is not UTF-8
  exhausted,  // the system has no room now (processes, open files, memory): worth a later try
};

// The kind's name, as tools print it: "unreachable".
const char* to_string(Errc e) noexcept;

const boost::system::error_category& platform_category() noexcept;
inline boost::system::error_code make_error_code(Errc e) noexcept {
  return {static_cast<int>(e), platform_category()};
}

}  // namespace escouade::platform

template <>
struct boost::system::is_error_code_enum<escouade::platform::Errc> : std::true_type {};
