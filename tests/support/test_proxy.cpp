#include "support/test_proxy.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "support/thread_listener.hpp"

namespace escouade::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct TestProxy::State {
  mutable std::mutex mutex;
  std::vector<std::string> asked;
  std::set<std::string> refused;
  std::optional<ThreadListener> listener;  // last: stopped before the rest goes

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
  tcp::socket upstream(listener->io());
  if (!refuse) {
    tcp::resolver resolver(listener->io());
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
  listener->track(upstream.native_handle());
  asio::write(client, asio::buffer(std::string("HTTP/1.1 200 Connection established\r\n\r\n")), ec);
  std::thread back([&] { pump(upstream, client); });
  pump(client, upstream);
  back.join();
  listener->untrack(upstream.native_handle());
}

TestProxy::TestProxy(const std::string& address, std::uint16_t port)
    : state_(std::make_shared<State>()) {
  state_->listener.emplace(address, port,
                           [s = state_.get()](tcp::socket socket) { s->serve(std::move(socket)); });
}

TestProxy::~TestProxy() {
  state_->listener.reset();
}

std::uint16_t TestProxy::port() const {
  return state_->listener->port();
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
