#pragma once

// A run.js or run.wasm plugin (spec: "A program in WASM"), run by the host in a helper process of
// its own: escouade-sandbox, which runs the engine and nothing else, locked down with a seccomp
// filter, an empty environment and no descriptor but its pipes (docs/sandbox.md). One instance a
// helper, on a thread of its own there, which keeps its state from one call to the next like a
// process. The host never starts the engine: whatever the engine does (a crash, an OOM it cannot
// handle, an exploit) ends or reaches that helper only.
//
// It is a runtime::Program: the supervisor, the journal, the delays, the queue and the restarts
// treat it as they treat a process, and it is run as one (runtime::ProcessProgram): its pipes on
// the host's loop, its output not read while its input is full, its tree ended with it and by
// the host's watchdog if the host dies.
//
// Thread: the host's. Nothing it does waits: the plugin's files are read on a worker, the helper
// is started (or taken ready) when they are read, and what is written to the program meanwhile
// waits for it.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "base/lifeline.hpp"
#include "runtime/line_queue.hpp"
#include "runtime/process_program.hpp"
#include "runtime/program.hpp"
#include "sandbox/compile_cache.hpp"

namespace escouade::sandbox {

class HelperProcess;
struct SandboxState;

// How the host finds and runs its helpers.
struct SandboxOptions {
  // escouade-sandbox, absolute: installed_helper() for a program of the project.
  std::filesystem::path helper;
  // Compiled bundles kept across runs of the host (escouade-host: <data dir>/sandbox-cache);
  // empty: in memory only.
  std::filesystem::path cache_folder;
  // Helpers started ahead of need, each ready to take a plugin: a start then costs no process
  // start nor engine start (docs/PERFORMANCE.md). 0: each start makes its own.
  std::size_t spares = 1;
  // When a start took a spare, the next one is started this long after that start's instance
  // is ready (or has ended). Started at once, its process and engine start (about 29 ms of
  // CPU, docs/PERFORMANCE.md) ran beside the start that had just taken the spare: on a busy or
  // single core, that start was about twice as slow for the next one's sake. A start that comes
  // before it is made starts a helper of its own, as without spares.
  std::chrono::milliseconds spare_delay{50};
  // The host's own watch of a helper's memory, a backstop to the instance's account: past this
  // much private resident memory (no file backs it), read every second from /proc, the helper
  // is ended for its memory. 0: twice the plugin's memory limit (128 MB for 64), what the
  // account itself refuses past; none in a build with AddressSanitizer, whose shadow memory and
  // quarantine make a process's resident memory several times what it holds.
  std::uint64_t memory_backstop_bytes = 0;
  // The time zone of the instances' local time (`new Date().toString()`, `getHours()`, `Intl`),
  // by its IANA name ("Europe/Paris"). A helper is given it when it starts and sets it before
  // its lockdown: the engine would otherwise look for the system's by reading where the link
  // /etc/localtime leads, a call its filter does not allow. "UTC" when left so.
  std::string time_zone = "UTC";

  // The installed helper (installed_helper()), compiled bundles kept in `cache_folder`, the
  // system's time zone (system_time_zone()).
  static SandboxOptions installed(std::filesystem::path cache_folder = {});
};

// The system's time zone by its IANA name: where /etc/localtime leads under a zoneinfo folder
// ("Europe/Paris"), or "UTC" when it leads nowhere such (no link, no such folder).
std::string system_time_zone();

// escouade-sandbox beside the running program when there is one there (an installed host),
// else the one this build made.
std::filesystem::path installed_helper();

class SandboxProgram final : public runtime::Program {
 public:
  SandboxProgram(std::shared_ptr<SandboxState> state, runtime::ProgramSpec spec);
  ~SandboxProgram() override;

  Result<void> start(runtime::ProgramEvents events) override;
  void write(std::string line, proto::Delivery delivery) override;
  // Ends its helper wherever it is; `exited` follows ("stopped by Escouade").
  void stop() override;
  // Its helper's process, once it has one.
  std::optional<int> pid() const override;
  // What its instance holds by its own account (its GC heap, what it malloc'd, a wasm memory), as
  // its helper last said it.
  std::optional<std::uint64_t> memory_bytes() const override;
  // "dist/plugin.mjs in the sandbox".
  std::string describe() const override;
  void decisions_held(std::size_t count) override;
  bool counts_decisions() const override { return true; }
  // What waits for its helper, and what waits in the pipe to its helper's input.
  std::size_t input_backlog() const override;

