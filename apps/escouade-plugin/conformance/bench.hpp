#pragma once

// The conformance bench: plays Escouade's side against the plugin in a folder, with the host's
// own parts, and says check by check whether the plugin keeps to protocol 1 (docs/conformance.md).

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "conformance/report.hpp"

namespace escouade::conformance {

struct BenchOptions {
  std::filesystem::path folder;
  // The values the bench's keychain holds for secrets/get: key (as in permissions.secrets),
  // value. Kept in a file store of a temporary folder, never in the system's keychain.
  std::vector<std::pair<std::string, std::string>> secrets;
  // The user's values of settings: name, value as text, typed by the manifest's
  // contributes.settings.
  std::vector<std::pair<std::string, std::string>> settings;
  // The spec's 10 s; a test may shorten it.
  std::chrono::milliseconds initialize_timeout{10'000};
  // Multiplies the spec's other delays the checks wait (500 ms for a decision, 5 s for an
  // answer), for a plugin built with sanitizers or a loaded machine. 1 judges as Escouade does;
  // any other value is said in each sentence that names a delay.
  int time_scale = 1;
  // Every line both ways, with its time, masked (journal/trace_file.hpp); empty: none.
  std::filesystem::path trace;
};

// The checks, in the order the report lists them.
inline constexpr const char* kCheckNames[] = {
    "manifest", "starts", "handshake", "stdout",         "answers",   "batch", "notification",
    "decide",   "burst",  "facts",     "unknown-method", "malformed", "calls", "shutdown"};

// Runs every check. Forks the platform's watchdog (platform::start_reaper) first, so call it
// before this process starts any thread. Blocks for the run: a few seconds for a good plugin,
// up to the initialize delay for one that does not answer. The plugin and everything it started
// have ended when it returns. An error only for options that cannot be used (a --setting the
// plugin does not have, or of another type): the report otherwise says what went wrong.
Result<BenchReport> run_bench(const BenchOptions& options);

}  // namespace escouade::conformance
