#pragma once

// The inside of the client (client.hpp), shared by its exchanges: one connection made the way
// every exchange makes it (resolve once, judge each address, connect to the judged ones or
// through the proxy, TLS), and the client that starts them. Included by src/net's .cpp files
// alone: it brings Beast and OpenSSL.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "base/ascii.hpp"
#include "net/client.hpp"

namespace escouade::net::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::awaitable;
using boost::system::error_code;
using tcp = asio::ip::tcp;

inline constexpr const char* kUserAgent = "Escouade";  // when the plugin names none

Error failed(std::string why);
Error refused(std::string why);
Error invalid(std::string why);
// The Host header: the name (an IPv6 address in brackets), and the port when it is not the
// scheme's.
std::string host_header(const policy::EgressTarget& t);

struct ProxyUrl {
  std::string text;  // as the settings wrote it, for the sentences
  std::string host;
  std::string port;
};

class ClientImpl;

// One exchange's connection, its deadline, and its end. Lives as long as its coroutine or its
// caller's handle. Thread: the client's executor.
class Job : public std::enable_shared_from_this<Job> {
 public:
  Job(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Note note);
  virtual ~Job() = default;

  // `self` is the coroutine's own hold on its job: a caller may drop its handle at once.
  awaitable<void> run(std::shared_ptr<Job> self);

 protected:
  // What the exchange does once its connection is open, over TLS or not.
  virtual awaitable<void> exchange(beast::ssl_stream<beast::tcp_stream>& s) = 0;
  virtual awaitable<void> exchange(beast::tcp_stream& s) = 0;
  // Why the connection could not be opened: called once, unless cancelled.
  virtual void fail(Error e) = 0;

  // The caller let go: the connection closes and no handler is called any more.
  void cancel_now() {
    if (cancelled_) return;
    cancelled_ = true;
    close();
  }
  // Arms the deadline: past it the connection closes, and `why` is what broke.
  void expire_after(std::chrono::milliseconds d, std::string why);
  void disarm() { deadline_.cancel(); }
  // The reason an operation that failed gives: the deadline's when it closed the connection.
  std::string broke(std::string_view what, const error_code& ec) const {
    if (!why_closed_.empty()) return why_closed_;
    return std::string(what) + ": " + ec.message();
  }
  void close() {
    error_code ignored;
    resolver_.cancel();
    deadline_.cancel();
    wake_.cancel();
    beast::get_lowest_layer(tls_).socket().close(ignored);
  }

  std::shared_ptr<ClientImpl> client_;
  policy::EgressTarget target_;
  Note note_;
  tcp::resolver resolver_;
  beast::ssl_stream<beast::tcp_stream> tls_;
  beast::flat_buffer buffer_;
  asio::steady_timer deadline_;
  asio::steady_timer wake_;  // an exchange waiting for its caller (credit, a message) sleeps on it
  std::string why_closed_;
  bool cancelled_ = false;

 private:
  bool through_proxy() const;
  awaitable<Result<void>> connect();
  awaitable<Result<void>> tunnel();
  awaitable<Result<void>> handshake();
};

class ClientImpl : public Client, public std::enable_shared_from_this<ClientImpl> {
 public:
  ClientImpl(asio::any_io_executor executor, Settings settings, std::optional<ProxyUrl> proxy)
      : executor_(std::move(executor)), settings_(std::move(settings)), proxy_(std::move(proxy)) {}

  // The CA file can be read and holds certificates (at make: it is loaded at the first use).
  Result<void> check_settings();

  std::shared_ptr<Exchange> fetch(const policy::EgressTarget& target, Request request,
                                  FetchLimits limits, Note note, FetchDone done) override;
  std::shared_ptr<StreamExchange> stream(const policy::EgressTarget& target, Request request,
                                         StreamLimits limits, Note note,
                                         StreamHandlers handlers) override;
  std::shared_ptr<WebSocket> websocket(const policy::EgressTarget& target,
                                       std::vector<Header> headers, WebSocketLimits limits,
                                       Note note, WebSocketHandlers handlers) override;

  const asio::any_io_executor& executor() const { return executor_; }
  const std::optional<ProxyUrl>& proxy() const { return proxy_; }
  // The TLS settings every connection uses, the certificates loaded at the first call.
  asio::ssl::context& tls();

  void start(const std::shared_ptr<Job>& job) {
    asio::co_spawn(executor_, job->run(job), [](std::exception_ptr e) {
      // Every operation reports through its error code; only a lack of memory throws here.
      if (e) std::rethrow_exception(e);
    });
  }

 private:
  asio::any_io_executor executor_;
  Settings settings_;
  std::optional<ProxyUrl> proxy_;
  std::optional<asio::ssl::context> tls_;
};

}  // namespace escouade::net::detail
