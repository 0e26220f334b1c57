#include "sandbox/time_zone.hpp"

namespace escouade::sandbox {

bool valid_time_zone(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  std::size_t part = 0;  // the length of the part being read
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '/') {
      if (part == 0) return false;
      part = 0;
      continue;
    }
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    const bool digit = c >= '0' && c <= '9';
    if (!letter && !digit && c != '_' && c != '-' && c != '+') return false;
    if (part == 0 && c == '-') return false;
    ++part;
  }
  return true;
}

std::optional<std::string> time_zone_of(std::string_view zoneinfo_path) {
  constexpr std::string_view kFolder = "/zoneinfo/";
  const auto at = zoneinfo_path.rfind(kFolder);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view name = zoneinfo_path.substr(at + kFolder.size());
  for (std::string_view tree : {"posix/", "right/"}) {
    if (name.starts_with(tree)) name.remove_prefix(tree.size());
  }
  if (!valid_time_zone(name)) return std::nullopt;
  return std::string(name);
}

}  // namespace escouade::sandbox
