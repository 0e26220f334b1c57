#pragma once

// How a sandbox helper (escouade-sandbox) locks itself down before any plugin code runs, in two
// steps around the engine's start (JS_Init reads /proc and /sys once, which the filter forbids):
//
//   1. limit_process(): its resource limits, no new privileges, not dumpable (no core, no
//      ptrace by the user's other processes, /proc/<pid>/ closed to them), and no descriptor but
//      those it was given;
//   2. install_filter(): a seccomp-bpf filter (libseccomp) that kills the process at the first
//      system call not on its list, given to every thread of the process at once (TSYNC): the
//      engine's helper threads, made before it so that they could lower their priority, and every
//      thread made after it. Opening a file is answered EACCES rather than killed: the C library
//      looks at a file of /proc by itself (never a plugin's doing), and nothing is opened either
//      way.
//
// docs/sandbox.md lists each allowed system call with its reason (allowed_calls() is that list,
// held to the document by a test). Linux only.

#include <cstdint>
#include <span>
#include <string_view>

#include "base/result.hpp"

namespace escouade::sandbox::lockdown {

// An allowed system call, and why the engine or the helper needs it.
struct Allowed {
  std::string_view name;
  std::string_view why;
  // When the call is allowed only with some arguments: which (for the document).
  std::string_view only = {};
};
std::span<const Allowed> allowed_calls();

// The calls a build with AddressSanitizer adds for its own runtime (sigaltstack, pipe2); none in
// the helpers that ship.
std::span<const char* const> sanitizer_calls();

// The CPU one helper may use in all, past which the kernel ends it (SIGXCPU): a backstop under
// the watchdog's budget of each turn, which a helper whose engine was subverted could dodge. An
// honest instance spends milliseconds a turn: an hour is far beyond any.
inline constexpr std::uint64_t kCpuSeconds = 3600;

// The descriptors it may hold (RLIMIT_NOFILE) when it keeps `keep`: `keep`, none to make (a build
// with AddressSanitizer leaves its runtime a few).
int open_files(int keep);

// Step 1. `keep` descriptors from 0 up stay open (its pipes, its control pipe); every other
// one is closed. `data_bytes`: the most of its private writable memory (RLIMIT_DATA), 0 for none
// (AddressSanitizer maps terabytes of shadow memory there).
Result<void> limit_process(int keep, std::uint64_t data_bytes);

// Step 2: from here on, any call not on allowed_calls() (with its arguments), in any of its
// threads, kills the process with SIGSYS; clone3 answers ENOSYS, so that the C library makes its
// threads with clone. The threads that exist already must have no filter of their own.
Result<void> install_filter();

}  // namespace escouade::sandbox::lockdown
