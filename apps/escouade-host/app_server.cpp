#include "app_server.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/write.hpp>
#include <cerrno>
#include <iostream>

namespace escouade::app {

namespace asio = boost::asio;

AppServer::AppServer(asio::io_context& io, int in_fd, int out_fd, std::function<void()> stopped)
    : in_(io, in_fd),
      out_(io, out_fd),
      stopped_(std::move(stopped)),
      session_(
          io.get_executor(), [this](std::string line) { write(std::move(line), false); },
          [](std::string_view sentence) {
            std::cerr << "escouade-host: the app " << sentence << "\n";
          }) {
  session_.set_notification_sink([this](std::string line) { write(std::move(line), true); });
}

void AppServer::start() {
  // A pipe or a socket is waited for, then read until a read comes back short: asio's
  // async_read_some reads once more before it waits, which found the pipe empty after every
  // request (one system call in seven of escouade-host's a call). Anything else (a file:
  // epoll cannot wait for it, and reading it never blocks) is read with async_read_some.
  struct stat st {};
  if (::fstat(in_.native_handle(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
    boost::system::error_code nb;
    in_.non_blocking(true, nb);
    read_direct_ = !nb;
  }
  read();
}

void AppServer::feed(std::size_t n) {
  framer_.feed(
      std::string_view(buffer_.data(), n),
      [this](std::string_view line) { session_.feed_line(line); },
      [this](std::size_t limit) { session_.line_too_long(limit); });
}

void AppServer::read() {
  if (read_direct_) {
    in_.async_wait(asio::posix::stream_descriptor::wait_read, [this](boost::system::error_code ec) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) return input_ended();
      read_ready();
    });
    return;
  }
  in_.async_read_some(asio::buffer(buffer_), [this](boost::system::error_code ec, std::size_t n) {
    if (n > 0) feed(n);
    if (!ec) {
      if (pending_bytes_ > kMaxBacklog) {
        paused_ = true;  // write_next() reads again once half of it is gone
        return;
      }
      read();
      return;
    }
    if (ec == asio::error::operation_aborted) return;
    input_ended();
  });
}

void AppServer::read_ready() {
  for (;;) {
    const ssize_t n = ::read(in_.native_handle(), buffer_.data(), buffer_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return read();
    if (n <= 0) return input_ended();  // its end, or a failure (closed: see close())
    feed(static_cast<std::size_t>(n));
    if (pending_bytes_ > kMaxBacklog) {
      paused_ = true;  // write_next() reads again once half of it is gone
      return;
    }
    if (static_cast<std::size_t>(n) < buffer_.size()) return read();  // it is empty now
  }
}

void AppServer::input_ended() {
  // The app closed our input: that is a shutdown.
  if (std::string rest = framer_.finish(); !rest.empty()) session_.feed_line(rest);
  if (closing_) return;
  closing_ = true;
  host_->shutdown([this] { close_host(); });
}

void AppServer::close() {
  closing_ = true;
  boost::system::error_code ignored;
  in_.close(ignored);
  session_.close();
}

void AppServer::close_host() {
  boost::system::error_code ignored;
  in_.cancel(ignored);
  if (stopped_) {
    auto stopped = std::move(stopped_);
    stopped_ = nullptr;
    stopped();
  }
}

void AppServer::write(std::string line, bool droppable) {
  pending_bytes_ += line.size();
  pending_.push_back(Line{std::move(line), droppable});
  if (pending_bytes_ > kMaxBacklog) {
    // The oldest notifications go first; answers and the host's own calls are kept (their
    // number is bounded by the requests read, and reading has stopped).
    for (auto it = pending_.begin(); it != pending_.end() && pending_bytes_ > kMaxBacklog;) {
      if (!it->droppable) {
        ++it;
        continue;
      }
      pending_bytes_ -= it->text.size();
      it = pending_.erase(it);
      ++dropped_;
    }
  }
  write_next();
}

void AppServer::when_drained(std::function<void()> done) {
  drained_ = std::move(done);
  write_next();
}

void AppServer::write_next() {
  if (paused_ && pending_bytes_ <= kMaxBacklog / 2) {
    paused_ = false;
    if (dropped_ > 0) {
      std::cerr << "escouade-host: " << dropped_ << " notification" << (dropped_ == 1 ? "" : "s")
                << " to the app dropped while it did not read its input\n";
      dropped_ = 0;
    }
    if (!closing_) {
      if (read_direct_) {
        read_ready();  // what came meanwhile woke nobody: it is read first
      } else {
        read();
      }
    }
  }
  if (!writing_ && pending_.empty() && drained_) {
    auto done = std::move(drained_);
    drained_ = nullptr;
    done();
    return;
  }
  if (writing_ || pending_.empty()) return;
  writing_ = true;
  in_flight_.clear();
  // One write of at most 1 MiB of lines, so that the backlog shrinks as they go.
  while (!pending_.empty() && (in_flight_.empty() || in_flight_.size() < 1024 * 1024)) {
    in_flight_ += pending_.front().text;
    pending_bytes_ -= pending_.front().text.size();
    pending_.pop_front();
  }
  asio::async_write(out_, asio::buffer(in_flight_),
                    [this](boost::system::error_code ec, std::size_t) {
                      writing_ = false;
                      if (ec) {  // the app is gone: nothing more goes out
                        pending_.clear();
                        pending_bytes_ = 0;
                      }
                      write_next();
                    });
}

}  // namespace escouade::app
