#include "sandbox/sandbox_program.hpp"

#include <signal.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <list>
#include <utility>

#include "base/sanitizers.hpp"
#include "base/workers.hpp"
#include "manifest/manifest.hpp"
#include "platform/errors.hpp"
#include "platform/process_tree.hpp"
#include "runtime/module_fingerprint.hpp"
#include "runtime/own_folder.hpp"
#include "runtime/process_program.hpp"
#include "sandbox/bundle.hpp"
#include "sandbox/helper_process.hpp"
#include "sandbox/lockdown.hpp"
#include "sandbox/time_zone.hpp"
#include "sandbox/wire.hpp"

namespace escouade::sandbox {

namespace asio = boost::asio;
using runtime::ProgramEnd;

namespace {

// The folder a bundle sees itself in: process.cwd() and the root of its file: URLs. Never the
// real one, which names the user and the layout of their disk (issue 26).
constexpr std::string_view kSeenFolder = "/plugin";

// How often the host reads a helper's memory, as a backstop to its own account (docs/sandbox.md,
// "The limits"; SandboxOptions::memory_backstop_bytes).
constexpr auto kMemoryPeriod = std::chrono::seconds(1);

// Whether this build watches its helpers' memory: not under AddressSanitizer (its helpers' shadow
// memory and quarantine inflate what they hold several times).
constexpr bool watches_memory() {
  return !kAddressSanitizer;
}

ProgramEnd crash(std::string reason) {
  return ProgramEnd{ProgramEnd::Kind::crash, std::move(reason), {}, {}};
}
ProgramEnd refusal(std::string reason) {
  return ProgramEnd{ProgramEnd::Kind::refusal, std::move(reason), {}, {}};
}

std::string module_name(const runtime::ProgramSpec& spec) {
  std::error_code ec;
  auto rel = std::filesystem::relative(spec.module, spec.folder, ec);
  return ec || rel.empty() ? spec.module.filename().string() : rel.generic_string();
}

std::string memory_sentence(std::uint64_t limit) {
  return "its instance ran past " + std::to_string(limit / (1024 * 1024)) +
         " MB of memory: Escouade stopped it";
}

}  // namespace

// What the factory and its programs share: a program may outlive its factory (it is then
// refused helpers), and the work it left on the workers finds this still alive.
struct SandboxState {
  SandboxState(asio::any_io_executor e, runtime::ProcessContext& c, SandboxOptions o)
      : executor(std::move(e)),
        context(c),
        options(std::move(o)),
        workers(executor, 1),
        cache(options.cache_folder),
        spare_timer(executor) {}

  // A compile helper and what it compiles: counted until its helper ended and its stencil, if
  // it made one, is kept.
  struct Compile {
    std::unique_ptr<HelperProcess> helper;
    CompileCache::Key key;
    std::string plugin_id;
    bool exited = false;
    bool keeping = false;
    bool forgetting = false;  // its erase is posted: one at a time
  };

  asio::any_io_executor executor;
  runtime::ProcessContext& context;
  SandboxOptions options;
  // Reading plugins' files and the cache's disk, off the host's thread.
  Workers workers;
  CompileCache cache;
  std::deque<std::unique_ptr<HelperProcess>> spares;
  std::list<Compile> compiles;
  std::size_t reading = 0;  // prepare()s whose bundle is being read
  bool closed = false;
  // The spares' making after a start took one (SandboxOptions::spare_delay), when it is due.
  asio::steady_timer spare_timer;
  bool spare_due = false;

  // A helper ready to take a program: a spare when one is there and alive, else a new one.
  Result<std::unique_ptr<HelperProcess>> take_helper() {
    if (closed) return make_error(platform::Errc::invalid_argument, "the sandbox is closed");
    while (!spares.empty()) {
      auto helper = std::move(spares.front());
      spares.pop_front();
      if (!helper->ended()) return helper;
    }
    return HelperProcess::start(executor, context, options.helper, options.time_zone);
  }

