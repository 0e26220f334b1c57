#pragma once

// Reads the read end of a pipe on the loop, as asio::posix::stream_descriptor does, with one
// read fewer a message.
//
// Asio's descriptor, once a read completes, tries the next one at once when it is started
// ("speculative"): after a plugin's answer, a read that finds the pipe empty and fails with
// EAGAIN, then the wait in epoll. A pipe's read returns fewer bytes than asked only when it has
// emptied the pipe, and the loop's epoll is edge-triggered: every later write to the pipe wakes
// it. So a read that returned less than its buffer tells the reactor the pipe is exhausted, and
// the next read waits for epoll without trying first. One system call fewer a message that
// crosses the pipe (docs/PERFORMANCE.md); Asio's own reactor does the rest, so reads, cancels
// and closes complete as a stream_descriptor's do.
//
// What that costs: a hangup that epoll reported together with the last bytes is not reported
// again, so once the writer may be gone (its process ended), its owner calls read_eagerly() and
// reads what is left itself; the reader then tries every read at once, as Asio does.
//
// Only for pipes the host made, without packet mode (O_DIRECT): a terminal or a socket may
// return less than asked with more to read.
//
// Thread: the loop's. One read at a time.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace escouade::runtime {

// What a read calls when it ends, `handler(ec, n)`: any callable of up to 32 bytes (a lambda
// holding a shared_ptr and a pointer or two), held in place. std::function would take a heap
// allocation a read for any capture that is not trivially copyable, a shared_ptr's included.
class ReadHandler {
 public:
  static constexpr std::size_t kBytes = 32;

  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, ReadHandler>>>
  ReadHandler(F&& f) {  // implicit: a callable is a handler
    using T = std::decay_t<F>;
    static_assert(sizeof(T) <= kBytes && alignof(T) <= alignof(std::max_align_t),
                  "a read's handler holds at most 32 bytes");
    static_assert(std::is_nothrow_move_constructible_v<T>);
    ::new (static_cast<void*>(storage_)) T(std::forward<F>(f));
    ops_ = &kOps<T>;
  }
  ReadHandler(ReadHandler&& other) noexcept : ops_(std::exchange(other.ops_, nullptr)) {
    if (ops_) ops_->move(other.storage_, storage_);
  }
  ReadHandler(const ReadHandler&) = delete;
  ReadHandler& operator=(const ReadHandler&) = delete;
  ReadHandler& operator=(ReadHandler&&) = delete;
  ~ReadHandler() {
    if (ops_) ops_->destroy(storage_);
  }

  void operator()(boost::system::error_code ec, std::size_t n) { ops_->call(storage_, ec, n); }

 private:
  struct Ops {
    void (*call)(void*, boost::system::error_code, std::size_t);
    void (*move)(void* from, void* to) noexcept;  // and destroys `from`
    void (*destroy)(void*) noexcept;
  };
  template <class T>
  static constexpr Ops kOps{
      [](void* f, boost::system::error_code ec, std::size_t n) { (*static_cast<T*>(f))(ec, n); },
      [](void* from, void* to) noexcept {
        ::new (to) T(std::move(*static_cast<T*>(from)));
        static_cast<T*>(from)->~T();
      },
      [](void* f) noexcept { static_cast<T*>(f)->~T(); }};

  alignas(std::max_align_t) unsigned char storage_[kBytes];
  const Ops* ops_ = nullptr;
};

class PipeReader {
 public:
  using Handler = ReadHandler;

  // Takes `fd` (made non-blocking) and registers it with the loop of `executor`. A
  // registration refused by the kernel is reported by the first read.
  PipeReader(const boost::asio::any_io_executor& executor, int fd);
  ~PipeReader();  // closes
  PipeReader(const PipeReader&) = delete;
  PipeReader& operator=(const PipeReader&) = delete;

  // Reads at most `buffer.size()` bytes, then `handler(ec, n)` on the loop, never from inside
  // this call: error::eof at the end of the pipe, operation_aborted when cancelled or closed.
  // `buffer` must stay valid until the handler runs.
  void async_read_some(boost::asio::mutable_buffer buffer, Handler handler);

  // A read is started and has taken nothing from the pipe yet (its handler is not queued):
  // what its owner reads from the pipe itself meanwhile comes before what that read gets.
  bool waiting() const noexcept;

  // From now on a read that returns less than asked is not taken to have emptied the pipe, and
  // a read started is tried at once. A read already queued is not tried now.
  void read_eagerly() noexcept;

  // Ends the read under way with operation_aborted; the pipe stays open.
  void cancel();
  // Ends the read under way with operation_aborted and closes the pipe.
  void close();
  bool is_open() const noexcept;
  int native_handle() const noexcept;

  // read(2) calls made so far, the ones that found nothing included (what its tests count).
  std::uint64_t reads_tried() const noexcept;

  struct Impl;  // pipe_reader.cpp's

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace escouade::runtime
