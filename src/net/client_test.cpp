// The client against real servers in the network lab (tests/support/net_lab.hpp): TLS with a
// test CA, names from the lab's /etc/hosts, decoys on the addresses a plugin must never reach.

#include "net/client.hpp"

#include <gtest/gtest.h>

#include "net/net_test_fixture.hpp"
#include "support/test_proxy.hpp"

namespace escouade::net {
namespace {

TEST_F(NetClient, FetchesFromANamedPublicServerOverVerifiedTls) {
  auto r = fetch("https://chat.example.com/hello");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->head.status, 200);
  EXPECT_EQ(r->body, "hello from chat.example.com");
  EXPECT_EQ(header(r->head, "content-type"), "text/plain");
  ASSERT_EQ(chat_.seen().size(), 1u);
  EXPECT_EQ(chat_.seen()[0].headers["user-agent"], "Escouade");
  EXPECT_EQ(chat_.seen()[0].headers["connection"], "close");

  auto sub = fetch("https://api.chat.example.com/hello?x=1#frag");
  ASSERT_TRUE(sub) << sub.error().message;
  EXPECT_EQ(sub->body, "hello from api.chat.example.com");
  EXPECT_EQ(chat_.seen()[1].target, "/hello?x=1");  // never the fragment

  auto v6 = fetch("https://v6.example.com/hello");
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ(v6->body, "hello from v6.example.com");
  EXPECT_TRUE(notes_.empty()) << notes_.front();
}

TEST_F(NetClient, SendsThePluginsMethodHeadersAndBodyButSetsHostAndFramingItself) {
  Request req;
  req.method = "post";
  req.headers = {
      {"Authorization", "Bearer xoxb-1"}, {"Host", "evil.example"}, {"Content-Length", "1"},
      {"Connection", "keep-alive"},       {"X-Many", "a"},          {"X-Many", "b"}};
  req.body = R"({"text":"hi"})";
  auto r = fetch("https://chat.example.com/echo", req);
  ASSERT_TRUE(r) << r.error().message;
  const auto seen = chat_.seen().at(0);
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.host, "chat.example.com");
  EXPECT_EQ(seen.headers.at("authorization"), "Bearer xoxb-1");
  EXPECT_EQ(seen.headers.at("content-length"), "13");
  EXPECT_EQ(seen.headers.at("connection"), "close");
  EXPECT_EQ(seen.body, R"({"text":"hi"})");

  Request bad;
  bad.headers = {{"X-Evil", "a\r\nHost: b"}};
  auto refused = fetch("https://chat.example.com/echo", bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, proto::ErrorCode::invalid_params);
  Request trace;
  trace.method = "TRACE";
  EXPECT_EQ(fetch("https://chat.example.com/echo", trace).error().code,
            proto::ErrorCode::invalid_params);
  Request spaced;
  spaced.headers = {{"Bad Name", "x"}};
  EXPECT_EQ(fetch("https://chat.example.com/echo", spaced).error().code,
            proto::ErrorCode::invalid_params);
  EXPECT_EQ(chat_.seen().size(), 1u);  // nothing of the refused ones went out
}

TEST_F(NetClient, ARedirectIsTheAnswerNeverFollowed) {
  for (int code : {301, 302, 303, 307, 308}) {
    auto r = fetch("https://chat.example.com/status?code=" + std::to_string(code));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->head.status, code);
    EXPECT_EQ(header(r->head, "location"), "https://other.example.org/");
  }
  EXPECT_EQ(chat_.seen().size(), 5u);
}

TEST_F(NetClient, ADeclaredNameThatResolvesToThisMachineOrTheLocalNetworkIsRefused) {
  const std::pair<const char*, const char*> cases[] = {
      {"https://sneaky.example.com/hello",
       "sneaky.example.com resolves to 127.0.0.1, an address of this machine or of the local "
       "network (loopback)"},
      {"https://intranet.example.com/hello",
       "intranet.example.com resolves to 10.1.2.3, an address of this machine or of the local "
       "network (private)"},
  };
  for (const auto& [url, sentence] : cases) {
    auto r = fetch(url);
    ASSERT_FALSE(r) << url;
    EXPECT_EQ(r.error().code, proto::ErrorCode::refused);
    EXPECT_EQ(r.error().message, sentence);
  }
  auto mapped = fetch("https://mapped.example.com/hello");
  ASSERT_FALSE(mapped);
  EXPECT_EQ(mapped.error().code, proto::ErrorCode::refused);
  EXPECT_NE(mapped.error().message.find("an address of this machine or of the local network"),
            std::string::npos)
      << mapped.error().message;
  EXPECT_EQ(loopback_.connections(), 0);
  EXPECT_EQ(intranet_.connections(), 0);
}

