#pragma once

// How a plugin's program runs: lines go to its input, its output comes back as lines, its
// error stream as lines of text, and its end with a reason. A process (ProcessProgram) and a
// sandboxed instance (src/sandbox) are both Programs: nothing above src/runtime can tell which.
//
// Thread: a Program is created, started, written to and stopped on the host's thread; its
// events are delivered on that thread's executor, never once its destructor has begun.

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "manifest/manifest.hpp"
#include "platform/process.hpp"
#include "protocol/delivery.hpp"

namespace escouade::runtime {

struct ProcessContext;

// How a process ended: an exit code, or the signal that ended it ("exit code 3", "killed by
// signal 9 (SIGKILL)").
using ExitStatus = platform::ExitStatus;

// How a program ended, whatever kind it is.
struct ProgramEnd {
  // A crash: the restart policy applies (3 restarts within 5 minutes). A refusal: the program
  // cannot run as it is (a module that imports what it may not), so it is stopped, never
  // restarted by itself. No room: it could not start because the system had none (no process
  // slot, no descriptor, no memory: a fork bomb elsewhere), which is not its fault: it is tried
  // again later, and not counted as a crash.
  enum class Kind { crash, refusal, no_room };
  Kind kind = Kind::crash;
  // Why, in English, for the journal and the status: "exit code 3", "killed by signal 9
  // (SIGKILL)", "a turn ran past 2000 ms: Escouade stopped its instance".
  std::string reason;
  // A process's exit code or signal; none for a sandboxed instance.
  std::optional<ExitStatus> status;
  // A sandboxed instance stopped in a turn past its budget: the line of input the turn handled
  // (its first 300 bytes), so that what caused the stop can be named; empty otherwise.
  std::string turn;

  // Whether it ran at all (it was not merely never started).
  bool ran() const noexcept { return !status || status->code || status->signal; }
  static ProgramEnd of_process(const ExitStatus& s) { return {Kind::crash, s.describe(), s, {}}; }
};

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
  std::function<void(const ProgramEnd&)> exited;
  // Its input is full (`backlog` bytes it has not taken): notifications are dropped from now
  // on, the oldest first, and its output is not read until half of it is taken. Once per fill,
  // whether a notification or its own calls' answers filled it.
  std::function<void(std::size_t backlog)> input_full;
  // It took half of what filled its input: `dropped` notifications (maybe none) were lost
  // meanwhile.
  std::function<void(std::size_t dropped)> input_drained;
};

// The longest line read from a plugin's stdout, whatever runs it. The largest message a plugin
// sends is an fs/write of 4 MiB in base64 (limits.fileBytes at most): about 5.6 MiB with its
// envelope.
inline constexpr std::size_t kMaxPluginLineBytes = 8u * 1024u * 1024u;

// What the manifest's run asks for.
enum class RunKind : std::uint8_t { command, js, wasm };
std::string_view to_string(RunKind k) noexcept;

// What a sandboxed instance may hold and spend (spec: "The limits"); a process is held to
// memory_bytes by its supervisor, which reads its tree's memory.
struct ProgramLimits {
  std::uint64_t memory_bytes = 64ull * 1024 * 1024;
  std::chrono::milliseconds turn{2000};          // CPU for one turn of work
  std::chrono::milliseconds turn_deciding{500};  // while it holds a permissions/decide
  // The most of an answer's body run.js's fetch reads whole (text, json...): the manifest's
  // limits.netBytes, 1 MiB by default, as net/fetch's.
  std::uint64_t net_bytes = 1024 * 1024;
};

// What to run: the same for every kind of program.
struct ProgramSpec {
  std::string plugin_id;
  RunKind kind = RunKind::command;
  std::vector<std::string> command;  // a process: argv, argv[0] relative to `folder` or on PATH
  // A process: the file that runs, absolute (the manifest's run.resolved, checked at load). When
  // set, PATH is not searched again at the start: what runs is what was checked.
  std::filesystem::path executable;
  std::filesystem::path module;  // js or wasm: the module, beneath `folder`
  // js or wasm: the SHA-256 (hexadecimal) its module must have, from its store's version.json
  // (module_fingerprint.hpp); none for a plugin installed from a folder, trusted as it is.
  std::optional<std::string> module_sha256;
  // js or wasm: the version of Escouade it runs for; what is compiled of its module is kept for
  // it, and compiled again for another.
  std::string escouade_version;
  std::filesystem::path folder;  // the plugin's folder: where it runs
  std::vector<std::string> env;  // a process: "K=V", its whole environment
  // A process: descriptors of the caller's it gets as 3, 4, ... (platform::SpawnRequest); the
  // caller keeps its own. The sandbox gives its helper a control pipe and a status page so.
  std::vector<int> descriptors;
  ProgramLimits limits;
};

