#include "net/client.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>
#include <cctype>
#include <exception>

#include "protocol/gen/errors.hpp"

namespace escouade::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using boost::system::error_code;
using tcp = asio::ip::tcp;

std::string seconds_text(std::chrono::milliseconds ms) {
  const auto n = ms.count();
  if (n % 1000 == 0) return std::to_string(n / 1000) + " s";
  if (n < 1000) return std::to_string(n) + " ms";
  std::string s = std::to_string(n / 1000) + "." + std::to_string(1000 + n % 1000).substr(1);
  while (s.back() == '0')
    s.pop_back();
  return s + " s";
}

std::string bytes_text(std::uint64_t bytes) {
  constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * 1024;
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes >= kKiB && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + " bytes";
}

namespace {

constexpr std::size_t kHeaderLimit = 64 * 1024;  // an answer's status line and headers
constexpr std::size_t kPieceBytes = 64 * 1024;   // the most one read of a stream hands out
constexpr const char* kUserAgent = "Escouade";   // when the plugin names none

Error failed(std::string why) {
  return make_error(proto::ErrorCode::failed, std::move(why));
}
Error refused(std::string why) {
  return make_error(proto::ErrorCode::refused, std::move(why));
}
Error invalid(std::string why) {
  return make_error(proto::ErrorCode::invalid_params, std::move(why));
}

bool is_token(std::string_view s) {
  static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kExtra.find(c) != std::string_view::npos;
  });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
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
    std::string name = lower(field.name_string());
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

// The Host header: the name (an IPv6 address in brackets), and the port when it is not the
// scheme's.
std::string host_header(const policy::EgressTarget& t) {
  std::string h = t.literal && t.literal->is_v6() ? "[" + t.host + "]" : t.host;
  if (t.port != (t.tls ? 443 : 80)) h += ":" + std::to_string(t.port);
  return h;
}

struct ProxyUrl {
  std::string text;  // as the settings wrote it, for the sentences
  std::string host;
  std::string port;
};

Result<std::optional<ProxyUrl>> read_proxy(const std::string& text) {
  if (text.empty()) return std::optional<ProxyUrl>();
  auto u = boost::urls::parse_absolute_uri(text);
  const std::string why = "the proxy " + text.substr(0, 200) + " is not http://HOST:PORT";
  if (!u || lower(u->scheme()) != "http" || !u->has_authority() || u->has_userinfo() ||
      u->host().empty() || u->port().empty() || (u->path() != "" && u->path() != "/") ||
      u->has_query())
    return invalid(why);
  unsigned long port = 0;
  for (char c : u->port()) {
    port = port * 10 + static_cast<unsigned long>(c - '0');
    if (c < '0' || c > '9' || port > 65535) return invalid(why);
  }
  if (port == 0) return invalid(why);
  std::string host(u->encoded_host_address());
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  return std::optional<ProxyUrl>(ProxyUrl{text, host, std::to_string(port)});
}

class ClientImpl;

// One exchange: its connection, its deadline, and what it tells its caller. Lives as long as
// its coroutine or its caller's handle. Thread: the client's executor.
class Job : public StreamExchange, public std::enable_shared_from_this<Job> {
 public:
  Job(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Request request,
      Note note);

  void cancel() override {
    if (cancelled_) return;
    cancelled_ = true;
    close();
  }
  void credit(std::uint64_t bytes) override {
    outstanding_ -= std::min(bytes, outstanding_);
    wake_.cancel();
  }

  // `self` is the coroutine's own hold on its job: a caller may drop its handle at once.
  awaitable<void> run(std::shared_ptr<Job> self);

 protected:
  // What the exchange does once its connection is open, over TLS or not.
  virtual awaitable<void> exchange(beast::ssl_stream<beast::tcp_stream>& s) = 0;
  virtual awaitable<void> exchange(beast::tcp_stream& s) = 0;
  // Why no answer came: called once, unless cancelled.
  virtual void fail(Error e) = 0;

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
  // The request, as the plugin asked it with what the client sets, written to `s`.
  template <class S>
  awaitable<Result<void>> send(S& s);

  std::shared_ptr<ClientImpl> client_;
  policy::EgressTarget target_;
  Request request_;
  Note note_;
  tcp::resolver resolver_;
  beast::ssl_stream<beast::tcp_stream> tls_;
  beast::flat_buffer buffer_;
  asio::steady_timer deadline_;
  asio::steady_timer wake_;  // a stream waiting for credit sleeps on it
  std::string why_closed_;
  bool cancelled_ = false;
  std::uint64_t outstanding_ = 0;

