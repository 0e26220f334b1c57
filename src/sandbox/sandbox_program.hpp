#pragma once

// A run.js or run.wasm plugin run inside the host (spec: "A program in WASM"): one instance, on a
// thread of its own, its own SpiderMonkey context, realm and job queue, which keeps its state from
// one call to the next like a process. It is a runtime::Program: the supervisor, the journal, the
// delays, the queue and the restarts treat it as they treat a process.
//
// Thread: created, started, written to and stopped on the host's thread; its events are posted
// to that thread's executor and never delivered once its destructor has begun. Nothing it does
// waits on the instance's thread: stop() and the destructor ask the instance to end (its
// context is interrupted) and return; the instance's thread ends by itself, destroys its
// context there, and is never joined by the host's thread.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>

#include "base/lifeline.hpp"
#include "runtime/program.hpp"

namespace escouade::sandbox {

class Channel;
class Watchdog;
namespace spidermonkey {
class CompileCache;
class CompiledModules;
struct CompiledCounts;
}  // namespace spidermonkey

// The instance threads of one factory: counted, so that the factory's destructor gives those
// still ending a bounded time to finish.
struct InstanceThreads {
  std::mutex mutex;
  std::condition_variable none_left;
  std::size_t running = 0;
  std::atomic<std::size_t> compiling{0};  // of them, prepare()'s threads
};

class SandboxProgram final : public runtime::Program {
 public:
  SandboxProgram(boost::asio::any_io_executor executor, runtime::ProgramSpec spec,
                 std::shared_ptr<Watchdog> watchdog, std::shared_ptr<InstanceThreads> threads,
                 std::shared_ptr<spidermonkey::CompileCache> cache,
                 std::shared_ptr<spidermonkey::CompiledModules> compiled);
  ~SandboxProgram() override;

  Result<void> start(runtime::ProgramEvents events) override;
  void write_line(std::string line) override;
  void write_droppable(std::string line) override;
  // Interrupts the instance wherever it is; `exited` follows ("stopped by Escouade").
  void stop() override;
  std::optional<int> pid() const override { return std::nullopt; }
  // What its instance holds: its GC heap as it last said it, and the blocks its memory account
  // charges now (memory_account.hpp; the GC heap alone in a build with AddressSanitizer).
  std::optional<std::uint64_t> memory_bytes() const override;
  // "dist/plugin.mjs in the sandbox".
  std::string describe() const override;
  void decisions_held(std::size_t count) override;

  // The instance thread's stack, and the engine's quota below it.
  static std::size_t stack_bytes();

 private:
  Lifeline lifeline_;
  boost::asio::any_io_executor executor_;
  runtime::ProgramSpec spec_;
  std::shared_ptr<Watchdog> watchdog_;
  std::shared_ptr<InstanceThreads> threads_;
  std::shared_ptr<spidermonkey::CompileCache> cache_;
  std::shared_ptr<spidermonkey::CompiledModules> compiled_;
  std::shared_ptr<Channel> channel_;
};

// Runs RunKind::js and RunKind::wasm in the sandbox. Starts the engine once in the process, when
// it is first asked whether it runs one of them (on the host's thread, where all its calls are
// made): a host with no sandboxed plugin never starts it. Its destructor, at the host's end, waits
// 2 s at most for the instances still ending.
//
// Compiled bundles are kept for its life and, when `cache_folder` is given (escouade-host: under
// its data folder), on disk across runs (spidermonkey/engine.hpp, CompileCache); prepare(), when
// a plugin is loaded, compiles its module on a thread of its own. Compiled wasm modules are kept
// in memory only (the engine cannot write them), so that a restart makes its instance from the
// compiled module.
class SandboxProgramFactory final : public runtime::ProgramFactory {
 public:
  explicit SandboxProgramFactory(boost::asio::any_io_executor executor,
                                 std::filesystem::path cache_folder = {});
  ~SandboxProgramFactory() override;
  bool runs(runtime::RunKind kind) const override;
  std::unique_ptr<runtime::Program> make(const runtime::ProgramSpec& spec) override;
  void prepare(const runtime::ProgramSpec& spec) override;
  // How the modules its instances ran were found (compiled, from memory, from disk).
  const spidermonkey::CompileCache& compile_cache() const { return *cache_; }
  // How its run.wasm instances' modules were found (compiled, made from one compiled before).
  spidermonkey::CompiledCounts compiled_wasm() const;
  // How many of prepare()'s compiles still run (the bench times a start once they are done, as
  // an app starts a plugin well after loading it).
  std::size_t compiling() const { return threads_->compiling.load(); }

 private:
  boost::asio::any_io_executor executor_;
  mutable std::optional<bool> engine_;  // whether it started; unset until first asked
  std::shared_ptr<Watchdog> watchdog_;
  std::shared_ptr<InstanceThreads> threads_;
  std::shared_ptr<spidermonkey::CompileCache> cache_;
  std::shared_ptr<spidermonkey::CompiledModules> compiled_;
};

}  // namespace escouade::sandbox
