#pragma once

// The one HTTP(S) client of the host (DESIGN.md, src/net): what net/fetch and net/stream send
// for a sandboxed plugin. Each exchange is one coroutine on the executor given, and:
//   - resolves the target's name once, asks policy::judge_address of every address it got, and
//     connects only to the ones allowed: no second lookup that DNS could answer otherwise;
//   - through a proxy (Settings::proxy), connects to the proxy and asks it CONNECT host:port: only
//     the name was judged then (by policy::judge_url), and the exchange notes it;
//   - verifies the server's certificate against the system's store and Settings::ca_file, and its
//     name (or the IP address written in the URL);
//   - follows no redirect: a 3xx is an answer like another;
//   - keeps the deadline it was given for the whole of a fetch, and for a stream's opening (until
//     its head); then a stream waits `idle` at most for each byte, and reads no more than its
//     window of bytes the caller has not credited back.
// Keep-alive: an exchange given a Pool (one per plugin's run, services/net.cpp) first takes an
// idle connection of that pool opened for the same scheme, host, port, reach, route (direct or
// the proxy) and TLS name, and gives its connection back to it after an answer read whole whose
// framing was known (Content-Length, chunked to its end, or none to have), HTTP/1.1 without
// `Connection: close`; anything else (a stream cancelled or broken, a deadline passed, a body
// over its limit) closes it. A pooled connection keeps the addresses judged when it was opened;
// the URL is judged per request before the pool is asked. A pool never lends a connection to
// another pool: a plugin never shares one with another plugin, nor with its own earlier run.
// Bounds: kIdlePerKey idle connections a key, kIdlePerPool a pool, kIdleInAll the client; each
// closed after kIdleFor unused (or the server's Keep-Alive timeout less 1 s, when shorter), and
// all of a pool's when its last handle goes. A request that finds a reused connection closed
// by its server before any byte of the answer is sent once more over a new connection when its
// method is idempotent (GET, HEAD, OPTIONS, PUT, DELETE: RFC 9110 9.2.2); any other fails
// (-32004) and says it was not sent again. Without a Pool: one connection an exchange
// (`Connection: close`).
// Every handler is called on the executor given; none after cancel(). Beast and OpenSSL stay in
// this folder's .cpp files (tests/source_rules_test.cpp).

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "policy/egress.hpp"

namespace escouade::net {

// The network settings of the app (Settings › Network; escouade-host --proxy, --ca-file).
struct Settings {
  // An HTTP proxy, "http://HOST:PORT": every exchange but local:shared's goes through it by
  // CONNECT. Empty: none.
  std::string proxy;
  // Certificates (PEM) trusted beside the system's store. Empty: the system's alone.
  std::filesystem::path ca_file;
};

struct Header {
  std::string name;
  std::string value;
  friend bool operator==(const Header&, const Header&) = default;
};

struct Request {
  std::string method = "GET";
  std::vector<Header> headers;  // checked by check_request; Host and the framing are set here
  std::optional<std::string> body;
};

// An answer's status line and headers: names in lower case, a repeated one joined by ", ".
struct Head {
  int status = 0;
  std::vector<Header> headers;
};

struct Response {
  Head head;
  std::string body;
};

// -32602 when `request` cannot be sent as it is: a method that is no HTTP token (or CONNECT,
// TRACE, TRACK), a header whose name is no token or whose value holds a line break or a NUL.
// The headers the client sets itself (Host, Content-Length, Transfer-Encoding, Connection,
// Upgrade, Keep-Alive, TE, Trailer, Proxy-*) are dropped from it, as a browser's fetch drops them.
Result<void> check_request(Request& request);

// One exchange under way: cancel() closes its connection, and none of its handlers is called
// after it. Dropping the handle does not cancel it.
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual void cancel() = 0;
};

// A stream's exchange: credit() gives back bytes of its window that the caller consumed.
class StreamExchange : public Exchange {
 public:
  virtual void credit(std::uint64_t bytes) = 0;
};

// A WebSocket opened (ws/open): its messages, in order, and its close.
class WebSocket : public Exchange {
 public:
  // Queues a message: refused (-32003) when it is over the limit of a message, or when what
  // already waits to be sent would pass the limit of what waits with it (a message of any size
  // up to the first limit goes when nothing waits).
  virtual Result<void> send(bool text, std::string data) = 0;
  // Closes it with 1000 once what waits went: `closed` follows.
  virtual void close() = 0;
};

