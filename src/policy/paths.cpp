#include "policy/paths.hpp"

#include <algorithm>
#include <optional>

#include "base/utf8.hpp"
#include "manifest/manifest.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::policy {

namespace {

Error invalid(std::string reason) {
  return make_error(proto::ErrorCode::invalid_params, std::move(reason));
}

Error refused(std::string reason) {
  return make_error(proto::ErrorCode::refused, std::move(reason));
}

bool is_ascii_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// ASCII case folding only: the manifest's name is ASCII. Other spellings that a disk may fold
// onto it (U+017F for 's' on APFS) are caught by the service's identity check.
bool equals_ignoring_ascii_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}

std::vector<std::string> split_on_slash(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      parts.emplace_back(path.substr(start));
      return parts;
    }
    parts.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
}

bool is_hidden(std::string_view part) {
  return !part.empty() && part.front() == '.';
}

// The refusals a part brings, given where the path really points ("." and empty parts do not
// move it).
std::optional<Error> refusal_of_parts(const std::vector<std::string>& parts) {
  std::size_t depth = 0;
  std::string_view only_part;
  for (const std::string& part : parts) {
    if (part == "..") return refused("a '..' part (a path may not climb, even within the folder)");
    if (part.empty() || part == ".") continue;
    if (is_hidden(part)) return refused("a hidden file or folder");
    if (++depth == 1) only_part = part;
  }
  if (depth == 1 && equals_ignoring_ascii_case(only_part, manifest::kManifestFileName)) {
    return refused("the manifest");
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<std::string>> own_file_parts(std::string_view path) {
  if (path.empty()) return invalid("an empty path");
  if (path.size() > kMaxOwnPathBytes) return invalid("a path longer than 4096 bytes");
  if (path.find('\0') != std::string_view::npos) return invalid("a NUL character in the path");
  if (!is_valid_utf8(path)) return invalid("a path that is not UTF-8");

  if (path.front() == '/') return refused("an absolute path (paths are relative to the folder)");
  if (path.size() >= 2 && is_ascii_letter(path[0]) && path[1] == ':') {
    return refused("a Windows drive (paths are relative to the folder)");
  }
  if (path.find('\\') != std::string_view::npos) {
    return refused("a backslash ('/' is the only separator)");
  }

  std::vector<std::string> parts = split_on_slash(path);
  if (auto refusal = refusal_of_parts(parts)) return *std::move(refusal);

  for (const std::string& part : parts) {
    if (part.empty()) return invalid("an empty part (a//b, or a '/' at the end)");
    if (part == ".") return invalid("a '.' part (name the file without it)");
    if (part.size() > kMaxOwnPartBytes) return invalid("a part longer than 255 bytes");
  }
  return parts;
}

}  // namespace escouade::policy
