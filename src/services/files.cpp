#include "services/files.hpp"

#include <cstdio>

#include "base/utf8.hpp"
#include "manifest/manifest.hpp"
#include "policy/paths.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::services {

namespace {

using platform::BeneathFailure;
using proto::ErrorCode;

// How much of a path an error quotes; past it, the sentence says how long the path was.
constexpr std::size_t kQuotedPathBytes = 200;

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// The length of the UTF-8 character at the start of `s`, or 0 when it is not one.
std::size_t utf8_char_length(std::string_view s) {
  const auto lead = static_cast<unsigned char>(s.front());
  const std::size_t n = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  return n <= s.size() && is_valid_utf8(s.substr(0, n)) ? n : 0;
}

// `path` between double quotes, escaped as JSON escapes a string (control characters as \n or
// \u00XX, so the sentence stays on one line), a byte that is not UTF-8 as U+FFFD. A long path
// is cut at a character and followed by how long it was.
std::string quote(std::string_view path) {
  std::string out = "\"";
  std::size_t i = 0;
  while (i < path.size() && i < kQuotedPathBytes) {
    const char c = path[i];
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", u);
      out += escape;
    } else if (u < 0x80) {
      out += c;
    } else if (const std::size_t n = utf8_char_length(path.substr(i)); n > 0) {
      out.append(path.substr(i, n));
      i += n;
      continue;
    } else {
      out += "\xEF\xBF\xBD";
    }
    ++i;
  }
  out += '"';
  if (i < path.size()) out += "\xE2\x80\xA6 (" + std::to_string(path.size()) + " bytes)";
  return out;
}

std::string_view verdict(int code) {
  switch (static_cast<ErrorCode>(code)) {
    case ErrorCode::invalid_params:
      return "invalid params";
    case ErrorCode::refused:
      return "refused";
    case ErrorCode::not_found:
      return "not found";
    default:
      return "failed";
  }
}

// Why a file could not be opened, as the protocol's code. A folder is not found: the plugin
// asked for a file and there is none by that name. A FIFO, socket or device is refused: the
// host reads regular files only, and opening the others can block or act.
ErrorCode code_of(BeneathFailure kind) {
  switch (kind) {
    case BeneathFailure::escapes:
    case BeneathFailure::link_loop:
    case BeneathFailure::not_a_file:
      return ErrorCode::refused;
    case BeneathFailure::missing:
    case BeneathFailure::folder:
      return ErrorCode::not_found;
    case BeneathFailure::denied:
    case BeneathFailure::os_error:
      break;
  }
  return ErrorCode::failed;
}

}  // namespace

Result<std::string> read_own_file(const std::filesystem::path& folder, std::string_view path) {
  return read_own_file(folder, path, platform::BeneathResolver::automatic);
}

Result<std::string> read_own_file(const std::filesystem::path& folder, std::string_view path,
                                  platform::BeneathResolver resolver) {
  const auto say = [path](int code, std::string_view reason) {
    return make_error(code, "files/read " + quote(path) + ": " + std::string(verdict(code)) + ": " +
                                std::string(reason));
  };
  const auto say_code = [&say](ErrorCode code, std::string_view reason) {
    return say(static_cast<int>(code), reason);
  };

  if (auto parts = policy::own_file_parts(path); !parts) {
    return say(parts.error().code, parts.error().message);
  }
  auto root = platform::BeneathFolder::open(folder);
  if (!root) return say_code(ErrorCode::failed, root.error().reason);
  auto file = root->open_file(path, resolver);
  if (!file) return say_code(code_of(file.error().kind), file.error().reason);

  // Before reading: the manifest's bytes never enter this process through files/read.
  const auto manifest = root->identity_of(manifest::kManifestFileName);
  if (manifest && *manifest == file->identity()) {
    return say_code(ErrorCode::refused, "the manifest, under another name");
  }

  auto bytes = file->read_up_to(kMaxOwnFileBytes + 1);
  if (!bytes) return say_code(ErrorCode::failed, bytes.error().reason);
  if (bytes->size() > kMaxOwnFileBytes) return say_code(ErrorCode::failed, "is over 256 KiB");
  if (!is_valid_utf8(*bytes)) return say_code(ErrorCode::failed, "is not UTF-8 text");
  if (std::string_view(*bytes).substr(0, kByteOrderMark.size()) == kByteOrderMark) {
    bytes->erase(0, kByteOrderMark.size());
  }
  return *std::move(bytes);
}

}  // namespace escouade::services
