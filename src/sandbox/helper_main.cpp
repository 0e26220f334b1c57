// escouade-sandbox: the process a run.js or run.wasm plugin's instance runs in (docs/sandbox.md).
// The host starts it with an empty environment, `--time-zone NAME` as its arguments, and five
// descriptors: 0 the records it is sent (sandbox/wire.hpp), 1 and 2 the plugin's stdout and
// stderr, 3 its control records to the host, 4 its status page (sandbox/status_page.hpp). It
// maps the page, sets its time zone, starts the engine and the engine's helper threads (at a low
// priority, which only they can set, before the lockdown), locks itself down
// (sandbox/lockdown.hpp), makes the instance's context on a thread of its own, then waits for its
// start record: a helper may be made before the host knows which plugin it will run (a spare,
// sandbox_program.hpp). It runs the instance to its end, tells the host how it ended, and exits.
// Nothing of it outlives its instance.

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "base/sanitizers.hpp"
#include "sandbox/channel.hpp"
#include "sandbox/lockdown.hpp"
#include "sandbox/memory_account.hpp"
#include "sandbox/spidermonkey/engine.hpp"
#include "sandbox/status_page.hpp"
#include "sandbox/time_zone.hpp"
#include "sandbox/watchdog.hpp"

namespace {

using namespace escouade;
using namespace escouade::sandbox;

constexpr int kControlFd = 3;
constexpr int kStatusFd = 4;
// Its exit status when operator new fails (out_of_memory); the host reads the status page first.
constexpr int kOutOfMemoryExit = 71;

// The instance thread's stack, and the engine's quota below it.
std::size_t stack_bytes() {
  // AddressSanitizer's frames are several times larger.
  return (kAddressSanitizer ? 32u : 8u) * 1024u * 1024u;
}

// Its private writable memory at most (RLIMIT_DATA): a backstop far above what the account lets
// an instance hold (twice its limit for malloc, twice for the GC heap, its wasm memory, the
// engine's code), below what would hurt the machine. None under AddressSanitizer, whose shadow
// memory is terabytes of it.
std::uint64_t data_bytes() {
  return memory::accounting() ? 1024ull * 1024 * 1024 : 0;
}

[[noreturn]] void fail(const std::string& what) {
  const std::string line = "escouade-sandbox: " + what + "\n";
  (void)!::write(2, line.data(), line.size());
  ::_exit(70);
}

// The status page, for the handler below.
StatusPage* g_status = nullptr;

// An allocation of the helper's own C++ code (operator new) that failed: the account refused it
// (past twice the instance's limit) or the system did (RLIMIT_DATA). The instance is past its
// memory whatever it was doing, so the process ends here, the page saying so, rather than throw
// std::bad_alloc up through the engine's frames (it could only reach std::terminate, whose
// "terminate called after throwing an instance of 'St9bad_alloc'" the journal showed as the
// plugin's last stderr).
void out_of_memory() {
  if (g_status) g_status->over_memory.store(1, std::memory_order_relaxed);
  ::_exit(kOutOfMemoryExit);
}

struct Run {
  std::shared_ptr<Channel> channel;
  StatusPage* status = nullptr;
};

void* instance_main(void* arg) {
  Run& run = *static_cast<Run*>(arg);
  Channel& channel = *run.channel;
  // The context first, the engine's own code loaded, while the host may not even know which
  // plugin this helper will run.
  std::string why;
  const runtime::ProgramLimits defaults;
  spidermonkey::Instance* instance =
      spidermonkey::make_instance(defaults.memory_bytes, stack_bytes(), run.status, why);
  const std::optional<wire::Start> start = channel.read_start();
  if (!start) ::_exit(0);  // the host closed its input: a spare it no longer needs
  runtime::ProgramLimits limits;
  limits.memory_bytes = start->memory_bytes;
  limits.turn = std::chrono::milliseconds(start->turn_ms);
  limits.turn_deciding = std::chrono::milliseconds(start->turn_deciding_ms);
  channel.set_limits(limits);
  if (!instance) {
    channel.ended(
        {runtime::ProgramEnd::Kind::crash, "its instance could not start: " + why, {}, {}});
    ::_exit(0);
  }
  spidermonkey::set_memory_limit(*instance, limits.memory_bytes);
  const bool compile = start->kind == wire::Start::Kind::compile_js ||
                       start->kind == wire::Start::Kind::compile_wasm;
  const char* name = compile                                  ? "escouade-build"
                     : start->kind == wire::Start::Kind::wasm ? "escouade-wasm"
                                                              : "escouade-js";
  pthread_setname_np(pthread_self(), name);
  if (auto end = spidermonkey::run(*instance, *start, channel)) channel.ended(*end);
  // The process ends with its instance: nothing of the engine needs tearing down.
  ::_exit(0);
}

// Its instance's local time in the zone the host named (`--time-zone NAME`; "UTC" when it named
// none valid), set before the lockdown: TZ in its own memory (its environment as /proc shows it
// stays empty), which the C library reads now, while it may still open the zone's file, and the
// engine (ICU) reads by name later, instead of looking for where /etc/localtime leads.
void set_time_zone(int argc, char** argv) {
  const char* zone = "UTC";
  if (argc == 3 && std::string_view(argv[1]) == "--time-zone" && valid_time_zone(argv[2]))
    zone = argv[2];
  ::setenv("TZ", zone, 1);
  ::tzset();
}

}  // namespace

int main(int argc, char** argv) {
  // Its status page, mapped, and its descriptor closed with any other but its pipes.
  void* page = ::mmap(nullptr, kStatusPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, kStatusFd, 0);
  if (page == MAP_FAILED) fail(std::string("no status page: ") + std::strerror(errno));
  auto* status = static_cast<StatusPage*>(page);
  ::close(kStatusFd);
  g_status = status;
  std::set_new_handler(out_of_memory);

  set_time_zone(argc, argv);
  if (!spidermonkey::start_engine()) fail("the engine did not start");
  if (auto limited = lockdown::limit_process(kControlFd + 1, data_bytes()); !limited)
    fail(limited.error().message);
  if (auto filtered = lockdown::install_filter(); !filtered) fail(filtered.error().message);

  // Every thread has the filter from here on: the engine's helper threads, made by start_engine,
  // and those made after it, the watchdog's and the instance's.
  auto watchdog = std::make_shared<Watchdog>();
  Run run{std::make_shared<Channel>(HelperFds{0, 1, 2, kControlFd}, status,
                                    runtime::ProgramLimits{}, watchdog),
          status};
  watchdog->watch(run.channel);

  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes());
  pthread_t thread;
  if (const int rc = pthread_create(&thread, &attr, instance_main, &run); rc != 0)
    fail(std::string("no thread for its instance: ") + std::strerror(rc));
  pthread_attr_destroy(&attr);
  // The instance's thread ends the process.
  pthread_join(thread, nullptr);
  return 0;
}