  struct Prepared;

 private:
  void prepared(Result<Prepared> p);
  // Records for its helper's input, to its pipe or, until it has a helper, to waiting_;
  // `request`: they end with a request of the host's.
  void send(std::string records, proto::Delivery delivery, bool request = false);
  // The kept records gathered since the host's thread last returned to its loop, in one write.
  void send_gathered();
  void helper_ended(const runtime::ProgramEnd& end);
  runtime::ProgramEnd end_of(const runtime::ProgramEnd& helper_end) const;
  void watch_memory();
  void finish(runtime::ProgramEnd end);
  // The spares made up to their count after its start (SandboxOptions::spare_delay), whether it
  // took one or started its own: once its instance is ready, or has ended before.
  void pay_spare();

  Lifeline lifeline_;
  std::shared_ptr<SandboxState> state_;
  runtime::ProgramSpec spec_;
  runtime::ProgramEvents events_;
  std::unique_ptr<HelperProcess> helper_;
  std::optional<CompileCache::Key> key_;  // its bundle's, when it was given a stencil
  bool stencil_given_ = false;
  bool ready_ = false;       // its module was compiled or decoded
  bool spare_owed_ = false;  // started, the spares not yet made up after it (pay_spare)
  bool started_ = false;
  bool stopping_ = false;
  bool memory_stop_ = false;
  bool finished_ = false;
  std::optional<runtime::ProgramEnd> told_;  // how its instance said it ended
  // The count of decisions it holds (decisions_held), changed since its helper was last told: told
  // in the same write as its next line.
  std::optional<std::size_t> decisions_untold_;
  // What was written before its helper took it: records with their delivery, twice what a
  // helper's input holds at most (kWaitingBytes), so that handing it over makes that input
  // full, and says so, as it would have been; past it, droppable ones go (runtime::LineQueue).
  static constexpr std::size_t kWaitingBytes = 8u * 1024u * 1024u;
  runtime::LineQueue waiting_{kWaitingBytes};
  // Kept records for its helper written by the handler that runs now (send): one write once it
  // returns.
  std::string gathered_;
  bool gather_posted_ = false;  // a post will send what is gathered
  static constexpr std::size_t kGatherBytes = 64u * 1024u;
  std::unique_ptr<boost::asio::steady_timer> memory_timer_;
};

// Runs RunKind::js and RunKind::wasm in helpers. When a plugin is loaded, prepare() reads its
// bundle and, unless its compile is kept already, has a compile helper compile it (spec: "The
// app precompiles it at install"); `spares` helpers are kept started ahead.
//
// Its destructor ends the helpers it holds (spares and compiles); the programs' helpers end with
// their programs.
class SandboxProgramFactory final : public runtime::ProgramFactory {
 public:
  SandboxProgramFactory(boost::asio::any_io_executor executor, runtime::ProcessContext& context,
                        SandboxOptions options);
  ~SandboxProgramFactory() override;
  bool runs(runtime::RunKind kind) const override;
  std::unique_ptr<runtime::Program> make(const runtime::ProgramSpec& spec) override;
  void prepare(const runtime::ProgramSpec& spec, Tell tell = {}) override;
  // The helpers are the host's children too: the context they were made with.
  runtime::ProcessContext* process_context() override;
  // escouade-plugin check: the module read as a start reads it and compiled by a compile helper,
  // without running any of it (a bundle's syntax, imports, exports and SDK mark; a plugin.wasm's
  // imports, memory, exports and code), whatever the cache holds. `done`, on the executor, gets
  // why it is refused (the host's own sentence) or nullopt when it would run.
  using CheckDone = std::function<void(std::optional<std::string> refused)>;
  void check(const runtime::ProgramSpec& spec, CheckDone done);

  // The compiled bundles it keeps, and how they were found.
  const CompileCache& compile_cache() const;
  // How many of prepare()'s compiles still run (the bench times a start once they are done, as
  // an app starts a plugin well after loading it).
  std::size_t compiling() const;
  // Helpers started ahead and not yet taken (some may still be starting).
  std::size_t spares() const;

 private:
  std::shared_ptr<SandboxState> state_;
};

}  // namespace escouade::sandbox
