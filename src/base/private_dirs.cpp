#include "base/private_dirs.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <vector>

namespace escouade {

std::error_code create_private_directories(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> missing;
  std::error_code ec;
  for (auto p = dir; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    // mkdir applies the umask, which may only take bits away: 0700 stays 0700 or less.
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
      return std::error_code(errno, std::generic_category());
    }
  }
  return {};
}

}  // namespace escouade
