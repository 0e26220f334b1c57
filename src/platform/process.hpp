#pragma once

// Running a plugin's program as a process of its own: start it with three pipes, in a process
// group it leads, and learn how it ended. Nothing here goes through a shell.
//
// Thread: any, but spawn() forks: see its comment. Functions that can fail return Result<T>;
// nothing throws.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "platform/errors.hpp"

namespace escouade::platform {

// The code of an Error from this folder: the operating system refused something. Callers that
// answer a plugin pick their own code (platform/errors.hpp).
inline constexpr Errc kOsError = Errc::os_failure;

// What to start.
struct SpawnRequest {
  // The program and its arguments; never empty. argv[0] with a '/' is a path, relative to cwd;
  // without one it is looked up in PATH, like execvp, but never run through a shell.
  std::vector<std::string> argv;
  // Where it runs; empty: where the host runs.
  std::filesystem::path cwd;
  // Its whole environment, "K=V" each. PATH is taken from here to find argv[0], or from the
  // host's environment when it is not here.
  std::vector<std::string> env;
  // When set (absolute), exactly this file runs, with `argv` as its arguments: PATH is not
  // searched again, so what runs is what was checked (a plugin's program, resolved at load).
  std::filesystem::path executable = {};
  // Descriptors of the caller's given to the child as 3, 4, ... in this order (at most 8): the
  // sandbox's helper gets its control pipe and its status page so. The caller keeps its own and
  // closes them when it likes; nothing else reaches the child.
  std::vector<int> descriptors = {};
};

// A started process. The caller owns the four descriptors (close_fds) and must reap the process
// (wait_exit or try_wait) once, which frees its pid; until then the pid and the process group of
// the same number are its own.
struct Spawned {
  int pid = -1;  // also the id of the process group it leads
  // The host's ends of the child's stdin, stdout and stderr: O_CLOEXEC and O_NONBLOCK.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // A pidfd (readable when the process has ended), or -1 where the kernel has none.
  int pidfd = -1;
};

// Starts the program. On Linux and macOS the child leads a new process group, has every signal
// at its default and unblocked, holds only fds 0, 1 and 2 (and the request's descriptors), and
// (Linux) is a child subreaper: its orphaned descendants are re-parented to it, so its whole tree
// stays reachable from it. Failures to start, including the program's exec, are an Error such as
// "cannot start ./guard: No such file or directory".
// Forks: in a threaded process, the child runs only async-signal-safe calls until exec.
Result<Spawned> spawn(const SpawnRequest& request);

// Closes the descriptors of `s` that are still open and sets them to -1. Does not wait.
void close_fds(Spawned& s);

// How a process ended: by exit (code) or by a signal (signal).
struct ExitStatus {
  std::optional<int> code;
  std::optional<int> signal;

  // "exit code 3" or "killed by signal 9 (SIGKILL)".
  std::string describe() const;

  friend bool operator==(const ExitStatus&, const ExitStatus&) = default;
};

// "SIGKILL" for 9, and so on; "" for a number this system does not name.
std::string signal_name(int signal);

// Waits for the process to end and reaps it. nullopt when it is not (or no longer) a child of
// this process.
std::optional<ExitStatus> wait_exit(const Spawned& s);

// Reaps the process if it has ended; nullopt while it runs, or when it is not a child.
std::optional<ExitStatus> try_wait(int pid);

// Makes this process a child subreaper (Linux): when a process it started dies, that process's
// orphans become its children instead of init's. See process_tree.hpp, adopted_orphans_of.
// An Error where the system has no such thing.
Result<void> become_subreaper();

// Whether this process is a child subreaper now (Linux; false elsewhere). Only then can the
// orphans of a plugin's tree come to it, and only then may a child of this process that the
// host did not start be taken for one (process_tree.hpp, adopted_orphans and reap_adopted): in
// an app that embeds the host without being a subreaper, such a child is the app's own.
bool is_subreaper();

// Writing to a program that just ended must be an EPIPE for that write, never a SIGPIPE that
// ends the host: ignores SIGPIPE when it is at its default. A host program may ignore it itself
// (escouade-host does); a handler the host installed is left alone. Any thread.
void ignore_default_sigpipe();

}  // namespace escouade::platform
