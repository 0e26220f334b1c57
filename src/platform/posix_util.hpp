#pragma once

// Small POSIX helpers the spawning code of Linux and macOS shares.

#include <fcntl.h>

#include <string>
#include <vector>

namespace escouade::platform::detail {

inline bool set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// An argv or envp array over `strings`, ended by nullptr; valid while `strings` lives. Built
// before fork: the child may not allocate.
inline std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings)
    out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace escouade::platform::detail
