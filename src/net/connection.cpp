#include "net/connection.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>
#include <cctype>

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

Job::Job(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target, Note note)
    : client_(std::move(client)),
      target_(target),
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
  (void)self;  // a coroutine's parameter lives in its frame: the job lives as long
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