  // Spares made again up to their number; a failure waits for the next take.
  void replenish() {
    while (!closed && spares.size() < options.spares) {
      auto helper = HelperProcess::start(executor, context, options.helper, options.time_zone);
      if (!helper) return;
      spares.push_back(std::move(*helper));
    }
  }

  // The same, spare_delay from now: once the instance of a start that took a spare is ready,
  // so that the next one's process and engine do not start beside that start. Once at a time;
  // what a make() starts meanwhile counts.
  static void replenish_later(const std::shared_ptr<SandboxState>& state) {
    if (state->closed || state->spare_due || state->spares.size() >= state->options.spares) return;
    if (state->options.spare_delay <= std::chrono::milliseconds(0)) return state->replenish();
    state->spare_due = true;
    state->spare_timer.expires_after(state->options.spare_delay);
    state->spare_timer.async_wait(
        [weak = std::weak_ptr<SandboxState>(state)](boost::system::error_code ec) {
          auto s = weak.lock();
          if (!s || ec) return;
          s->spare_due = false;
          s->replenish();
        });
  }
};

std::filesystem::path installed_helper() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path() / "escouade-sandbox";
    if (::access(beside.c_str(), X_OK) == 0) return beside;
  }
  return ESCOUADE_SANDBOX_HELPER;
}

SandboxOptions SandboxOptions::installed(std::filesystem::path cache_folder) {
  SandboxOptions options;
  options.helper = installed_helper();
  options.cache_folder = std::move(cache_folder);
  options.time_zone = system_time_zone();
  return options;
}

std::string system_time_zone() {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical("/etc/localtime", ec);
  if (ec) return "UTC";
  return time_zone_of(real.string()).value_or("UTC");
}

// --- the program

struct SandboxProgram::Prepared {
  std::optional<ProgramEnd> refused;  // why it may not run as it is
  std::optional<CompileCache::Key> key;
  bool stencil_given = false;  // the cache's stencil is in the record
  // The start record, made on the worker: megabytes for a large bundle and its stencil, which
  // the host's thread only hands to the helper's pipe.
  std::string record;
};

namespace {

// On a worker: everything the helper gets, read as files/read reads (no link out, sizes read
// while reading), and the bundle's compile when the cache keeps it, made into its start record.
// For a compile helper: a record only when the cache has no stencil of the bundle.
enum class StartFor { running, compiling };
SandboxProgram::Prepared prepare_start(const runtime::ProgramSpec& spec, CompileCache& cache,
                                       StartFor what = StartFor::running) {
  SandboxProgram::Prepared p;
  wire::Start s;
  s.memory_bytes = spec.limits.memory_bytes;
  s.turn_ms = static_cast<std::uint32_t>(spec.limits.turn.count());
  s.turn_deciding_ms = static_cast<std::uint32_t>(spec.limits.turn_deciding.count());
  s.net_bytes = spec.limits.net_bytes;
  s.name = module_name(spec);
  const auto folder = runtime::OwnFolder::open(spec.folder);
  if (spec.kind == runtime::RunKind::wasm) {
    s.kind = wire::Start::Kind::wasm;
    auto bytes = folder->read_bytes(s.name, manifest::kMaxModuleBytes);
    if (!bytes) {
      p.refused = refusal("its module " + s.name + " cannot be read: " + bytes.error().message);
      return p;
    }
    s.source = *bytes;
    // The bytes that run are those checked: a file changed since the load is refused too.
    if (spec.module_sha256) {
      if (auto wrong = runtime::fingerprint_mismatch(s.name, s.source, *spec.module_sha256)) {
        p.refused = refusal(std::move(*wrong));
        return p;
      }
    }
    if (what == StartFor::compiling) {
      // Compiled wasm cannot be kept: what the cache keeps is that this module compiled, with
      // this engine and for this Escouade, so that an update checks it again once.
      p.key = CompileCache::key_of(spec.plugin_id, s.name, s.source, spec.escouade_version);
      if (cache.find(*p.key)) return p;
      s.kind = wire::Start::Kind::compile_wasm;
    }
    p.record = wire::start_record(s);
    return p;
  }
  s.kind = wire::Start::Kind::js;
  auto source = folder->read(s.name, manifest::kMaxBundleBytes);
  if (!source) {
    p.refused = refusal("its bundle " + s.name + " cannot be read: " + source.error().message);
    return p;
  }
  s.source = *source;
  if (spec.module_sha256) {
    if (auto wrong = runtime::fingerprint_mismatch(s.name, s.source, *spec.module_sha256)) {
      p.refused = refusal(std::move(*wrong));
      return p;
    }
  }
  if (auto refused = refuse_old_sdk(s.source)) {
    p.refused = refusal(std::move(*refused));
    return p;
  }
  s.folder = kSeenFolder;
  s.url = "file://" + std::string(kSeenFolder) + "/" + s.name;
  p.key = CompileCache::key_of(spec.plugin_id, s.name, s.source, spec.escouade_version);
  const std::shared_ptr<const std::string> stencil = cache.find(*p.key);
  if (what == StartFor::compiling) {
    if (stencil) return p;  // compiled already
    s.kind = wire::Start::Kind::compile_js;
    p.record = wire::start_record(s);
    return p;
  }
  RootFiles root = read_root_files(*folder);
  for (auto& [name, text] : root.files)
    s.root_files.emplace_back(name, std::move(text));
  if (stencil) s.stencil = *stencil;
  p.stencil_given = stencil != nullptr;
  p.record = wire::start_record(s);
  return p;
}

}  // namespace