// The spec of the program a manifest's run names, its environment left to the caller (a process
// gets the host's, with ESCOUADE_* of its own). `runs` false for a declarative plugin.
struct ManifestProgram {
  ProgramSpec spec;
  bool runs = false;
};
ManifestProgram program_of(const manifest::Manifest& m);

class Program {
 public:
  virtual ~Program() = default;

  // Starts it; events are delivered from now on. An error says why it could not start.
  virtual Result<void> start(ProgramEvents events) = 0;
  // Queues one line ('\n' included) for its input. A droppable one (a notification whose method
  // says so, protocol/delivery.hpp) may be dropped, the oldest first, when its input is full
  // (what the host holds for one plugin is bounded); a kept one never is: past the bound it
  // waits, and the plugin's output is not read until it took half.
  virtual void write(std::string line, proto::Delivery delivery) = 0;
  // The same with a line shared with other programs (a fact for several plugins), which it
  // must not change. A program that keeps no shared lines takes a copy.
  virtual void write_shared(std::shared_ptr<const std::string> line, proto::Delivery delivery) {
    write(std::string(*line), delivery);
  }
  // Ends it and everything it started; `exited` follows.
  virtual void stop() = 0;
  // The bytes written to it that wait to be handed to its input (its process's pipe, its
  // sandbox's channel): what a service that must not drop its notifications waits on.
  virtual std::size_t input_backlog() const { return 0; }
  // Its process id, when it is a process that runs.
  virtual std::optional<int> pid() const = 0;
  // The resident memory of it and everything it started, in bytes, when it can be read.
  virtual std::optional<std::uint64_t> memory_bytes() const = 0;
  // What the journal's "started:" line says of it once started: "pid 4120, ./guard --fast" for
  // a process, the module for a sandboxed instance.
  virtual std::string describe() const = 0;
  // How many permissions/decide calls it holds unanswered now (its supervisor tells it at each
  // change): a sandboxed instance gets the shorter turn while it holds one.
  virtual void decisions_held(std::size_t count) { (void)count; }
  // Whether it wants decisions_held at all: a process does not, and its supervisor then counts
  // nothing (a completion wrapped round each decision's, an allocation a plugin asked).
  virtual bool counts_decisions() const { return false; }
};

// Makes the Program for a spec: the host holds one, and tests give their own.
class ProgramFactory {
 public:
  virtual ~ProgramFactory() = default;
  // Whether it can run programs of this kind at all.
  virtual bool runs(RunKind kind) const = 0;
  virtual std::unique_ptr<Program> make(const ProgramSpec& spec) = 0;
  // The plugin was loaded: what can be done once for all its runs is done now, off the caller's
  // thread (the sandbox compiles its module, spec: "precompiles it at install"). Returns at once.
  // `tell`, when given, gets the sentences for the plugin's journal ("its bundle is compiled
  // again, for Escouade 2.3.0: it was compiled for 2.2.0"), on the caller's executor.
  using Tell = std::function<void(std::string_view sentence)>;
  virtual void prepare(const ProgramSpec& spec, Tell tell = {}) {
    (void)spec;
    (void)tell;
  }
  // The context of the processes it starts (the pids it knows, the watchdog, the tree ender),
  // which what proc/spawn starts must share: a process's end ends the host's children that no
  // one knows as orphans. Null when it starts no process.
  virtual ProcessContext* process_context() { return nullptr; }
};

// The factory the host, the bench and the harness use: each kind to the factory that runs it
// (a process for command, the sandbox for js and wasm). A kind with none is not runnable.
class ProgramRouter final : public ProgramFactory {
 public:
  // Sets who makes programs of `kind`; not owned, outlives the router.
  void route(RunKind kind, ProgramFactory* factory);
  bool runs(RunKind kind) const override;
  // nullptr when no factory runs spec.kind.
  std::unique_ptr<Program> make(const ProgramSpec& spec) override;
  void prepare(const ProgramSpec& spec, Tell tell = {}) override;
  // The first context a routed factory gives (the host's factories share one).
  ProcessContext* process_context() override;

 private:
  std::array<ProgramFactory*, 3> routes_{};  // by RunKind
};

}  // namespace escouade::runtime