// The connections kept alive for one owner (a plugin's run): made by Client::pool(), given to
// its exchanges. Dropping the last handle closes its idle connections; an exchange under way
// then closes its own at its end. Thread: the client's executor.
class Pool {
 public:
  virtual ~Pool() = default;
  // How many idle connections it keeps now.
  virtual std::size_t idle() const = 0;
};

// The bounds of keep-alive (see the top of this file).
inline constexpr std::size_t kIdlePerKey = 4;    // same scheme, host, port, route, TLS name
inline constexpr std::size_t kIdlePerPool = 16;  // one plugin's run
inline constexpr std::size_t kIdleInAll = 64;    // every pool of a client
inline constexpr std::chrono::seconds kIdleFor{30};

// Something an exchange has to tell the journal on the way (an address set aside, the proxy).
using Note = std::function<void(const std::string&)>;

struct FetchLimits {
  std::chrono::milliseconds timeout{10'000};  // the whole exchange
  std::uint64_t max_bytes = 1024 * 1024;      // the body of the answer
};

struct StreamLimits {
  std::chrono::milliseconds open{10'000};  // until the head of the answer
  // The longest wait for a byte of the body; nullopt: none (a stream of events, sse).
  std::optional<std::chrono::milliseconds> idle = std::chrono::milliseconds(120'000);
  std::uint64_t window = 256 * 1024;  // bytes handed out and not credited back, at most
};

struct StreamHandlers {
  // Once: the head of the answer, or why none came (then nothing else is called).
  std::function<void(Result<Head>)> head;
  // Bytes of the body, as they are read.
  std::function<void(std::string_view)> piece;
  // Once after the head: nullopt for a body read to its end, else why it broke.
  std::function<void(std::optional<std::string>)> end;
};

struct WebSocketLimits {
  std::chrono::milliseconds open{10'000};  // until the handshake is done
  std::size_t max_message = 1024 * 1024;   // a message received or sent, at most
  std::size_t max_waiting = 256 * 1024;    // bytes queued to be sent, at most
};

struct WebSocketHandlers {
  // Once: open, or why it could not be (then nothing else is called).
  std::function<void(Result<void>)> open;
  // A message received: text (UTF-8) or binary.
  std::function<void(bool text, std::string data)> message;
  // Once after `open`: its close code and reason; 1006 for a connection that broke, 1009 when a
  // message over the limit came (the socket is closed with 1009).
  std::function<void(int code, std::string reason)> closed;
};

class Client {
 public:
  // -32602 with the reason when the settings cannot be used (a proxy URL that is no
  // http://HOST:PORT, a CA file that cannot be read).
  static Result<std::shared_ptr<Client>> make(boost::asio::any_io_executor executor,
                                              Settings settings);
  virtual ~Client() = default;

  // A pool of its own for one owner (a plugin's run): the exchanges given it may reuse the
  // connections of each other, never those of another pool.
  virtual std::shared_ptr<Pool> pool() = 0;

  // `pool`: where the connection is taken from and given back to; null: a connection of its
  // own, closed at the end.
  // Errors given to the handlers: refused (-32003) when no address of the target may be used;
  // failed (-32004) for a failure on the way (no answer in time, an answer too large, a host out
  // of reach, a certificate not trusted), each with a sentence that names the host.
  using FetchDone = std::function<void(Result<Response>)>;
  virtual std::shared_ptr<Exchange> fetch(const std::shared_ptr<Pool>& pool,
                                          const policy::EgressTarget& target, Request request,
                                          FetchLimits limits, Note note, FetchDone done) = 0;
  virtual std::shared_ptr<StreamExchange> stream(const std::shared_ptr<Pool>& pool,
                                                 const policy::EgressTarget& target,
                                                 Request request, StreamLimits limits, Note note,
                                                 StreamHandlers handlers) = 0;
  // A WebSocket to `target` (judged with UrlUse::websocket): `headers` go with its handshake
  // (checked as check_request checks them; Host and the handshake's own are the client's).
  virtual std::shared_ptr<WebSocket> websocket(const policy::EgressTarget& target,
                                               std::vector<Header> headers, WebSocketLimits limits,
                                               Note note, WebSocketHandlers handlers) = 0;
};

// "10 s", "2.5 s", "1 MiB", "1536 bytes": how the sentences write a delay and a size.
std::string seconds_text(std::chrono::milliseconds ms);
std::string bytes_text(std::uint64_t bytes);

}  // namespace escouade::net
