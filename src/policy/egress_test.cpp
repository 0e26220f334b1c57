#include "policy/egress.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocol/gen/errors.hpp"

namespace escouade::policy {
namespace {

using boost::asio::ip::make_address;

EgressGrant slack() {
  EgressGrant g;
  g.plugin_id = "dev.escouade.slack";
  g.hosts = {"slack.com", "hooks.example.org"};
  return g;
}

// The sentence of a refusal, or "" when the URL passes.
std::string refusal(const EgressGrant& g, std::string_view url, UrlUse use = UrlUse::fetch) {
  auto t = judge_url(g, url, use);
  if (t) return "";
  return t.error().message;
}

TEST(Egress, ADeclaredHostAndItsSubdomainsOnALabelBoundaryOverHttps) {
  const auto g = slack();
  auto t = judge_url(g, "https://api.slack.com/api/chat.postMessage", UrlUse::fetch);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->host, "api.slack.com");
  EXPECT_EQ(t->port, 443);
  EXPECT_TRUE(t->tls);
  EXPECT_EQ(t->reach, EgressTarget::Reach::public_only);
  EXPECT_FALSE(t->literal);
  EXPECT_TRUE(judge_url(g, "https://slack.com:8443/x", UrlUse::fetch));
  EXPECT_TRUE(judge_url(g, "HTTPS://API.Slack.COM./x", UrlUse::fetch));  // case, a trailing dot
  EXPECT_EQ(refusal(g, "https://evilslack.com/"),
            "evilslack.com is not in permissions.network of dev.escouade.slack");
  EXPECT_EQ(refusal(g, "https://slack.com.evil.net/"),
            "slack.com.evil.net is not in permissions.network of dev.escouade.slack");
  EXPECT_EQ(refusal(g, "https://example.org/"),
            "example.org is not in permissions.network of dev.escouade.slack");
  EXPECT_EQ(refusal(g, "https://org/"), "org is not in permissions.network of dev.escouade.slack");
}

TEST(Egress, HttpsOnlyAndWssOnlyForADeclaredHost) {
  const auto g = slack();
  EXPECT_EQ(refusal(g, "http://api.slack.com/"),
            "http://api.slack.com/: only https is sent to api.slack.com, not http");
  EXPECT_EQ(refusal(g, "ftp://api.slack.com/"),
            "ftp://api.slack.com/: only https is sent, not ftp");
  EXPECT_EQ(refusal(g, "wss://api.slack.com/socket", UrlUse::websocket), "");
  EXPECT_EQ(refusal(g, "ws://api.slack.com/socket", UrlUse::websocket),
            "ws://api.slack.com/socket: only wss is sent for a WebSocket, not ws");
  EXPECT_EQ(refusal(g, "https://api.slack.com/socket", UrlUse::websocket),
            "https://api.slack.com/socket: only wss is sent for a WebSocket, not https");
  EXPECT_NE(refusal(g, "https://user:pw@api.slack.com/").find("a user name or a password"),
            std::string::npos);
}

// An IP address in the URL is an address in every spelling the WHATWG standard reads, and
// permissions.network names none.
TEST(Egress, AnIpAddressWrittenInTheUrlIsRefusedInEverySpelling) {
  const auto g = slack();
  for (const char* url : {"https://127.0.0.1/", "https://0x7f.1/", "https://2130706433/",
                          "https://0177.0.0.1/", "https://0x7f000001/", "https://127.1/",
                          "https://127.0.1/", "https://0177.0.0.01/", "https://%31%32%37.0.0.1/"}) {
    EXPECT_EQ(refusal(g, url),
              std::string(refusal(g, url).substr(0, refusal(g, url).find(' '))) +
                  " is an IP address written in the URL, which permissions.network of "
                  "dev.escouade.slack does not name")
        << url;
    auto t = judge_url(g, url, UrlUse::fetch);
    EXPECT_FALSE(t) << url;
  }
  for (const char* url : {"https://[::1]/", "https://[::ffff:127.0.0.1]/",
                          "https://[::ffff:7f00:1]/", "https://8.8.8.8/", "https://[2001:db8::1]/"})
    EXPECT_NE(refusal(g, url).find(" is an IP address written in the URL"), std::string::npos)
        << url;
  // The sentence names the address as it is, whatever its spelling.
  EXPECT_EQ(refusal(g, "https://0x7f.1/"),
            "127.0.0.1 is an IP address written in the URL, which permissions.network of "
            "dev.escouade.slack does not name");
  // A host ending in a number that is no address is no host at all.
  // (Boost.URL 1.81 reads https://1.2.3.4.5/ as the host 1.2.3.4 and a path ".5/".)
  for (const char* url :
       {"https://1.2.3.4.5/", "https://256.1.1.1/", "https://1.2.3.0x100/", "https://4294967296/",
        "https://1.09/", "https://1.2.3.4.5:443/x", "https://127.0.0.1./"}) {
    auto t = judge_url(g, url, UrlUse::fetch);
    ASSERT_FALSE(t) << url;
    EXPECT_EQ(t.error().code, proto::ErrorCode::invalid_params) << url;
  }
}

TEST(Egress, ANameEndingInANumberIsReadAsTheStandardReadsIt) {
  const auto ip = [](std::string_view name) -> std::string {
    auto r = ipv4_of_name(name);
    if (!r) return "error";
    return *r ? (*r)->to_string() : "name";
  };
  EXPECT_EQ(ip("0x7f.1"), "127.0.0.1");
  EXPECT_EQ(ip("2130706433"), "127.0.0.1");
  EXPECT_EQ(ip("0177.0.0.1"), "127.0.0.1");
  EXPECT_EQ(ip("192.168.257"), "192.168.1.1");
  EXPECT_EQ(ip("0x"), "0.0.0.0");
  EXPECT_EQ(ip("10.0.0.1."), "10.0.0.1");
  EXPECT_EQ(ip("api.slack.com"), "name");
  EXPECT_EQ(ip("1.2.3.a"), "name");
  EXPECT_EQ(ip("a.0x1g"), "name");  // 0x1g is no hexadecimal number: its label is a name's
  EXPECT_EQ(ip("1.2.3.4.5"), "error");
  EXPECT_EQ(ip("08.1"), "error");  // 0-led: octal, and 8 is no octal digit
  EXPECT_EQ(ip("1..1"), "error");
  EXPECT_EQ(ip("99999999999999999999999999"), "error");
}

// Each address a name resolves to is judged: none of this machine or of the local network.
TEST(Egress, AnAddressOfThisMachineOrOfTheLocalNetworkIsRefusedThoughTheNameIsDeclared) {
  const auto t = *judge_url(slack(), "https://slack.com/", UrlUse::fetch);
  EXPECT_EQ(judge_address(t, make_address("127.0.0.1")),
            "slack.com resolves to 127.0.0.1, an address of this machine or of the local network "
            "(loopback)");
  struct Case {
    const char* address;
    const char* kind;
  };
  const std::vector<Case> local = {
      {"0.0.0.0", "unspecified"},
      {"0.1.2.3", "reserved (this network)"},
      {"10.1.2.3", "private"},
      {"100.64.0.1", "shared (CGNAT)"},
      {"100.127.255.254", "shared (CGNAT)"},
      {"127.255.0.1", "loopback"},
      {"169.254.169.254", "link-local"},
      {"172.16.0.1", "private"},
      {"172.31.255.255", "private"},
      {"192.0.0.8", "reserved (protocol assignments)"},
      {"192.168.1.1", "private"},
      {"198.18.0.1", "reserved (benchmarking)"},
      {"224.0.0.1", "multicast"},
      {"239.255.255.250", "multicast"},
      {"240.0.0.1", "reserved"},
      {"255.255.255.255", "broadcast"},
      {"::", "unspecified"},
      {"::1", "loopback"},
      {"fe80::1", "link-local"},
      {"febf::1", "link-local"},
      {"fec0::1", "private (site-local)"},
      {"fc00::1", "private (unique local)"},
      {"fdff::1", "private (unique local)"},
      {"ff02::1", "multicast"},
      {"::ffff:127.0.0.1", "an IPv4 loopback address carried by a mapped IPv6 address (127.0.0.1)"},
      {"::ffff:10.0.0.1", "an IPv4 private address carried by a mapped IPv6 address (10.0.0.1)"},
      {"::127.0.0.1", "an IPv4 loopback address carried by a compatible IPv6 address (127.0.0.1)"},
      {"64:ff9b::a9fe:a9fe",
       "an IPv4 link-local address carried by a NAT64 IPv6 address (169.254.169.254)"},
      {"64:ff9b:1::1", "reserved (local-use NAT64)"},
      {"2002:7f00:1::", "an IPv4 loopback address carried by a 6to4 IPv6 address (127.0.0.1)"},
      {"2002:c0a8:101::1", "an IPv4 private address carried by a 6to4 IPv6 address (192.168.1.1)"},
      // Teredo: the client's address is stored inverted (~127.0.0.1 = 80ff:fffe)
      {"2001:0:4136:e378:8000:63bf:80ff:fffe",
       "an IPv4 loopback address carried by a Teredo IPv6 address (127.0.0.1)"},
      {"2001:0:0a00:0001::1",
       "an IPv4 private address carried by a Teredo IPv6 address (10.0.0.1)"},
      {"100::1", "reserved (discard-only)"},
      {"::2:3:4", "reserved"},
  };
  for (const auto& c : local) {
    const auto kind = local_kind(make_address(c.address));
    ASSERT_TRUE(kind) << c.address;
    EXPECT_EQ(*kind, c.kind) << c.address;
    EXPECT_TRUE(judge_address(t, make_address(c.address))) << c.address;
  }
  // The world, documentation ranges standing for it in the tests.
  for (const char* world :
       {"8.8.8.8", "1.1.1.1", "203.0.113.7", "198.51.100.1", "192.0.2.1", "100.63.255.255",
        "100.128.0.0", "172.15.255.255", "172.32.0.0", "2606:4700::1111", "2001:db8::1",
        "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"}) {
    EXPECT_FALSE(local_kind(make_address(world))) << world;
    EXPECT_FALSE(judge_address(t, make_address(world))) << world;
  }
}

// {account} opens exactly the host:port the user typed, in http and on the local network.
TEST(Egress, AnAccountHostOpensHttpAndTheLocalNetworkForItAlone) {
  auto g = slack();
  g.account = true;
  g.account_hosts = {"git.example.internal:8443", "192.168.1.5:3000"};
  auto t = judge_url(g, "http://git.example.internal:8443/api/v4", UrlUse::fetch);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->reach, EgressTarget::Reach::account);
  EXPECT_FALSE(t->tls);
  EXPECT_FALSE(judge_address(*t, make_address("10.0.0.8")));
  auto ip = judge_url(g, "http://192.168.1.5:3000/", UrlUse::fetch);
  ASSERT_TRUE(ip) << ip.error().message;
  EXPECT_EQ(ip->literal, make_address("192.168.1.5"));
  // Another port, another host of the same network: refused.
  EXPECT_FALSE(judge_url(g, "http://git.example.internal:8444/", UrlUse::fetch));
  EXPECT_FALSE(judge_url(g, "http://192.168.1.6:3000/", UrlUse::fetch));
  EXPECT_FALSE(judge_url(g, "https://git.example.internal/", UrlUse::fetch));  // port 443
  // Without {account} declared, the app's hosts mean nothing.
  g.account = false;
  EXPECT_FALSE(judge_url(g, "http://git.example.internal:8443/", UrlUse::fetch));
}

