#include <algorithm>
#include <array>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <charconv>
#include <memory>

#include "net/connection.hpp"
#include "net/request_wire.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::net {

namespace http = boost::beast::http;
using namespace detail;

namespace {

constexpr std::size_t kHeaderLimit = 64 * 1024;  // an answer's status line and headers
constexpr std::size_t kPieceBytes = 64 * 1024;   // the most one read of a stream hands out

bool is_token(std::string_view s) {
  static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kExtra.find(c) != std::string_view::npos;
  });
}

// The headers the client writes itself: a plugin's are dropped, as a browser's fetch drops them.
bool set_by_escouade(std::string_view lower_name) {
  static constexpr std::array<std::string_view, 8> kNames = {
      "host", "content-length", "transfer-encoding", "connection", "upgrade", "keep-alive",
      "te",   "trailer"};
  return std::find(kNames.begin(), kNames.end(), lower_name) != kNames.end() ||
         lower_name.starts_with("proxy-");
}

Head head_of(const http::response_header<>& h) {
  Head head;
  head.status = static_cast<int>(h.result_int());
  for (const auto& field : h) {
    std::string name = ascii_lower(field.name_string());
    auto same = std::find_if(head.headers.begin(), head.headers.end(),
                             [&](const Header& x) { return x.name == name; });
    if (same != head.headers.end()) {
      same->value += ", ";
      same->value += field.value();
    } else {
      head.headers.push_back(Header{std::move(name), std::string(field.value())});
    }
  }
  return head;
}

// How long a connection may wait in the pool after `answer`: kIdleFor, or less when the server
// said it keeps it less (Keep-Alive: timeout=N, less 1 s so as not to meet its close); zero when
// it may carry no other request: framing unknown (read to its end), not HTTP/1.1, `Connection:
// close`, or an interim answer (1xx) that another follows.
template <class Parser>
std::chrono::steady_clock::duration keep_for(const Parser& parser) {
  const auto& answer = parser.get();
  if (!parser.is_done() || !parser.keep_alive() || answer.version() != 11 ||
      answer.result_int() < 200)
    return {};
  std::chrono::steady_clock::duration keep = kIdleFor;
  const std::string said = ascii_lower(answer[http::field::keep_alive]);
  if (const auto at = said.find("timeout="); at != std::string::npos) {
    long seconds = 0;
    const char* from = said.data() + at + 8;
    if (std::from_chars(from, said.data() + said.size(), seconds).ec == std::errc())
      keep = std::min(keep, std::chrono::steady_clock::duration(std::chrono::seconds(seconds - 1)));
  }
  return keep;
}

// An exchange of one HTTP request and its answer.
class HttpJob : public Job {
 public:
  HttpJob(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Request request,
          Note note, const std::shared_ptr<Pool>& pool)
      : Job(std::move(client), target, std::move(note), pool), request_(std::move(request)) {}

