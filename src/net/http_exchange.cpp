#include <algorithm>
#include <array>
#include <boost/beast/http.hpp>
#include <cctype>

#include "net/connection.hpp"
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

// An exchange of one HTTP request and its answer.
class HttpJob : public Job {
 public:
  HttpJob(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Request request,
          Note note)
      : Job(std::move(client), target, std::move(note)), request_(std::move(request)) {}

 protected:
  // The request, as the plugin asked it with what the client sets, written to `s`.
  template <class S>
  awaitable<Result<void>> send(S& s);

  Request request_;
};

template <class S>
awaitable<Result<void>> HttpJob::send(S& s) {
  http::request<http::string_body> req;
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
  req.set(http::field::connection, "close");
  if (request_.body) req.body() = std::move(*request_.body);
  req.prepare_payload();
  error_code ec;
  co_await http::async_write(s, req, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return failed(broke("the request to " + target_.host + " was not sent", ec));
  co_return Result<void>();
}

class FetchJob final : public HttpJob, public Exchange {
 public:
  FetchJob(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Request request,
           FetchLimits limits, Note note, Client::FetchDone done)
      : HttpJob(std::move(client), target, std::move(request), std::move(note)),
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
    auto sent = co_await send(s);
    if (cancelled_) co_return;
    if (!sent) co_return finish(sent.error());
    http::response_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(limits_.max_bytes);
    if (request_.method == "HEAD") parser.skip(true);
    error_code ec;
    co_await http::async_read(s, buffer_, parser, asio::redirect_error(asio::use_awaitable, ec));
    if (cancelled_) co_return;
    disarm();
    if (ec == http::error::body_limit)
      co_return finish(failed("the answer of " + target_.host + " is larger than " +
                              bytes_text(limits_.max_bytes) +
                              ", the most this plugin may receive (limits.netBytes)"));
    if (ec == http::error::header_limit)
      co_return finish(failed("the headers of the answer of " + target_.host + " pass " +
                              bytes_text(kHeaderLimit)));
    if (ec) co_return finish(failed(broke("the answer of " + target_.host + " broke", ec)));
    auto message = parser.release();
    close();
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
  StreamJob(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Request request,
            StreamLimits limits, Note note, StreamHandlers handlers)
      : HttpJob(std::move(client), target, std::move(request), std::move(note)),
        limits_(limits),
        handlers_(std::move(handlers)),
        piece_(kPieceBytes) {}

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
    auto sent = co_await send(s);
    if (cancelled_) co_return;
    if (!sent) co_return fail(sent.error());
    http::response_parser<http::buffer_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(boost::none);  // a stream's size is its window's business
    if (request_.method == "HEAD") parser.skip(true);
    error_code ec;
    co_await http::async_read_header(s, buffer_, parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
    if (cancelled_) co_return;
    disarm();
    if (ec == http::error::header_limit)
      co_return fail(failed("the headers of the answer of " + target_.host + " pass " +
                            bytes_text(kHeaderLimit)));
    if (ec) co_return fail(failed(broke("the answer of " + target_.host + " broke", ec)));
    handlers_.head(head_of(parser.get().base()));
    if (cancelled_) co_return;
    while (!parser.is_done()) {
      while (outstanding_ >= limits_.window) {
        // The plugin holds its window: the socket is not read until it credits some back.
        wake_.expires_at(asio::steady_timer::time_point::max());
        co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (cancelled_) co_return;
      }
      const std::size_t room = static_cast<std::size_t>(
          std::min<std::uint64_t>(limits_.window - outstanding_, piece_.size()));
      parser.get().body().data = piece_.data();
      parser.get().body().size = room;
      if (limits_.idle)
        expire_after(*limits_.idle,
                     "nothing came from " + target_.host + " for " + seconds_text(*limits_.idle));
      co_await http::async_read_some(s, buffer_, parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
      if (cancelled_) co_return;
      disarm();
      if (ec == http::error::need_buffer) ec = {};
      const std::size_t got = room - parser.get().body().size;
      if (got > 0) {
        outstanding_ += got;
        handlers_.piece(std::string_view(piece_.data(), got));
        if (cancelled_) co_return;
      }
      if (ec) {
        close();
        co_return handlers_.end(broke("the stream of " + target_.host + " broke", ec));
      }
    }
    close();
    handlers_.end(std::nullopt);
  }

  StreamLimits limits_;
  StreamHandlers handlers_;
  std::vector<char> piece_;
  std::uint64_t outstanding_ = 0;  // bytes handed out and not credited back
};

}  // namespace

namespace detail {

std::shared_ptr<Exchange> ClientImpl::fetch(const policy::EgressTarget& target, Request request,
                                            FetchLimits limits, Note note, FetchDone done) {
  auto job = std::make_shared<FetchJob>(shared_from_this(), target, std::move(request), limits,
                                        std::move(note), std::move(done));
  job->start();
  start(job);
  return job;
}

std::shared_ptr<StreamExchange> ClientImpl::stream(const policy::EgressTarget& target,
                                                   Request request, StreamLimits limits, Note note,
                                                   StreamHandlers handlers) {
  auto job = std::make_shared<StreamJob>(shared_from_this(), target, std::move(request), limits,
                                         std::move(note), std::move(handlers));
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