 private:
  bool through_proxy() const;
  awaitable<Result<void>> connect();
  awaitable<Result<void>> tunnel();
  awaitable<Result<void>> handshake();
};

class ClientImpl : public Client, public std::enable_shared_from_this<ClientImpl> {
 public:
  ClientImpl(asio::any_io_executor executor, Settings settings, std::optional<ProxyUrl> proxy)
      : executor_(std::move(executor)),
        settings_(std::move(settings)),
        proxy_(std::move(proxy)),
        tls_(asio::ssl::context::tls_client) {}

  Result<void> load_certificates() {
    error_code ec;
    tls_.set_default_verify_paths(ec);
    if (ec) return invalid("the system's certificates cannot be read: " + ec.message());
    if (!settings_.ca_file.empty()) {
      // load_verify_file takes a file with no certificate in it without a word: count them.
      X509_STORE* store = SSL_CTX_get_cert_store(tls_.native_handle());
      const int before =
          X509_STORE_get0_objects(store) ? sk_X509_OBJECT_num(X509_STORE_get0_objects(store)) : 0;
      tls_.load_verify_file(settings_.ca_file.string(), ec);
      const int after =
          X509_STORE_get0_objects(store) ? sk_X509_OBJECT_num(X509_STORE_get0_objects(store)) : 0;
      if (ec || after <= before)
        return invalid("the certificates of " + settings_.ca_file.string() + " cannot be read" +
                       (ec ? ": " + ec.message() : ": it holds no PEM certificate"));
    }
    tls_.set_verify_mode(asio::ssl::verify_peer);
    SSL_CTX_set_min_proto_version(tls_.native_handle(), TLS1_2_VERSION);
    return {};
  }

  std::shared_ptr<Exchange> fetch(const policy::EgressTarget& target, Request request,
                                  FetchLimits limits, Note note, FetchDone done) override;
  std::shared_ptr<StreamExchange> stream(const policy::EgressTarget& target, Request request,
                                         StreamLimits limits, Note note,
                                         StreamHandlers handlers) override;
  const Settings& settings() const override { return settings_; }

  const asio::any_io_executor& executor() const { return executor_; }
  const std::optional<ProxyUrl>& proxy() const { return proxy_; }
  asio::ssl::context& tls() { return tls_; }

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
  asio::ssl::context tls_;
};

Job::Job(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Request request,
         Note note)
    : client_(std::move(client)),
      target_(target),
      request_(std::move(request)),
      note_(std::move(note)),
      resolver_(client_->executor()),
      tls_(client_->executor(), client_->tls()),
      deadline_(client_->executor()),
      wake_(client_->executor()) {}

void Job::expire_after(std::chrono::milliseconds d, std::string why) {
  deadline_.expires_after(d);
  deadline_.async_wait([self = weak_from_this(), why = std::move(why)](error_code ec) {
    auto job = self.lock();
    if (ec || !job || job->cancelled_) return;
    job->why_closed_ = why;
    job->close();
  });
}

// local:shared is a server of this machine: never through the proxy.
bool Job::through_proxy() const {
  return client_->proxy() && target_.reach != policy::EgressTarget::Reach::shared;
}

awaitable<void> Job::run(std::shared_ptr<Job> self) {
  auto opened = co_await connect();
  if (opened && !cancelled_ && through_proxy()) opened = co_await tunnel();
  if (opened && !cancelled_ && target_.tls) opened = co_await handshake();
  if (cancelled_) co_return;
  if (!opened) {
    disarm();
    fail(opened.error());
    co_return;
  }
  if (target_.tls)
    co_await exchange(tls_);
  else
    co_await exchange(tls_.next_layer());
}

