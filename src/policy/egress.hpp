#pragma once

// Where a sandboxed plugin's request may go (net/fetch, net/stream, ws/open): a pure verdict,
// first on the URL, then on each address its host resolved to (spec: "The network, through
// Escouade"). The URL is read here, by Boost.URL, never taken from the plugin's or the prelude's
// URL. Nothing here resolves or connects: src/net resolves once, asks judge_address() of every
// address, and connects only to those it allowed.
//
// The rules, in the order they are asked:
//   - https only (wss for a WebSocket); http (ws) only for an {account} host or local:shared;
//   - no user name nor password in the URL;
//   - the host is one of permissions.network or a subdomain of one, on a label boundary
//     (slack.com covers api.slack.com, not evilslack.com), or an {account} host:port the app set,
//     or 127.0.0.1 (localhost) on the local:shared port while its server lives;
//   - an IP address written in the URL, in any spelling (0x7f.1, 2130706433, 0177.0.0.1, [::1],
//     [::ffff:127.0.0.1]) is an address, and permissions.network names none: refused;
//   - every address the host resolves to is judged: never one of this machine or of the local
//     network (local_kind), IPv4 or IPv6, nor an IPv6 form carrying such an IPv4 (mapped,
//     compatible, NAT64, 6to4, Teredo), but for the hosts the {account} and local:shared rules
//     open.
// A refusal is proto::ErrorCode::refused (-32003) with the sentence the journal keeps; a URL that
// does not parse is invalid_params (-32602).

#include <boost/asio/ip/address.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace escouade::manifest {
struct Manifest;
}

namespace escouade::policy {

// What one plugin may reach: its manifest's permissions.network, and what the app told the host
// {account} and local:shared mean for it now (host/accounts/set, host/shared/set).
struct EgressGrant {
  std::string plugin_id;
  std::vector<std::string> hosts;            // names, lower case; each covers its subdomains
  bool account = false;                      // {account} is declared
  std::vector<std::string> account_hosts;    // "host:port" the user typed, lower case
  bool local_shared = false;                 // local:shared is declared
  std::optional<std::uint16_t> shared_port;  // its server's port, while it lives

  static EgressGrant of(const manifest::Manifest& m);
};

enum class UrlUse { fetch, websocket };

// A URL judged: where the connection goes, and which addresses it may use.
struct EgressTarget {
  // What to resolve (a name, lower case, without a trailing dot), or an IP address's text.
  std::string host;
  std::uint16_t port = 0;
  bool tls = true;
  // What the request line asks for: the URL's path ("/" when it has none) and its query, as
  // written (percent-encoded); never its fragment.
  std::string path = "/";
  // public_only: never an address of this machine or of the local network. account: any address
  // (the user's own host). shared: 127.0.0.1 alone.
  enum class Reach { public_only, account, shared };
  Reach reach = Reach::public_only;
  // The host is an IP address written in the URL (then no lookup: it is the one address).
  std::optional<boost::asio::ip::address> literal;
};

Result<EgressTarget> judge_url(const EgressGrant& grant, std::string_view url, UrlUse use);

// Why the connection to `target` may not use `address`, or nullopt.
std::optional<std::string> judge_address(const EgressTarget& target,
                                         const boost::asio::ip::address& address);

// What makes `address` one of this machine or of the local network ("loopback", "private",
// "link-local", "unspecified", "multicast", "broadcast", "shared (CGNAT)", "reserved", or the
// kind of the IPv4 an IPv6 form carries, "a mapped IPv4 loopback"...); nullopt for a public one.
// Documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32) are
// public here: the tests stand public hosts on them.
std::optional<std::string> local_kind(const boost::asio::ip::address& address);

// A host name read as the WHATWG URL standard reads one that ends in a number: each of its one
// to four dot-separated parts decimal, 0x hexadecimal or 0-led octal, the last filling the
// remaining bytes (0x7f.1 is 127.0.0.1, 2130706433 too). nullopt when its last label is no
// number (a name); an error when it is one but the whole is no IPv4 address (1.2.3.4.5, 256.1).
Result<std::optional<boost::asio::ip::address_v4>> ipv4_of_name(std::string_view name);

}  // namespace escouade::policy