// local:shared: http to 127.0.0.1 on its server's port, while it lives, and nowhere else.
TEST(Egress, TheSharedServerIsReachedOnItsPortWhileItLives) {
  auto g = slack();
  g.local_shared = true;
  EXPECT_FALSE(judge_url(g, "http://127.0.0.1:5173/", UrlUse::fetch));  // no server now
  g.shared_port = 5173;
  for (const char* url : {"http://127.0.0.1:5173/api", "http://localhost:5173/"}) {
    auto t = judge_url(g, url, UrlUse::fetch);
    ASSERT_TRUE(t) << url << ": " << t.error().message;
    EXPECT_EQ(t->reach, EgressTarget::Reach::shared);
    EXPECT_EQ(t->host, "127.0.0.1");
    EXPECT_FALSE(judge_address(*t, make_address("127.0.0.1")));
    EXPECT_TRUE(judge_address(*t, make_address("10.0.0.1")));
  }
  EXPECT_FALSE(judge_url(g, "http://127.0.0.1:5174/", UrlUse::fetch));
  EXPECT_FALSE(judge_url(g, "http://10.0.0.1:5173/", UrlUse::fetch));
  g.local_shared = false;
  EXPECT_FALSE(judge_url(g, "http://127.0.0.1:5173/", UrlUse::fetch));
}

