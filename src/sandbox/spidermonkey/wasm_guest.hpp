#pragma once

// What a run.wasm instance's natives share, on the instance's thread: the guest's memory, its
// input as fd_read gives it, escouade.call's answer kept for a larger buffer, how it exited.
// Engine-internal: included by this folder's files only.

#include <js/Conversions.h>
#include <jsapi.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "sandbox/channel.hpp"

namespace escouade::sandbox::spidermonkey {

// The errno values of WASI preview1 that the subset answers.
namespace wasi_errno {
inline constexpr std::int32_t kSuccess = 0;
inline constexpr std::int32_t kBadf = 8;
inline constexpr std::int32_t kFault = 21;
inline constexpr std::int32_t kInval = 28;
inline constexpr std::int32_t kNotsup = 58;
inline constexpr std::int32_t kSpipe = 70;
}  // namespace wasi_errno

// The guest's linear memory as it is now: fetched again after any wait and any call that may
// grow it (a grow detaches the old buffer). Every pointer and length is checked here before
// the host touches a byte.
struct GuestMemory {
  std::uint8_t* data = nullptr;
  std::uint64_t size = 0;

  bool fits(std::uint64_t ptr, std::uint64_t len) const { return ptr <= size && len <= size - ptr; }
  std::uint8_t* at(std::uint64_t ptr) const { return data + ptr; }
  // Little-endian, as wasm is; the caller checked fits().
  std::uint32_t u32(std::uint64_t ptr) const {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
      v = (v << 8) | data[ptr + i];
    return v;
  }
  std::uint64_t u64(std::uint64_t ptr) const {
    return u32(ptr) | (static_cast<std::uint64_t>(u32(ptr + 4)) << 32);
  }
  void put(std::uint64_t ptr, std::uint64_t v, int bytes) const {
    for (int i = 0; i < bytes; ++i, v >>= 8)
      data[ptr + i] = static_cast<std::uint8_t>(v & 0xff);
  }
};

struct WasmGuest {
  WasmGuest(JSContext* c, Channel& ch, std::string n)
      : cx(c), channel(ch), name(std::move(n)), memory(c), buffer(c) {}
  JSContext* cx;
  Channel& channel;
  std::string name;                   // its argv[0]
  JS::PersistentRootedObject memory;  // exports.memory, once instantiated
  // memory.buffer as last fetched: the same bytes until a grow detaches it (and makes another).
  JS::PersistentRootedObject buffer;
  std::optional<std::int32_t> exit_code;  // proc_exit's
  std::string input;                      // the line fd_read is giving, from `input_at` on
  std::size_t input_at = 0;
  bool input_ended = false;
  std::optional<std::string> kept_answer;  // an answer its buffer was too small for
  std::int32_t kept_code = 0;
  std::uint64_t calls = 0;  // escouade.call's requests, for their ids

  // The memory now; empty before the instance exists (a start function) or when it cannot be
  // read. Each native asks it once or more: the buffer is fetched again only after a grow.
  GuestMemory memory_now();
  // The next line of its input ('\n' included) from the channel, waiting for it outside any turn
  // (no CPU charged). nullopt at the end of its input; `stopped` when it must stop (the native then
  // returns false: the guest unwinds).
  std::optional<std::string> next_line(bool& stopped);
  // A wait outside the guest's turn: the turn ends before it and begins again after it, and the
  // host's view of its memory is brought up to date.
  void turn_pauses();
  void turn_resumes();
};

WasmGuest& guest_of(JSContext* cx);

// A wasm i32 argument as the unsigned value the guest meant (pointers, lengths, fds).
inline bool arg_u32(JSContext* cx, const JS::CallArgs& args, unsigned i, std::uint32_t* out) {
  if (args.get(i).isInt32()) {
    *out = static_cast<std::uint32_t>(args.get(i).toInt32());
    return true;
  }
  std::int32_t v = 0;
  if (!JS::ToInt32(cx, args.get(i), &v)) return false;
  *out = static_cast<std::uint32_t>(v);
  return true;
}

// The natives of the import object: wasi.cpp's subset, escouade_call.cpp's call.
bool define_imports(JSContext* cx, JS::HandleObject imports);
bool native_escouade_call(JSContext* cx, unsigned argc, JS::Value* vp);

}  // namespace escouade::sandbox::spidermonkey
