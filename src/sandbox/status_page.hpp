#pragma once

// A page of memory shared by the host and one sandbox helper: what the helper's instance holds,
// written by the helper as it changes and read by the host whenever it likes, without a system
// call either side. The host makes it (a memfd), gives it to the helper as its descriptor 4, and
// maps it; the helper maps it and closes the descriptor before any plugin code runs.
//
// The host reads numbers from it and nothing else: a helper that lies there (an engine
// exploited) can only make its own figures wrong, and the host's watch of the helper's resident
// memory (sandbox_program.hpp) does not read this page.
//
// Thread: the helper's threads write with relaxed atomics; the host's thread reads.

#include <atomic>
#include <cstdint>

namespace escouade::sandbox {

struct StatusPage {
  // What its memory account charges (every block its process malloc'd since the instance began).
  std::atomic<std::uint64_t> account_bytes;
  // Its GC heap, as its last collection or turn left it.
  std::atomic<std::uint64_t> gc_bytes;
  // A run.wasm instance's linear memory.
  std::atomic<std::uint64_t> wasm_bytes;
  // Set once the account went past its limit or refused an allocation: the instance is ending
  // for its memory, even if the engine crashes on the way (an allocation it cannot do without).
  std::atomic<std::uint32_t> over_memory;
  std::atomic<std::uint32_t> reserved;
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

inline constexpr std::size_t kStatusPageBytes = 4096;
static_assert(sizeof(StatusPage) <= kStatusPageBytes);

}  // namespace escouade::sandbox
