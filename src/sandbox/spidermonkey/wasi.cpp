// The WASI preview1 subset a run.wasm plugin gets (docs/sandbox.md has the table): its stdio
// over the channel, its name as argv[0], no environment, two clocks, random bytes, sleep, and
// no files: every other import refuses the module before it runs (sandbox/wasm_module.hpp).
// Every native checks each guest pointer and length against the memory as it is now, and
// answers an errno, never an exception; proc_exit and a stop unwind the guest.

#include <js/PropertyAndElement.h>
#include <sys/random.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <string>

#include "sandbox/spidermonkey/engine.hpp"
#include "sandbox/spidermonkey/native_guard.hpp"
#include "sandbox/spidermonkey/wasm_guest.hpp"

namespace escouade::sandbox::spidermonkey {

namespace {

using namespace wasi_errno;

constexpr std::string_view kWasi = "wasi_snapshot_preview1";
constexpr std::string_view kEscouade = "escouade";

// fd_read and fd_write take arrays of iovec {buf: u32, len: u32}.
constexpr std::uint64_t kIovecBytes = 8;
// What one fd_write takes at most; the rest is the guest's to write again.
constexpr std::uint64_t kMaxWriteBytes = 1024 * 1024;
// poll_oneoff's subscription and event, as preview1 lays them out.
constexpr std::uint64_t kSubscriptionBytes = 48;
constexpr std::uint64_t kEventBytes = 32;
constexpr std::uint8_t kClockTag = 0;
constexpr std::uint16_t kAbsTime = 1;
// The shortest sleep (spec: "Timers: ... 10 ms at least").
constexpr std::chrono::milliseconds kShortestSleep{10};
// fd_fdstat_get: a character device (so that libc's isatty says yes and stdout goes line by
// line), with the rights of each stream.
constexpr std::uint8_t kCharacterDevice = 2;
constexpr std::uint64_t kRightFdRead = 1ull << 1;
constexpr std::uint64_t kRightFdWrite = 1ull << 6;
constexpr std::uint64_t kRightPollFdReadwrite = 1ull << 27;

bool answer(const JS::CallArgs& args, std::int32_t code) {
  args.rval().setInt32(code);
  return true;
}

// Reads the i32 arguments of a native; false (with an exception pending) when one is not a
// number, which a module with a wrong signature can cause: the guest traps.
template <std::size_t N>
bool args_u32(JSContext* cx, const JS::CallArgs& args, const std::array<unsigned, N>& which,
              std::array<std::uint32_t, N>& out) {
  for (std::size_t i = 0; i < N; ++i)
    if (!arg_u32(cx, args, which[i], &out[i])) return false;
  return true;
}

// Whether iovs[0..count) and each buffer they name lie in memory.
bool iovecs_fit(const GuestMemory& m, std::uint32_t iovs, std::uint32_t count) {
  if (!m.fits(iovs, kIovecBytes * count)) return false;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t at = iovs + kIovecBytes * i;
    if (!m.fits(m.u32(at), m.u32(at + 4))) return false;
  }
  return true;
}

bool is_stdio(std::uint32_t fd) {
  return fd <= 2;
}

bool args_sizes_get(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::array<std::uint32_t, 2> a{};
  if (!args_u32<2>(cx, args, {0, 1}, a)) return false;
  WasmGuest& g = guest_of(cx);
  const GuestMemory m = g.memory_now();
  if (!m.fits(a[0], 4) || !m.fits(a[1], 4)) return answer(args, kFault);
  m.put(a[0], 1, 4);
  m.put(a[1], g.name.size() + 1, 4);
  return answer(args, kSuccess);
}

bool args_get(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::array<std::uint32_t, 2> a{};
  if (!args_u32<2>(cx, args, {0, 1}, a)) return false;
  WasmGuest& g = guest_of(cx);
  const GuestMemory m = g.memory_now();
  if (!m.fits(a[0], 4) || !m.fits(a[1], g.name.size() + 1)) return answer(args, kFault);
  m.put(a[0], a[1], 4);
  std::memcpy(m.at(a[1]), g.name.c_str(), g.name.size() + 1);
  return answer(args, kSuccess);
}

// It does not read the environment: no variable at all.
bool environ_sizes_get(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::array<std::uint32_t, 2> a{};
  if (!args_u32<2>(cx, args, {0, 1}, a)) return false;
  const GuestMemory m = guest_of(cx).memory_now();
  if (!m.fits(a[0], 4) || !m.fits(a[1], 4)) return answer(args, kFault);
  m.put(a[0], 0, 4);
  m.put(a[1], 0, 4);
  return answer(args, kSuccess);
}

bool environ_get(JSContext*, unsigned argc, JS::Value* vp) {
  return answer(JS::CallArgsFromVp(argc, vp), kSuccess);  // nothing to write
}

std::optional<std::uint64_t> clock_now(std::uint32_t id) {
  timespec t{};
  if (id == 0) {
    clock_gettime(CLOCK_REALTIME, &t);
  } else if (id == 1) {
    clock_gettime(CLOCK_MONOTONIC, &t);
  } else {
    return std::nullopt;  // the process's and the thread's CPU clocks are not given
  }
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000ull + t.tv_nsec;
}

// (id: i32, precision: i64, time: i32): the precision is not read (an i64 arrives as a BigInt).
bool clock_time_get(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::array<std::uint32_t, 2> a{};
  if (!args_u32<2>(cx, args, {0, 2}, a)) return false;
  const GuestMemory m = guest_of(cx).memory_now();
  if (!m.fits(a[1], 8)) return answer(args, kFault);
  auto now = clock_now(a[0]);
  if (!now) return answer(args, kInval);
  m.put(a[1], *now, 8);
  return answer(args, kSuccess);
}

bool random_get(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::array<std::uint32_t, 2> a{};
  if (!args_u32<2>(cx, args, {0, 1}, a)) return false;
  const GuestMemory m = guest_of(cx).memory_now();
  if (!m.fits(a[0], a[1])) return answer(args, kFault);
  std::uint64_t done = 0;
  while (done < a[1]) {
    const ssize_t n = getrandom(m.at(a[0] + done), a[1] - done, 0);
    if (n <= 0) return answer(args, kInval);
    done += static_cast<std::uint64_t>(n);
  }
  return answer(args, kSuccess);
}

bool fd_write(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::array<std::uint32_t, 4> a{};
  if (!args_u32<4>(cx, args, {0, 1, 2, 3}, a)) return false;
  const auto [fd, iovs, count, written_at] = a;
  WasmGuest& g = guest_of(cx);
  if (fd != 1 && fd != 2) return answer(args, kBadf);
  const GuestMemory m = g.memory_now();
  if (!iovecs_fit(m, iovs, count) || !m.fits(written_at, 4)) return answer(args, kFault);
  // The bytes are copied out first: writing may wait for the host to take what it holds, and
  // nothing may read the guest's memory across a wait. At most kMaxWriteBytes a call (a short
  // write, which libc completes by writing again): many iovecs may each name the whole memory.
  std::string bytes;
  for (std::uint32_t i = 0; i < count && bytes.size() < kMaxWriteBytes; ++i) {
    const std::uint64_t at = iovs + kIovecBytes * i;
    const std::uint64_t n = std::min<std::uint64_t>(m.u32(at + 4), kMaxWriteBytes - bytes.size());
    bytes.append(reinterpret_cast<const char*>(m.at(m.u32(at))), n);
  }
  if (fd == 1)
    g.channel.write_out(bytes);
  else
    g.channel.write_err(bytes);
  const GuestMemory after = g.memory_now();
  if (!after.fits(written_at, 4)) return answer(args, kFault);
  after.put(written_at, bytes.size(), 4);
  return answer(args, kSuccess);
}

// fd 0: the lines Escouade sends, one at a time; it waits for the next one outside any turn.
bool fd_read(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::array<std::uint32_t, 4> a{};
  if (!args_u32<4>(cx, args, {0, 1, 2, 3}, a)) return false;
  const auto [fd, iovs, count, read_at] = a;
  WasmGuest& g = guest_of(cx);
  if (fd != 0) return answer(args, kBadf);
  // Checked before the wait too: a bad pointer does not wait for input to be told so.
  {
    const GuestMemory before = g.memory_now();
    if (!iovecs_fit(before, iovs, count) || !before.fits(read_at, 4)) return answer(args, kFault);
    std::uint64_t room = 0;
    for (std::uint32_t i = 0; i < count; ++i)
      room += before.u32(iovs + kIovecBytes * i + 4);
    if (room == 0) {  // nothing asked: no wait, and no line taken that could not be given
      before.put(read_at, 0, 4);
      return answer(args, kSuccess);
    }
  }
  if (g.input_at >= g.input.size()) {
    bool stopped = false;
    std::optional<std::string> line = g.next_line(stopped);
    if (stopped) return false;  // no exception: the guest unwinds, the instance ends
    g.input = line ? std::move(*line) : std::string();
    g.input_at = 0;
  }
  const GuestMemory m = g.memory_now();  // again: after the wait
  if (!iovecs_fit(m, iovs, count) || !m.fits(read_at, 4)) return answer(args, kFault);
  std::uint64_t given = 0;
  for (std::uint32_t i = 0; i < count && g.input_at < g.input.size(); ++i) {
    const std::uint64_t at = iovs + kIovecBytes * i;
    const std::uint64_t n = std::min<std::uint64_t>(m.u32(at + 4), g.input.size() - g.input_at);
    std::memcpy(m.at(m.u32(at)), g.input.data() + g.input_at, n);
    g.input_at += n;
    given += n;
  }
  m.put(read_at, given, 4);
  return answer(args, kSuccess);
}

bool fd_close(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::uint32_t fd = 0;
  if (!arg_u32(cx, args, 0, &fd)) return false;
  return answer(args, is_stdio(fd) ? kSuccess : kBadf);
}

bool fd_fdstat_get(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::array<std::uint32_t, 2> a{};
  if (!args_u32<2>(cx, args, {0, 1}, a)) return false;
  if (!is_stdio(a[0])) return answer(args, kBadf);
  const GuestMemory m = guest_of(cx).memory_now();
  if (!m.fits(a[1], 24)) return answer(args, kFault);
  std::memset(m.at(a[1]), 0, 24);
  m.put(a[1], kCharacterDevice, 1);
  m.put(a[1] + 8, (a[0] == 0 ? kRightFdRead : kRightFdWrite) | kRightPollFdReadwrite, 8);
  return answer(args, kSuccess);
}

// No preopened folder: libc asks from fd 3 on and stops at the first EBADF.
bool fd_prestat_get(JSContext*, unsigned argc, JS::Value* vp) {
  return answer(JS::CallArgsFromVp(argc, vp), kBadf);
}
bool fd_prestat_dir_name(JSContext*, unsigned argc, JS::Value* vp) {
  return answer(JS::CallArgsFromVp(argc, vp), kBadf);
}

// (fd: i32, offset: i64, whence: i32, newoffset: i32): the streams do not seek.
bool fd_seek(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::uint32_t fd = 0;
  if (!arg_u32(cx, args, 0, &fd)) return false;
  return answer(args, is_stdio(fd) ? kSpipe : kBadf);
}

// The exit code is remembered; returning false with no exception unwinds every wasm frame.
bool proc_exit(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::uint32_t code = 0;
  if (!arg_u32(cx, args, 0, &code)) return false;
  guest_of(cx).exit_code = static_cast<std::int32_t>(code);
  return false;
}

bool sched_yield(JSContext*, unsigned argc, JS::Value* vp) {
  return answer(JS::CallArgsFromVp(argc, vp), kSuccess);
}

// Clock subscriptions only (a sleep, 10 ms at least); fd subscriptions answer ENOTSUP. The
// sleep ends early when the instance must stop, and costs its turn nothing.
bool poll_oneoff(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::array<std::uint32_t, 4> a{};
  if (!args_u32<4>(cx, args, {0, 1, 2, 3}, a)) return false;
  const auto [in, out, count, events_at] = a;
  WasmGuest& g = guest_of(cx);
  if (count == 0) return answer(args, kInval);
  GuestMemory m = g.memory_now();
  if (!m.fits(in, kSubscriptionBytes * count) || !m.fits(out, kEventBytes * count) ||
      !m.fits(events_at, 4))
    return answer(args, kFault);
  std::vector<std::int64_t> waits(count);  // ns from now
  std::int64_t shortest = INT64_MAX;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t s = in + kSubscriptionBytes * i;
    if (m.at(s + 8)[0] != kClockTag) return answer(args, kNotsup);
    const std::uint32_t clock = m.u32(s + 16);
    const std::uint64_t timeout = m.u64(s + 24);
    const std::uint16_t flags =
        static_cast<std::uint16_t>(m.at(s + 40)[0] | (m.at(s + 41)[0] << 8));
    auto now = clock_now(clock);
    if (!now) return answer(args, kInval);
    const std::uint64_t rel = (flags & kAbsTime) ? (timeout > *now ? timeout - *now : 0) : timeout;
    waits[i] = static_cast<std::int64_t>(std::min<std::uint64_t>(rel, INT64_MAX));
    shortest = std::min(shortest, waits[i]);
  }
  const auto sleep =
      std::max<std::chrono::nanoseconds>(std::chrono::nanoseconds(shortest), kShortestSleep);
  g.turn_pauses();
  const bool slept = g.channel.sleep_for(sleep);
  g.turn_resumes();
  if (!slept || g.channel.stop_cause() != StopCause::none) return false;  // the guest unwinds
  m = g.memory_now();
  if (!m.fits(in, kSubscriptionBytes * count) || !m.fits(out, kEventBytes * count) ||
      !m.fits(events_at, 4))
    return answer(args, kFault);
  std::uint32_t fired = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (waits[i] > sleep.count()) continue;
    const std::uint64_t e = out + kEventBytes * fired++;
    std::memset(m.at(e), 0, kEventBytes);
    m.put(e, m.u64(in + kSubscriptionBytes * i), 8);  // its userdata
    m.put(e + 10, kClockTag, 1);
  }
  m.put(events_at, fired, 4);
  return answer(args, kSuccess);
}