TEST(Egress, AUrlThatDoesNotParseIsAParamsError) {
  const auto g = slack();
  for (const char* url :
       {"", "slack.com", "/relative", "https://", "https://slack.com:99999/", "https://sl ack.com/",
        "https://exämple.com/", "https://[::1/", "https://a_b.slack.com/"}) {
    auto t = judge_url(g, url, UrlUse::fetch);
    ASSERT_FALSE(t) << url;
    EXPECT_EQ(t.error().code, proto::ErrorCode::invalid_params) << url << ": " << t.error().message;
  }
}

// An empty label passed the characters and ended with the declared name: the fuzzer's
// "https://.slack.com/x" was let through as a subdomain of slack.com.
TEST(Egress, AHostWithAnEmptyOrOverlongLabelIsNoName) {
  const auto g = slack();
  for (const std::string& url : std::vector<std::string>{
           "https://.slack.com/x", "https://api..slack.com/", "https://..slack.com/",
           "https://" + std::string(64, 'a') + ".slack.com/", "https://slack.com../"}) {
    auto t = judge_url(g, url, UrlUse::fetch);
    ASSERT_FALSE(t) << url;
    EXPECT_EQ(t.error().code, proto::ErrorCode::invalid_params) << url;
    EXPECT_NE(t.error().message.find(
                  " is not a host name: each part between its dots has 1 to 63 characters"),
              std::string::npos)
        << t.error().message;
  }
  EXPECT_TRUE(judge_url(g, "https://" + std::string(63, 'a') + ".slack.com/", UrlUse::fetch));
  EXPECT_TRUE(judge_url(g, "https://slack.com./", UrlUse::fetch));  // one trailing dot is the root
}

}  // namespace
}  // namespace escouade::policy
