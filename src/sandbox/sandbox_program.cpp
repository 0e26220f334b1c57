#include "sandbox/sandbox_program.hpp"

#include <pthread.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "platform/errors.hpp"
#include "sandbox/bundle.hpp"
#include "sandbox/channel.hpp"
#include "sandbox/spidermonkey/engine.hpp"
#include "sandbox/wasm_module.hpp"
#include "sandbox/watchdog.hpp"

namespace escouade::sandbox {

namespace {

using runtime::ProgramEnd;

// What the instance's thread owns: it reads the bundle there (no file is read on the host's
// thread), runs it, and says how it ended.
struct Start {
  std::shared_ptr<Channel> channel;
  std::shared_ptr<InstanceThreads> threads;
  runtime::ProgramSpec spec;
  std::shared_ptr<spidermonkey::CompileCache> cache;
  std::shared_ptr<spidermonkey::CompiledModules> compiled;
};

std::string module_name(const runtime::ProgramSpec& spec) {
  std::error_code ec;
  auto rel = std::filesystem::relative(spec.module, spec.folder, ec);
  return ec || rel.empty() ? spec.module.filename().string() : rel.generic_string();
}

std::optional<std::string> read_bundle(const std::filesystem::path& module) {
  std::ifstream in(module, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

// plugin.wasm read and checked before anything of it is compiled, its memory's maximum set to
// what a memory limit of `memory_limit` leaves it; or why it may not run.
Result<spidermonkey::WasmPlugin> read_wasm(const runtime::ProgramSpec& spec,
                                           std::uint64_t memory_limit) {
  spidermonkey::WasmPlugin plugin;
  plugin.name = module_name(spec);
  std::ifstream in(spec.module, std::ios::binary);
  if (!in)
    return make_error(platform::Errc::os_failure, "its module " + plugin.name + " cannot be read");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  auto prepared = prepare_module(bytes.view(), linear_memory_pages(memory_limit),
                                 spidermonkey::serves_wasm_import);
  if (!prepared) return prepared.error();
  plugin.bytes = std::move(prepared->bytes);
  return plugin;
}

ProgramEnd run_wasm_instance(const runtime::ProgramSpec& spec, Channel& channel,
                             spidermonkey::CompiledModules& compiled) {
  auto plugin = read_wasm(spec, channel.limits().memory_bytes);
  if (!plugin) return {ProgramEnd::Kind::refusal, plugin.error().message, {}};
  return spidermonkey::run_wasm(*plugin, channel, SandboxProgram::stack_bytes(), compiled);
}

ProgramEnd run_instance(const Start& start) {
  const runtime::ProgramSpec& spec = start.spec;
  Channel& channel = *start.channel;
  if (spec.kind == runtime::RunKind::wasm) return run_wasm_instance(spec, channel, *start.compiled);
  spidermonkey::CompileCache& cache = *start.cache;
  spidermonkey::JsBundle bundle;
  bundle.name = module_name(spec);
  auto source = read_bundle(spec.module);
  if (!source)
    return {ProgramEnd::Kind::refusal, "its bundle " + bundle.name + " cannot be read", {}};
  bundle.source = std::move(*source);
  if (auto refused = refuse_old_sdk(bundle.source))
    return {ProgramEnd::Kind::refusal, std::move(*refused), {}};
  std::error_code ec;
  const auto folder = std::filesystem::weakly_canonical(spec.folder, ec);
  bundle.folder = (ec ? spec.folder : folder).generic_string();
  const auto module = std::filesystem::weakly_canonical(spec.module, ec);
  bundle.url = "file://" + (ec ? spec.module : module).generic_string();
  bundle.root_files = read_root_files(*runtime::OwnFolder::open(spec.folder));
  return spidermonkey::run_js(bundle, channel, SandboxProgram::stack_bytes(), cache);
}

void thread_ended(InstanceThreads& threads) {
  {
    std::lock_guard lock(threads.mutex);
    --threads.running;
  }
  threads.none_left.notify_all();
}

void* instance_main(void* arg) {
  std::unique_ptr<Start> start(static_cast<Start*>(arg));
  ProgramEnd end = run_instance(*start);
  start->channel->ended(std::move(end));
  start->channel.reset();
  thread_ended(*start->threads);
  return nullptr;
}

// What prepare()'s thread owns: the plugin's module, to compile into the factory's cache of
// its kind, nothing else.
struct Precompile {
  runtime::ProgramSpec spec;
  std::shared_ptr<InstanceThreads> threads;
  std::shared_ptr<spidermonkey::CompileCache> cache;
  std::shared_ptr<spidermonkey::CompiledModules> compiled;
};

void* precompile_main(void* arg) {
  std::unique_ptr<Precompile> job(static_cast<Precompile*>(arg));
  // What does not read, check or compile is left to the first instance, which says why.
  if (job->spec.kind == runtime::RunKind::wasm) {
    if (auto plugin = read_wasm(job->spec, job->spec.limits.memory_bytes))
      spidermonkey::precompile_wasm(plugin->bytes, *job->compiled, SandboxProgram::stack_bytes());
  } else {
    auto source = read_bundle(job->spec.module);
    if (source && !refuse_old_sdk(*source))
      spidermonkey::precompile(*source, module_name(job->spec), *job->cache,
                               SandboxProgram::stack_bytes());
  }
  --job->threads->compiling;
  thread_ended(*job->threads);
  return nullptr;
}

// What a new thread runs first: it names itself, then runs `main(arg)`. Naming it from the
// thread that made it raced with its end: a detached thread that ended at once (a bundle refused
// before it ran) had freed its descriptor, and pthread_setname_np read it (a SEGV under
// AddressSanitizer on a loaded core: two sandbox tests, once each in scripts/test.sh's stress
// rounds).
struct Launch {
  void* (*main)(void*);
  void* arg;
  const char* name;  // a string literal
};

void* launch_main(void* p) {
  const Launch launch = *static_cast<Launch*>(p);
  delete static_cast<Launch*>(p);
  pthread_setname_np(pthread_self(), launch.name);
  return launch.main(launch.arg);
}

// A detached thread of the sandbox's stack size running `main(arg)`, counted in `threads`;
// false, and `arg` left to the caller, when none could be made.
int start_thread(InstanceThreads& threads, void* (*main)(void*), void* arg, const char* name) {
  auto launch = std::make_unique<Launch>(Launch{main, arg, name});
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, SandboxProgram::stack_bytes());
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  {
    std::lock_guard lock(threads.mutex);
    ++threads.running;
  }
  pthread_t thread;
  const int rc = pthread_create(&thread, &attr, launch_main, launch.get());
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    std::lock_guard lock(threads.mutex);
    --threads.running;
    return rc;
  }
  (void)launch.release();  // the thread's now
  return 0;
}

}  // namespace

std::size_t SandboxProgram::stack_bytes() {
#if defined(__SANITIZE_ADDRESS__)
  return 32u * 1024u * 1024u;  // AddressSanitizer's frames are several times larger
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return 32u * 1024u * 1024u;
#else
  return 8u * 1024u * 1024u;
#endif
#else
  return 8u * 1024u * 1024u;
#endif
}

SandboxProgram::SandboxProgram(boost::asio::any_io_executor executor, runtime::ProgramSpec spec,
                               std::shared_ptr<Watchdog> watchdog,
                               std::shared_ptr<InstanceThreads> threads,
                               std::shared_ptr<spidermonkey::CompileCache> cache,
                               std::shared_ptr<spidermonkey::CompiledModules> compiled)
    : executor_(std::move(executor)),
      spec_(std::move(spec)),
      watchdog_(std::move(watchdog)),
      threads_(std::move(threads)),
      cache_(std::move(cache)),
      compiled_(std::move(compiled)) {}

SandboxProgram::~SandboxProgram() {
  lifeline_.end();
  if (channel_) channel_->stop(StopCause::stopped);
}

Result<void> SandboxProgram::start(runtime::ProgramEvents events) {
  if (channel_) return make_error(platform::Errc::invalid_argument, "already started");
  channel_ = std::make_shared<Channel>(executor_, std::move(events), lifeline_.token(),
                                       spec_.limits, watchdog_);
  watchdog_->watch(channel_);
  auto start = std::make_unique<Start>(Start{channel_, threads_, spec_, cache_, compiled_});
  const char* name = spec_.kind == runtime::RunKind::wasm ? "escouade-wasm" : "escouade-js";
  if (const int rc = start_thread(*threads_, instance_main, start.get(), name)) {
    channel_.reset();
    return make_error(platform::Errc::exhausted,
                      "no thread for its instance: " + std::string(std::strerror(rc)));
  }
  (void)start.release();  // the thread's now
  return {};
}

void SandboxProgram::write_line(std::string line) {
  if (channel_) channel_->push(std::move(line), false);
}

namespace {
// A timer/fired the host sends: the prelude counts that timer as pending until it comes, so
// dropping it would leave a callback that never runs and an instance that never ends. There are
// 64 at most at once: kept like an answer.
bool fired_timer(std::string_view line) {
  constexpr std::string_view kFired = R"("method":"timer/fired")";
  return line.substr(0, 64).find(kFired) != std::string_view::npos;
}
}  // namespace

void SandboxProgram::write_droppable(std::string line) {
  if (channel_) {
    const bool droppable = !fired_timer(line);
    channel_->push(std::move(line), droppable);
  }
}

void SandboxProgram::stop() {
  if (channel_) channel_->stop(StopCause::stopped);
}

std::optional<std::uint64_t> SandboxProgram::memory_bytes() const {
  if (!channel_) return std::nullopt;
  return channel_->memory_bytes();
}

std::string SandboxProgram::describe() const {
  return module_name(spec_) + " in the sandbox";
}

void SandboxProgram::decisions_held(std::size_t count) {
  if (channel_) channel_->decisions(count);
}

SandboxProgramFactory::SandboxProgramFactory(boost::asio::any_io_executor executor,
                                             std::filesystem::path cache_folder)
    : executor_(std::move(executor)),
      threads_(std::make_shared<InstanceThreads>()),
      cache_(std::make_shared<spidermonkey::CompileCache>(std::move(cache_folder))),
      compiled_(spidermonkey::make_compiled_modules()) {}

SandboxProgramFactory::~SandboxProgramFactory() {
  // At the host's end, after its programs were stopped: the instances end by themselves; a
  // bounded wait lets them destroy their contexts before the process goes on to exit.
  std::unique_lock lock(threads_->mutex);
  threads_->none_left.wait_for(lock, std::chrono::seconds(2),
                               [&] { return threads_->running == 0; });
}

bool SandboxProgramFactory::runs(runtime::RunKind kind) const {
  if (kind != runtime::RunKind::js && kind != runtime::RunKind::wasm) return false;
  // The engine starts when a sandboxed plugin is first asked about: a host that runs processes
  // only never starts it. On the host's thread, as every call here is.
  if (!engine_) engine_ = spidermonkey::start_engine();
  return *engine_;
}

std::unique_ptr<runtime::Program> SandboxProgramFactory::make(const runtime::ProgramSpec& spec) {
  if (!runs(spec.kind)) return nullptr;
  if (!watchdog_) watchdog_ = std::make_shared<Watchdog>();
  return std::make_unique<SandboxProgram>(executor_, spec, watchdog_, threads_, cache_, compiled_);
}

spidermonkey::CompiledCounts SandboxProgramFactory::compiled_wasm() const {
  return spidermonkey::counts_of(*compiled_);
}

void SandboxProgramFactory::prepare(const runtime::ProgramSpec& spec) {
  if (!runs(spec.kind)) return;
  auto job = std::make_unique<Precompile>(Precompile{spec, threads_, cache_, compiled_});
  ++threads_->compiling;
  if (start_thread(*threads_, precompile_main, job.get(), "escouade-compile") == 0) {
    (void)job.release();  // the thread's now
  } else {
    --threads_->compiling;  // without a thread, the first instance compiles it
  }
}

}  // namespace escouade::sandbox
