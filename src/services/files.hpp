#pragma once

// files/read: a file of the plugin's own folder, as UTF-8 text (spec: x-methods/files/read),
// read by runtime::OwnFolder (runtime/own_folder.hpp), which judges the path, opens the file
// beneath the folder and checks what it opened. docs/files.md gives each rule and its reason.

#include <memory>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "runtime/own_folder.hpp"

namespace escouade::rpc {
class Session;
}

namespace escouade::services {

struct FilesContext;
struct ServedPlugin;

using runtime::kMaxOwnFileBytes;
using runtime::OwnFolder;

// What files/read answers: the file's text, or an Error whose message is one sentence for both
// the plugin and the journal, the path quoted as JSON quotes a string:
//   files/read ".git/config": refused: a hidden file or folder
//   files/read "words.txt": not found: no such file
//   files/read "big.txt": failed: is over 256 KiB
// Its code is OwnFolder::read's. Blocking: from a worker thread, never the host's.
Result<std::string> read_own_file(
    const OwnFolder& folder, std::string_view path,
    platform::BeneathResolver resolver = platform::BeneathResolver::automatic);

// The word of an answer's code in its sentence ("refused", "not found", "failed", "invalid
// params"): files/read's and fs/*'s sentences read alike.
std::string_view verdict(const boost::system::error_code& code);

// Binds files/read on a session of `plugin`'s: read on the workers, each refusal journaled.
void serve_files(rpc::Session& session, const FilesContext& ctx,
                 const std::shared_ptr<ServedPlugin>& plugin);

}  // namespace escouade::services
