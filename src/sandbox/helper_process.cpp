#include "sandbox/helper_process.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>

#include "base/unique_fd.hpp"
#include "platform/errors.hpp"

namespace escouade::sandbox {

namespace asio = boost::asio;

struct HelperProcess::Shared {
  Shared(asio::any_io_executor e, Lifeline::Token o)
      : executor(std::move(e)), owner(std::move(o)) {}

  asio::any_io_executor executor;
  Lifeline::Token owner;
  runtime::ProgramEvents events;
  ControlEvents control;
  bool bound = false;
  std::optional<runtime::ProgramEnd> end;  // it ended; delivered once bound, after its records
  bool delivered = false;
  wire::RecordReader records{kMaxControlRecordBytes};
  std::unique_ptr<asio::posix::stream_descriptor> pipe;
  std::array<char, 64 * 1024> buffer;

  // One control record, to the plugin it serves (none yet: a spare's records mean nothing).
  void record(char kind, std::string_view bytes) {
    if (!bound) return;
    switch (static_cast<wire::ToHost>(kind)) {
      case wire::ToHost::ready:
        if (control.ready) control.ready();
        return;
      case wire::ToHost::ended:
        if (auto e = wire::decode_ended(bytes)) {
          if (control.ended) control.ended(*e);
        } else if (control.broken) {
          control.broken("an end record that does not read");
        }
        return;
      case wire::ToHost::input_full:
        if (control.input_full) control.input_full(wire::count_of(bytes).value_or(0));
        return;
      case wire::ToHost::input_drained:
        if (control.input_drained) control.input_drained(wire::count_of(bytes).value_or(0));
        return;
      case wire::ToHost::stencil:
        if (control.stencil) control.stencil(std::string(bytes));
        return;
      case wire::ToHost::stale_stencil:
        if (control.stale_stencil) control.stale_stencil();
        return;
    }
    if (control.broken) control.broken("a record of an unknown kind");
  }

  void feed(std::string_view bytes) {
    if (!records.feed(bytes, [&](char kind, std::string_view b) { record(kind, b); })) {
      if (control.broken && bound) control.broken("a control record past its bound");
    }
  }

  void read(const std::shared_ptr<Shared>& self) {
    pipe->async_read_some(asio::buffer(buffer),
                          [self](boost::system::error_code ec, std::size_t n) {
                            if (!self->owner || !self->pipe) return;
                            if (n > 0) self->feed(std::string_view(self->buffer.data(), n));
                            if (!ec && !self->records.failed()) self->read(self);
                          });
  }

