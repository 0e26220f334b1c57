#include "app_server.hpp"

#include <boost/asio/write.hpp>
#include <iostream>

namespace escouade::app {

namespace asio = boost::asio;

AppServer::AppServer(asio::io_context& io, int in_fd, int out_fd, std::function<void()> stopped)
    : in_(io, in_fd),
      out_(io, out_fd),
      stopped_(std::move(stopped)),
      session_(
          io.get_executor(), [this](std::string line) { write(std::move(line)); },
          [](std::string_view sentence) {
            std::cerr << "escouade-host: the app " << sentence << "\n";
          }) {}

void AppServer::start() {
  read();
}

void AppServer::read() {
  in_.async_read_some(asio::buffer(buffer_), [this](boost::system::error_code ec, std::size_t n) {
    if (n > 0) {
      framer_.feed(
          std::string_view(buffer_.data(), n),
          [this](std::string_view line) { session_.feed_line(line); },
          [this](std::size_t limit) { session_.line_too_long(limit); });
    }
    if (!ec) {
      read();
      return;
    }
    if (ec == asio::error::operation_aborted) return;
    // The app closed our input: that is a shutdown.
    if (std::string rest = framer_.finish(); !rest.empty()) session_.feed_line(rest);
    if (closing_) return;
    closing_ = true;
    host_->shutdown([this] { close_host(); });
  });
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

void AppServer::write(std::string line) {
  pending_.append(line);
  write_next();
}

void AppServer::when_drained(std::function<void()> done) {
  drained_ = std::move(done);
  write_next();
}

void AppServer::write_next() {
  if (!writing_ && pending_.empty() && drained_) {
    auto done = std::move(drained_);
    drained_ = nullptr;
    done();
    return;
  }
  if (writing_ || pending_.empty()) return;
  writing_ = true;
  in_flight_.clear();
  in_flight_.swap(pending_);
  asio::async_write(out_, asio::buffer(in_flight_),
                    [this](boost::system::error_code ec, std::size_t) {
                      writing_ = false;
                      if (ec) pending_.clear();  // the app is gone: nothing more goes out
                      write_next();
                    });
}

}  // namespace escouade::app
