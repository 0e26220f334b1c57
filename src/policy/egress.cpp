#include "policy/egress.hpp"

#include <algorithm>
#include <array>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <cctype>

#include "base/ascii.hpp"
#include "manifest/manifest.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::policy {

namespace {

using boost::asio::ip::address;
using boost::asio::ip::address_v4;
using boost::asio::ip::address_v6;

Error refused(std::string sentence) {
  return make_error(proto::ErrorCode::refused, std::move(sentence));
}
Error malformed(std::string sentence) {
  return make_error(proto::ErrorCode::invalid_params, std::move(sentence));
}

// --- IPv4 and IPv6 ranges ---------------------------------------------------------------------

struct V4Range {
  std::uint32_t base;
  int bits;
  const char* kind;
};

constexpr std::uint32_t v4(int a, int b, int c, int d) {
  return (static_cast<std::uint32_t>(a) << 24) | (static_cast<std::uint32_t>(b) << 16) |
         (static_cast<std::uint32_t>(c) << 8) | static_cast<std::uint32_t>(d);
}

// IANA's special-purpose registry, less what stands for the world (the documentation ranges)
// and what is a network's own here anyway. The first that holds names the address.
constexpr std::array<V4Range, 14> kLocalV4 = {{
    {v4(0, 0, 0, 0), 32, "unspecified"},
    {v4(0, 0, 0, 0), 8, "reserved (this network)"},
    {v4(10, 0, 0, 0), 8, "private"},
    {v4(100, 64, 0, 0), 10, "shared (CGNAT)"},
    {v4(127, 0, 0, 0), 8, "loopback"},
    {v4(169, 254, 0, 0), 16, "link-local"},
    {v4(172, 16, 0, 0), 12, "private"},
    {v4(192, 0, 0, 0), 24, "reserved (protocol assignments)"},
    {v4(192, 88, 99, 0), 24, "reserved (6to4 relays)"},
    {v4(192, 168, 0, 0), 16, "private"},
    {v4(198, 18, 0, 0), 15, "reserved (benchmarking)"},
    {v4(224, 0, 0, 0), 4, "multicast"},
    {v4(255, 255, 255, 255), 32, "broadcast"},
    {v4(240, 0, 0, 0), 4, "reserved"},
}};

std::optional<std::string> v4_kind(std::uint32_t a) {
  for (const auto& r : kLocalV4) {
    const std::uint32_t mask = r.bits == 0 ? 0 : ~std::uint32_t{0} << (32 - r.bits);
    if ((a & mask) == (r.base & mask)) return std::string(r.kind);
  }
  return std::nullopt;
}

std::uint32_t v4_at(const address_v6::bytes_type& b, std::size_t at) {
  return (static_cast<std::uint32_t>(b[at]) << 24) | (static_cast<std::uint32_t>(b[at + 1]) << 16) |
         (static_cast<std::uint32_t>(b[at + 2]) << 8) | static_cast<std::uint32_t>(b[at + 3]);
}

bool zeros(const address_v6::bytes_type& b, std::size_t from, std::size_t to) {
  return std::all_of(b.begin() + static_cast<std::ptrdiff_t>(from),
                     b.begin() + static_cast<std::ptrdiff_t>(to), [](auto x) { return x == 0; });
}

// The IPv4 an IPv6 form carries, judged: "a <form> IPv4 <kind> (<v4>)".
std::optional<std::string> carried(std::string_view form, std::uint32_t a) {
  auto kind = v4_kind(a);
  if (!kind) return std::nullopt;
  return "an IPv4 " + *kind + " address carried by a " + std::string(form) + " IPv6 address (" +
         address_v4(a).to_string() + ")";
}

std::optional<std::string> v6_kind(const address_v6& address) {
  const auto b = address.to_bytes();
  if (zeros(b, 0, 16)) return std::string("unspecified");
  if (zeros(b, 0, 15) && b[15] == 1) return std::string("loopback");
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, deprecated)
  if (zeros(b, 0, 10) && b[10] == 0xff && b[11] == 0xff) return carried("mapped", v4_at(b, 12));
  if (zeros(b, 0, 12)) return carried("compatible", v4_at(b, 12));
  // 64:ff9b::/96, the well-known NAT64 prefix; 64:ff9b:1::/48, local-use NAT64
  if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) {
    if (zeros(b, 4, 12)) return carried("NAT64", v4_at(b, 12));
    if (b[4] == 0 && b[5] == 1) return std::string("reserved (local-use NAT64)");
  }
  if (b[0] == 0) return std::string("reserved");  // the rest of ::/8
  if (b[0] == 0x01 && b[1] == 0 && zeros(b, 2, 8)) return std::string("reserved (discard-only)");
  // 2001:0::/32, Teredo: its server at bytes 4-7, its client's address inverted at 12-15
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) {
    if (auto server = carried("Teredo", v4_at(b, 4))) return server;
    return carried("Teredo", ~v4_at(b, 12));
  }
  // 2002::/16, 6to4: the IPv4 at bytes 2-5
  if (b[0] == 0x20 && b[1] == 0x02) return carried("6to4", v4_at(b, 2));
  if ((b[0] & 0xfe) == 0xfc) return std::string("private (unique local)");
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return std::string("link-local");
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return std::string("private (site-local)");
  if (b[0] == 0xff) return std::string("multicast");
  return std::nullopt;
}

