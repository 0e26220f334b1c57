#include "support/test_proxy.hpp"

#include <sys/socket.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <set>
#include <thread>

namespace escouade::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct TestProxy::State {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread accepting;
  mutable std::mutex mutex;
  std::vector<std::thread> threads;
  std::set<int> open_fds;
  std::vector<std::string> asked;
  std::set<std::string> refused;
  std::atomic<bool> stopping{false};

  void keep(int fd) {
    std::lock_guard lock(mutex);
    open_fds.insert(fd);
  }
  void serve(tcp::socket client);
};

namespace {

// Copies what `from` reads to `to` until either ends; then ends both ways of `to`.
void pump(tcp::socket& from, tcp::socket& to) {
  char buf[16 * 1024];
  beast::error_code ec;
  for (;;) {
    const std::size_t n = from.read_some(asio::buffer(buf), ec);
    if (ec) break;
    asio::write(to, asio::buffer(buf, n), ec);
    if (ec) break;
  }
  to.shutdown(tcp::socket::shutdown_send, ec);
}

}  // namespace

void TestProxy::State::serve(tcp::socket client) {
  beast::flat_buffer buffer;
  http::request_parser<http::empty_body> parser;
  beast::error_code ec;
  http::read_header(client, buffer, parser, ec);
  if (ec) return;
  const auto& req = parser.get();
  const std::string authority(req.target());
  const std::string host = authority.substr(0, authority.rfind(':'));
  bool refuse = req.method() != http::verb::connect;
  {
    std::lock_guard lock(mutex);
    asked.push_back(authority);
    refuse = refuse || refused.count(host) > 0;
  }
  tcp::socket upstream(io);
  if (!refuse) {
    tcp::resolver resolver(io);
    auto found = resolver.resolve(host, authority.substr(authority.rfind(':') + 1), ec);
    if (!ec) asio::connect(upstream, found, ec);
    refuse = static_cast<bool>(ec);
  }
  if (refuse) {
    asio::write(client,
                asio::buffer(std::string("HTTP/1.1 403 Forbidden\r\n"
                                         "Content-Length: 0\r\n\r\n")),
                ec);
    return;
  }
  keep(upstream.native_handle());
  asio::write(client, asio::buffer(std::string("HTTP/1.1 200 Connection established\r\n\r\n")), ec);
  std::thread back([&] { pump(upstream, client); });
  pump(client, upstream);
  back.join();
  std::lock_guard lock(mutex);
  open_fds.erase(upstream.native_handle());
}

TestProxy::TestProxy(const std::string& address, std::uint16_t port)
    : state_(std::make_shared<State>()) {
  const tcp::endpoint at(asio::ip::make_address(address), port);
  auto& s = *state_;
  s.acceptor.open(at.protocol());
  s.acceptor.set_option(tcp::acceptor::reuse_address(true));
  s.acceptor.bind(at);
  s.acceptor.listen();
  s.accepting = std::thread([&s] {
    while (!s.stopping) {
      tcp::socket socket(s.io);
      beast::error_code ec;
      s.acceptor.accept(socket, ec);
      if (ec || s.stopping) return;
      std::lock_guard lock(s.mutex);
      s.open_fds.insert(socket.native_handle());
      s.threads.emplace_back([&s, sock = std::make_shared<tcp::socket>(std::move(socket))] {
        const int fd = sock->native_handle();
        s.serve(std::move(*sock));
        std::lock_guard done(s.mutex);
        s.open_fds.erase(fd);
      });
    }
  });
}

TestProxy::~TestProxy() {
  state_->stopping = true;
  ::shutdown(state_->acceptor.native_handle(), SHUT_RDWR);
  state_->accepting.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(state_->mutex);
    for (int fd : state_->open_fds)
      ::shutdown(fd, SHUT_RDWR);
    threads = std::move(state_->threads);
  }
  for (auto& t : threads)
    t.join();
}

std::uint16_t TestProxy::port() const {
  return state_->acceptor.local_endpoint().port();
}

std::vector<std::string> TestProxy::asked() const {
  std::lock_guard lock(state_->mutex);
  return state_->asked;
}

void TestProxy::refuse(const std::string& host) {
  std::lock_guard lock(state_->mutex);
  state_->refused.insert(host);
}

}  // namespace escouade::test
