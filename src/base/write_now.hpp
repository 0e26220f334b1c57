#pragma once

// Writing a line to a non-blocking pipe from the host's thread without an asynchronous
// operation: the pipe almost always takes it whole, and then there is no completion to run.

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string_view>

namespace escouade {

// What a non-blocking `fd` takes of `text` now: the bytes written, 0 when it is full or closed
// (the asynchronous write that takes over meets the same end and reports it).
inline std::size_t write_now(int fd, std::string_view text) noexcept {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  return done;
}

}  // namespace escouade
