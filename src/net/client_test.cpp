// The client against real servers in the network lab (tests/support/net_lab.hpp): TLS with a
// test CA, names from the lab's /etc/hosts, decoys on the addresses a plugin must never reach.

#include "net/client.hpp"

#include <gtest/gtest.h>

#include <algorithm>

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

// A small answer comes whole with its head: the head, the body and the end are handed on in
// the same turn of the loop, so that whoever forwards them (the host to a sandboxed plugin)
// writes them at once.
TEST_F(NetClient, ASmallAnswersHeadBodyAndEndAreHandedOnTogether) {
  auto target = policy::judge_url(grant_, "https://chat.example.com/hello", policy::UrlUse::fetch);
  ASSERT_TRUE(target);
  int turn = 0, head_turn = -1, body_turn = -1, end_turn = -1;
  std::string body;
  auto s = client_->stream(nullptr, *target, {}, StreamLimits{}, {},
                           StreamHandlers{[&](Result<Head>) { head_turn = turn; },
                                          [&](std::string_view piece) {
                                            body += piece;
                                            body_turn = turn;
                                          },
                                          [&](std::optional<std::string>) { end_turn = turn; }});
  for (; end_turn < 0 && turn < 10000; ++turn)
    io_.run_one_for(100ms);
  EXPECT_EQ(body, "hello from chat.example.com");
  EXPECT_GE(head_turn, 0);
  EXPECT_EQ(body_turn, head_turn);
  EXPECT_EQ(end_turn, head_turn);
}

TEST_F(NetClient, AStreamReadsNoMoreThanItsWindowUntilCredited) {
  auto target = policy::judge_url(grant_, "https://chat.example.com/stream?bytes=1048576",
                                  policy::UrlUse::fetch);
  ASSERT_TRUE(target);
  Received got;
  auto s = client_->stream(nullptr, *target, {}, StreamLimits{}, {}, record(got));
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
  client_->stream(nullptr, *silent, {}, StreamLimits{10s, 300ms, 256 * 1024}, {}, record(got));
  run_until([&] { return got.end.has_value(); });
  ASSERT_TRUE(got.end && *got.end);
  EXPECT_EQ(**got.end, "nothing came from chat.example.com for 300 ms");

  auto sse = policy::judge_url(grant_, "https://chat.example.com/sse", policy::UrlUse::fetch);
  Received events;
  auto s = client_->stream(nullptr, *sse, {}, StreamLimits{10s, std::nullopt, 256 * 1024}, {},
                           record(events));
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
  auto x = client_->fetch(nullptr, *target, {}, {}, {}, [&](Result<Response>) { called = true; });
  run_until([&] { return chat_.seen().size() == 1; });
  x->cancel();
  run_until([&] { return io_.stopped(); });
  EXPECT_FALSE(called);
}

// Keep-alive (client.hpp): the connections of a pool, reused by its exchanges alone.

TEST_F(NetClient, FetchesInARowThroughAPoolShareOneConnection) {
  chat_.keep_alive(true);
  pool_ = client_->pool();
  for (const char* url :
       {"https://chat.example.com/hello", "https://chat.example.com/chunked",
        "https://chat.example.com/status?code=302", "https://chat.example.com/hello"}) {
    auto r = fetch(url);
    ASSERT_TRUE(r) << url << ": " << r.error().message;
    EXPECT_EQ(pool_->idle(), 1u) << url;
  }
  Request head;
  head.method = "HEAD";
  auto h = fetch("https://chat.example.com/big?bytes=5000", head);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(header(h->head, "content-length"), "5000");
  auto after = fetch("https://chat.example.com/hello");
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(after->body, "hello from chat.example.com");
  EXPECT_EQ(chat_.connections(), 1);
  ASSERT_EQ(chat_.seen().size(), 6u);
  EXPECT_EQ(chat_.seen()[0].headers.count("connection"), 0u);  // HTTP/1.1: kept unless told
  EXPECT_TRUE(notes_.empty()) << notes_.front();
}

TEST_F(NetClient, AnAnswerThatClosesOrCannotBeFramedIsNotReused) {
  pool_ = client_->pool();
  // A server that says Connection: close (as chat_ does until keep_alive(true)).
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  EXPECT_EQ(pool_->idle(), 0u);
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  EXPECT_EQ(chat_.connections(), 2);
  chat_.keep_alive(true);
  ASSERT_TRUE(fetch("https://chat.example.com/hello?close=1"));
  EXPECT_EQ(pool_->idle(), 0u);
  // Keep-Alive: timeout=1 leaves no time to reuse it (1 s less, to stay clear of its close).
  ASSERT_TRUE(fetch("https://chat.example.com/hello?keep=1"));
  EXPECT_EQ(pool_->idle(), 0u);
  // An answer over its limit leaves bytes unread: the connection closes.
  ASSERT_FALSE(fetch("https://chat.example.com/big?bytes=2000", {}, FetchLimits{10s, 1000}));
  EXPECT_EQ(pool_->idle(), 0u);
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  EXPECT_EQ(chat_.connections(), 6);
  EXPECT_EQ(pool_->idle(), 1u);
}

