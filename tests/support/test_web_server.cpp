#include "support/test_web_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "support/thread_listener.hpp"

namespace escouade::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct TestWebServer::State {
  std::optional<asio::ssl::context> tls;
  mutable std::mutex mutex;
  std::vector<SeenRequest> seen;
  std::atomic<std::uint64_t> streamed{0};
  std::atomic<bool> keep_alive{false};
  std::atomic<int> ended{0};
  std::optional<ThreadListener> listener;  // last: stopped before the rest goes

  void serve(tcp::socket socket);
  // Answers `req`; returns whether the connection stays open for another request.
  template <class S>
  bool answer(S& stream, const http::request<http::string_body>& req);
  template <class S>
  void websocket(S& stream, const http::request<http::string_body>& req);
  std::atomic<std::uint64_t> ws_received{0};
};

namespace {

// The number of `key=N` in the target's query; `fallback` without one.
std::uint64_t query_number(const std::string& target, const std::string& key,
                           std::uint64_t fallback) {
  const auto q = target.find('?');
  if (q == std::string::npos) return fallback;
  const std::string query = "&" + target.substr(q + 1);
  const auto at = query.find("&" + key + "=");
  if (at == std::string::npos) return fallback;
  return std::strtoull(query.c_str() + at + key.size() + 2, nullptr, 10);
}

std::string path_of(const std::string& target) {
  return target.substr(0, target.find('?'));
}

template <class S>
void write_chunked(S& stream, http::response<http::empty_body>& head,
                   const std::vector<std::string>& pieces, std::atomic<std::uint64_t>* count) {
  beast::error_code ec;
  head.chunked(true);
  http::response_serializer<http::empty_body> sr{head};
  http::write_header(stream, sr, ec);
  for (const auto& p : pieces) {
    if (ec) return;
    asio::write(stream, http::make_chunk(asio::buffer(p)), ec);
    if (!ec && count) *count += p.size();
  }
  if (!ec) asio::write(stream, http::make_chunk_last(), ec);
}

}  // namespace

template <class S>
bool TestWebServer::State::answer(S& stream, const http::request<http::string_body>& req) {
  const std::string target(req.target());
  const std::string path = path_of(target);
  beast::error_code ec;
  // Whether this answer keeps its connection (keep_alive(true), and the client did not ask to
  // close it); /sse, /silent and /ws never do.
  bool keep = keep_alive && req.keep_alive() && query_number(target, "close", 0) == 0 &&
              path != "/sse" && path != "/silent" && path != "/ws";
  const std::uint64_t keep_seconds = query_number(target, "keep", 0);
  auto framing = [&](auto& res) {
    if (!keep)
      res.set(http::field::connection, "close");
    else if (keep_seconds > 0)
      res.set(http::field::keep_alive, "timeout=" + std::to_string(keep_seconds));
  };
  auto reply = [&](http::status status, std::string body, const char* type = "text/plain") {
    http::response<http::string_body> res{status, 11};
    res.set(http::field::content_type, type);
    framing(res);
    res.body() = std::move(body);
    res.prepare_payload();
    if (req.method() == http::verb::head) {
      http::response_serializer<http::string_body> sr{res};  // the head alone
      http::write_header(stream, sr, ec);
    } else {
      http::write(stream, res, ec);
    }
  };
  http::response<http::empty_body> head{http::status::ok, 11};
  framing(head);
  if (path == "/ws" && beast::websocket::is_upgrade(req)) {
    websocket(stream, req);
  } else if (path == "/api/chat.postMessage") {
    // Slack's Web API as its clients see it: 200 and {"ok":false,"error":...} for a refusal.
    const bool authed = req[http::field::authorization].starts_with("Bearer xoxb-");
    reply(http::status::ok,
          authed ? R"({"ok":true,"channel":"C1","ts":"1700000000.000100"})"
                 : R"({"ok":false,"error":"not_authed"})",
          "application/json; charset=utf-8");
  } else if (path == "/hello") {
    reply(http::status::ok, "hello from " + std::string(req[http::field::host]));
  } else if (path == "/echo") {
    boost::json::object headers;
    for (const auto& f : req)
      headers[std::string(f.name_string())] = std::string(f.value());
    reply(http::status::ok,
          boost::json::serialize(boost::json::object{{"method", std::string(req.method_string())},
                                                     {"target", target},
                                                     {"host", std::string(req[http::field::host])},
                                                     {"headers", headers},
                                                     {"body", req.body()}}),
          "application/json");
  } else if (path == "/status") {
    http::response<http::string_body> res{
        static_cast<http::status>(query_number(target, "code", 200)), 11};
    res.set(http::field::location, "https://other.example.org/");
    framing(res);
    res.body() = "moved";
    res.prepare_payload();
    http::write(stream, res, ec);
  } else if (path == "/slow") {
    std::this_thread::sleep_for(std::chrono::milliseconds(query_number(target, "ms", 100)));
    reply(http::status::ok, "slow");
  } else if (path == "/big") {
    reply(http::status::ok, std::string(query_number(target, "bytes", 0), 'x'));
  } else if (path == "/binary") {
    reply(http::status::ok, std::string("\xff\xfe\x00\x01\x80", 5), "application/octet-stream");
  } else if (path == "/chunked") {
    write_chunked(stream, head, {"caf", "\xc3", "\xa9 au lait"}, nullptr);
  } else if (path == "/stream") {
    const std::uint64_t total = query_number(target, "bytes", 0);
    std::vector<std::string> pieces;
    for (std::uint64_t done = 0; done < total; done += 16 * 1024)
      pieces.emplace_back(std::min<std::uint64_t>(16 * 1024, total - done), 'y');
    write_chunked(stream, head, pieces, &streamed);
  } else if (path == "/sse" || path == "/silent") {
    head.set(http::field::content_type, path == "/sse" ? "text/event-stream" : "text/plain");
    head.chunked(true);
    http::response_serializer<http::empty_body> sr{head};
    http::write_header(stream, sr, ec);
    if (path == "/sse") {
      asio::write(stream, http::make_chunk(asio::buffer(std::string("data: one\n\n"))), ec);
      asio::write(stream, http::make_chunk(asio::buffer(std::string("data: two\n\n"))), ec);
    }
    // Silence, until the client closes (the read fails) or the server stops.
    char byte;
    beast::get_lowest_layer(stream).read_some(asio::buffer(&byte, 1), ec);
  } else {
    reply(http::status::not_found, "no route " + path);
  }
  return keep && !ec;
}

