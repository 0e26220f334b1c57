#pragma once

// Writing to several non-blocking descriptors in one system call: a request asked of many
// plugins at once (a decision) goes to each of their pipes. Written one `write` at a time, each
// write wakes its plugin, which on a shared core takes the core from the host before its next
// write (docs/PERFORMANCE.md, issue 32: about one write in two of a decision of 100). Given to
// the kernel in one go (io_uring on Linux), every plugin is woken before the host gives up the
// core. Where that cannot be had (another system, a kernel without io_uring, a seccomp profile
// that refuses it), each is written by `write` in turn: the same bytes, the same results.

#include <sys/types.h>

#include <cstddef>
#include <span>

namespace escouade::platform {

struct BatchWrite {
  int fd = -1;  // non-blocking: a full pipe takes what fits, or nothing (never waits)
  const char* data = nullptr;
  std::size_t size = 0;
  // Set by write_batch: the bytes taken (0 to size: what fits of it, as `write` takes), or
  // -errno (-EAGAIN for a pipe that is full, -EPIPE for one whose reader is gone).
  ssize_t result = 0;
};

// Writes each one once, as one `write` of its bytes would, in their order.
void write_batch(std::span<BatchWrite> writes) noexcept;

// Whether write_batch gives its writes to the kernel together on this thread (io_uring), or
// writes each in turn. For tests and the benchmarks' notes.
bool write_batch_together() noexcept;

// For tests: each in turn from now on, on this thread, whatever the kernel allows.
void write_batch_in_turn_for_tests() noexcept;

}  // namespace escouade::platform
