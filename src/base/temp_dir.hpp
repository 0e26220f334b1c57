#pragma once

// For tests and tools: a fresh folder under the system's temporary folder, removed with
// everything in it when its owner goes. Its path is canonical (no link in it), so a test can
// compare paths the host resolved.

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace escouade {

class TempDir {
 public:
  // <tmp>/<prefix>-XXXXXX, made 0700 by mkdtemp. Throws std::runtime_error when it cannot be
  // made (a test has nothing to stand on then).
  explicit TempDir(std::string_view prefix = "escouade") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot make a temporary folder like " + pattern);
    }
    path_ = std::filesystem::canonical(pattern);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace escouade
