#pragma once

// How a plugin's program runs: lines go to its input, its output comes back as lines, its
// error stream as lines of text, and its end as an ExitStatus. A process (ProcessProgram) and a
// sandboxed instance (src/sandbox) are both Programs: nothing above src/runtime can tell which.
//
// Thread: a Program is created, started, written to and stopped on the host's thread; its
// events are delivered on that thread's executor.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "platform/process.hpp"

namespace escouade::runtime {

// How a program ended: an exit code, or the signal that ended it ("exit code 3", "killed by
// signal 9 (SIGKILL)"). A sandboxed instance reports its end the same way.
using ExitStatus = platform::ExitStatus;

struct ProgramEvents {
  // One line of its standard output, without '\n'.
  std::function<void(std::string_view line)> output_line;
  // A line of its output longer than the limit was dropped.
  std::function<void(std::size_t limit)> output_too_long;
  // One line of its standard error, or the last piece of a long one.
  std::function<void(std::string_view line)> error_line;
  // A piece of a line of its standard error too long to wait for its end (16 KiB), when set;
  // the line goes on in the next piece or in error_line. Unset: pieces come to error_line.
  std::function<void(std::string_view piece)> error_piece;
  // It ended; called once, after every line it wrote has been delivered.
  std::function<void(const ExitStatus&)> exited;
};

// What to run: the same for every kind of program.
struct ProgramSpec {
  std::string plugin_id;
  std::vector<std::string> command;  // for a process: argv, argv[0] relative to `folder` or on PATH
  std::filesystem::path folder;      // the plugin's folder: where it runs
  std::vector<std::string> env;      // "K=V": its whole environment
};

class Program {
 public:
  virtual ~Program() = default;

  // Starts it; events are delivered from now on. An error says why it could not start.
  virtual Result<void> start(ProgramEvents events) = 0;
  // Queues one line ('\n' included) for its input.
  virtual void write_line(std::string line) = 0;
  // Ends it and everything it started; `exited` follows.
  virtual void stop() = 0;
  // Its process id, when it is a process that runs.
  virtual std::optional<int> pid() const = 0;
  // The resident memory of it and everything it started, in bytes, when it can be read.
  virtual std::optional<std::uint64_t> memory_bytes() const = 0;
};

// Makes the Program for a spec: the host holds one, and tests give their own.
class ProgramFactory {
 public:
  virtual ~ProgramFactory() = default;
  virtual std::unique_ptr<Program> make(const ProgramSpec& spec) = 0;
};

}  // namespace escouade::runtime
