#include "sandbox/helper_process.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <chrono>
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
  // Its control pipe gave its end (or failed): every record it wrote has been read. Its end is
  // delivered only then, so that a verdict (a stencil, an end record) is never overtaken.
  bool pipe_done = false;
  std::unique_ptr<asio::steady_timer> grace;  // the bound on waiting for that, once it ended
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

  // Reads its records until the pipe's end: the helper's process holds the only writing end,
  // so the end comes once it has ended, after everything it wrote. (Reading what is left when
  // its exit is heard, beside a read still in flight, could feed the records out of order or
  // into the buffer that read was filling: its stencil came after its end, now and then.)
  void read(const std::shared_ptr<Shared>& self) {
    pipe->async_read_some(asio::buffer(buffer),
                          [self](boost::system::error_code ec, std::size_t n) {
                            if (!self->owner || !self->pipe) return;
                            if (n > 0) self->feed(std::string_view(self->buffer.data(), n));
                            if (!ec && !self->records.failed()) return self->read(self);
                            self->pipe_done = true;
                            self->deliver();
                          });
  }

  void ended(const std::shared_ptr<Shared>& self, const runtime::ProgramEnd& e) {
    end = e;
    if (!pipe_done) {
      // Bounded: a descendant holding the pipe open (a helper's filter lets it make none) would
      // otherwise hold its end back for good.
      grace = std::make_unique<asio::steady_timer>(executor, std::chrono::seconds(2));
      grace->async_wait([self](boost::system::error_code ec) {
        if (ec || !self->owner) return;
        self->pipe_done = true;
        self->deliver();
      });
    }
    deliver();
  }

  void deliver() {
    if (!bound || !end || !pipe_done || delivered) return;
    delivered = true;
    if (grace) grace->cancel();
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
    if (auto s = weak.lock()) s->ended(s, end);
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