// --- host names --------------------------------------------------------------------------------

// Each label of a lower-cased name, between its dots, has 1 to 63 characters (RFC 1035).
bool labels_are_whole(std::string_view host) {
  std::size_t from = 0;
  for (;;) {
    const std::size_t dot = host.find('.', from);
    const std::size_t size = (dot == std::string_view::npos ? host.size() : dot) - from;
    if (size == 0 || size > 63) return false;
    if (dot == std::string_view::npos) return true;
    from = dot + 1;
  }
}

// One part of a WHATWG IPv4 host: decimal, 0x hexadecimal, 0-led octal; nullopt when it is
// none of them. Parts longer than a number can be are refused before they overflow.
std::optional<std::uint64_t> ipv4_number(std::string_view part) {
  int radix = 10;
  if (part.size() >= 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
    radix = 16;
    part.remove_prefix(2);
  } else if (part.size() >= 2 && part[0] == '0') {
    radix = 8;
    part.remove_prefix(1);
  }
  if (part.empty()) return 0;
  if (part.size() > 32) return std::nullopt;
  std::uint64_t n = 0;
  for (char c : part) {
    int digit = -1;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (radix == 16 && c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (radix == 16 && c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    if (digit < 0 || digit >= radix) return std::nullopt;
    n = n * static_cast<std::uint64_t>(radix) + static_cast<std::uint64_t>(digit);
    if (n > 0xffffffffull) return std::uint64_t{0x100000000ull};  // too large, whatever follows
  }
  return n;
}

std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const auto dot = s.find('.', start);
    parts.push_back(s.substr(start, dot == std::string_view::npos ? s.npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

bool ends_in_a_number(const std::vector<std::string_view>& parts) {
  const std::string_view last = parts.back();
  if (!last.empty() &&
      std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return true;
  if (last.size() >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') &&
      std::all_of(last.begin() + 2, last.end(),
                  [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }))
    return true;
  return false;
}

bool covers(std::string_view granted, std::string_view host) {
  if (host == granted) return true;
  return host.size() > granted.size() && host.ends_with(granted) &&
         host[host.size() - granted.size() - 1] == '.';
}

}  // namespace

EgressGrant EgressGrant::of(const manifest::Manifest& m) {
  EgressGrant g;
  g.plugin_id = m.id;
  g.hosts = m.permissions.network.hosts;
  g.account = m.permissions.network.account;
  g.local_shared = m.permissions.network.local_shared;
  return g;
}

Result<std::optional<address_v4>> ipv4_of_name(std::string_view name) {
  auto parts = split_dots(name);
  if (parts.size() > 1 && parts.back().empty()) parts.pop_back();  // a trailing dot
  if (!ends_in_a_number(parts)) return std::optional<address_v4>();
  const std::string shown(name.substr(0, 80));
  const auto not_an_address = malformed(shown + " is neither a host name nor an IPv4 address");
  if (parts.size() > 4) return not_an_address;
  std::vector<std::uint64_t> numbers;
  for (const auto part : parts) {
    if (part.empty()) return not_an_address;
    auto n = ipv4_number(part);
    if (!n) return not_an_address;
    numbers.push_back(*n);
  }
  for (std::size_t i = 0; i + 1 < numbers.size(); ++i)
    if (numbers[i] > 255) return not_an_address;
  const std::size_t rest = 5 - numbers.size();  // bytes the last part fills
  if (numbers.back() >= (std::uint64_t{1} << (8 * rest))) return not_an_address;
  std::uint64_t value = numbers.back();
  for (std::size_t i = 0; i + 1 < numbers.size(); ++i)
    value += numbers[i] << (8 * (3 - i));
  return std::optional<address_v4>(address_v4(static_cast<std::uint32_t>(value)));
}

std::optional<std::string> local_kind(const address& a) {
  if (a.is_v4()) return v4_kind(a.to_v4().to_uint());
  return v6_kind(a.to_v6());
}

Result<EgressTarget> judge_url(const EgressGrant& grant, std::string_view url, UrlUse use) {
  const std::string shown_url(url.substr(0, 200));
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) return malformed(shown_url + " is not an absolute URL");
  const boost::urls::url_view& u = *parsed;
  // After an authority the path is empty or begins with '/'. Boost.URL 1.81 reads the host of
  // https://1.2.3.4.5/ as the IPv4 1.2.3.4 and the rest as a path ".5/": such a URL is refused
  // here rather than sent where it does not say.
  if (!u.has_authority() || (!u.encoded_path().empty() && u.encoded_path().front() != '/'))
    return malformed(shown_url + " is not an absolute URL with a host");
  const std::string scheme = ascii_lower(u.scheme());
  const bool ws = use == UrlUse::websocket;
  const std::string secure = ws ? "wss" : "https";
  const std::string plain = ws ? "ws" : "http";
  if (scheme != secure && scheme != plain)
    return refused(shown_url + ": only " + secure + " is sent" + (ws ? " for a WebSocket" : "") +
                   ", not " + scheme);
  // ws/open: "wss only", whatever the host (the schema's ws/open); http is for net/fetch's
  // {account} and local:shared hosts alone.
  if (ws && scheme == plain)
    return refused(shown_url + ": only wss is sent for a WebSocket, not ws");
  if (u.has_userinfo())
    return refused(shown_url +
                   ": a URL with a user name or a password is refused; send credentials in a "
                   "header");

  EgressTarget t;
  t.tls = scheme == secure;
  if (!u.encoded_path().empty()) t.path = std::string(u.encoded_path());
  if (u.has_query()) t.path += "?" + std::string(u.encoded_query());
  std::string host;  // as the sentences name it
  switch (u.host_type()) {
    case boost::urls::host_type::ipv4:
      t.literal = address_v4(u.host_ipv4_address().to_uint());
      host = t.literal->to_string();
      break;
    case boost::urls::host_type::ipv6: {
      const auto bytes = u.host_ipv6_address().to_bytes();
      address_v6::bytes_type b;
      std::copy(bytes.begin(), bytes.end(), b.begin());
      t.literal = address_v6(b);
      host = "[" + t.literal->to_string() + "]";
      break;
    }
    case boost::urls::host_type::name: {
      host = ascii_lower(u.host());
      if (host.size() > 1 && host.back() == '.') host.pop_back();
      if (host.empty() || host.size() > 253 || !std::all_of(host.begin(), host.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
          }))
        return malformed(std::string(u.encoded_host().substr(0, 80)) +
                         " is not a host name (a-z, 0-9, '-' and dots; an international name "
                         "goes as its xn-- form)");
      // ".slack.com" or "a..slack.com" passed the characters and ended with slack.com: an empty
      // label is no name a resolver is given.
      if (!labels_are_whole(host))
        return malformed(std::string(u.encoded_host().substr(0, 80)) +
                         " is not a host name: each part between its dots has 1 to 63 characters");
      auto v4 = ipv4_of_name(host);
      if (!v4) return v4.error();
      if (*v4) {
        t.literal = **v4;
        host = t.literal->to_string();  // the sentences name the address, whatever its spelling
      }
      break;
    }
    default:
      return malformed(shown_url + " has no host Escouade can reach");
  }
  // The port as written (Boost.URL's port_number() wraps 99999 to 34463): digits, 1 to 65535;
  // none, or empty, is the scheme's.
  t.port = t.tls ? 443 : 80;
  if (const std::string_view port = u.port(); !port.empty()) {
    unsigned long n = 0;
    for (char c : port) {
      n = n * 10 + static_cast<unsigned long>(c - '0');
      if (c < '0' || c > '9' || n > 65535)
        return malformed(shown_url + ": a port is from 1 to 65535");
    }
    if (n == 0) return malformed(shown_url + ": a port is from 1 to 65535");
    t.port = static_cast<std::uint16_t>(n);
  }
  t.host = t.literal ? t.literal->to_string() : host;
  const std::string host_port = t.host + ":" + std::to_string(t.port);

  // local:shared: 127.0.0.1 on its server's port, while it lives.
  const bool local_name = host == "localhost" || (t.literal && t.literal->is_v4() &&
                                                  t.literal->to_v4() == address_v4::loopback());
  if (grant.local_shared && local_name && grant.shared_port && *grant.shared_port == t.port) {
    t.reach = EgressTarget::Reach::shared;
    t.literal = address_v4::loopback();
    t.host = "127.0.0.1";
    return t;
  }
  // {account}: exactly a host:port the user typed for one of its accounts.
  if (grant.account) {
    const std::string typed = host + ":" + std::to_string(t.port);
    if (std::find(grant.account_hosts.begin(), grant.account_hosts.end(), typed) !=
            grant.account_hosts.end() ||
        std::find(grant.account_hosts.begin(), grant.account_hosts.end(), host_port) !=
            grant.account_hosts.end()) {
      t.reach = EgressTarget::Reach::account;
      return t;
    }
  }
  if (t.literal)
    return refused(host + " is an IP address written in the URL, which permissions.network of " +
                   grant.plugin_id + " does not name");
  const bool declared = std::any_of(grant.hosts.begin(), grant.hosts.end(),
                                    [&](const std::string& h) { return covers(h, host); });
  if (!declared) return refused(host + " is not in permissions.network of " + grant.plugin_id);
  if (!t.tls)
    return refused(shown_url + ": only " + secure + " is sent to " + host + ", not " + plain);
  return t;
}

std::optional<std::string> judge_address(const EgressTarget& target, const address& a) {
  switch (target.reach) {
    case EgressTarget::Reach::account:
      return std::nullopt;  // the user's own host, wherever it is
    case EgressTarget::Reach::shared:
      if (a.is_v4() && a.to_v4() == address_v4::loopback()) return std::nullopt;
      return target.host + " resolves to " + a.to_string() +
             ", not 127.0.0.1 where its shared server listens";
    case EgressTarget::Reach::public_only:
      break;
  }
  if (auto kind = local_kind(a)) {
    return target.host + " resolves to " + a.to_string() +
           ", an address of this machine or of the local network (" + *kind + ")";
  }
  return std::nullopt;
}

}  // namespace escouade::policy