template <class S>
void TestWebServer::State::websocket(S& stream, const http::request<http::string_body>& req) {
  namespace ws = beast::websocket;
  ws::stream<S&> socket(stream);
  socket.read_message_max(8 * 1024 * 1024);
  beast::error_code ec;
  socket.accept(req, ec);
  for (; !ec;) {
    beast::flat_buffer in;
    socket.read(in, ec);
    if (ec) return;
    const std::string m = beast::buffers_to_string(in.data());
    if (!socket.got_text()) {
      socket.binary(true);
      socket.write(in.data(), ec);
    } else if (m == "close") {
      socket.close(ws::close_reason(ws::close_code::going_away, "bye"), ec);
      beast::flat_buffer rest;
      socket.read(rest, ec);  // the client's answer to the close
      return;
    } else if (m == "drop") {
      beast::get_lowest_layer(stream).shutdown(tcp::socket::shutdown_both, ec);
      return;
    } else if (m.rfind("big:", 0) == 0) {
      socket.text(true);
      socket.write(asio::buffer(std::string(std::stoull(m.substr(4)), 'z')), ec);
    } else {
      socket.text(true);
      socket.write(asio::buffer("echo:" + m), ec);
      ws_received += m.size();
    }
  }
}

void TestWebServer::State::serve(tcp::socket socket) {
  beast::flat_buffer buffer;
  // Reads a request and records it; false when none came.
  auto read = [&](auto& stream, http::request<http::string_body>& req) {
    beast::error_code ec;
    http::read(stream, buffer, req, ec);
    if (ec) return false;
    SeenRequest seen_request{std::string(req.method_string()),
                             std::string(req.target()),
                             std::string(req[http::field::host]),
                             {},
                             req.body()};
    for (const auto& f : req) {
      std::string name(f.name_string());
      for (char& c : name)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      seen_request.headers[name] = std::string(f.value());
    }
    {
      std::lock_guard lock(mutex);
      seen.push_back(std::move(seen_request));
    }
    return true;
  };
  auto one = [&](auto& stream) {
    for (;;) {
      http::request<http::string_body> req;
      if (!read(stream, req)) return;
      if (!answer(stream, req)) return;
      const std::string target(req.target());
      const auto then = target.find("then=");
      if (then != std::string::npos && target.compare(then + 5, 5, "close") == 0) return;
      if (then != std::string::npos && target.compare(then + 5, 4, "drop") == 0) {
        http::request<http::string_body> next;
        read(stream, next);
        return;
      }
    }
  };
  if (tls) {
    beast::ssl_stream<tcp::socket> stream(std::move(socket), *tls);
    beast::error_code ec;
    stream.handshake(asio::ssl::stream_base::server, ec);
    if (!ec) one(stream);
    beast::get_lowest_layer(stream).shutdown(tcp::socket::shutdown_both, ec);
  } else {
    one(socket);
    beast::error_code ec;
    socket.shutdown(tcp::socket::shutdown_both, ec);
  }
  ++ended;
}

TestWebServer::TestWebServer(const std::string& address, std::uint16_t port,
                             std::optional<TestCertificate> tls)
    : state_(std::make_shared<State>()) {
  if (tls) {
    state_->tls.emplace(asio::ssl::context::tls_server);
    state_->tls->use_certificate_chain(asio::buffer(tls->cert_pem));
    state_->tls->use_private_key(asio::buffer(tls->key_pem), asio::ssl::context::pem);
  }
  state_->listener.emplace(address, port,
                           [s = state_.get()](tcp::socket socket) { s->serve(std::move(socket)); });
}

TestWebServer::~TestWebServer() {
  state_->listener.reset();
}

std::uint16_t TestWebServer::port() const {
  return state_->listener->port();
}

std::vector<SeenRequest> TestWebServer::seen() const {
  std::lock_guard lock(state_->mutex);
  return state_->seen;
}

void TestWebServer::forget_seen() {
  std::lock_guard lock(state_->mutex);
  state_->seen.clear();
}

int TestWebServer::connections() const {
  return state_->listener->connections();
}

int TestWebServer::ended() const {
  return state_->ended;
}

void TestWebServer::keep_alive(bool on) {
  state_->keep_alive = on;
}

std::uint64_t TestWebServer::streamed() const {
  return state_->streamed;
}

}  // namespace escouade::test
