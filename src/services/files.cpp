#include "services/files.hpp"

#include <cstdio>

#include "base/quote.hpp"
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

std::string_view verdict(ErrorCode code) {
  switch (code) {
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
  const auto say = [path](ErrorCode code, std::string_view reason) {
    return Error{code, "files/read " + quote_name(path, kQuotedPathBytes) + ": " +
                           std::string(verdict(code)) + ": " + std::string(reason)};
  };

  if (auto parts = policy::own_file_parts(path); !parts) {
    // policy/paths.hpp: its verdicts are the protocol's invalidParams and refused.
    const bool invalid = parts.error().code == ErrorCode::invalid_params;
    return say(invalid ? ErrorCode::invalid_params : ErrorCode::refused, parts.error().message);
  }
  auto root = platform::BeneathFolder::open(folder);
  if (!root) return say(ErrorCode::failed, root.error().reason);
  auto file = root->open_file(path, resolver);
  if (!file) return say(code_of(file.error().kind), file.error().reason);

  // Before reading: the manifest's bytes never enter this process through files/read.
  const auto manifest = root->identity_of(manifest::kManifestFileName);
  if (manifest && *manifest == file->identity()) {
    return say(ErrorCode::refused, "the manifest, under another name");
  }

  auto bytes = file->read_up_to(kMaxOwnFileBytes + 1);
  if (!bytes) return say(ErrorCode::failed, bytes.error().reason);
  if (bytes->size() > kMaxOwnFileBytes) return say(ErrorCode::failed, "is over 256 KiB");
  if (!is_valid_utf8(*bytes)) return say(ErrorCode::failed, "is not UTF-8 text");
  if (std::string_view(*bytes).substr(0, kByteOrderMark.size()) == kByteOrderMark) {
    bytes->erase(0, kByteOrderMark.size());
  }
  return *std::move(bytes);
}

}  // namespace escouade::services
