#include "platform/exec_path.hpp"

#include <unistd.h>

#include <cstdlib>

namespace escouade::platform {

std::string search_path(const std::vector<std::string>& env) {
  for (const std::string& entry : env) {
    if (entry.starts_with("PATH=")) return entry.substr(5);
  }
  if (const char* host = std::getenv("PATH")) return host;
  std::string fallback(::confstr(_CS_PATH, nullptr, 0), '\0');
  if (fallback.empty()) return "/bin:/usr/bin";
  ::confstr(_CS_PATH, fallback.data(), fallback.size());
  fallback.pop_back();  // the terminating NUL confstr wrote
  return fallback;
}

std::vector<std::string> exec_candidates(std::string_view program, std::string_view path) {
  if (program.empty()) return {};
  if (program.find('/') != std::string_view::npos) return {std::string(program)};
  std::vector<std::string> out;
  for (;;) {
    const std::size_t colon = path.find(':');
    std::string_view dir = path.substr(0, colon);
    std::string candidate = dir.empty() ? std::string(".") : std::string(dir);
    if (candidate.back() != '/') candidate += '/';
    candidate += program;
    out.push_back(std::move(candidate));
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  return out;
}

}  // namespace escouade::platform
