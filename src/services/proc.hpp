#pragma once

// proc/spawn, proc/write, proc/kill, and the notifications proc/out and proc/exit (the schema's
// proc/* methods), served to sandboxed plugins only: a plugin run as a command has the user's
// rights already and is answered methodNotFound, as for net/*.
//
// A program runs when its command and arguments equal an entry of permissions.commands word for
// word (more arguments only after an entry ending in " *"), its name is a bare name found on the
// PATH of the agent's environment (absolute folders only), and its env sets nothing that would
// make it run or load other code (policy/commands.hpp). No shell, ever. It runs in the agent's
// folder, the project's (dir; a private project only for a plugin on for it), or the plugin's
// temporary folder; its environment is the agent's (the app's, for no agent) without ESCOUADE_*,
// plus env. 4 at once a run. Each start goes to the journal with its arguments.
//
// Its output comes as proc/out, text cut between two characters (bytes that are not UTF-8 come
// as U+FFFD), stdout and stderr apart, and may come before the answer to proc/spawn. Both are
// kept notifications: while more than 256 KiB of what the plugin is sent waits to be written to
// its input, the program's pipes are not read (it waits on its writes), so nothing is dropped.
// proc/exit comes after all of its output: once the program ended, what it started is ended too
// and its pipes read to their end. Every program ends with its run, and so with the host.
//
// Each program is one coroutine on the host's thread: its two pipes and its end.

#include <cstddef>
#include <memory>

#include "rpc/session.hpp"
#include "services/context.hpp"
#include "services/run_scope.hpp"

namespace escouade::services {

inline constexpr std::size_t kProgramsAtOnce = 4;
// What the plugin is sent and has not taken, past which a program's output is not read.
inline constexpr std::size_t kProcOutWindow = 256 * 1024;
// What proc/write holds for a program that has not read it.
inline constexpr std::size_t kProcInputBytes = 1024 * 1024;

// Binds proc/* to `session`; its programs go to `run`. Call on the host's thread, for a sandboxed
// plugin's session only.
void serve_proc(rpc::Session& session, RunScope& run, const ProcContext& ctx,
                std::shared_ptr<ServedPlugin> plugin);

}  // namespace escouade::services