awaitable<Result<void>> Job::connect() {
  error_code ec;
  auto& tcp_stream = beast::get_lowest_layer(tls_);
  if (through_proxy()) {
    const ProxyUrl& proxy = *client_->proxy();
    // The user's proxy, wherever it is (often this machine): its addresses are not judged.
    auto found = co_await resolver_.async_resolve(proxy.host, proxy.port,
                                                  asio::redirect_error(asio::use_awaitable, ec));
    if (!ec && !cancelled_)
      co_await tcp_stream.async_connect(found, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return failed(broke("the proxy " + proxy.text + " cannot be reached", ec));
    note_("through the proxy " + proxy.text + ": only the name " + target_.host +
          " was judged, not the addresses it resolves to");
    co_return Result<void>();
  }
  std::vector<tcp::endpoint> judged;
  std::optional<std::string> first_refusal;
  auto judge = [&](const asio::ip::address& a) {
    if (auto why = policy::judge_address(target_, a)) {
      if (!first_refusal) first_refusal = *why;
      return;
    }
    judged.emplace_back(a, target_.port);
  };
  if (target_.literal) {
    judge(*target_.literal);
  } else {
    auto found = co_await resolver_.async_resolve(target_.host, std::to_string(target_.port),
                                                  asio::redirect_error(asio::use_awaitable, ec));
    if (ec)
      co_return failed(broke(target_.host + " cannot be reached: its name does not resolve", ec));
    for (const auto& entry : found)
      judge(entry.endpoint().address());
  }
  if (judged.empty()) {
    if (first_refusal) co_return refused(*first_refusal);
    co_return failed(target_.host + " cannot be reached: its name resolves to no address");
  }
  // Only the addresses judged are used; the others are said once, not tried.
  if (first_refusal) note_(*first_refusal + ": that address is set aside, not used");
  co_await tcp_stream.async_connect(judged, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return failed(broke(target_.host + " cannot be reached", ec));
  co_return Result<void>();
}

awaitable<Result<void>> Job::tunnel() {
  const ProxyUrl& proxy = *client_->proxy();
  const std::string authority = host_header(target_).find(':') == std::string::npos
                                    ? host_header(target_) + ":" + std::to_string(target_.port)
                                    : host_header(target_);
  http::request<http::empty_body> ask{http::verb::connect, authority, 11};
  ask.set(http::field::host, authority);
  ask.set(http::field::user_agent, kUserAgent);
  error_code ec;
  auto& tcp_stream = beast::get_lowest_layer(tls_);
  co_await http::async_write(tcp_stream, ask, asio::redirect_error(asio::use_awaitable, ec));
  http::response_parser<http::empty_body> answer;
  answer.skip(true);  // an answer to CONNECT has no body: what follows is the tunnel
  if (!ec)
    co_await http::async_read(tcp_stream, buffer_, answer,
                              asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return failed(broke("the proxy " + proxy.text + " broke the tunnel", ec));
  if (answer.get().result_int() / 100 != 2)
    co_return failed("the proxy " + proxy.text + " answered " +
                     std::to_string(answer.get().result_int()) + " to CONNECT " + authority);
  if (buffer_.size() != 0)
    co_return failed("the proxy " + proxy.text + " sent bytes before the tunnel opened");
  co_return Result<void>();
}

awaitable<Result<void>> Job::handshake() {
  SSL* ssl = tls_.native_handle();
  // The name the certificate must hold (or the address written in the URL), and SNI for a name.
  if (target_.literal) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), target_.host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, target_.host.c_str());
    SSL_set1_host(ssl, target_.host.c_str());
  }
  error_code ec;
  co_await tls_.async_handshake(asio::ssl::stream_base::client,
                                asio::redirect_error(asio::use_awaitable, ec));
  if (!ec) co_return Result<void>();
  if (!why_closed_.empty()) co_return failed(why_closed_);
  const long verified = SSL_get_verify_result(ssl);
  if (verified != X509_V_OK)
    co_return failed("the certificate of " + target_.host +
                     " is not trusted: " + X509_verify_cert_error_string(verified));
  co_return failed("the TLS handshake with " + target_.host + " failed: " + ec.message());
}

template <class S>
awaitable<Result<void>> Job::send(S& s) {
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
    agent = agent || lower(h.name) == "user-agent";
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

class FetchJob final : public Job {
 public:
  FetchJob(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Request request,
           FetchLimits limits, Note note, Client::FetchDone done)
      : Job(std::move(client), target, std::move(request), std::move(note)),
        limits_(limits),
        done_(std::move(done)) {}

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

class StreamJob final : public Job {
 public:
  StreamJob(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Request request,
            StreamLimits limits, Note note, StreamHandlers handlers)
      : Job(std::move(client), target, std::move(request), std::move(note)),
        limits_(limits),
        handlers_(std::move(handlers)),
        piece_(kPieceBytes) {}

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
};

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

}  // namespace

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
    if (!set_by_escouade(lower(h.name))) kept.push_back(std::move(h));
  }
  request.headers = std::move(kept);
  return {};
}

Result<std::shared_ptr<Client>> Client::make(boost::asio::any_io_executor executor,
                                             Settings settings) {
  auto proxy = read_proxy(settings.proxy);
  if (!proxy) return proxy.error();
  auto client =
      std::make_shared<ClientImpl>(std::move(executor), std::move(settings), std::move(*proxy));
  if (auto loaded = client->load_certificates(); !loaded) return loaded.error();
  return std::shared_ptr<Client>(std::move(client));
}

}  // namespace escouade::net