SandboxProgram::SandboxProgram(std::shared_ptr<SandboxState> state, runtime::ProgramSpec spec)
    : state_(std::move(state)), spec_(std::move(spec)) {}

SandboxProgram::~SandboxProgram() {
  lifeline_.end();
  if (memory_timer_) memory_timer_->cancel();
  // Its helper is ended with it, off the host's thread (HelperProcess, ProcessProgram).
}

Result<void> SandboxProgram::start(runtime::ProgramEvents events) {
  if (started_) return make_error(platform::Errc::invalid_argument, "already started");
  started_ = true;
  events_ = std::move(events);
  state_->workers.run(
      spec_.plugin_id,
      [state = state_, spec = spec_]() -> Result<Prepared> {
        return prepare_start(spec, state->cache);
      },
      lifeline_.guard([this](Result<Prepared> p) { prepared(std::move(p)); }));
  return {};
}

void SandboxProgram::prepared(Result<Prepared> p) {
  if (finished_ || stopping_) return;
  if (!p) return finish(crash("its instance could not start: " + p.error().message));
  if (p->refused) return finish(std::move(*p->refused));
  auto helper = state_->take_helper();
  if (!helper) {
    const bool no_room = helper.error().code == platform::Errc::exhausted;
    return finish(ProgramEnd{no_room ? ProgramEnd::Kind::no_room : ProgramEnd::Kind::crash,
                             helper.error().message,
                             {},
                             {}});
  }
  helper_ = std::move(*helper);

  runtime::ProgramEvents forward;
  forward.output_line = lifeline_.guard([this](std::string_view line) {
    if (events_.output_line) events_.output_line(line);
  });
  forward.output_too_long = lifeline_.guard([this](std::size_t limit) {
    if (events_.output_too_long) events_.output_too_long(limit);
  });
  forward.error_line = lifeline_.guard([this](std::string_view line) {
    if (events_.error_line) events_.error_line(line);
  });
  forward.error_piece = lifeline_.guard([this](std::string_view piece) {
    if (events_.error_piece) {
      events_.error_piece(piece);
    } else if (events_.error_line) {
      events_.error_line(piece);
    }
  });
  forward.input_full = lifeline_.guard([this](std::size_t backlog) {
    if (events_.input_full) events_.input_full(backlog);
  });
  forward.input_drained = lifeline_.guard([this](std::size_t dropped) {
    if (events_.input_drained) events_.input_drained(dropped);
  });
  forward.exited = lifeline_.guard([this](const ProgramEnd& end) { helper_ended(end); });

  ControlEvents control;
  control.ready = lifeline_.guard([this] {
    ready_ = true;
    pay_spare();
  });
  control.ended = lifeline_.guard([this](const wire::Ended& e) {
    if (told_) return;
    told_ = e.refusal ? refusal(e.reason) : crash(e.reason);
    told_->turn = e.turn;
  });
  control.input_full = forward.input_full;
  control.input_drained = forward.input_drained;
  control.stale_stencil = lifeline_.guard([this] {
    if (!key_) return;
    state_->workers.run(
        spec_.plugin_id, [state = state_, key = *key_] { return (state->cache.drop(key), 0); },
        [](int) {});
    key_.reset();
  });
  control.broken = lifeline_.guard([this](std::string_view why) {
    if (!told_) told_ = crash("its instance crashed: its sandbox wrote " + std::string(why));
    if (helper_) helper_->process().stop();
  });
  helper_->bind(std::move(forward), std::move(control));

  key_ = p->key;
  stencil_given_ = p->stencil_given;
  helper_->process().write_first(std::move(p->record));
  while (!waiting_.empty()) {
    const proto::Delivery delivery = waiting_[0].delivery;
    helper_->process().write(waiting_.take(0), delivery);
  }
  watch_memory();
  spare_owed_ = true;
}