  // Once the helper ended, what it wrote is all in the pipe: read now, without waiting, so that
  // its end comes after every record. Bounded: a record is at most kMaxControlRecordBytes.
  void drain() {
    if (!pipe || !pipe->is_open()) return;
    const int fd = pipe->native_handle();
    std::size_t total = 0;
    while (total <= kMaxControlRecordBytes + wire::kHeaderBytes && !records.failed()) {
      const ssize_t n = ::read(fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      total += static_cast<std::size_t>(n);
      feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    }
  }

  void ended(const runtime::ProgramEnd& e) {
    drain();
    end = e;
    deliver();
  }

  void deliver() {
    if (!bound || !end || delivered) return;
    delivered = true;
    if (events.exited) events.exited(*end);
  }
};

Result<std::unique_ptr<HelperProcess>> HelperProcess::start(asio::any_io_executor executor,
                                                            runtime::ProcessContext& context,
                                                            const std::filesystem::path& helper,
                                                            const std::string& time_zone) {
  const auto os_error = [](const std::string& what) {
    const int error = errno;
    const bool exhausted = error == EMFILE || error == ENFILE || error == ENOMEM;
    return make_error(exhausted ? platform::Errc::exhausted : platform::Errc::os_failure,
                      "cannot start its sandbox: " + what + ": " + std::strerror(error));
  };
  int control[2];
  if (::pipe2(control, O_CLOEXEC) != 0) return os_error("pipe");
  UniqueFd control_read(control[0]);
  UniqueFd control_write(control[1]);
  UniqueFd status(::memfd_create("escouade-sandbox-status", MFD_CLOEXEC));
  if (!status) return os_error("memfd_create");
  if (::ftruncate(status.get(), kStatusPageBytes) != 0) return os_error("ftruncate");
  void* page =
      ::mmap(nullptr, kStatusPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, status.get(), 0);
  if (page == MAP_FAILED) return os_error("mmap");

  std::unique_ptr<HelperProcess> h(new HelperProcess);
  h->page_ = static_cast<StatusPage*>(page);
  h->shared_ = std::make_shared<Shared>(executor, h->lifeline_.token());

  runtime::ProgramSpec spec;
  spec.plugin_id = "escouade-sandbox";
  spec.command = {helper.string(), "--time-zone", time_zone};
  spec.executable = helper;
  spec.folder = "/";
  spec.descriptors = {control_write.get(), status.get()};
  h->process_ = std::make_unique<runtime::ProcessProgram>(executor, spec, context);

  // Its events go where bind() says; until then, only its end counts.
  runtime::ProgramEvents forward;
  std::weak_ptr<Shared> weak = h->shared_;
  forward.output_line = [weak](std::string_view line) {
    if (auto s = weak.lock(); s && s->bound && s->events.output_line) s->events.output_line(line);
  };
  forward.output_too_long = [weak](std::size_t limit) {
    if (auto s = weak.lock(); s && s->bound && s->events.output_too_long)
      s->events.output_too_long(limit);
  };
  forward.error_line = [weak](std::string_view line) {
    if (auto s = weak.lock(); s && s->bound && s->events.error_line) s->events.error_line(line);
  };
  forward.error_piece = [weak](std::string_view piece) {
    if (auto s = weak.lock(); s && s->bound) {
      if (s->events.error_piece) {
        s->events.error_piece(piece);
      } else if (s->events.error_line) {
        s->events.error_line(piece);
      }
    }
  };
  forward.input_full = [weak](std::size_t backlog) {
    if (auto s = weak.lock(); s && s->bound && s->events.input_full) s->events.input_full(backlog);
  };
  forward.input_drained = [weak](std::size_t dropped) {
    if (auto s = weak.lock(); s && s->bound && s->events.input_drained)
      s->events.input_drained(dropped);
  };
  forward.exited = [weak](const runtime::ProgramEnd& end) {
    if (auto s = weak.lock()) s->ended(end);
  };
  if (auto started = h->process_->start(std::move(forward)); !started) return started.error();

  // The helper holds its own copies now.
  control_write.reset();
  status.reset();
  if (::fcntl(control_read.get(), F_SETFL, O_NONBLOCK) != 0) return os_error("fcntl");
  h->shared_->pipe =
      std::make_unique<asio::posix::stream_descriptor>(executor, control_read.release());
  h->shared_->read(h->shared_);
  return h;
}

HelperProcess::~HelperProcess() {
  lifeline_.end();
  // Its process first: ended, and reaped off the host's thread (ProcessProgram's destructor).
  process_.reset();
  if (shared_ && shared_->pipe) {
    boost::system::error_code ignored;
    shared_->pipe->close(ignored);
  }
  if (page_) ::munmap(page_, kStatusPageBytes);
}

void HelperProcess::bind(runtime::ProgramEvents events, ControlEvents control) {
  shared_->events = std::move(events);
  shared_->control = std::move(control);
  shared_->bound = true;
  // A helper that ended before it was taken says so now, on the loop, as a process would.
  if (shared_->end) {
    asio::post(shared_->executor, [s = shared_, owner = lifeline_.token()] {
      if (owner) s->deliver();
    });
  }
}

bool HelperProcess::ended() const noexcept {
  return shared_->end.has_value();
}

}  // namespace escouade::sandbox