TEST_F(NetClient, EachPoolAndEachHostHasItsOwnConnections) {
  chat_.keep_alive(true);
  auto a = client_->pool(), b = client_->pool();
  pool_ = a;
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  pool_ = b;  // another plugin's run
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  EXPECT_EQ(chat_.connections(), 2);
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  pool_ = a;
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  EXPECT_EQ(chat_.connections(), 2);
  // Another name on the same server (its TLS name, its Host) is another key.
  auto sub = fetch("https://api.chat.example.com/hello");
  ASSERT_TRUE(sub) << sub.error().message;
  EXPECT_EQ(sub->body, "hello from api.chat.example.com");
  EXPECT_EQ(chat_.connections(), 3);
  EXPECT_EQ(a->idle(), 2u);
  EXPECT_EQ(b->idle(), 1u);
  // A pool of another client is none of this one's.
  auto other = make_client({});
  pool_ = other->pool();
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  EXPECT_EQ(chat_.connections(), 4);
  EXPECT_EQ(pool_->idle(), 0u);
  EXPECT_EQ(chat_.seen().back().headers.at("connection"), "close");
}

TEST_F(NetClient, DroppingAPoolClosesItsConnections) {
  chat_.keep_alive(true);
  pool_ = client_->pool();
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  ASSERT_TRUE(fetch("https://api.chat.example.com/hello"));
  EXPECT_EQ(chat_.ended(), 0);
  pool_.reset();
  run_until([&] { return chat_.ended() == 2; });
  EXPECT_EQ(chat_.ended(), 2);
}

TEST_F(NetClient, AnIdleConnectionClosesAfterTheDelayTheServerSaid) {
  chat_.keep_alive(true);
  pool_ = client_->pool();
  ASSERT_TRUE(fetch("https://chat.example.com/hello?keep=2"));  // kept 1 s
  EXPECT_EQ(pool_->idle(), 1u);
  run_until([&] { return pool_->idle() == 0 && chat_.ended() == 1; });
  EXPECT_EQ(pool_->idle(), 0u);
  EXPECT_EQ(chat_.ended(), 1);
}

TEST_F(NetClient, AConnectionTheServerClosedMeanwhileIsReplacedForAnIdempotentRequest) {
  chat_.keep_alive(true);
  pool_ = client_->pool();
  // Closed while idle: found so before it is used, or when the request meets its end.
  ASSERT_TRUE(fetch("https://chat.example.com/hello?then=close"));
  auto r = fetch("https://chat.example.com/hello");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->body, "hello from chat.example.com");
  EXPECT_EQ(chat_.connections(), 2);
  // Closed as the request came, unanswered: a GET is sent once more, over a new connection.
  ASSERT_TRUE(fetch("https://chat.example.com/hello?then=drop"));
  auto again = fetch("https://chat.example.com/hello?n=2");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->body, "hello from chat.example.com");
  EXPECT_EQ(chat_.connections(), 3);
  auto seen = chat_.seen();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[3].target, "/hello?n=2");  // the one the server dropped
  EXPECT_EQ(seen[4].target, "/hello?n=2");
  // A PUT too, with its body.
  ASSERT_TRUE(fetch("https://chat.example.com/hello?then=drop"));
  Request put;
  put.method = "PUT";
  put.body = "the same twice";
  auto p = fetch("https://chat.example.com/echo", put);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(chat_.connections(), 4);
  seen = chat_.seen();
  ASSERT_EQ(seen.size(), 8u);
  EXPECT_EQ(seen[6].body, "the same twice");
  EXPECT_EQ(seen[7].body, "the same twice");
  EXPECT_TRUE(notes_.empty()) << notes_.front();
}

TEST_F(NetClient, APostOnAConnectionClosedMeanwhileFailsAndIsNotSentAgain) {
  chat_.keep_alive(true);
  pool_ = client_->pool();
  ASSERT_TRUE(fetch("https://chat.example.com/hello?then=drop"));
  Request post;
  post.method = "POST";
  post.body = R"({"text":"once"})";
  auto r = fetch("https://chat.example.com/echo", post);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, proto::ErrorCode::failed);
  EXPECT_EQ(r.error().message,
            "chat.example.com closed the connection kept from an earlier request before it "
            "answered; a POST is not sent again on its own: it may have been received");
  EXPECT_EQ(chat_.connections(), 1);
  ASSERT_EQ(chat_.seen().size(), 2u);  // it came once
  // The next one opens a new connection.
  auto next = fetch("https://chat.example.com/echo", post);
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(chat_.connections(), 2);
}

