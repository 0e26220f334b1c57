#include "runtime/pipe_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

// Unsorted: io_context first, as the reactor's header pulls in scheduler code that needs it whole.
// clang-format off
#include <boost/asio/io_context.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>
// clang-format on
#include <cerrno>
#include <utility>

// The reader works below Asio's public interface, with the reactor every descriptor of the
// loop uses, as Asio's reactive_descriptor_service does: the only way to tell the reactor that
// a read emptied the pipe. Boost 1.81's epoll reactor (tested here) and its kqueue reactor
// (macOS, not tested) have the calls used here.
#if !defined(BOOST_ASIO_HAS_EPOLL) && !defined(BOOST_ASIO_HAS_KQUEUE)
#error "PipeReader needs Asio's epoll or kqueue reactor"
#endif

namespace escouade::runtime {

namespace asio = boost::asio;
using Reactor = asio::detail::reactor;
using ReactorOp = asio::detail::reactor_op;

struct PipeReader::Impl {
  Reactor* reactor;
  Reactor::per_descriptor_data data = nullptr;
  int fd;
  int registered;  // register_descriptor's result: 0, or the errno that refused it
  std::uint64_t reads = 0;
  bool eager = false;    // read_eagerly()
  bool waiting = false;  // waiting()

  Impl(Reactor& r, int f) : reactor(&r), fd(f) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0 && (flags & O_NONBLOCK) == 0) (void)::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    // The loop runs the reactor (epoll_wait) only once something asked it to: each of Asio's
    // descriptor services does this when it is made.
    reactor->init_task();
    registered = reactor->register_descriptor(fd, data);
  }

  void close() {
    if (fd < 0) return;
    // Removed from epoll explicitly (closing = false): a child being spawned may hold a copy
    // of the descriptor until its exec, and epoll forgets a file only at its last close.
    reactor->deregister_descriptor(fd, data, false);
    ::close(fd);
    reactor->cleanup_descriptor_data(data);
    fd = -1;
  }
};

namespace {

// One read: performed by the reactor (at once, or when epoll says the pipe is readable), then
// completed on the loop, which calls the handler and frees the operation.
class ReadOp : public ReactorOp {
 public:
  ReadOp(PipeReader::Impl& reader, asio::mutable_buffer buffer, PipeReader::Handler handler)
      : ReactorOp(boost::system::error_code(), &ReadOp::perform, &ReadOp::complete),
        reader_(&reader),
        buffer_(buffer),
        handler_(std::move(handler)) {}

  // A reader has one read at a time, on the loop's thread: the memory of the read that just
  // completed serves the next one, as Asio reuses its operations', instead of a heap
  // allocation and a free a message.
  static void* operator new(std::size_t size) {
    if (void* block = std::exchange(spare().block, nullptr)) return block;
    return ::operator new(size);
  }
  static void operator delete(void* block) noexcept {
    if (spare().block == nullptr) {
      spare().block = block;
    } else {
      ::operator delete(block);
    }
  }

  static status perform(ReactorOp* base) {
    auto* op = static_cast<ReadOp*>(base);
    const status result = read(op);
    if (result != not_done) op->reader_->waiting = false;
    return result;
  }

 private:
  static status read(ReadOp* op) {
    if (op->buffer_.size() == 0) return done;
    for (;;) {
      ++op->reader_->reads;
      const ssize_t n = ::read(op->reader_->fd, op->buffer_.data(), op->buffer_.size());
      if (n > 0) {
        op->bytes_transferred_ = static_cast<std::size_t>(n);
        // Less than asked: the pipe is empty now, and its next write wakes epoll.
        const bool emptied = op->bytes_transferred_ < op->buffer_.size() && !op->reader_->eager;
        return emptied ? done_and_exhausted : done;
      }
      if (n == 0) {
        op->ec_ = asio::error::eof;
        return done;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return not_done;
      op->ec_ = boost::system::error_code(errno, boost::system::system_category());
      return done;
    }
  }

  // `owner` is null when the loop is destroyed with the read still queued: freed, not called.
  static void complete(void* owner, asio::detail::scheduler_operation* base,
                       const boost::system::error_code&, std::size_t) {
    auto* op = static_cast<ReadOp*>(base);
    PipeReader::Handler handler = std::move(op->handler_);
    const boost::system::error_code ec = op->ec_;
    const std::size_t n = op->bytes_transferred_;
    delete op;
    if (owner) handler(ec, n);
  }

  struct Spare {
    void* block = nullptr;
    ~Spare() { ::operator delete(block); }
  };
  static Spare& spare() {
    thread_local Spare one;
    return one;
  }

  // Performs run only while the read is queued in the reactor, which closing the reader ends.
  PipeReader::Impl* reader_;
  asio::mutable_buffer buffer_;
  PipeReader::Handler handler_;
};

}  // namespace

PipeReader::PipeReader(const asio::any_io_executor& executor, int fd) {
  auto& context = asio::query(executor, asio::execution::context);
  impl_ = std::make_unique<Impl>(asio::use_service<Reactor>(context), fd);
}

PipeReader::~PipeReader() {
  impl_->close();
}

void PipeReader::async_read_some(asio::mutable_buffer buffer, Handler handler) {
  auto* op = new ReadOp(*impl_, buffer, std::move(handler));
  if (impl_->fd < 0) {
    op->ec_ = asio::error::bad_descriptor;
    impl_->reactor->post_immediate_completion(op, false);
    return;
  }
  if (impl_->registered != 0) {
    op->ec_ = boost::system::error_code(impl_->registered, boost::system::system_category());
    impl_->reactor->post_immediate_completion(op, false);
    return;
  }
  impl_->waiting = true;  // until a perform takes bytes, the end, or an error
  if (impl_->eager && ReadOp::perform(op) != ReactorOp::not_done) {
    impl_->reactor->post_immediate_completion(op, false);
    return;
  }
  impl_->reactor->start_op(Reactor::read_op, impl_->fd, impl_->data, op, false, true);
}

bool PipeReader::waiting() const noexcept {
  return impl_->fd >= 0 && impl_->waiting;
}

void PipeReader::read_eagerly() noexcept {
  impl_->eager = true;
}

void PipeReader::cancel() {
  if (impl_->fd >= 0) impl_->reactor->cancel_ops(impl_->fd, impl_->data);
}

void PipeReader::close() {
  impl_->close();
}

bool PipeReader::is_open() const noexcept {
  return impl_->fd >= 0;
}

int PipeReader::native_handle() const noexcept {
  return impl_->fd;
}

std::uint64_t PipeReader::reads_tried() const noexcept {
  return impl_->reads;
}

}  // namespace escouade::runtime
