#include "runtime/own_folder.hpp"

#include <algorithm>
#include <cstdio>

#include "base/quote.hpp"
#include "base/utf8.hpp"
#include "manifest/manifest.hpp"
#include "policy/paths.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::runtime {

namespace {

using platform::BeneathFailure;
using proto::ErrorCode;

// How much of a path an error quotes; past it, the sentence says how long the path was.
constexpr std::size_t kQuotedPathBytes = 200;

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// Why a file could not be opened, as the protocol's code. A folder is not found: the plugin
// asked for a file and there is none by that name. A FIFO, socket or device is refused: the
// host reads regular files only, and opening the others can block or act.
ErrorCode code_of(BeneathFailure kind) {
  switch (kind) {
    case BeneathFailure::escapes:
    case BeneathFailure::link_loop:
    case BeneathFailure::not_a_file:
    case BeneathFailure::hard_link:
    case BeneathFailure::too_large:
    case BeneathFailure::read_only:
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

// The first hidden part of `within` (a path relative to the folder), if any.
std::optional<std::string> hidden_part(std::string_view within) {
  std::size_t start = 0;
  while (start <= within.size()) {
    const std::size_t end = std::min(within.find('/', start), within.size());
    if (end > start && within[start] == '.') return std::string(within.substr(start, end - start));
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::shared_ptr<const OwnFolder> OwnFolder::open(const std::filesystem::path& folder) {
  auto own = std::make_shared<OwnFolder>();
  auto root = platform::BeneathFolder::open(folder);
  if (root) {
    own->root_.emplace(std::move(*root));
  } else {
    own->open_error_ = root.error().reason;
  }
  return own;
}

std::vector<std::string> OwnFolder::root_names(std::size_t limit) const {
  if (!root_) return {};
  auto names = root_->names(limit);
  return names ? *std::move(names) : std::vector<std::string>{};
}

Result<std::string> OwnFolder::read(std::string_view path, std::size_t max_bytes,
                                    platform::BeneathResolver resolver) const {
  auto bytes = read_bytes(path, max_bytes, resolver);
  if (!bytes) return bytes;
  if (!is_valid_utf8(*bytes)) return Error{ErrorCode::failed, "is not UTF-8 text"};
  if (std::string_view(*bytes).substr(0, kByteOrderMark.size()) == kByteOrderMark) {
    bytes->erase(0, kByteOrderMark.size());
  }
  return bytes;
}

Result<std::string> OwnFolder::read_bytes(std::string_view path, std::size_t max_bytes,
                                          platform::BeneathResolver resolver) const {
  const auto say = [](ErrorCode code, std::string_view reason) {
    return Error{code, std::string(reason)};
  };

  if (auto parts = policy::own_file_parts(path); !parts) {
    // policy/paths.hpp: its verdicts are the protocol's invalidParams and refused.
    const bool invalid = parts.error().code == ErrorCode::invalid_params;
    return say(invalid ? ErrorCode::invalid_params : ErrorCode::refused, parts.error().message);
  }
  if (!root_) return say(ErrorCode::failed, open_error_);
  auto file = root_->open_file(path, resolver);
  if (!file) return say(code_of(file.error().kind), file.error().reason);

  // Judged on the file opened, not on the text of the path: a link with a visible name may
  // lead to a hidden one (cfg -> .git/config, g -> .git then g/config, up -> ../.env).
  const auto within = root_->path_within(*file);
  if (!within) return say(ErrorCode::refused, "where it leads cannot be told");
  if (auto hidden = hidden_part(*within)) {
    return say(ErrorCode::refused, "it leads to a hidden file or folder (" +
                                       quote_name(*within, kQuotedPathBytes) + ")");
  }
  // Before reading: the manifest's bytes never enter this process through files/read.
  const auto manifest = root_->identity_of(manifest::kManifestFileName);
  if (manifest && *manifest == file->identity()) {
    return say(ErrorCode::refused, "the manifest, under another name");
  }
  if (file->links() > 1) {
    return say(ErrorCode::refused,
               "the file has other names (a hard link), which may be outside "
               "the folder");
  }

  auto bytes = file->read_up_to(max_bytes + 1);
  if (!bytes) return say(ErrorCode::failed, bytes.error().reason);
  if (bytes->size() > max_bytes) {
    return say(ErrorCode::failed, max_bytes % (1024 * 1024) == 0
                                      ? "is over " + std::to_string(max_bytes >> 20) + " MiB"
                                  : max_bytes % 1024 == 0
                                      ? "is over " + std::to_string(max_bytes / 1024) + " KiB"
                                      : "is over " + std::to_string(max_bytes) + " bytes");
  }
  return *std::move(bytes);
}

}  // namespace escouade::runtime
