#include "net/connection.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>
#include <cctype>
#include <cerrno>

#include "protocol/gen/errors.hpp"

namespace escouade::net {

namespace http = boost::beast::http;
using namespace detail;

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

namespace detail {

Error failed(std::string why) {
  return make_error(proto::ErrorCode::failed, std::move(why));
}
Error refused(std::string why) {
  return make_error(proto::ErrorCode::refused, std::move(why));
}
Error invalid(std::string why) {
  return make_error(proto::ErrorCode::invalid_params, std::move(why));
}

std::string host_header(const policy::EgressTarget& t) {
  std::string h = t.literal && t.literal->is_v6() ? "[" + t.host + "]" : t.host;
  if (t.port != (t.tls ? 443 : 80)) h += ":" + std::to_string(t.port);
  return h;
}

namespace {

Result<std::optional<ProxyUrl>> read_proxy(const std::string& text) {
  if (text.empty()) return std::optional<ProxyUrl>();
  auto u = boost::urls::parse_absolute_uri(text);
  const std::string why = "the proxy " + text.substr(0, 200) + " is not http://HOST:PORT";
  if (!u || ascii_lower(u->scheme()) != "http" || !u->has_authority() || u->has_userinfo() ||
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

}  // namespace

namespace {

// Loads the certificates of `file` into `tls`; refused when it cannot be read or holds none
// (load_verify_file takes a file without a certificate without a word: they are counted).
Result<void> load_extra(asio::ssl::context& tls, const std::filesystem::path& file) {
  const std::string why = "the certificates of " + file.string() + " cannot be read: ";
  std::error_code fe;
  if (!std::filesystem::exists(file, fe)) return invalid(why + "there is no such file");
  if (!std::filesystem::is_regular_file(file, fe)) return invalid(why + "it is not a file");
  X509_STORE* store = SSL_CTX_get_cert_store(tls.native_handle());
  auto count = [store] {
    return X509_STORE_get0_objects(store) ? sk_X509_OBJECT_num(X509_STORE_get0_objects(store)) : 0;
  };
  const int before = count();
  error_code ec;
  tls.load_verify_file(file.string(), ec);
  if (ec || count() <= before) return invalid(why + "it holds no PEM certificate");
  return {};
}

}  // namespace

Result<void> ClientImpl::check_settings() {
  if (settings_.ca_file.empty()) return {};
  asio::ssl::context scratch(asio::ssl::context::tls_client);
  return load_extra(scratch, settings_.ca_file);
}

asio::ssl::context& ClientImpl::tls() {
  if (tls_) return *tls_;
  // OpenSSL, the system's store and the extra file (checked at make) are set up at the first
  // exchange: a host whose plugins never reach the network holds none of it (some MB).
  tls_.emplace(asio::ssl::context::tls_client);
  error_code ignored;
  tls_->set_default_verify_paths(ignored);
  if (!settings_.ca_file.empty()) (void)load_extra(*tls_, settings_.ca_file);
  tls_->set_verify_mode(asio::ssl::verify_peer);
  SSL_CTX_set_min_proto_version(tls_->native_handle(), TLS1_2_VERSION);
  return *tls_;
}

std::shared_ptr<Pool> ClientImpl::pool() {
  return std::make_shared<PoolImpl>(shared_from_this());
}

namespace {

// Still open, and nothing came from its server while it waited: no end of stream, no alert,
// no bytes (which no request asked for). A peek that does not wait, as curl checks a connection
// before it reuses it.
bool quiet(Conn& conn) {
  auto& socket = beast::get_lowest_layer(conn).socket();
  if (!socket.is_open()) return false;
  char byte;
  const auto n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace

PoolImpl::PoolImpl(std::shared_ptr<ClientImpl> client)
    : client_(std::move(client)), timer_(client_->executor()) {}

PoolImpl::~PoolImpl() {
  client_->idle_in_all -= idle_.size();
  // Each connection closes as its stream goes.
}

void PoolImpl::drop(std::size_t i) {
  idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
  --client_->idle_in_all;
}

std::unique_ptr<Conn> PoolImpl::take(const std::string& key) {
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t i = idle_.size(); i-- > 0;) {
    if (idle_[i].key != key) continue;
    auto conn = std::move(idle_[i].conn);
    const bool usable = idle_[i].until > now && quiet(*conn);
    drop(i);
    if (usable) return conn;
  }
  return nullptr;
}

void PoolImpl::give(const std::string& key, std::unique_ptr<Conn> conn,
                    std::chrono::steady_clock::duration keep_for) {
  if (client_->idle_in_all >= kIdleInAll) return;  // `conn` closes
  std::size_t same = 0;
  for (const Idle& x : idle_)
    same += x.key == key;
  if (same >= kIdlePerKey) {
    for (std::size_t i = 0; i < idle_.size(); ++i)
      if (idle_[i].key == key) {
        drop(i);
        break;
      }
  } else if (idle_.size() >= kIdlePerPool) {
    drop(0);
  }
  idle_.push_back(Idle{key, std::move(conn), std::chrono::steady_clock::now() + keep_for});
  ++client_->idle_in_all;
  arm();
}

void PoolImpl::arm() {
  if (idle_.empty()) return;
  auto next = idle_.front().until;
  for (const Idle& x : idle_)
    next = std::min(next, x.until);
  if (armed_ && *armed_ <= next) return;  // a wait as early or earlier is under way
  armed_ = next;
  timer_.expires_at(next);
  timer_.async_wait([self = weak_from_this()](error_code ec) {
    auto pool = self.lock();
    if (ec || !pool) return;
    pool->armed_.reset();
    pool->sweep();
  });
}

void PoolImpl::sweep() {
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t i = idle_.size(); i-- > 0;)
    if (idle_[i].until <= now) drop(i);
  arm();
}

Job::Job(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Note note,
         const std::shared_ptr<Pool>& pool)
    : client_(std::move(client)),
      target_(target),
      note_(std::move(note)),
      resolver_(client_->executor()),
      deadline_(client_->executor()),
      wake_(client_->executor()) {
  if (!note_) note_ = [](const std::string&) {};
  auto* mine = dynamic_cast<PoolImpl*>(pool.get());
  if (!mine || mine->client() != client_.get()) return;
  pool_ = std::static_pointer_cast<PoolImpl>(pool);
  // What a connection was opened for: the scheme, the name or address (also the TLS name it
  // verified), the port, the reach its addresses were judged by, and the route.
  pool_key_ = std::string(target_.tls ? "https " : "http ") + target_.host + " " +
              std::to_string(target_.port) + " " + std::to_string(static_cast<int>(target_.reach)) +
              (target_.literal ? " address" : " name") +
              (through_proxy() ? " via " + client_->proxy()->text : " direct");
}

bool Job::closed_meanwhile(const error_code& ec, bool got_some) const {
  if (!reused_ || got_some || buffer_.size() != 0 || !why_closed_.empty() || cancelled_)
    return false;
  namespace http = boost::beast::http;
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::connection_aborted ||
         ec == asio::error::broken_pipe || ec == asio::ssl::error::stream_truncated;
}

void Job::keep_or_close(std::chrono::steady_clock::duration keep_for) {
  auto pool = pool_.lock();
  if (pool && keep_for > std::chrono::steady_clock::duration::zero() && !cancelled_ &&
      why_closed_.empty() && tls_ && buffer_.size() == 0 &&
      (!target_.tls || SSL_pending(tls_->native_handle()) == 0)) {
    disarm();
    pool->give(pool_key_, std::move(tls_), keep_for);
    return;
  }
  close();
}

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
  (void)self;  // a coroutine's parameter lives in its frame: the job lives as long
  for (bool again = false; !cancelled_; again = true) {
    // A request sent again goes over a new connection: the others of the pool may be as stale.
    auto pool = again ? nullptr : pool_.lock();
    tls_ = pool ? pool->take(pool_key_) : nullptr;
    reused_ = tls_ != nullptr;
    if (!tls_) {
      tls_ = std::make_unique<Conn>(client_->executor(), client_->tls());
      auto opened = co_await connect();
      if (opened && !cancelled_ && through_proxy()) opened = co_await tunnel();
      if (opened && !cancelled_ && target_.tls) opened = co_await handshake();
      if (cancelled_) co_return;
      if (!opened) {
        disarm();
        fail(opened.error());
        co_return;
      }
    }
    send_again_ = false;
    if (target_.tls)
      co_await exchange(*tls_);
    else
      co_await exchange(tls_->next_layer());
    if (!send_again_ || cancelled_) co_return;
    error_code ignored;
    beast::get_lowest_layer(*tls_).socket().close(ignored);
    buffer_.clear();
  }
}

awaitable<Result<void>> Job::connect() {
  error_code ec;
  auto& tcp_stream = beast::get_lowest_layer(*tls_);
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
  auto& tcp_stream = beast::get_lowest_layer(*tls_);
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
  SSL* ssl = tls_->native_handle();
  // The name the certificate must hold (or the address written in the URL), and SNI for a name.
  if (target_.literal) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), target_.host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, target_.host.c_str());
    SSL_set1_host(ssl, target_.host.c_str());
  }
  error_code ec;
  co_await tls_->async_handshake(asio::ssl::stream_base::client,
                                 asio::redirect_error(asio::use_awaitable, ec));
  if (!ec) co_return Result<void>();
  if (!why_closed_.empty()) co_return failed(why_closed_);
  const long verified = SSL_get_verify_result(ssl);
  if (verified != X509_V_OK)
    co_return failed("the certificate of " + target_.host +
                     " is not trusted: " + X509_verify_cert_error_string(verified));
  co_return failed("the TLS handshake with " + target_.host + " failed: " + ec.message());
}

}  // namespace detail

Result<std::shared_ptr<Client>> Client::make(boost::asio::any_io_executor executor,
                                             Settings settings) {
  auto proxy = read_proxy(settings.proxy);
  if (!proxy) return proxy.error();
  auto client =
      std::make_shared<ClientImpl>(std::move(executor), std::move(settings), std::move(*proxy));
  if (auto checked = client->check_settings(); !checked) return checked.error();
  return std::shared_ptr<Client>(std::move(client));
}

}  // namespace escouade::net
