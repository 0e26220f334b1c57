#pragma once

// The processes a plugin left behind. The bench gives the plugin's process a variable of its own
// (kRunMarkVariable=<token unique to the run>), which everything it starts inherits; once the
// plugin has ended, any process that still carries it is a leftover, wherever it was re-parented
// (this process is no subreaper, so orphans go to init or an outer subreaper, and live on).
// Reads /proc (Linux); elsewhere it finds nothing.
//
// Thread: any; each call reads a fresh snapshot of the process table.

#include <string>
#include <string_view>
#include <vector>

namespace escouade::conformance {

inline constexpr std::string_view kRunMarkVariable = "ESCOUADE_BENCH_RUN";

struct Leftover {
  int pid = 0;
  std::string command;  // its name, as /proc/<pid>/comm has it
};

// A token no other run shares: this process's pid, the time and random bits.
std::string make_run_token();

// The living processes (zombies excluded) whose environment holds kRunMarkVariable=<token>.
std::vector<Leftover> find_leftovers(std::string_view token);

// SIGKILLs every process find_leftovers sees, again until none is left (a few rounds at most,
// for one that forked meanwhile). Returns how many were signalled.
std::size_t kill_leftovers(std::string_view token);

}  // namespace escouade::conformance