void SandboxProgram::send(std::string records, proto::Delivery delivery, bool request) {
  if (!helper_) {
    waiting_.push(std::move(records), delivery);
    return;
  }
  if (request && gathered_.empty()) {
    // A request of the host's with nothing gathered before it (a call, a decision) is written
    // now, as a process's is, and its answer read at once when the helper already gave it:
    // gathered, it waited for a post, whose turn of the loop began with an epoll_wait of its
    // own, and its answer for another (strace, bench_host sandbox: three system calls a call
    // on the host's thread instead of four, two when pinned).
    helper_->process().write_request(std::move(records));
    return;
  }
  if (delivery == proto::Delivery::droppable) {
    // Dropped or not by the pipe's queue on its own: what was gathered before it goes first.
    send_gathered();
    helper_->process().write(std::move(records), delivery);
    return;
  }
  // Kept records written by one handler of the host's thread leave in one write, once it
  // returns: an answer to net/stream, the body's net/chunk and its net/end, written one after
  // another, were three wake-ups of the helper (each preempting the host on a shared core) and
  // three turns of its instance; gathered, one read brings them all. What is gathered stays
  // small (kGatherBytes): a larger record goes at once, after what was gathered before it, and
  // answers that come faster than the helper reads are held by its pipe's queue as before.
  if (gathered_.size() + records.size() > kGatherBytes) {
    send_gathered();
    if (records.size() > kGatherBytes) {
      helper_->process().write(std::move(records), delivery);
      return;
    }
  }
  if (gathered_.empty())
    gathered_ = std::move(records);
  else
    gathered_ += records;
  if (!gather_posted_) {
    gather_posted_ = true;
    boost::asio::post(state_->executor, lifeline_.guard([this] {
      gather_posted_ = false;
      send_gathered();
    }));
  }
}

void SandboxProgram::send_gathered() {
  if (gathered_.empty() || !helper_) return;
  helper_->process().write(std::exchange(gathered_, {}), proto::Delivery::kept);
}

void SandboxProgram::write(std::string line, proto::Delivery delivery) {
  if (finished_ || !started_) return;
  // The helper's channel drops a droppable line too, once the instance's input is full.
  const bool droppable = delivery == proto::Delivery::droppable;
  std::string records;
  if (decisions_untold_) {
    // The count goes in the same write as the line, before it: one wake-up of the helper, which
    // reads both at once and begins the line's turn with the count (a record written alone was
    // two more wake-ups a decision, ~2.4 context switches). A droppable line, which may be
    // dropped here or in the pipe's queue, does not carry it: the count goes on its own, kept.
    records = wire::record(wire::ToHelper::decisions, wire::count(*decisions_untold_));
    decisions_untold_.reset();
    if (droppable) send(std::exchange(records, {}), proto::Delivery::kept);
  }
  records.reserve(records.size() + wire::kHeaderBytes + line.size());
  wire::append_record(
      records, static_cast<char>(droppable ? wire::ToHelper::droppable : wire::ToHelper::line),
      line);
  send(std::move(records), delivery, !droppable && runtime::is_request_line(line));
}

