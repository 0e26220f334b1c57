#pragma once

// Which paths of its own folder a plugin may read (files/read), judged on the text alone: no
// file is looked at here. What the text cannot show (links, hard links, a name that is the
// manifest under another spelling on a case-insensitive disk) is the business of the opening
// (platform/open_beneath.hpp) and of the service (services/files.hpp). docs/files.md gives the
// reason of each rule.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace escouade::policy {

// The longest path judged, in bytes (Linux's PATH_MAX, its NUL included).
inline constexpr std::size_t kMaxOwnPathBytes = 4096;
// The longest part, in bytes (NAME_MAX of Linux and macOS).
inline constexpr std::size_t kMaxOwnPartBytes = 255;

// The parts of `path`, a path of a file of the plugin's folder with '/' between its parts
// (data/words.txt gives {"data", "words.txt"}), or why it may not be read: an Error whose code
// is invalidParams (-32602) or refused (-32003) and whose message is a reason without a
// subject ("a hidden file or folder"), for the caller to put in its own sentence.
//
// Checked in this order, the first that applies giving the answer:
//   invalidParams: an empty path; a path over kMaxOwnPathBytes; a NUL character; a path that
//     is not UTF-8;
//   refused: an absolute path (/etc/passwd, //x); a Windows drive at the start (C:x, C:\x); a
//     backslash anywhere ('/' is the only separator; never a part of a name); a ".." part, even
//     one that would stay inside (a/../b); a hidden part, one that begins with '.' (.env,
//     .git/config, a/.secret/b); the manifest, escouade-plugin.json at the folder's root in any
//     letter case, "." and empty parts not counting (./escouade-plugin.json);
//   invalidParams: an empty part (a//b, or a '/' at the end: data/); a "." part (./a); a part
//     over kMaxOwnPartBytes.
// Nothing is decoded: %2e%2e is a name of six characters, read as such. Any other character,
// a newline or another control character included, is part of a name.
//
// Pure and thread-safe.
Result<std::vector<std::string>> own_file_parts(std::string_view path);

}  // namespace escouade::policy
