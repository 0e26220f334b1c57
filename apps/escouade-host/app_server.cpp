#include "app_server.hpp"

#include <boost/asio/write.hpp>
#include <iostream>

#include "protocol/gen/host_methods.hpp"
#include "protocol/payload_text.hpp"

namespace escouade::app {

namespace asio = boost::asio;
namespace method = proto::host::method;

AppServer::AppServer(asio::io_context& io, int in_fd, int out_fd, std::function<void()> stopped)
    : in_(io, in_fd),
      out_(io, out_fd),
      stopped_(std::move(stopped)),
      session_(
          io.get_executor(),
          [this](std::string line) { write(std::move(line), proto::Delivery::kept); },
          [](std::string_view sentence) {
            std::cerr << "escouade-host: the app " << sentence << "\n";
          }) {
  session_.set_droppable_sink(
      [this](std::string line) { write(std::move(line), proto::Delivery::droppable); });
}

void AppServer::start() {
  read();
}

void AppServer::read() {
  in_.async_read_some(asio::buffer(buffer_), [this](boost::system::error_code ec, std::size_t n) {
    if (n > 0) {
      framer_.feed(
          std::string_view(buffer_.data(), n), [this](std::string_view line) { take_line(line); },
          [this](std::size_t limit) { session_.line_too_long(limit); });
    }
    if (!ec) {
      if (pending_.bytes() > kMaxBacklog) {
        paused_ = true;  // write_next() reads again once half of it is gone
        return;
      }
      read();
      return;
    }
    if (ec == asio::error::operation_aborted) return;
    // The app closed our input: that is a shutdown.
    if (std::string rest = framer_.finish(); !rest.empty()) take_line(rest);
    if (closing_) return;
    closing_ = true;
    host_->shutdown([this] { close_host(); });
  });
}

void AppServer::take_line(std::string_view line) {
  // A host/call's payload goes to the plugin as the app wrote it (protocol/payload_text.hpp).
  const auto payload = proto::params_member_text(line, method::HostCall::kName, "params");
  if (!payload) {
    session_.feed_line(line);
    return;
  }
  payload_ = payload;  // the handler runs within feed_line below, while `line` lives
  std::string rest;
  const auto at = static_cast<std::size_t>(payload->data() - line.data());
  rest.reserve(line.size() - payload->size() + 4);
  rest.append(line.substr(0, at)).append("null").append(line.substr(at + payload->size()));
  session_.feed_line(rest);
  payload_.reset();  // not taken: the call was refused before its handler
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

void AppServer::write(std::string line, proto::Delivery delivery) {
  // Past the bound the oldest notifications go first; answers and the host's own calls are kept
  // (their number is bounded by the requests read, and reading has stopped).
  pending_.push(std::move(line), delivery);
  write_next();
}

void AppServer::when_drained(std::function<void()> done) {
  drained_ = std::move(done);
  write_next();
}

void AppServer::write_next() {
  if (paused_ && pending_.bytes() <= kMaxBacklog / 2) {
    paused_ = false;
    if (const std::size_t dropped = pending_.take_dropped(); dropped > 0) {
      std::cerr << "escouade-host: " << dropped << " notification" << (dropped == 1 ? "" : "s")
                << " to the app dropped while it did not read its input\n";
    }
    if (!closing_) read();
  }
  if (!writing_ && pending_.empty() && drained_) {
    auto done = std::move(drained_);
    drained_ = nullptr;
    done();
    return;
  }
  if (writing_ || pending_.empty()) return;
  writing_ = true;
  // One write of kKeptWriteRoom bytes of lines at most, so that the backlog shrinks as they go,
  // into the room the last write kept (as a plugin's input: runtime/process_program.cpp).
  pending_.take_joined(in_flight_, kKeptWriteRoom);
  asio::async_write(out_, asio::buffer(in_flight_),
                    [this](boost::system::error_code ec, std::size_t) {
                      writing_ = false;
                      in_flight_.clear();
                      // The room of one long line is not kept for the app's life.
                      if (in_flight_.capacity() > kKeptWriteRoom) std::string().swap(in_flight_);
                      if (ec) {  // the app is gone: nothing more goes out
                        pending_.clear();
                      }
                      write_next();
                    });
}

}  // namespace escouade::app