struct Native {
  std::string_view name;
  JSNative fn;
  // Its wasm type, as FunctionType's bytes.
  std::string_view params;
  std::string_view results;
};

constexpr std::string_view kI32 = "\x7f";
constexpr std::string_view kI32x2 = "\x7f\x7f";
constexpr std::string_view kI32x3 = "\x7f\x7f\x7f";
constexpr std::string_view kI32x4 = "\x7f\x7f\x7f\x7f";

// WASI preview1's functions as wasm32 declares them (its witx: pointers and sizes are i32,
// timestamps, file sizes and offsets i64; proc_exit returns nothing).
constexpr std::array kWasiNatives{
    Native{"args_get", guarded<args_get>, kI32x2, kI32},
    Native{"args_sizes_get", guarded<args_sizes_get>, kI32x2, kI32},
    Native{"environ_get", guarded<environ_get>, kI32x2, kI32},
    Native{"environ_sizes_get", guarded<environ_sizes_get>, kI32x2, kI32},
    Native{"clock_time_get", guarded<clock_time_get>, "\x7f\x7e\x7f", kI32},
    Native{"random_get", guarded<random_get>, kI32x2, kI32},
    Native{"poll_oneoff", guarded<poll_oneoff>, kI32x4, kI32},
    Native{"sched_yield", guarded<sched_yield>, "", kI32},
    Native{"fd_read", guarded<fd_read>, kI32x4, kI32},
    Native{"fd_write", guarded<fd_write>, kI32x4, kI32},
    Native{"fd_close", guarded<fd_close>, kI32, kI32},
    Native{"fd_seek", guarded<fd_seek>, "\x7f\x7e\x7f\x7f", kI32},
    Native{"fd_fdstat_get", guarded<fd_fdstat_get>, kI32x2, kI32},
    Native{"fd_prestat_get", guarded<fd_prestat_get>, kI32x2, kI32},
    Native{"fd_prestat_dir_name", guarded<fd_prestat_dir_name>, kI32x3, kI32},
    Native{"proc_exit", guarded<proc_exit>, kI32, ""},
};

}  // namespace

