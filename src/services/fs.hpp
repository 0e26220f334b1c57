#pragma once

// fs/read, fs/write, fs/stat, fs/list and fs/canon (the schema's fs/* methods), served to
// sandboxed plugins only: a plugin run as a command has the user's rights already and is
// answered methodNotFound, as for net/*.
//
// Each call is judged twice. On the host's thread, its text, by policy/fs_roots against the
// plugin's permissions.files and the agent the app set (host/agents/set): a root it does not
// declare, a "..", a "~", an absolute path with a root or a relative one without, write on a root
// given for reading, an agent of a private project where the plugin is not on: refused (-32003)
// with a sentence naming it. Then on a worker, the file actually opened, by
// platform/beneath_roots: opened beneath its root without races, links followed only while they
// stay under a root of that agent, hard links, FIFOs, devices and sockets never read nor written.
// fs/read gives limits.fileBytes (256 KiB unless the manifest says up to 4 MiB) at most, fs/write
// 4 MiB; each write goes to the journal (its path and size, never its content); each refusal and
// failure too. A name that is not UTF-8 is listed with U+FFFD in place of its bad bytes.

#include <memory>

#include "rpc/session.hpp"
#include "services/context.hpp"

namespace escouade::services {

// The most fs/list gives; `truncated` says there were more.
inline constexpr std::size_t kMaxListEntries = 4096;
// The most fs/write writes at once.
inline constexpr std::size_t kMaxWriteBytes = 4 * 1024 * 1024;

// Binds fs/* to `session`. Call on the host's thread, for a sandboxed plugin's session only.
void serve_fs(rpc::Session& session, const FsContext& ctx, std::shared_ptr<ServedPlugin> plugin);

}  // namespace escouade::services
