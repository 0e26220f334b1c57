// What the network of sandboxed plugins is made of: the host's one client (Settings › Network)
// and, for each plugin, what its net/* may reach: its permissions.network, and what the app said
// {account} and local:shared mean for it (host/accounts/set, host/shared/set).

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <cctype>

#include "host/host.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::host {

using proto::ErrorCode;

namespace {

// "host:port" as the egress verdict compares it: a name in lower case, an IPv6 address in its
// canonical form in brackets, a port from 1 to 65535; nullopt for anything else.
std::optional<std::string> account_host(std::string_view typed) {
  const auto colon = typed.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = typed.substr(0, colon);
  const std::string_view port = typed.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const int n = std::stoi(std::string(port));
  if (n < 1 || n > 65535) return std::nullopt;
  std::string out;
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return std::nullopt;
    boost::system::error_code ec;
    const auto a =
        boost::asio::ip::make_address_v6(std::string(host.substr(1, host.size() - 2)), ec);
    if (ec) return std::nullopt;
    out = "[" + a.to_string() + "]";
  } else {
    for (char c : host) {
      const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '-' || l == '.'))
        return std::nullopt;
      out += l;
    }
  }
  return out + ":" + std::to_string(n);
}

}  // namespace

void Host::start_network() {
  auto client = net::Client::make(executor_, config_.network);
  if (!client) {
    services_.net.why_none = "the network settings cannot be used: " + client.error().message;
    return;
  }
  net_client_ = std::move(*client);
  services_.net.client = net_client_.get();
}

policy::EgressGrant Host::egress_of(const Plugin& p) {
  auto grant = policy::EgressGrant::of(p.manifest);
  grant.account_hosts = p.account_hosts;
  grant.shared_port = p.shared_port;
  return grant;
}

Result<void> Host::set_account_hosts(std::string_view id, const std::vector<std::string>& hosts) {
  Plugin* p = find(id);
  if (!p) return no_such_plugin(id);
  if (!egress_of(*p).account)
    return Error{ErrorCode::invalid_params,
                 std::string(id) + " does not declare {account} in permissions.network"};
  std::vector<std::string> checked;
  for (const auto& h : hosts) {
    auto one = account_host(h);
    if (!one)
      return Error{ErrorCode::invalid_params,
                   "params.hosts: " + h.substr(0, 100) + " is not host:port"};
    checked.push_back(std::move(*one));
  }
  p->account_hosts = checked;
  p->served->egress.account_hosts = std::move(checked);
  std::string said;
  for (const auto& h : p->account_hosts)
    said += (said.empty() ? "" : ", ") + h;
  p->journal->info("{account} in permissions.network now opens " +
                   (said.empty() ? std::string("no host") : said));
  return {};
}

Result<void> Host::set_shared_port(std::string_view id, std::optional<std::int64_t> port) {
  Plugin* p = find(id);
  if (!p) return no_such_plugin(id);
  if (!egress_of(*p).local_shared)
    return Error{ErrorCode::invalid_params,
                 std::string(id) + " does not declare local:shared in permissions.network"};
  if (port && (*port < 1 || *port > 65535))
    return Error{ErrorCode::invalid_params, "params.port: a port is from 1 to 65535, or null"};
  p->shared_port =
      port ? std::optional<std::uint16_t>(static_cast<std::uint16_t>(*port)) : std::nullopt;
  p->served->egress.shared_port = p->shared_port;
  p->journal->info(port ? "local:shared in permissions.network now opens http://127.0.0.1:" +
                              std::to_string(*port)
                        : std::string("local:shared in permissions.network opens nothing: its "
                                      "server ended"));
  return {};
}

}  // namespace escouade::host
