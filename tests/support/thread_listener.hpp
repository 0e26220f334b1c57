#pragma once

// A listening socket whose connections are each served on a thread of their own, for the network
// lab's servers (test_web_server.hpp, test_proxy.hpp): blocking code, simple to read. Stopping it
// (its destructor) wakes the blocked accept and the reads and writes of every connection (a
// shutdown of their sockets), then joins every thread.

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace escouade::test {

class ThreadListener {
 public:
  using Serve = std::function<void(boost::asio::ip::tcp::socket)>;
  // Listens on `address`:`port` (0: a port the kernel picks) and serves each connection with
  // `serve`, on its thread.
  ThreadListener(const std::string& address, std::uint16_t port, Serve serve);
  ~ThreadListener();
  ThreadListener(const ThreadListener&) = delete;
  ThreadListener& operator=(const ThreadListener&) = delete;

  std::uint16_t port() const;
  int connections() const { return connections_; }
  // The sockets' context (for a resolver or a socket a connection opens itself).
  boost::asio::io_context& io() { return io_; }
  // A socket of a connection's own (the proxy's upstream), woken at the stop as theirs are.
  void track(int fd);
  void untrack(int fd);

 private:
  void accept_loop();

  Serve serve_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_{io_};
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::mutex mutex_;
  std::set<int> open_;
  std::vector<std::thread> threads_;
  std::thread accepting_;
};

}  // namespace escouade::test
