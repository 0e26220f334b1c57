#include "sandbox/lockdown.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <string>

#include "base/sanitizers.hpp"
#include "platform/errors.hpp"

namespace escouade::sandbox::lockdown {

namespace {

// Unconditional ones first; those with arguments are added by install_filter().
constexpr std::array kAllowed{
    // Its pipes: the records and lines it reads, the plugin's output and its control records.
    Allowed{"read", "its input: the records the host writes on its stdin"},
    Allowed{"write",
            "its output: the plugin's stdout and stderr, its control records; the engine's own "
            "message before it crashes"},
    Allowed{"writev", "the C library's stderr, for the engine's message before it crashes"},
    Allowed{"close", "a descriptor closed: it has only its pipes, whose end is its own"},
    // Memory: the engine maps its GC chunks, its JIT code (written, then made executable), wasm
    // memories and their guard pages; the C library's malloc maps and trims.
    Allowed{"mmap", "the GC heap's chunks, malloc's large blocks, JIT code, wasm memories"},
    Allowed{"munmap", "the same, given back"},
    Allowed{"mprotect", "JIT code made executable and back to writable; wasm memories grown"},
    Allowed{"mremap", "malloc's realloc of a large block"},
    Allowed{"madvise", "the GC decommits the pages of free chunks; malloc trims"},
    Allowed{"brk", "malloc's heap"},
    // Threads: the instance's, the watchdog's and the engine's helpers (compilation, sweeping).
    Allowed{"futex", "locks and condition variables between its threads"},
    Allowed{"set_robust_list", "each new thread of the C library"},
    Allowed{"rseq", "each new thread of the C library (restartable sequences)"},
    Allowed{"sched_yield", "spin locks of the engine and the C library; WASI's sched_yield"},
    Allowed{"sched_getaffinity", "the engine counts the processors its helper threads may use"},
    Allowed{"getpid", "the C library (raise, abort)"},
    Allowed{"gettid", "the C library and the engine name the calling thread"},
    Allowed{"exit", "a thread ends"},
    Allowed{"exit_group", "the helper ends with its instance"},
    // Signals: the engine catches the faults of wasm code (out-of-bounds accesses on guard pages,
    // traps) on an alternate stack; the C library masks signals around its own work.
    Allowed{"rt_sigaction", "the engine sets its handlers of wasm traps (SIGSEGV, SIGILL, SIGBUS)"},
    Allowed{"rt_sigprocmask", "the C library masks signals around thread creation and abort"},
    Allowed{"rt_sigreturn", "the return from the engine's wasm trap handler"},
    // Time: the watchdog reads each turn's CPU clock; WASI's clocks and sleeps; timed waits.
    Allowed{"clock_gettime", "a turn's CPU time (the watchdog), WASI's clock_time_get"},
    Allowed{"clock_nanosleep", "a sleep of the C library's (timed waits use futex)"},
    // Each clock the engine reads through the vDSO (Date.now: gettimeofday) enters the kernel
    // where the clock source has no vDSO reading (Xen's, HPET, a kernel booted with vdso=0).
    Allowed{"gettimeofday", "Date.now, where the clock source has no vDSO reading"},
    Allowed{"time", "the C library's time(), without a vDSO"},
    Allowed{"clock_getres", "the engine reads its clocks' resolution, without a vDSO"},
    Allowed{"restart_syscall",
            "a sleep or timed wait stopped and continued (a debugger, job control, a freezer) "
            "goes on"},
    Allowed{"getrandom", "the engine's hash seeds and Math.random, WASI's random_get"},
    Allowed{"getrusage", "the engine's GC reads its own CPU time for its statistics"},
};

// A comparison of a call's first argument (libseccomp's SCMP_A0 is a C compound literal).
scmp_arg_cmp first_arg(scmp_compare op, scmp_datum_t a, scmp_datum_t b = 0) {
  scmp_arg_cmp cmp{};
  cmp.arg = 0;
  cmp.op = op;
  cmp.datum_a = a;
  cmp.datum_b = b;
  return cmp;
}

// What the sanitizers' own runtime does (an alternate stack for its reports of faults in every
// thread; UBSan's check of a pointer's memory through a pipe it makes and closes), allowed in a
// build with AddressSanitizer only, with the descriptors that check needs: the helpers that ship
// have none of it.
#if defined(ESCOUADE_ADDRESS_SANITIZER)
constexpr std::array kSanitizerOnly{"sigaltstack", "pipe2"};
constexpr int kSanitizerFiles = 12;
#else
constexpr std::array<const char*, 0> kSanitizerOnly{};
constexpr int kSanitizerFiles = 0;
#endif

Error failed(std::string what, int error) {
  return make_error(platform::Errc::os_failure, what + ": " + std::strerror(error));
}

}  // namespace

std::span<const Allowed> allowed_calls() {
  static const auto all = [] {
    std::array<Allowed, kAllowed.size() + 8> out{};
    std::size_t i = 0;
    for (const Allowed& a : kAllowed)
      out[i++] = a;
    out[i++] = Allowed{"clone", "a new thread (the engine's helpers, the instance, the watchdog)",
                       "CLONE_THREAD set: a thread, never a process"};
    out[i++] = Allowed{"prctl", "the instance's thread names itself once it knows its kind",
                       "PR_SET_NAME and PR_GET_NAME only"};
    out[i++] = Allowed{"tgkill", "abort() of the C library (the engine's MOZ_CRASH)",
                       "to a thread of the helper itself only"};
    out[i++] = Allowed{"clone3",
                       "answered ENOSYS: the C library then makes its threads with "
                       "clone, whose flags the filter can read",
                       "never runs"};
    out[i++] = Allowed{"openat",
                       "answered EACCES: the C library reads /proc/sys/vm/overcommit_memory "
                       "when it trims a thread's heap, and takes a refusal as a no",
                       "never runs"};
    out[i++] = Allowed{"open", "answered EACCES, as openat", "never runs"};
    out[i++] = Allowed{"readlink",
                       "answered EACCES: the engine's ICU looks for where /etc/localtime leads "
                       "when TZ names a zone it does not take as one (a name with digits), and "
                       "then keeps UTC",
                       "never runs"};
    out[i++] = Allowed{"readlinkat", "answered EACCES, as readlink", "never runs"};
    return out;
  }();
  return all;
}

std::span<const char* const> sanitizer_calls() {
  return kSanitizerOnly;
}

int open_files(int keep) {
  return keep + kSanitizerFiles;
}

Result<void> limit_process(int keep, std::uint64_t data_bytes) {
  const auto limit = [](int resource, rlim_t soft, rlim_t hard) {
    const rlimit l{soft, hard};
    return ::setrlimit(resource, &l) == 0;
  };
  // No core file: its memory is the plugin's, and its secrets' answers pass through it.
  if (!limit(RLIMIT_CORE, 0, 0)) return failed("RLIMIT_CORE", errno);
  // Nothing it could write would be a file.
  if (!limit(RLIMIT_FSIZE, 0, 0)) return failed("RLIMIT_FSIZE", errno);
  // SIGXCPU at the soft limit ends it; the hard one is the kernel's SIGKILL a moment later.
  if (!limit(RLIMIT_CPU, kCpuSeconds, kCpuSeconds + 5)) return failed("RLIMIT_CPU", errno);
  if (!limit(RLIMIT_NOFILE, static_cast<rlim_t>(open_files(keep)),
             static_cast<rlim_t>(open_files(keep))))
    return failed("RLIMIT_NOFILE", errno);
  if (!limit(RLIMIT_MEMLOCK, 0, 0)) return failed("RLIMIT_MEMLOCK", errno);
  if (data_bytes > 0 && !limit(RLIMIT_DATA, data_bytes, data_bytes))
    return failed("RLIMIT_DATA", errno);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return failed("PR_SET_NO_NEW_PRIVS", errno);
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return failed("PR_SET_DUMPABLE", errno);
  // Whatever it was given beyond its own descriptors (none, when the host started it).
  if (::syscall(SYS_close_range, static_cast<unsigned>(keep), ~0U, 0) != 0) {
    for (int fd = keep; fd < 1024; ++fd)
      ::close(fd);
  }
  return {};
}

Result<void> install_filter() {
  scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_KILL_PROCESS);
  if (!ctx) return make_error(platform::Errc::os_failure, "seccomp_init failed");
  struct Release {
    scmp_filter_ctx ctx;
    ~Release() { ::seccomp_release(ctx); }
  } release{ctx};
  // It already has no new privileges; a filter of another architecture's numbering (x32, i386
  // through int 0x80) is killed too.
  ::seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
  // Every thread of the process gets the filter (and no new privileges) at once, those made
  // before it too: the engine's helper threads lower their priority before the lockdown. The
  // load fails rather than leave one of them unfiltered.
  if (const int rc = ::seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1); rc != 0)
    return failed("seccomp TSYNC", -rc);
  const auto rule = [&](std::string_view name, std::uint32_t action, unsigned count,
                        const scmp_arg_cmp* args) -> Result<void> {
    const int nr = ::seccomp_syscall_resolve_name(std::string(name).c_str());
    if (nr == __NR_SCMP_ERROR) return {};  // not a call of this architecture
    const int rc = ::seccomp_rule_add_array(ctx, action, nr, count, args);
    if (rc != 0) return failed("seccomp rule for " + std::string(name), -rc);
    return {};
  };
  for (const Allowed& a : kAllowed) {
    if (auto r = rule(a.name, SCMP_ACT_ALLOW, 0, nullptr); !r) return r;
  }
  const scmp_arg_cmp thread[] = {first_arg(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)};
  if (auto r = rule("clone", SCMP_ACT_ALLOW, 1, thread); !r) return r;
  const scmp_arg_cmp set_name[] = {first_arg(SCMP_CMP_EQ, PR_SET_NAME)};
  if (auto r = rule("prctl", SCMP_ACT_ALLOW, 1, set_name); !r) return r;
  const scmp_arg_cmp get_name[] = {first_arg(SCMP_CMP_EQ, PR_GET_NAME)};
  if (auto r = rule("prctl", SCMP_ACT_ALLOW, 1, get_name); !r) return r;
  const scmp_arg_cmp own[] = {first_arg(SCMP_CMP_EQ, static_cast<scmp_datum_t>(::getpid()))};
  if (auto r = rule("tgkill", SCMP_ACT_ALLOW, 1, own); !r) return r;
  if (auto r = rule("clone3", SCMP_ACT_ERRNO(ENOSYS), 0, nullptr); !r) return r;
  for (const char* name : kSanitizerOnly) {
    if (auto r = rule(name, SCMP_ACT_ALLOW, 0, nullptr); !r) return r;
  }
  // No file is opened; those the C library looks at by itself are told they may not be.
  if (auto r = rule("openat", SCMP_ACT_ERRNO(EACCES), 0, nullptr); !r) return r;
  if (auto r = rule("open", SCMP_ACT_ERRNO(EACCES), 0, nullptr); !r) return r;
  if (auto r = rule("readlink", SCMP_ACT_ERRNO(EACCES), 0, nullptr); !r) return r;
  if (auto r = rule("readlinkat", SCMP_ACT_ERRNO(EACCES), 0, nullptr); !r) return r;
  const int rc = ::seccomp_load(ctx);
  if (rc != 0) return failed("seccomp_load", -rc);
  return {};
}

}  // namespace escouade::sandbox::lockdown