std::size_t SandboxProgram::input_backlog() const {
  return waiting_.bytes() + gathered_.size() + (helper_ ? helper_->process().input_backlog() : 0);
}

void SandboxProgram::decisions_held(std::size_t count) {
  // Told with its next line (write): the helper reads the count only as it reads its input, and
  // a turn of its instance begins only after the read that brought its line, so the turns see
  // the count they saw when it was written at once. The last change before a line is the one
  // told.
  if (finished_ || !started_) return;
  decisions_untold_ = count;
}

void SandboxProgram::stop() {
  if (finished_ || !started_) return;
  stopping_ = true;
  if (helper_) {
    helper_->process().stop();
    return;
  }
  // Still reading its files: it ends now, and what was read is dropped when it comes.
  asio::post(state_->executor, lifeline_.guard([this] { finish(crash("stopped by Escouade")); }));
}

std::optional<int> SandboxProgram::pid() const {
  if (!helper_ || finished_) return std::nullopt;
  return helper_->process().pid();
}

std::optional<std::uint64_t> SandboxProgram::memory_bytes() const {
  if (!helper_ || finished_) return std::nullopt;
  const StatusPage& page = helper_->status();
  return page.account_bytes.load(std::memory_order_relaxed) +
         page.gc_bytes.load(std::memory_order_relaxed) +
         page.wasm_bytes.load(std::memory_order_relaxed);
}

std::string SandboxProgram::describe() const {
  return module_name(spec_) + " in the sandbox";
}

void SandboxProgram::watch_memory() {
  const std::uint64_t bound = state_->options.memory_backstop_bytes
                                  ? state_->options.memory_backstop_bytes
                                  : 2 * spec_.limits.memory_bytes;
  if (!watches_memory() && !state_->options.memory_backstop_bytes) return;
  if (!memory_timer_) memory_timer_ = std::make_unique<asio::steady_timer>(state_->executor);
  memory_timer_->expires_after(kMemoryPeriod);
  memory_timer_->async_wait(lifeline_.guard([this, bound](boost::system::error_code ec) {
    if (ec || finished_ || !helper_) return;
    if (const auto pid = helper_->process().pid()) {
      if (platform::private_resident_bytes(*pid) > bound) {
        memory_stop_ = true;
        helper_->process().stop();
        return;
      }
    }
    watch_memory();
  }));
}

void SandboxProgram::helper_ended(const ProgramEnd& end) {
  // A stencil that crashed its helper before its module was ready is not given again.
  if (stencil_given_ && !ready_ && key_) {
    state_->workers.run(
        spec_.plugin_id, [state = state_, key = *key_] { return (state->cache.drop(key), 0); },
        [](int) {});
  }
  finish(end_of(end));
}

ProgramEnd SandboxProgram::end_of(const ProgramEnd& helper_end) const {
  if (told_) return *told_;
  if (stopping_) return crash("stopped by Escouade");
  const std::uint64_t limit = spec_.limits.memory_bytes;
  if (memory_stop_ || (helper_ && helper_->status().over_memory.load() != 0))
    return crash(memory_sentence(limit));
  const auto& status = helper_end.status;
  if (status && status->signal) {
    const int sig = *status->signal;
    const std::string named =
        " (signal " + std::to_string(sig) +
        (platform::signal_name(sig).empty() ? "" : ", " + platform::signal_name(sig)) + ")";
    switch (sig) {
      case SIGSYS:  // its seccomp filter (sandbox/lockdown.hpp)
        return crash("its instance crashed: it made a system call its sandbox forbids" + named);
      case SIGXCPU:  // RLIMIT_CPU
        return crash("its instance used " + std::to_string(lockdown::kCpuSeconds) +
                     " s of CPU in all, the most an instance may: Escouade stopped it");
      case SIGKILL:  // not the host's: someone else's kill, or the kernel's
        return crash("its instance crashed: its process was killed" + named);
      default:
        return crash("its instance crashed: the engine failed" + named);
    }
  }
  if (status && status->code) {
    return crash("its instance crashed: its sandbox ended with code " +
                 std::to_string(*status->code) + " and said nothing");
  }
  return crash("its instance crashed");
}

