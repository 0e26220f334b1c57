#include "support/thread_listener.hpp"

#include <sys/socket.h>

namespace escouade::test {

using tcp = boost::asio::ip::tcp;

ThreadListener::ThreadListener(const std::string& address, std::uint16_t port, Serve serve)
    : serve_(std::move(serve)) {
  const tcp::endpoint at(boost::asio::ip::make_address(address), port);
  acceptor_.open(at.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  acceptor_.bind(at);
  acceptor_.listen();
  accepting_ = std::thread([this] { accept_loop(); });
}

ThreadListener::~ThreadListener() {
  stopping_ = true;
  ::shutdown(acceptor_.native_handle(), SHUT_RDWR);  // wakes the blocked accept
  accepting_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    for (int fd : open_)
      ::shutdown(fd, SHUT_RDWR);
    threads = std::move(threads_);
  }
  for (auto& t : threads)
    t.join();
}

std::uint16_t ThreadListener::port() const {
  return acceptor_.local_endpoint().port();
}

void ThreadListener::track(int fd) {
  std::lock_guard lock(mutex_);
  open_.insert(fd);
}

void ThreadListener::untrack(int fd) {
  std::lock_guard lock(mutex_);
  open_.erase(fd);
}

void ThreadListener::accept_loop() {
  while (!stopping_) {
    boost::system::error_code ec;
    tcp::socket socket(io_);
    acceptor_.accept(socket, ec);
    if (ec || stopping_) return;
    ++connections_;
    // Tracked from here, so that a stop that comes before its thread runs still wakes it.
    std::lock_guard lock(mutex_);
    open_.insert(socket.native_handle());
    threads_.emplace_back([this, s = std::make_shared<tcp::socket>(std::move(socket))] {
      const int fd = s->native_handle();
      serve_(std::move(*s));
      untrack(fd);
    });
  }
}

}  // namespace escouade::test