TEST_F(NetClient, OfANameWithPublicAndLocalAddressesOnlyThePublicOnesAreUsed) {
  for (int i = 0; i < 3; ++i) {
    auto r = fetch("https://mixed.example.com/hello");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->body, "hello from mixed.example.com");
  }
  EXPECT_EQ(loopback_.connections(), 0);
  EXPECT_EQ(chat_.connections(), 3);
  ASSERT_FALSE(notes_.empty());
  EXPECT_EQ(notes_[0],
            "mixed.example.com resolves to 127.0.0.1, an address of this machine or of the local "
            "network (loopback): that address is set aside, not used");
}

TEST_F(NetClient, AnAnswerLateOrTooLargeFailsWithItsReason) {
  auto late = fetch("https://chat.example.com/slow?ms=1000", {}, FetchLimits{300ms, 1 << 20});
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, proto::ErrorCode::failed);
  EXPECT_EQ(late.error().message, "no answer from chat.example.com within 300 ms");

  auto exact = fetch("https://chat.example.com/big?bytes=1048576");
  ASSERT_TRUE(exact) << exact.error().message;
  EXPECT_EQ(exact->body.size(), 1048576u);
  auto big = fetch("https://chat.example.com/big?bytes=1048577");
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, proto::ErrorCode::failed);
  EXPECT_EQ(big.error().message,
            "the answer of chat.example.com is larger than 1 MiB, the most this plugin may "
            "receive (limits.netBytes)");
  auto raised = fetch("https://chat.example.com/big?bytes=2000000", {}, FetchLimits{10s, 4 << 20});
  ASSERT_TRUE(raised) << raised.error().message;
  EXPECT_EQ(raised->body.size(), 2000000u);
}

TEST_F(NetClient, AServerOutOfReachOrNotTrustedFails) {
  auto nobody = fetch("https://files.example.com/hello");  // nothing listens there
  ASSERT_FALSE(nobody);
  EXPECT_EQ(nobody.error().code, proto::ErrorCode::failed);
  EXPECT_EQ(nobody.error().message, "files.example.com cannot be reached: Connection refused");

  TestCa stranger("Some Other CA");
  TestWebServer untrusted("198.51.100.7", 443, stranger.issue({"files.example.com"}));
  auto r = fetch("https://files.example.com/hello");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, proto::ErrorCode::failed);
  EXPECT_EQ(r.error().message,
            "the certificate of files.example.com is not trusted: unable to get local issuer "
            "certificate");
}

TEST_F(NetClient, ACertificateForAnotherNameIsNotTrusted) {
  TestWebServer wrong("198.51.100.7", 443, ca_.issue({"chat.example.com"}));
  auto r = fetch("https://files.example.com/hello");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "the certificate of files.example.com is not trusted: hostname mismatch");
}

TEST_F(NetClient, ThroughTheProxyOnlyTheNameIsJudgedAndItIsNoted) {
  test::TestProxy proxy("10.9.9.9", 3128);
  auto via = make_client("http://proxy.lab:3128");
  auto r = fetch("https://chat.example.com/hello", {}, {}, via.get());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->body, "hello from chat.example.com");
  ASSERT_EQ(proxy.asked(), std::vector<std::string>{"chat.example.com:443"});
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_EQ(notes_[0],
            "through the proxy http://proxy.lab:3128: only the name chat.example.com was judged, "
            "not the addresses it resolves to");
  // The name is still judged: an undeclared one never reaches the proxy.
  auto undeclared = fetch("https://other.example.org/", {}, {}, via.get());
  ASSERT_FALSE(undeclared);
  EXPECT_EQ(undeclared.error().code, proto::ErrorCode::refused);
  EXPECT_EQ(proxy.asked().size(), 1u);

  proxy.refuse("v6.example.com");
  auto no = fetch("https://v6.example.com/hello", {}, {}, via.get());
  ASSERT_FALSE(no);
  EXPECT_EQ(no.error().code, proto::ErrorCode::failed);
  EXPECT_EQ(no.error().message,
            "the proxy http://proxy.lab:3128 answered 403 to CONNECT v6.example.com:443");
}

TEST_F(NetClient, SettingsThatCannotBeUsedAreRefused) {
  std::ofstream(dir_.path() / "empty.pem") << "not a certificate\n";
  for (auto settings :
       {Settings{"socks5://proxy.lab:1080", {}}, Settings{"http://proxy.lab", {}},
        Settings{"http://proxy.lab:99999", {}}, Settings{"", dir_.path() / "missing.pem"},
        Settings{"", dir_.path() / "empty.pem"}}) {
    auto c = Client::make(io_.get_executor(), settings);
    ASSERT_FALSE(c) << settings.proxy << " " << settings.ca_file;
    EXPECT_EQ(c.error().code, proto::ErrorCode::invalid_params);
  }
}