void SandboxProgram::pay_spare() {
  if (!std::exchange(spare_owed_, false)) return;
  SandboxState::replenish_later(state_);
}

void SandboxProgram::finish(ProgramEnd end) {
  if (finished_) return;
  finished_ = true;
  pay_spare();
  if (memory_timer_) memory_timer_->cancel();
  auto exited = events_.exited;
  if (exited) exited(end);
}

// --- the factory

SandboxProgramFactory::SandboxProgramFactory(asio::any_io_executor executor,
                                             runtime::ProcessContext& context,
                                             SandboxOptions options)
    : state_(std::make_shared<SandboxState>(std::move(executor), context, std::move(options))) {}

SandboxProgramFactory::~SandboxProgramFactory() {
  state_->closed = true;
  state_->spare_timer.cancel();
  state_->spares.clear();
  state_->compiles.clear();
  state_->workers.close(Workers::kCloseBound);
}

bool SandboxProgramFactory::runs(runtime::RunKind kind) const {
  if (kind != runtime::RunKind::js && kind != runtime::RunKind::wasm) return false;
  return ::access(state_->options.helper.c_str(), X_OK) == 0;
}

std::unique_ptr<runtime::Program> SandboxProgramFactory::make(const runtime::ProgramSpec& spec) {
  if (!runs(spec.kind)) return nullptr;
  // The first sandboxed plugin starts the spares: a host with processes only starts none.
  state_->replenish();
  return std::make_unique<SandboxProgram>(state_, spec);
}

runtime::ProcessContext* SandboxProgramFactory::process_context() {
  return &state_->context;
}

void SandboxProgramFactory::prepare(const runtime::ProgramSpec& spec, Tell tell) {
  if (!runs(spec.kind)) return;
  state_->replenish();
  // A bundle's stencil is kept and given to each start; a run.wasm module is compiled by each
  // instance (the engine cannot keep compiled wasm), and checked here once for each version of
  // Escouade, so that it is refused at its load rather than at its first start.
  struct Read {
    std::string record;  // empty: nothing to compile (kept, or not readable)
    CompileCache::Key key;
    std::string sentence;  // what the journal says of the compile
  };
  std::weak_ptr<SandboxState> weak = state_;
  ++state_->reading;
  state_->workers.run(
      spec.plugin_id,
      [state = state_, spec]() {
        Read r;
        auto p = prepare_start(spec, state->cache, StartFor::compiling);
        // What does not read, or may not run, is left to its start, which says why.
        if (p.refused || !p.key || p.record.empty()) return r;
        r.key = *p.key;
        r.record = std::move(p.record);
        const std::string what =
            (spec.kind == runtime::RunKind::wasm ? "its module " : "its bundle ") +
            module_name(spec);
        const std::string version = spec.escouade_version.empty()
                                        ? std::string("this Escouade")
                                        : "Escouade " + spec.escouade_version;
        const auto before = state->cache.compiled_before(r.key);
        if (!before) {
          r.sentence = what + " is compiled for " + version;
        } else if (*before != r.key.escouade) {
          r.sentence = what + " is compiled again, for " + version + ": it was compiled for " +
                       (before->empty() ? std::string("another version") : "Escouade " + *before);
        } else {
          r.sentence = what + " changed: it is compiled again";
        }
        return r;
      },
      [weak, plugin = spec.plugin_id, tell](Read r) {
        auto state = weak.lock();
        if (!state) return;
        --state->reading;
        if (r.record.empty()) return;
        if (tell) tell(r.sentence);
        auto helper = state->take_helper();
        if (!helper) return;  // the start compiles it then
        state->compiles.push_back({std::move(*helper), r.key, plugin});
        auto job = std::prev(state->compiles.end());
        // Forgotten once both are done; off the call that says so, which its helper makes. The
        // helper's exit and its stencil come by different pipes, in either order: a stencil read
        // after the exit, while the erase is posted, starts its keeping first, and the erase
        // then waits for the keeping's end (one erase posted at a time, the job checked again
        // when it runs).
        const auto done = [weak, job] {
          auto s = weak.lock();
          if (!s || s->closed || !job->exited || job->keeping || job->forgetting) return;
          job->forgetting = true;
          asio::post(s->executor, [weak, job] {
            auto s2 = weak.lock();
            if (!s2 || s2->closed) return;  // the compiles are gone with the factory's close
            job->forgetting = false;
            if (job->exited && !job->keeping) s2->compiles.erase(job);
          });
        };
        runtime::ProgramEvents events;
        events.exited = [job, done](const ProgramEnd&) {
          job->exited = true;
          done();
        };
        ControlEvents control;
        // A module that does not compile is said at its load; its start refuses it again.
        control.ended = [tell](const wire::Ended& e) {
          if (tell) tell("its compile failed: " + e.reason);
        };
        control.stencil = [weak, job, done](std::string stencil) {
          auto s = weak.lock();
          if (!s || s->closed) return;
          job->keeping = true;
          s->workers.run(
              job->plugin_id,
              [s, key = job->key, stencil = std::move(stencil)]() mutable {
                s->cache.keep(key, std::move(stencil));
                return 0;
              },
              [job, done](int) {
                job->keeping = false;
                done();
              });
        };
        job->helper->bind(std::move(events), std::move(control));
        job->helper->process().write_first(std::move(r.record));
        state->replenish();
      });
}

