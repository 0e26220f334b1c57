#pragma once

// A file of a plugin's own folder, read so that nothing leads out of it: what files/read serves
// (services/files.hpp) and the JSON files at the root that a run.js bundle's readFileSync reads
// (sandbox/bundle.hpp). The path's text is judged first (policy/paths.hpp), then the file is
// opened beneath the folder so that no link leads out (platform/open_beneath.hpp), then it is
// checked to be neither the manifest under another name, nor over the size asked, nor other than
// UTF-8. docs/files.md gives each rule and its reason.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "platform/open_beneath.hpp"

namespace escouade::runtime {

// The largest file files/read returns, in bytes (256 KiB); one byte more is refused.
inline constexpr std::size_t kMaxOwnFileBytes = 256 * 1024;

// A plugin's own folder, opened once when the plugin is loaded (Host::load), so that reads are
// beneath the folder it was then, even if its path is later swapped for a link.
//
// read(path): the text of the file `path` names, without a leading UTF-8 byte order mark; or an
// Error whose message is a reason without a subject ("a hidden file or folder", "no such file",
// "is over 256 KiB"), for the caller's sentence. Codes: invalidParams (-32602) for a malformed
// path; refused (-32003) for a path that leaves the folder, is hidden, is the manifest (under any
// name: a link, a hard link, another letter case), names a FIFO, socket or device, or leads to a
// hidden file or folder (judged on the file actually opened: `notes.txt -> .env` is refused), or
// to a file with other names (a hard link: another name may be anywhere, ~/.ssh included);
// notFound (-32005) for a file that is not there, or a path that names a folder; failed
// (-32004) for a file over `max_bytes`, not UTF-8, unreadable, or a folder that could not be
// opened. Its size is read while it is read, never taken from what the file claims (a /proc
// file says 0).
//
// Blocking (it reads the disk): call read() from a worker thread, never the host's.
// Thread-safe: one OwnFolder serves every call of its plugin.
class OwnFolder {
 public:
  static std::shared_ptr<const OwnFolder> open(const std::filesystem::path& folder);

  // The names at the folder's root (files, folders and links alike: read() judges each), at most
  // `limit`; none when the folder could not be opened or listed. Blocking, as read() is.
  std::vector<std::string> root_names(std::size_t limit) const;

  // `resolver`: tests exercise both openat2 and the walk that replaces it on older kernels.
  Result<std::string> read(
      std::string_view path, std::size_t max_bytes = kMaxOwnFileBytes,
      platform::BeneathResolver resolver = platform::BeneathResolver::automatic) const;
  // The same for bytes that need not be text (a plugin.wasm): no UTF-8 check, nothing taken off.
  Result<std::string> read_bytes(
      std::string_view path, std::size_t max_bytes,
      platform::BeneathResolver resolver = platform::BeneathResolver::automatic) const;

 private:
  std::optional<platform::BeneathFolder> root_;
  std::string open_error_;  // why root_ is empty
};

}  // namespace escouade::runtime