TEST_F(NetClient, AnAccountHostIsReachedOverHttpOnTheLocalNetwork) {
  TestWebServer git("10.20.30.40", 8080, std::nullopt);
  grant_.account = true;
  grant_.account_hosts = {"git.example.internal:8080"};
  auto r = fetch("http://git.example.internal:8080/hello");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->body, "hello from git.example.internal:8080");
}

// A stream's pieces, as they came, and its end.
struct Received {
  std::optional<Result<Head>> head;
  std::string body;
  std::optional<std::optional<std::string>> end;
};

StreamHandlers record(Received& r) {
  return StreamHandlers{[&r](Result<Head> h) { r.head = std::move(h); },
                        [&r](std::string_view piece) { r.body += piece; },
                        [&r](std::optional<std::string> why) { r.end = std::move(why); }};
}

TEST_F(NetClient, AStreamReadsNoMoreThanItsWindowUntilCredited) {
  auto target = policy::judge_url(grant_, "https://chat.example.com/stream?bytes=1048576",
                                  policy::UrlUse::fetch);
  ASSERT_TRUE(target);
  Received got;
  auto s = client_->stream(*target, {}, StreamLimits{}, {}, record(got));
  run_until([&] { return got.body.size() >= 256 * 1024; });
  ASSERT_TRUE(got.head && *got.head);
  EXPECT_EQ((*got.head)->status, 200);
  // Nothing more comes while the window is full, however long one waits.
  for (int i = 0; i < 5; ++i)
    io_.run_one_for(50ms);
  EXPECT_EQ(got.body.size(), 256u * 1024);
  EXPECT_FALSE(got.end);
  std::uint64_t credited = 0;
  run_until([&] {
    if (credited < got.body.size()) {
      s->credit(got.body.size() - credited);
      credited = got.body.size();
    }
    return got.end.has_value();
  });
  EXPECT_EQ(got.body, std::string(1048576, 'y'));
  ASSERT_TRUE(got.end);
  EXPECT_FALSE(*got.end);
}

TEST_F(NetClient, AQuietStreamEndsAfterItsIdleDelayUnlessItIsOfEvents) {
  auto silent = policy::judge_url(grant_, "https://chat.example.com/silent", policy::UrlUse::fetch);
  Received got;
  client_->stream(*silent, {}, StreamLimits{10s, 300ms, 256 * 1024}, {}, record(got));
  run_until([&] { return got.end.has_value(); });
  ASSERT_TRUE(got.end && *got.end);
  EXPECT_EQ(**got.end, "nothing came from chat.example.com for 300 ms");

  auto sse = policy::judge_url(grant_, "https://chat.example.com/sse", policy::UrlUse::fetch);
  Received events;
  auto s =
      client_->stream(*sse, {}, StreamLimits{10s, std::nullopt, 256 * 1024}, {}, record(events));
  run_until([&] { return events.body == "data: one\n\ndata: two\n\n"; });
  for (int i = 0; i < 8; ++i)
    io_.run_one_for(50ms);
  EXPECT_FALSE(events.end);  // silent, and never closed for it
  s->cancel();
  run_until([&] { return chat_.seen().size() == 2 && io_.stopped(); });
  EXPECT_FALSE(events.end);  // none after a cancel
}

TEST_F(NetClient, ACancelledFetchCallsNothingAndClosesItsConnection) {
  auto target =
      policy::judge_url(grant_, "https://chat.example.com/slow?ms=500", policy::UrlUse::fetch);
  bool called = false;
  auto x = client_->fetch(*target, {}, {}, {}, [&](Result<Response>) { called = true; });
  run_until([&] { return chat_.seen().size() == 1; });
  x->cancel();
  run_until([&] { return io_.stopped(); });
  EXPECT_FALSE(called);
}

TEST(NetText, DelaysAndSizesAreWrittenAsTheSentencesSayThem) {
  EXPECT_EQ(seconds_text(10'000ms), "10 s");
  EXPECT_EQ(seconds_text(120'000ms), "120 s");
  EXPECT_EQ(seconds_text(2'500ms), "2.5 s");
  EXPECT_EQ(seconds_text(300ms), "300 ms");
  EXPECT_EQ(bytes_text(1 << 20), "1 MiB");
  EXPECT_EQ(bytes_text(32 << 20), "32 MiB");
  EXPECT_EQ(bytes_text(256 * 1024), "256 KiB");
  EXPECT_EQ(bytes_text(1000), "1000 bytes");
}

}  // namespace
}  // namespace escouade::net
