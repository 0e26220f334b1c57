#pragma once

// A real HTTP proxy for the network tests: it answers CONNECT host:port by opening a connection
// there (the lab's /etc/hosts names it) and carrying bytes both ways; any other request, or a
// CONNECT to a host it was told to refuse, gets 403. It records what it was asked.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace escouade::test {

class TestProxy {
 public:
  TestProxy(const std::string& address, std::uint16_t port);
  ~TestProxy();
  TestProxy(const TestProxy&) = delete;
  TestProxy& operator=(const TestProxy&) = delete;

  std::uint16_t port() const;
  // "host:port" of each CONNECT, in order.
  std::vector<std::string> asked() const;
  // CONNECTs to `host` (its name, without a port) answer 403.
  void refuse(const std::string& host);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace escouade::test
