#include "base/event_loop.hpp"

#include <boost/asio/co_spawn.hpp>

namespace escouade {

namespace asio = boost::asio;

std::exception_ptr EventLoop::run(asio::awaitable<void> main) {
  failure_ = nullptr;
  asio::co_spawn(io_, std::move(main), [this](std::exception_ptr e) {
    failure_ = e;
    io_.stop();
  });
  io_.run();
  return failure_;
}

void EventLoop::run() {
  io_.run();
}

std::size_t EventLoop::drain(std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  std::size_t ran = 0;
  io_.restart();
  while (std::chrono::steady_clock::now() < deadline) {
    const std::size_t n = io_.poll_one();
    if (n == 0) break;
    ran += n;
  }
  io_.stop();
  return ran;
}

}  // namespace escouade
