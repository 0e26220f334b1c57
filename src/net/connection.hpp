#pragma once

// The inside of the client (client.hpp), shared by its exchanges: one connection made the way
// every exchange makes it (resolve once, judge each address, connect to the judged ones or
// through the proxy, TLS) or taken from a pool of kept-alive ones, and the client that starts
// them. Included by src/net's .cpp files alone: it brings Beast and OpenSSL.

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
#include <vector>

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

// A connection: over TLS, or its lower layer alone for http.
using Conn = beast::ssl_stream<beast::tcp_stream>;

// The idle connections of one owner (client.hpp's Pool), each under its key. Thread: the
// client's executor.
class PoolImpl final : public Pool, public std::enable_shared_from_this<PoolImpl> {
 public:
  explicit PoolImpl(std::shared_ptr<ClientImpl> client);
  ~PoolImpl() override;
  PoolImpl(const PoolImpl&) = delete;
  PoolImpl& operator=(const PoolImpl&) = delete;

  std::size_t idle() const override { return idle_.size(); }
  const ClientImpl* client() const { return client_.get(); }
  // The connection last given back under `key` that is still open and quiet (neither closed nor
  // written to by its server while it waited), or null. The others found on the way are closed.
  std::unique_ptr<Conn> take(const std::string& key);
  // Keeps `conn` under `key` for `keep_for` at most, within the bounds (client.hpp); past them
  // the oldest of its key or of the pool is closed, or `conn` itself when the client holds
  // kIdleInAll already.
  void give(const std::string& key, std::unique_ptr<Conn> conn,
            std::chrono::steady_clock::duration keep_for);

 private:
  struct Idle {
    std::string key;
    std::unique_ptr<Conn> conn;
    std::chrono::steady_clock::time_point until;
  };
  void drop(std::size_t i);  // closes idle_[i]
  void sweep();              // closes those whose time is up, and waits for the next
  void arm();

  std::shared_ptr<ClientImpl> client_;
  std::vector<Idle> idle_;  // in the order they were given back
  asio::steady_timer timer_;
  std::optional<std::chrono::steady_clock::time_point> armed_;
};

// One exchange's connection, its deadline, and its end. Lives as long as its coroutine or its
// caller's handle. Thread: the client's executor.
class Job : public std::enable_shared_from_this<Job> {
 public:
  // `pool`: where its connection is taken from and given back to (null, or another client's:
  // a connection of its own).
  Job(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Note note,
      const std::shared_ptr<Pool>& pool = nullptr);
  virtual ~Job() = default;

  // `self` is the coroutine's own hold on its job: a caller may drop its handle at once.
  awaitable<void> run(std::shared_ptr<Job> self);

 protected:
  // What the exchange does once its connection is open, over TLS or not.
  virtual awaitable<void> exchange(beast::ssl_stream<beast::tcp_stream>& s) = 0;
  virtual awaitable<void> exchange(beast::tcp_stream& s) = 0;
  // Why the connection could not be opened: called once, unless cancelled.
  virtual void fail(Error e) = 0;

  // Whether the connection is taken from and given back to a pool.
  bool pooled() const { return !pool_key_.empty(); }
  // An exchange on a reused connection met `ec`, its server's close, before any byte of the
  // answer (`got_some`: the parser had some): the server closed it while it was idle.
  bool closed_meanwhile(const error_code& ec, bool got_some) const;
  // After an answer read whole: back to the pool for `keep_for` at most when that is more than
  // zero (the answer allows another request), nothing was left unread and the deadline did not
  // close it; else closed.
  void keep_or_close(std::chrono::steady_clock::duration keep_for);

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
    if (tls_) beast::get_lowest_layer(*tls_).socket().close(ignored);
  }

  std::shared_ptr<ClientImpl> client_;
  policy::EgressTarget target_;
  Note note_;
  tcp::resolver resolver_;
  std::unique_ptr<Conn> tls_;  // null once given back to the pool
  beast::flat_buffer buffer_;
  asio::steady_timer deadline_;
  asio::steady_timer wake_;  // an exchange waiting for its caller (credit, a message) sleeps on it
  std::string why_closed_;
  bool cancelled_ = false;
  // Set by the exchange: closed_meanwhile() was true and the request may be sent again (its
  // method is idempotent); run() then sends it once more over a new connection.
  bool send_again_ = false;

 private:
  bool through_proxy() const;
  awaitable<Result<void>> connect();
  awaitable<Result<void>> tunnel();
  awaitable<Result<void>> handshake();

  std::weak_ptr<PoolImpl> pool_;
  std::string pool_key_;  // empty: no pool
  bool reused_ = false;   // the connection of this attempt came from the pool
};

class ClientImpl : public Client, public std::enable_shared_from_this<ClientImpl> {
 public:
  ClientImpl(asio::any_io_executor executor, Settings settings, std::optional<ProxyUrl> proxy)
      : executor_(std::move(executor)), settings_(std::move(settings)), proxy_(std::move(proxy)) {}

  // The CA file can be read and holds certificates (at make: it is loaded at the first use).
  Result<void> check_settings();

  std::shared_ptr<Pool> pool() override;
  std::shared_ptr<Exchange> fetch(const std::shared_ptr<Pool>& pool,
                                  const policy::EgressTarget& target, Request request,
                                  FetchLimits limits, Note note, FetchDone done) override;
  std::shared_ptr<StreamExchange> stream(const std::shared_ptr<Pool>& pool,
                                         const policy::EgressTarget& target, Request request,
                                         StreamLimits limits, Note note,
                                         StreamHandlers handlers) override;
  std::shared_ptr<WebSocket> websocket(const policy::EgressTarget& target,
                                       std::vector<Header> headers, WebSocketLimits limits,
                                       Note note, WebSocketHandlers handlers) override;

  const asio::any_io_executor& executor() const { return executor_; }
  const std::optional<ProxyUrl>& proxy() const { return proxy_; }
  // The idle connections of every pool of this client (kIdleInAll at most).
  std::size_t idle_in_all = 0;
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