void SandboxProgramFactory::check(const runtime::ProgramSpec& spec, CheckDone done) {
  struct Read {
    std::optional<std::string> refused;
    std::string record;
  };
  std::weak_ptr<SandboxState> weak = state_;
  state_->workers.run(
      spec.plugin_id,
      [spec]() {
        Read r;
        CompileCache scratch({});  // nothing kept: it is always compiled
        auto p = prepare_start(spec, scratch, StartFor::compiling);
        if (p.refused) r.refused = p.refused->reason;
        r.record = std::move(p.record);
        return r;
      },
      [weak, plugin = spec.plugin_id, done = std::move(done)](Read r) mutable {
        auto state = weak.lock();
        if (!state) return;
        if (r.refused || r.record.empty()) return done(std::move(r.refused));
        auto helper = state->take_helper();
        if (!helper) return done("the sandbox could not start: " + helper.error().message);
        state->compiles.push_back({std::move(*helper), CompileCache::Key{}, plugin});
        auto job = std::prev(state->compiles.end());
        auto once = std::make_shared<CheckDone>(std::move(done));
        const auto verdict = [once](std::optional<std::string> why) {
          if (!*once) return;
          auto d = std::exchange(*once, nullptr);
          d(std::move(why));
        };
        runtime::ProgramEvents events;
        // Its records all come before its exit (HelperProcess::bind): a compile that said
        // nothing before it ended is a failure of its own.
        events.exited = [weak, job, verdict](const ProgramEnd& end) {
          verdict("its compile ended without a verdict: " + end.reason);
          auto s = weak.lock();
          if (!s) return;
          asio::post(s->executor, [weak, job] {
            auto s2 = weak.lock();
            if (s2 && !s2->closed) s2->compiles.erase(job);
          });
        };
        ControlEvents control;
        control.ended = [verdict](const wire::Ended& e) { verdict(e.reason); };
        control.stencil = [verdict](std::string) { verdict(std::nullopt); };
        job->helper->bind(std::move(events), std::move(control));
        job->helper->process().write_first(std::move(r.record));
      });
}

const CompileCache& SandboxProgramFactory::compile_cache() const {
  return state_->cache;
}

std::size_t SandboxProgramFactory::compiling() const {
  return state_->reading + state_->compiles.size();
}

std::size_t SandboxProgramFactory::spares() const {
  return state_->spares.size();
}

}  // namespace escouade::sandbox
