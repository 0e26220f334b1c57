#pragma once

// Where the project's typed errors meet the wire's integers (base/result.hpp). A protocol code
// goes out as its value; a peer's own code, passed on (a plugin's error given to the app), as it
// came; anything else is a fault of ours that no service mapped, and goes out as internal.

#include <boost/system/error_code.hpp>
#include <string>

#include "protocol/gen/errors.hpp"

namespace escouade::proto {

// The category of a code a peer gave (its error's `code`), kept as it came.
const boost::system::error_category& peer_category() noexcept;
boost::system::error_code peer_error(int code) noexcept;

// The integer that goes on the wire for `code`.
int wire_code(const boost::system::error_code& code) noexcept;
constexpr int wire_code(ErrorCode code) noexcept {
  return static_cast<int>(code);
}

// The code as the journal quotes it: "-32603".
std::string code_text(ErrorCode code);

}  // namespace escouade::proto
