#include "platform/write_batch.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#if defined(__linux__)
#include <fcntl.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <cstring>
#endif

namespace escouade::platform {

namespace {

ssize_t write_once(int fd, const char* data, std::size_t size) noexcept {
  for (;;) {
    const ssize_t n = ::write(fd, data, size);
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}

void each_in_turn(std::span<BatchWrite> writes) noexcept {
  for (auto& w : writes)
    w.result = write_once(w.fd, w.data, w.size);
}

#if defined(__linux__) && defined(IORING_SETUP_SUBMIT_ALL) && defined(RWF_NOWAIT)

// One ring a thread, made at its first batch, used for writes alone. Every write is marked
// RWF_NOWAIT: the kernel does it while it takes the batch, or answers -EAGAIN, and never keeps
// one to finish later (a pipe marked O_NONBLOCK alone would be retried when it has room, which
// would hold the host's thread until a plugin reads). A probe at the ring's making checks that
// on a full pipe before the ring is used; a kernel that does otherwise gets writes in turn.
class Ring {
 public:
  static constexpr unsigned kEntries = 128;

  Ring() noexcept {
    io_uring_params p;
    std::memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_SUBMIT_ALL;
    const long fd = ::syscall(__NR_io_uring_setup, kEntries, &p);
    if (fd < 0) return;
    fd_ = static_cast<int>(fd);
    if (!(p.features & IORING_FEAT_SINGLE_MMAP) || !(p.features & IORING_FEAT_NODROP)) {
      close_all();
      return;
    }
    ring_len_ = std::max<std::size_t>(p.sq_off.array + p.sq_entries * sizeof(unsigned),
                                      p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe));
    ring_ = ::mmap(nullptr, ring_len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_,
                   IORING_OFF_SQ_RING);
    if (ring_ == MAP_FAILED) {
      ring_ = nullptr;
      close_all();
      return;
    }
    sqes_len_ = p.sq_entries * sizeof(io_uring_sqe);
    void* sqes = ::mmap(nullptr, sqes_len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_,
                        IORING_OFF_SQES);
    if (sqes == MAP_FAILED) {
      close_all();
      return;
    }
    sqes_ = static_cast<io_uring_sqe*>(sqes);
    auto* base = static_cast<char*>(ring_);
    sq_tail_ = reinterpret_cast<unsigned*>(base + p.sq_off.tail);
    sq_mask_ = *reinterpret_cast<unsigned*>(base + p.sq_off.ring_mask);
    sq_array_ = reinterpret_cast<unsigned*>(base + p.sq_off.array);
    cq_head_ = reinterpret_cast<unsigned*>(base + p.cq_off.head);
    cq_tail_ = reinterpret_cast<unsigned*>(base + p.cq_off.tail);
    cq_mask_ = *reinterpret_cast<unsigned*>(base + p.cq_off.ring_mask);
    cqes_ = reinterpret_cast<io_uring_cqe*>(base + p.cq_off.cqes);
    entries_ = p.sq_entries;
    if (!probe()) close_all();
  }
  ~Ring() { close_all(); }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  bool usable() const noexcept { return fd_ >= 0 && !off_; }
  void turn_off() noexcept { off_ = true; }

  // Writes `writes`, kEntries at a time: how many of them it wrote, from the first (all of
  // them unless the ring failed, which leaves the others untouched, to be written in turn).
  std::size_t write(std::span<BatchWrite> writes) noexcept {
    std::size_t done = 0;
    while (done < writes.size() && usable()) {
      const auto n = std::min<std::size_t>(writes.size() - done, entries_);
      if (!write_some(writes.subspan(done, n))) break;
      done += n;
    }
    return done;
  }

 private:
  // One submission of n <= entries_ writes, each completed inline (RWF_NOWAIT).
  bool write_some(std::span<BatchWrite> writes) noexcept {
    const auto n = static_cast<unsigned>(writes.size());
    unsigned tail = *sq_tail_;  // this thread is the ring's only submitter
    for (unsigned i = 0; i < n; ++i) {
      const unsigned at = tail & sq_mask_;
      io_uring_sqe& sqe = sqes_[at];
      std::memset(&sqe, 0, sizeof sqe);
      sqe.opcode = IORING_OP_WRITE;
      sqe.fd = writes[i].fd;
      sqe.addr = reinterpret_cast<std::uintptr_t>(writes[i].data);
      sqe.len = static_cast<unsigned>(writes[i].size);
      sqe.off = static_cast<std::uint64_t>(-1);  // the descriptor's own position (a pipe has none)
      sqe.rw_flags = RWF_NOWAIT;
      sqe.user_data = i;
      sq_array_[at] = at;
      writes[i].result = -EINPROGRESS;
      ++tail;
    }
    __atomic_store_n(sq_tail_, tail, __ATOMIC_RELEASE);
    // The kernel takes the entries from the first; with IORING_SETUP_SUBMIT_ALL it takes all of
    // them, a write that fails included (its completion says why).
    unsigned submitted = 0;
    while (submitted < n) {
      const long r = ::syscall(__NR_io_uring_enter, fd_, n - submitted, 0, 0, nullptr, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      submitted += static_cast<unsigned>(r);
    }
    if (submitted < n) {
      // The ring failed: it is not used again. Entries the kernel did not take are left where
      // they are, and those writes made in turn; none taken: the whole batch goes in turn.
      off_ = true;
      if (submitted == 0) {
        __atomic_store_n(sq_tail_, tail - n, __ATOMIC_RELEASE);
        return false;
      }
      for (unsigned i = submitted; i < n; ++i)
        writes[i].result = write_once(writes[i].fd, writes[i].data, writes[i].size);
    }
    unsigned seen = 0;
    while (seen < submitted) {
      unsigned head = *cq_head_;
      const unsigned ready = __atomic_load_n(cq_tail_, __ATOMIC_ACQUIRE);
      for (; head != ready; ++head) {
        const io_uring_cqe& cqe = cqes_[head & cq_mask_];
        if (cqe.user_data < submitted) {
          BatchWrite& w = writes[cqe.user_data];
          // A kernel that does not take RWF_NOWAIT for this file says so before writing: the
          // write is made as `write` makes it.
          w.result = cqe.res == -EOPNOTSUPP ? write_once(w.fd, w.data, w.size) : cqe.res;
          ++seen;
        }
      }
      __atomic_store_n(cq_head_, head, __ATOMIC_RELEASE);
      if (seen == submitted) break;
      // Each write completes as it is taken (RWF_NOWAIT: it never waits for room); one that has
      // not is waited for rather than written twice.
      if (::syscall(__NR_io_uring_enter, fd_, 0, submitted - seen, IORING_ENTER_GETEVENTS, nullptr,
                    0) < 0 &&
          errno != EINTR) {
        off_ = true;
        for (unsigned i = 0; i < submitted; ++i)
          if (writes[i].result == -EINPROGRESS) writes[i].result = -EIO;
        return true;
      }
    }
    return true;
  }

  // A full non-blocking pipe: the write must come back at once with -EAGAIN, and the one after
  // it (room made) must take its bytes.
  bool probe() noexcept {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return false;
    char block[4096] = {};
    while (::write(fds[1], block, sizeof block) > 0) {
    }
    BatchWrite full{fds[1], "x", 1, 0};
    const bool refused = write_some(std::span(&full, 1)) && full.result == -EAGAIN;
    char drain[4096];
    (void)!::read(fds[0], drain, sizeof drain);
    BatchWrite room{fds[1], "y", 1, 0};
    const bool taken = refused && write_some(std::span(&room, 1)) && room.result == 1;
    ::close(fds[0]);
    ::close(fds[1]);
    return taken;
  }

  void close_all() noexcept {
    if (sqes_) ::munmap(sqes_, sqes_len_);
    if (ring_) ::munmap(ring_, ring_len_);
    if (fd_ >= 0) ::close(fd_);
    sqes_ = nullptr;
    ring_ = nullptr;
    fd_ = -1;
  }

  int fd_ = -1;
  bool off_ = false;
  void* ring_ = nullptr;
  std::size_t ring_len_ = 0;
  io_uring_sqe* sqes_ = nullptr;
  std::size_t sqes_len_ = 0;
  unsigned* sq_tail_ = nullptr;
  unsigned sq_mask_ = 0;
  unsigned* sq_array_ = nullptr;
  unsigned* cq_head_ = nullptr;
  unsigned* cq_tail_ = nullptr;
  unsigned cq_mask_ = 0;
  io_uring_cqe* cqes_ = nullptr;
  unsigned entries_ = 0;
};

Ring& this_threads_ring() noexcept {
  thread_local Ring ring;
  return ring;
}

#define ESCOUADE_WRITE_BATCH_RING 1
#endif

}  // namespace

void write_batch(std::span<BatchWrite> writes) noexcept {
  if (writes.empty()) return;
#ifdef ESCOUADE_WRITE_BATCH_RING
  // One write gains nothing from the ring.
  if (writes.size() > 1) {
    Ring& ring = this_threads_ring();
    if (ring.usable()) writes = writes.subspan(ring.write(writes));
  }
#endif
  each_in_turn(writes);
}

bool write_batch_together() noexcept {
#ifdef ESCOUADE_WRITE_BATCH_RING
  return this_threads_ring().usable();
#else
  return false;
#endif
}

void write_batch_in_turn_for_tests() noexcept {
#ifdef ESCOUADE_WRITE_BATCH_RING
  this_threads_ring().turn_off();
#endif
}

}  // namespace escouade::platform
