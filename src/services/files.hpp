#pragma once

// files/read: a file of the plugin's own folder, as UTF-8 text (spec: x-methods/files/read).
// The path's text is judged first (policy/paths.hpp), then the file is opened beneath the
// folder so that no link leads out (platform/open_beneath.hpp), then it is checked to be
// neither the manifest under another name, nor over 256 KiB, nor other than UTF-8.
// docs/files.md gives each rule and its reason.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "platform/open_beneath.hpp"

namespace escouade::services {

// The largest file files/read returns, in bytes (256 KiB); one byte more is refused.
inline constexpr std::size_t kMaxOwnFileBytes = 256 * 1024;

// A plugin's own folder, opened once when the plugin is loaded (Host::load), so that files/read
// reads beneath the folder it was then, even if its path is later swapped for a link.
//
// read(path): the text of the file `path` names, without a leading UTF-8 byte order mark; or an
// Error whose message is one sentence for both the plugin and the journal, the path quoted as
// JSON quotes a string:
//   files/read ".git/config": refused: a hidden file or folder
//   files/read "words.txt": not found: no such file
//   files/read "big.txt": failed: is over 256 KiB
// Codes: invalidParams (-32602) for a malformed path; refused (-32003) for a path that leaves
// the folder, is hidden, is the manifest (under any name: a link, a hard link, another letter
// case), names a FIFO, socket or device, or leads to a hidden file or folder (judged on the file
// actually opened: `notes.txt -> .env` is refused), or to a file with other names (a hard link:
// another name may be anywhere, ~/.ssh included); notFound (-32005) for a file that is not
// there, or a path that names a folder; failed (-32004) for a file over kMaxOwnFileBytes, not
// UTF-8, unreadable, or a folder that could not be opened.
//
// Blocking (it reads the disk): call read() from a worker thread, never the host's.
// Thread-safe: one OwnFolder serves every call of its plugin.
class OwnFolder {
 public:
  static std::shared_ptr<const OwnFolder> open(const std::filesystem::path& folder);

  // `resolver`: tests exercise both openat2 and the walk that replaces it on older kernels.
  Result<std::string> read(std::string_view path, platform::BeneathResolver resolver =
                                                      platform::BeneathResolver::automatic) const;

 private:
  std::optional<platform::BeneathFolder> root_;
  std::string open_error_;  // why root_ is empty
};

}  // namespace escouade::services