 protected:
  // The request, as the plugin asked it with what the client sets, written to `s` (the same
  // one when it is sent again).
  template <class S>
  awaitable<error_code> send(S& s);
  Error not_sent(const error_code& ec) const {
    return failed(broke("the request to " + target_.host + " was not sent", ec));
  }
  // Sent again by itself over a new connection when a reused one was found closed (RFC 9110
  // 9.2.2: the idempotent methods; TRACE is never sent).
  bool idempotent() const {
    for (std::string_view m : {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
      if (request_.method == m) return true;
    return false;
  }
  // What to do of `ec`, met by the request or its answer: nullopt when it is no close of a
  // reused connection before any byte of the answer, or when the request goes again then
  // (send_again_ set); else the failure to give.
  std::optional<Error> closed_meanwhile_or(const error_code& ec, bool got_some) {
    if (!closed_meanwhile(ec, got_some)) return std::nullopt;
    if (idempotent()) {
      send_again_ = true;
      return std::nullopt;
    }
    return failed(target_.host +
                  " closed the connection kept from an earlier request before it answered; a " +
                  request_.method + " is not sent again on its own: it may have been received");
  }

  Request request_;
  std::optional<http::request<http::string_body>> built_;
  // Its bytes, written in one go (request_wire.hpp); empty: written by Beast's serializer.
  std::string wire_;

 private:
  void build();
};

template <class S>
awaitable<error_code> HttpJob::send(S& s) {
  error_code ec;
  if (!built_) {
    build();
    if (auto bytes = request_wire(*built_)) wire_ = std::move(*bytes);
  }
  if (wire_.empty())
    co_await http::async_write(s, *built_, asio::redirect_error(asio::use_awaitable, ec));
  else
    co_await asio::async_write(s, asio::buffer(wire_),
                               asio::redirect_error(asio::use_awaitable, ec));
  co_return ec;
}

void HttpJob::build() {
  http::request<http::string_body>& req = built_.emplace();
  const http::verb verb = http::string_to_verb(request_.method);
  if (verb == http::verb::unknown)
    req.method_string(request_.method);
  else
    req.method(verb);
  req.target(target_.path);
  req.version(11);
  req.set(http::field::host, host_header(target_));
  bool agent = false;
  for (const Header& h : request_.headers) {
    req.insert(h.name, h.value);
    agent = agent || ascii_lower(h.name) == "user-agent";
  }
  if (!agent) req.set(http::field::user_agent, kUserAgent);
  // HTTP/1.1 keeps the connection open unless told: only one taken from a pool stays so.
  if (!pooled()) req.set(http::field::connection, "close");
  if (request_.body) req.body() = std::move(*request_.body);
  req.prepare_payload();
}

class FetchJob final : public HttpJob, public Exchange {
 public:
  FetchJob(std::shared_ptr<ClientImpl> client, const std::shared_ptr<Pool>& pool,
           const policy::EgressTarget& target, Request request, FetchLimits limits, Note note,
           Client::FetchDone done)
      : HttpJob(std::move(client), target, std::move(request), std::move(note), pool),
        limits_(limits),
        done_(std::move(done)) {}

  void cancel() override { cancel_now(); }

  void start() {
    expire_after(limits_.timeout,
                 "no answer from " + target_.host + " within " + seconds_text(limits_.timeout));
  }

 private:
  awaitable<void> exchange(beast::ssl_stream<beast::tcp_stream>& s) override { return over(s); }
  awaitable<void> exchange(beast::tcp_stream& s) override { return over(s); }
  void fail(Error e) override { finish(std::move(e)); }

  template <class S>
  awaitable<void> over(S& s) {
    error_code ec = co_await send(s);
    if (cancelled_) co_return;
    if (ec) {
      // A write to a connection its server closed may fail at once (reset, broken pipe).
      auto stale = closed_meanwhile_or(ec, false);
      if (send_again_) co_return;
      co_return finish(stale ? std::move(*stale) : not_sent(ec));
    }
    http::response_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(limits_.max_bytes);
    if (request_.method == "HEAD") parser.skip(true);
    co_await http::async_read(s, buffer_, parser, asio::redirect_error(asio::use_awaitable, ec));
    if (cancelled_) co_return;
    if (ec) {
      auto stale = closed_meanwhile_or(ec, parser.got_some());
      if (send_again_) co_return;  // the deadline still runs: it holds for the second try too
      if (stale) {
        disarm();
        close();
        co_return finish(std::move(*stale));
      }
    }
    disarm();
    if (ec == http::error::body_limit)
      co_return finish(failed("the answer of " + target_.host + " is larger than " +
                              bytes_text(limits_.max_bytes) +
                              ", the most this plugin may receive (limits.netBytes)"));
    if (ec == http::error::header_limit)
      co_return finish(failed("the headers of the answer of " + target_.host + " pass " +
                              bytes_text(kHeaderLimit)));
    if (ec) co_return finish(failed(broke("the answer of " + target_.host + " broke", ec)));
    keep_or_close(keep_for(parser));
    auto message = parser.release();
    finish(Response{head_of(message.base()), std::move(message.body())});
  }

  void finish(Result<Response> r) {
    if (!done_ || cancelled_) return;
    auto done = std::move(done_);
    done_ = nullptr;
    done(std::move(r));
  }

  FetchLimits limits_;
  Client::FetchDone done_;
};

class StreamJob final : public HttpJob, public StreamExchange {
 public:
  StreamJob(std::shared_ptr<ClientImpl> client, const std::shared_ptr<Pool>& pool,
            const policy::EgressTarget& target, Request request, StreamLimits limits, Note note,
            StreamHandlers handlers)
      : HttpJob(std::move(client), target, std::move(request), std::move(note), pool),
        limits_(limits),
        handlers_(std::move(handlers)),
        piece_(new char[kPieceBytes]) {}

  void cancel() override { cancel_now(); }
  void credit(std::uint64_t bytes) override {
    outstanding_ -= std::min(bytes, outstanding_);
    wake_.cancel();
  }

  void start() {
    expire_after(limits_.open,
                 "no answer from " + target_.host + " within " + seconds_text(limits_.open));
  }

 private:
  awaitable<void> exchange(beast::ssl_stream<beast::tcp_stream>& s) override { return over(s); }
  awaitable<void> exchange(beast::tcp_stream& s) override { return over(s); }
  void fail(Error e) override {
    if (!cancelled_ && handlers_.head) handlers_.head(std::move(e));
  }

  template <class S>
  awaitable<void> over(S& s) {
    error_code ec = co_await send(s);
    if (cancelled_) co_return;
    if (ec) {
      auto stale = closed_meanwhile_or(ec, false);
      if (send_again_) co_return;
      co_return fail(stale ? std::move(*stale) : not_sent(ec));
    }
    http::response_parser<http::buffer_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(boost::none);  // a stream's size is its window's business
    if (request_.method == "HEAD") parser.skip(true);
    co_await http::async_read_header(s, buffer_, parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
    if (cancelled_) co_return;
    if (ec) {
      auto stale = closed_meanwhile_or(ec, parser.got_some());
      if (send_again_) co_return;
      if (stale) {
        disarm();
        close();
        co_return fail(std::move(*stale));
      }
    }
    disarm();
    if (ec == http::error::header_limit)
      co_return fail(failed("the headers of the answer of " + target_.host + " pass " +
                            bytes_text(kHeaderLimit)));
    if (ec) co_return fail(failed(broke("the answer of " + target_.host + " broke", ec)));
    Head head = head_of(parser.get().base());
    // What the buffer holds of the body already (a small answer often comes whole with its head,
    // in one TLS record) is parsed before the head is handed on: the head, that piece and, when
    // it was all, the end go out together. To a sandboxed plugin they were two writes, the head
    // alone first, its helper often woken for each (issue 32).
    std::size_t early = 0;
    error_code early_ec;
    if (!parser.is_done() && buffer_.size() > 0) {
      const std::size_t room =
          static_cast<std::size_t>(std::min<std::uint64_t>(limits_.window, kPieceBytes));
      parser.get().body().data = piece_.get();
      parser.get().body().size = room;
      // All of it at once, chunks included. Only here: a read of Beast's that parses eagerly
      // waits on the socket for the next chunk's header with a piece already parsed (an event
      // stream's first event never came).
      parser.eager(true);
      buffer_.consume(parser.put(buffer_.data(), early_ec));
      parser.eager(false);
      if (early_ec == http::error::need_more || early_ec == http::error::need_buffer) early_ec = {};
      early = room - parser.get().body().size;
    }
    handlers_.head(std::move(head));
    if (cancelled_ || !hand_on(early)) co_return;
    if (early_ec) co_return broke_off(early_ec);
    // Beast reads as much as its buffer has room for (512 bytes at least): without room made,
    // every read of the body was one of 512 bytes, a net/chunk each (issue 32: 65536 pieces for
    // 32 MiB). With it, a read takes what TLS gives at once (a record, 16 KiB).
    buffer_.reserve(kPieceBytes);
    while (!parser.is_done()) {
      while (outstanding_ >= limits_.window) {
        // The plugin holds its window: the socket is not read until it credits some back.
        wake_.expires_at(asio::steady_timer::time_point::max());
        co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (cancelled_) co_return;
      }
      const std::size_t room = static_cast<std::size_t>(
          std::min<std::uint64_t>(limits_.window - outstanding_, kPieceBytes));
      parser.get().body().data = piece_.get();
      parser.get().body().size = room;
      if (limits_.idle)
        expire_after(*limits_.idle,
                     "nothing came from " + target_.host + " for " + seconds_text(*limits_.idle));
      co_await http::async_read_some(s, buffer_, parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
      if (cancelled_) co_return;
      disarm();
      if (ec == http::error::need_buffer) ec = {};
      if (!hand_on(room - parser.get().body().size)) co_return;
      if (ec) co_return broke_off(ec);
    }
    keep_or_close(keep_for(parser));
    handlers_.end(std::nullopt);
  }

  // Hands on the first `got` bytes of the piece: false when that cancelled the stream.
  bool hand_on(std::size_t got) {
    if (got == 0) return true;
    outstanding_ += got;
    handlers_.piece(std::string_view(piece_.get(), got));
    return !cancelled_;
  }

  // The stream ends broken: its connection closes, its end says why.
  void broke_off(const error_code& ec) {
    close();
    handlers_.end(broke("the stream of " + target_.host + " broke", ec));
  }

  StreamLimits limits_;
  StreamHandlers handlers_;
  // Where a read puts the body: left uninitialized, since a read hands on only what it wrote
  // (a std::vector zeroed all 64 KiB for every stream, however small its body: more than the
  // first-level cache written over on the host's thread, a fetch at a time; issue 32).
  std::unique_ptr<char[]> piece_;
  std::uint64_t outstanding_ = 0;  // bytes handed out and not credited back
};

}  // namespace

namespace detail {

std::shared_ptr<Exchange> ClientImpl::fetch(const std::shared_ptr<Pool>& pool,
                                            const policy::EgressTarget& target, Request request,
                                            FetchLimits limits, Note note, FetchDone done) {
  auto job = std::make_shared<FetchJob>(shared_from_this(), pool, target, std::move(request),
                                        limits, std::move(note), std::move(done));
  job->start();
  start(job);
  return job;
}

std::shared_ptr<StreamExchange> ClientImpl::stream(const std::shared_ptr<Pool>& pool,
                                                   const policy::EgressTarget& target,
                                                   Request request, StreamLimits limits, Note note,
                                                   StreamHandlers handlers) {
  auto job = std::make_shared<StreamJob>(shared_from_this(), pool, target, std::move(request),
                                         limits, std::move(note), std::move(handlers));
  job->start();
  start(job);
  return job;
}

}  // namespace detail

Result<void> check_request(Request& request) {
  const std::string method = request.method;
  std::string upper = method;
  for (char& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!is_token(method))
    return invalid("params.method: " + method.substr(0, 40) + " is not an HTTP method");
  if (upper == "CONNECT" || upper == "TRACE" || upper == "TRACK")
    return invalid("params.method: " + upper + " is not sent");
  // The methods a browser writes in capitals whatever the case it was given.
  for (std::string_view known : {"DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"})
    if (upper == known) request.method = upper;
  std::vector<Header> kept;
  for (Header& h : request.headers) {
    if (!is_token(h.name))
      return invalid("params.headers: " + h.name.substr(0, 40) + " is not a header name");
    if (h.value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos)
      return invalid("params.headers." + h.name +
                     ": a header's value holds no line break and no NUL");
    if (!set_by_escouade(ascii_lower(h.name))) kept.push_back(std::move(h));
  }
  request.headers = std::move(kept);
  return {};
}

}  // namespace escouade::net