std::optional<FunctionType> serves_wasm_import(std::string_view module, std::string_view name) {
  if (module == kEscouade) {
    // call(method, method_len, params, params_len, answer, answer_cap, answer_len) -> i32
    if (name == "call") return FunctionType{std::string(7, '\x7f'), std::string(kI32)};
    return std::nullopt;
  }
  if (module != kWasi) return std::nullopt;
  for (const Native& n : kWasiNatives)
    if (n.name == name) return FunctionType{std::string(n.params), std::string(n.results)};
  return std::nullopt;
}

bool define_imports(JSContext* cx, JS::HandleObject imports) {
  JS::RootedObject wasi(cx, JS_NewPlainObject(cx));
  JS::RootedObject escouade(cx, JS_NewPlainObject(cx));
  if (!wasi || !escouade) return false;
  for (const Native& n : kWasiNatives)
    if (!JS_DefineFunction(cx, wasi, std::string(n.name).c_str(), n.fn,
                           static_cast<unsigned>(n.params.size()), 0))
      return false;
  if (!JS_DefineFunction(cx, escouade, "call", guarded<native_escouade_call>, 7, 0)) return false;
  JS::RootedValue v(cx, JS::ObjectValue(*wasi));
  if (!JS_DefineProperty(cx, imports, std::string(kWasi).c_str(), v, JSPROP_ENUMERATE))
    return false;
  v.setObject(*escouade);
  return JS_DefineProperty(cx, imports, std::string(kEscouade).c_str(), v, JSPROP_ENUMERATE);
}

}  // namespace escouade::sandbox::spidermonkey