TEST_F(NetClient, AStreamReadToItsEndIsReusedOneCancelledHalfWayIsNot) {
  chat_.keep_alive(true);
  pool_ = client_->pool();
  auto whole = policy::judge_url(grant_, "https://chat.example.com/stream?bytes=100000",
                                 policy::UrlUse::fetch);
  Received got;
  auto s = client_->stream(pool_, *whole, {}, StreamLimits{}, {}, record(got));
  run_until([&] { return got.end.has_value(); });
  ASSERT_TRUE(got.end);
  EXPECT_FALSE(*got.end);
  EXPECT_EQ(got.body.size(), 100000u);
  EXPECT_EQ(pool_->idle(), 1u);
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  EXPECT_EQ(chat_.connections(), 1);

  auto big = policy::judge_url(grant_, "https://chat.example.com/stream?bytes=1048576",
                               policy::UrlUse::fetch);
  Received half;
  auto c = client_->stream(pool_, *big, {}, StreamLimits{}, {}, record(half));
  run_until([&] { return half.body.size() >= 256 * 1024; });
  EXPECT_EQ(pool_->idle(), 0u);  // taken by the stream
  c->cancel();
  EXPECT_EQ(pool_->idle(), 0u);
  run_until([&] { return chat_.ended() == 1; });
  EXPECT_EQ(chat_.ended(), 1);
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  EXPECT_EQ(chat_.connections(), 2);
}

TEST_F(NetClient, APoolKeepsAFewIdleConnectionsAKeyAndAFewMoreInAll) {
  TestWebServer files("198.51.100.7", 443, ca_.issue({"files.example.com"}));
  for (TestWebServer* s : {&chat_, &v6_, &files})
    s->keep_alive(true);
  pool_ = client_->pool();
  // Exchanges at once each open a connection: 6 for one key, 4 for each of four other keys.
  std::vector<std::string> urls(6, "https://chat.example.com/slow?ms=300");
  for (const char* host :
       {"api.chat.example.com", "mixed.example.com", "v6.example.com", "files.example.com"})
    for (int i = 0; i < 4; ++i)
      urls.push_back(std::string("https://") + host + "/slow?ms=300");
  int answered = 0;
  std::vector<std::shared_ptr<Exchange>> under_way;
  for (const auto& url : urls) {
    auto target = policy::judge_url(grant_, url, policy::UrlUse::fetch);
    ASSERT_TRUE(target) << url;
    under_way.push_back(client_->fetch(pool_, *target, {}, {}, {}, [&](Result<Response> r) {
      EXPECT_TRUE(r) << r.error().message;
      ++answered;
    }));
  }
  run_until([&] { return answered == 22; });
  ASSERT_EQ(answered, 22);
  EXPECT_EQ(chat_.connections() + v6_.connections() + files.connections(), 22);
  EXPECT_EQ(pool_->idle(), kIdlePerPool);  // 4 a key at most, 16 in all: 6 closed
  run_until([&] { return chat_.ended() + v6_.ended() + files.ended() == 6; });
  EXPECT_EQ(chat_.ended() + v6_.ended() + files.ended(), 6);
}

TEST_F(NetClient, TheClientKeepsAtMost64IdleConnectionsInAll) {
  for (TestWebServer* s : {&chat_, &v6_})
    s->keep_alive(true);
  // 5 pools (runs), each with 4 exchanges at once to each of 4 keys: 80 connections.
  std::vector<std::shared_ptr<Pool>> pools;
  int answered = 0;
  std::vector<std::shared_ptr<Exchange>> under_way;
  for (int p = 0; p < 5; ++p) {
    pools.push_back(client_->pool());
    for (const char* host :
         {"chat.example.com", "api.chat.example.com", "mixed.example.com", "v6.example.com"})
      for (int i = 0; i < 4; ++i) {
        auto target = policy::judge_url(grant_, std::string("https://") + host + "/slow?ms=300",
                                        policy::UrlUse::fetch);
        ASSERT_TRUE(target) << host;
        under_way.push_back(client_->fetch(
            pools.back(), *target, {}, {}, [](const std::string&) {},
            [&](Result<Response> r) {
              EXPECT_TRUE(r) << r.error().message;
              ++answered;
            }));
      }
  }
  run_until([&] { return answered == 80; });
  ASSERT_EQ(answered, 80);
  EXPECT_EQ(chat_.connections() + v6_.connections(), 80);
  std::size_t idle = 0;
  for (const auto& p : pools) {
    EXPECT_LE(p->idle(), kIdlePerPool);
    idle += p->idle();
  }
  EXPECT_EQ(idle, kIdleInAll);
  run_until([&] { return chat_.ended() + v6_.ended() == 16; });
  EXPECT_EQ(chat_.ended() + v6_.ended(), 16);
  // Full: what another run's exchange gives back is closed, until a pool goes.
  pool_ = client_->pool();
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  EXPECT_EQ(pool_->idle(), 0u);
  auto fullest = std::max_element(pools.begin(), pools.end(), [](const auto& x, const auto& y) {
    return x->idle() < y->idle();
  });
  fullest->reset();
  ASSERT_TRUE(fetch("https://chat.example.com/hello"));
  EXPECT_EQ(pool_->idle(), 1u);
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
