#pragma once

// The system's sentence for an errno value ("No such file or directory"): the one way the
// project words an OS error in a message.

#include <string>
#include <system_error>

namespace escouade {

inline std::string os_message(int error) {
  return std::generic_category().message(error);
}

}  // namespace escouade
