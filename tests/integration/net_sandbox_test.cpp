// A run.js plugin's fetch and WebSocket through the whole host (its C++ API, the sandbox's
// helpers, the prelude), in the network lab (tests/support/net_lab.hpp): real TLS servers signed
// by a test CA given as the network settings' --ca-file, names that resolve where a plugin must
// not go, a good plugin beside each refusal.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>
#include <filesystem>
#include <fstream>

#include "base/sanitizers.hpp"
#include "base/temp_dir.hpp"
#include "host/host.hpp"
#include "host_answer.hpp"
#include "platform/keychain.hpp"
#include "runtime/process_program.hpp"
#include "sandbox/sandbox_program.hpp"
#include "support/test_ca.hpp"
#include "support/test_web_server.hpp"

namespace escouade::testing {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
const fs::path kFixtures = ESCOUADE_SANDBOX_FIXTURES;
const fs::path kWasmModules = ESCOUADE_WASM_FIXTURES;

class NetSandbox : public ::testing::Test {
 protected:
  NetSandbox()
      : chat_("203.0.113.10", 443, ca_.issue({"chat.example.com", "api.chat.example.com"})),
        decoy_("127.0.0.1", 443, ca_.issue({"sneaky.example.com"})),
        processes_(io_.get_executor(), context_),
        sandboxed_(io_.get_executor(), context_, sandbox::SandboxOptions::installed()) {
    std::ofstream(data_.path() / "ca.pem") << ca_.pem();
    programs_.route(runtime::RunKind::command, &processes_);
    programs_.route(runtime::RunKind::js, &sandboxed_);
    programs_.route(runtime::RunKind::wasm, &sandboxed_);
    host::HostConfig config;
    config.data_dir = data_.path();
    config.base_env = {"PATH=/usr/bin:/bin"};
    config.network.ca_file = data_.path() / "ca.pem";
    config.keychain = keychain_.get();
    host_ = std::make_unique<host::Host>(io_.get_executor(), config, programs_,
                                         [](const supervisor::Status&) {});
    id_ = load("dev.escouade.nettest", json::array{"chat.example.com", "sneaky.example.com"});
  }
  ~NetSandbox() override {
    bool closed = false;
    host_->shutdown([&] { closed = true; });
    run_until([&] { return closed; });
  }

  // A run.js plugin (the net fixture), or a run.wasm one (the echo module, whose test/fetch
  // calls net/fetch through escouade.call).
  std::string load(const std::string& id, json::array network, bool wasm = false) {
    const fs::path dir = plugins_.path() / id;
    fs::create_directories(dir);
    if (wasm) {
      fs::copy_file(kWasmModules / "echo.wasm", dir / "plugin.wasm");
      std::ofstream(dir / "Makefile") << "plugin.wasm: echo.c\n";
    } else {
      fs::copy_file(kFixtures / "net" / "plugin.mjs", dir / "plugin.mjs");
    }
    json::object manifest{
        {"id", id},
        {"version", "1.0.0"},
        {"name", "Net test"},
        {"run", wasm ? json::object{{"wasm", "Makefile"}} : json::object{{"js", "plugin.mjs"}}},
        {"activation", json::array{"event:agent.status"}},
        {"permissions", json::object{{"network", std::move(network)}}}};
    std::ofstream(dir / "escouade-plugin.json") << json::serialize(manifest);
    auto loaded = host_->load(dir);
    EXPECT_TRUE(loaded) << loaded.error().message;
    EXPECT_TRUE(host_->enable(loaded->id, host::Project{"p1", "Project One", false, {}}));
    return loaded->id;
  }

  json::value call(const std::string& method, json::value params) {
    return call_plugin(id_, method, std::move(params));
  }
  json::value call_plugin(const std::string& id, const std::string& method, json::value params) {
    std::optional<Result<json::value>> out;
    host_->call(id, *rpc::Outgoing::request_value(method, params), std::chrono::milliseconds(30000),
                [&](Result<host::Answer> r) { keep_answer(out, std::move(r)); });
    run_until([&] { return out.has_value(); });
    EXPECT_TRUE(out && *out) << (out ? out->error().message : "no answer");
    return out && *out ? **out : json::value();
  }
  bool journal_has(std::string_view text) { return journal_of(id_, text); }
  bool journal_of(const std::string& id, std::string_view text) {
    auto lines = host_->journal(id, 500);
    for (const auto& l : *lines)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
  template <class P>
  void run_until(P done) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // a net
    while (!done() && std::chrono::steady_clock::now() < limit) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(done());
  }

  TempDir data_{"escouade-net-host"};
  // A plain file store standing for the keychain (platform/keychain_file.cpp): the Secret
  // Service's own tests are elsewhere.
  std::unique_ptr<platform::Keychain> keychain_ = platform::make_file_keychain(data_.path() / "k");
  TempDir plugins_{"escouade-net-plugins"};
  test::TestCa ca_;
  test::TestWebServer chat_, decoy_;
  asio::io_context io_;
  runtime::ProcessContext context_;
  runtime::ProcessProgramFactory processes_;
  sandbox::SandboxProgramFactory sandboxed_;
  runtime::ProgramRouter programs_;
  std::unique_ptr<host::Host> host_;
  std::string id_;
};

TEST_F(NetSandbox, FetchGivesAStandardResponse) {
  auto r = call("test/fetch", json::object{{"url", "https://chat.example.com/hello"}});
  ASSERT_TRUE(r.as_object().contains("status")) << json::serialize(r);
  EXPECT_EQ(r.at("status"), 200);
  EXPECT_EQ(r.at("ok"), true);
  EXPECT_EQ(r.at("text"), "hello from chat.example.com");
  EXPECT_EQ(r.at("headers").at("content-type"), "text/plain");
  EXPECT_EQ(r.at("url"), "https://chat.example.com/hello");

  auto posted = call(
      "test/fetch",
      json::object{
          {"url", "https://api.chat.example.com/echo"},
          {"init", json::object{{"method", "post"},
                                {"headers", json::object{{"Authorization", "Bearer t"},
                                                         {"Content-Type", "application/json"}}},
                                {"body", R"({"text":"hi"})"}}},
          {"read", "json"}});
  ASSERT_TRUE(posted.as_object().contains("json")) << json::serialize(posted);
  EXPECT_EQ(posted.at("json").at("method"), "POST");
  EXPECT_EQ(posted.at("json").at("body"), R"({"text":"hi"})");
  EXPECT_EQ(posted.at("json").at("headers").at("authorization"), "Bearer t");

  auto bytes = call("test/fetch",
                    json::object{{"url", "https://chat.example.com/binary"}, {"read", "bytes"}});
  ASSERT_TRUE(bytes.as_object().contains("bytes")) << json::serialize(bytes);
  EXPECT_EQ(bytes.at("bytes"), (json::array{255, 254, 0, 1, 128}));

  auto moved = call("test/fetch", json::object{{"url", "https://chat.example.com/status?code=302"},
                                               {"read", "none"}});
  EXPECT_EQ(moved.at("status"), 302);  // never followed
  EXPECT_EQ(moved.at("headers").at("location"), "https://other.example.org/");
}

TEST_F(NetSandbox, ARefusalRejectsTheFetchWithTheHostsSentenceAndIsJournaled) {
  auto undeclared = call("test/fetch", json::object{{"url", "https://other.example.org/"}});
  EXPECT_EQ(undeclared.at("error").at("name"), "TypeError");
  EXPECT_EQ(undeclared.at("error").at("message"),
            "other.example.org is not in permissions.network of dev.escouade.nettest");
  EXPECT_EQ(undeclared.at("error").at("code"), -32003);

  auto local = call("test/fetch", json::object{{"url", "https://sneaky.example.com/hello"}});
  EXPECT_EQ(local.at("error").at("message"),
            "sneaky.example.com resolves to 127.0.0.1, an address of this machine or of the "
            "local network (loopback)");
  EXPECT_EQ(decoy_.connections(), 0);
  EXPECT_TRUE(journal_has("net/stream refused: sneaky.example.com resolves to 127.0.0.1"));

  auto big =
      call("test/fetch", json::object{{"url", "https://chat.example.com/big?bytes=1048577"}});
  EXPECT_EQ(big.at("error").at("message"),
            "the answer of chat.example.com is larger than 1 MiB, the most this plugin may "
            "receive (limits.netBytes)");
  // The plugin keeps answering.
  auto after = call("test/fetch", json::object{{"url", "https://chat.example.com/hello"}});
  EXPECT_EQ(after.at("status"), 200);
}

TEST_F(NetSandbox, ABodyStreamsAndAnAbortCancelsItsStream) {
  auto chunked = call(
      "test/fetch", json::object{{"url", "https://chat.example.com/chunked"}, {"read", "stream"}});
  std::string whole;
  for (const auto& p : chunked.at("pieces").as_array())
    whole += p.as_string();
  EXPECT_EQ(whole, "caf\xc3\xa9 au lait");

  auto aborted = call("test/abort", json::object{{"url", "https://chat.example.com/sse"}});
  EXPECT_TRUE(aborted.at("first").as_string().starts_with("data: one\n\n"))
      << json::serialize(aborted);
  EXPECT_EQ(aborted.at("after"), "AbortError");
  auto early = call("test/abortEarly", json::object{{"url", "https://chat.example.com/hello"}});
  EXPECT_EQ(early.at("name"), "AbortError");
  // A fetch aborted while it waits for a stream leaves the queue; the next goes when one ends.
  auto queued = call("test/queue", json::object{{"sse", "https://chat.example.com/sse"},
                                                {"url", "https://chat.example.com/hello"}});
  EXPECT_EQ(queued.at("held"), 8);
  EXPECT_EQ(queued.at("ninth"), "AbortError");
  EXPECT_EQ(queued.at("tenth"), "hello from chat.example.com");
  // Twelve fetches at once: the host opens 8 streams at most, the prelude queues the others.
  auto many = call("test/many", json::object{{"url", "https://chat.example.com/hello"}, {"n", 12}});
  EXPECT_EQ(many.at("ok"), 12);
}

// A body read whole (text(), arrayBuffer(), json()) takes its pieces as they come, without an
// await each: the same text whether they come one by one or have all come before it is read,
// the same refusals as promises that reject, an abort while it waits, the plugin's own
// Responses.
TEST_F(NetSandbox, ABodyReadWholeIsTheSameHoweverItsPiecesCome) {
  auto r =
      call("test/bodies", json::object{{"chunked", "https://chat.example.com/chunked"},
                                       {"stream", "https://chat.example.com/stream?bytes=200000"},
                                       {"silent", "https://chat.example.com/silent"}});
  ASSERT_TRUE(r.as_object().contains("made")) << json::serialize(r);
  EXPECT_EQ(r.at("chunked"), "caf\xc3\xa9 au lait");
  EXPECT_EQ(r.at("chunkedLater"), "caf\xc3\xa9 au lait");
  EXPECT_EQ(r.at("streamLater"), 200000);  // 13 pieces, all there before text()
  EXPECT_EQ(r.at("streamBytes"), 200000);
  EXPECT_EQ(r.at("twice"),
            (json::object{{"name", "TypeError"},
                          {"message", "the body of this response was read already"}}));
  EXPECT_EQ(r.at("taken"),
            (json::object{{"name", "TypeError"}, {"message", "the body is already being read"}}));
  EXPECT_EQ(r.at("aborted").at("name"), "AbortError") << json::serialize(r);
  EXPECT_EQ(r.at("made"), (json::array{"h\xc3\xa9llo", "caf\xc3\xa9", "", R"({"a":[1,2]})"}));
  EXPECT_EQ(r.at("after"), "caf\xc3\xa9 au lait");
}

// 32 MiB read three times in 64 KiB pieces, each dropped once counted: 64 MB of garbage a read
// (strings and arrays) that the engine must collect before the plugin's 64 MB. With the engine's
// own thresholds (27 and 38 MB, growing threefold) the second read was stopped past 64 MB
// (src/sandbox/spidermonkey/context.cpp).
TEST_F(NetSandbox, ALongDownloadReadPieceByPieceStaysWithinTheMemoryLimit) {
  if (kAddressSanitizer)
    GTEST_SKIP() << "built with AddressSanitizer, which replaces malloc itself: no memory "
                    "account to stay within (docs/sandbox.md)";
  for (int i = 0; i < 3; ++i) {
    auto r = call(
        "test/fetch",
        json::object{{"url", "https://chat.example.com/stream?bytes=33554432"}, {"read", "count"}});
    ASSERT_TRUE(r.as_object().contains("count")) << json::serialize(r);
    EXPECT_EQ(r.at("count"), 33554432);
  }
}

TEST_F(NetSandbox, AWebSocketSpeaksBothWaysAndTellsItsClose) {
  auto r = call("test/ws", json::object{{"url", "wss://chat.example.com/ws"},
                                        {"headers", json::object{{"Authorization", "Bearer s"}}},
                                        {"send", json::array{"one", "two"}},
                                        {"closeAfter", 2}});
  EXPECT_EQ(r.at("messages"), (json::array{"echo:one", "echo:two"}));
  EXPECT_EQ(r.at("code"), 1000);
  EXPECT_EQ(r.at("wasClean"), true);

  auto big = call("test/ws", json::object{{"url", "wss://chat.example.com/ws"},
                                          {"send", json::array{"big:1048577"}},
                                          {"closeAfter", 99}});
  EXPECT_EQ(big.at("code"), 1009);
  auto refused = call("test/ws", json::object{{"url", "wss://sneaky.example.com/ws"},
                                              {"send", json::array()},
                                              {"closeAfter", 1}});
  EXPECT_EQ(refused.at("code"), 1006);
  EXPECT_EQ(refused.at("errors").at(0),
            "sneaky.example.com resolves to 127.0.0.1, an address of this machine or of the "
            "local network (loopback)");
  EXPECT_FALSE(journal_has("Bearer s"));
}

TEST_F(NetSandbox, ARunWasmPluginFetchesThroughEscouadeCall) {
  const auto wasm = load("dev.escouade.netwasm", json::array{"chat.example.com"}, true);
  auto ok =
      call_plugin(wasm, "test/fetch", json::object{{"url", "https://chat.example.com/hello"}});
  EXPECT_EQ(ok.at("code"), 0);
  EXPECT_EQ(ok.at("answer").at("status"), 200);
  EXPECT_EQ(ok.at("answer").at("body"), "hello from chat.example.com");
  auto refused =
      call_plugin(wasm, "test/fetch", json::object{{"url", "https://other.example.org/"}});
  EXPECT_EQ(refused.at("code"), 1);  // Escouade answered an error
  EXPECT_EQ(refused.at("answer").at("code"), -32003);
  EXPECT_EQ(refused.at("answer").at("message"),
            "other.example.org is not in permissions.network of dev.escouade.netwasm");
}

// {account} and local:shared open exactly what the app set, in http and on this machine or the
// local network, for the running instance too; nothing before, nothing after.
TEST_F(NetSandbox, AccountAndSharedOpenOnlyWhatTheAppSet) {
  test::TestWebServer git("10.20.30.40", 8080, std::nullopt);
  test::TestWebServer shared("127.0.0.1", 0, std::nullopt);
  const auto forge = load("dev.escouade.forge", json::array{"{account}", "local:shared"});
  auto fetch = [&](const std::string& url) {
    return call_plugin(forge, "test/fetch", json::object{{"url", url}});
  };
  const std::string git_url = "http://git.example.internal:8080/hello";
  EXPECT_EQ(fetch(git_url).at("error").at("code"), -32003);
  ASSERT_TRUE(host_->set_account_hosts(forge, {"GIT.example.internal:8080"}));
  EXPECT_EQ(fetch(git_url).at("text"), "hello from git.example.internal:8080");
  EXPECT_EQ(fetch("http://git.example.internal:9090/").at("error").at("code"), -32003);
  EXPECT_TRUE(journal_of(forge,
                         "{account} in permissions.network now opens "
                         "git.example.internal:8080"));
  auto not_declared = host_->set_account_hosts(id_, {"git.example.internal:8080"});
  ASSERT_FALSE(not_declared);
  EXPECT_EQ(not_declared.error().message,
            "dev.escouade.nettest does not declare {account} in permissions.network");
  auto not_a_host = host_->set_account_hosts(forge, {"git.example.internal"});
  ASSERT_FALSE(not_a_host);
  EXPECT_EQ(not_a_host.error().message, "params.hosts: git.example.internal is not host:port");

  const std::string shared_url = "http://127.0.0.1:" + std::to_string(shared.port()) + "/hello";
  EXPECT_EQ(fetch(shared_url).at("error").at("code"), -32003);
  ASSERT_TRUE(host_->set_shared_port(forge, shared.port()));
  EXPECT_EQ(fetch(shared_url).at("text").as_string(),
            "hello from 127.0.0.1:" + std::to_string(shared.port()));
  ASSERT_TRUE(host_->set_shared_port(forge, std::nullopt));  // its server ended
  EXPECT_EQ(fetch(shared_url).at("error").at("code"), -32003);
  EXPECT_FALSE(host_->set_shared_port(forge, 70000));
  EXPECT_FALSE(host_->set_shared_port(id_, 8080));
}

// The example plugin dev.escouade.slack (examples/slack) against a Slack of the tests' own: a TLS
// server named slack.com in the lab.
TEST_F(NetSandbox, TheSlackExamplePostsWithItsTokenWhichTheJournalNeverShows) {
  test::TestWebServer slack("203.0.113.30", 443, ca_.issue({"slack.com"}));
  const fs::path dir = plugins_.path() / "slack";
  fs::copy(fs::path(ESCOUADE_EXAMPLES_SOURCE) / "slack", dir, fs::copy_options::recursive);
  auto loaded = host_->load(dir);
  ASSERT_TRUE(loaded) << loaded.error().message;
  const std::string id = loaded->id;
  ASSERT_TRUE(host_->enable(id, host::Project{"p1", "Billing", false, {}}));
  auto set_token = [&](std::string token) {
    std::optional<Result<void>> done;
    host_->set_secret(id, "token", std::move(token), [&](Result<void> r) { done = r; });
    run_until([&] { return done.has_value(); });
    ASSERT_TRUE(*done) << done->error().message;
  };
  auto lines = [&] {
    std::string all;
    for (const auto& l : *host_->journal(id, 500))
      all += l + "\n";
    return all;
  };
  int seq = 0;
  auto done_ticket = [&] {
    ASSERT_TRUE(host_->publish(json::value_to<proto::Fact>(json::parse(
        R"({"name":"ticket.column","version":1,"seq":)" + std::to_string(++seq) +
        R"(,"at":"2026-12-05T10:00:00Z","project":{"id":"p1","name":"Billing","private":false},)"
        R"("ticket":{"id":"t7","key":"T-7","title":"Fix login"},"data":{"from":"review","to":"done"}})"))));
  };
  set_token("xoxb-test-1234567890");
  done_ticket();
  run_until([&] { return lines().find("posted to #dev") != std::string::npos; });
  ASSERT_EQ(slack.seen().size(), 1u);
  const auto posted = slack.seen()[0];
  EXPECT_EQ(posted.method, "POST");
  EXPECT_EQ(posted.target, "/api/chat.postMessage");
  EXPECT_EQ(posted.headers.at("authorization"), "Bearer xoxb-test-1234567890");
  EXPECT_EQ(json::parse(posted.body),
            json::parse(R"({"channel":"#dev","text":"T-7 \"Fix login\" is done in Billing"})"));
  EXPECT_NE(lines().find(R"(posted to #dev: T-7 "Fix login" is done in Billing)"),
            std::string::npos);

  set_token("not-a-bot-token");  // Slack refuses it
  done_ticket();
  run_until([&] { return lines().find("Slack refused") != std::string::npos; });
  EXPECT_NE(lines().find("Slack refused the message to #dev: not_authed"), std::string::npos);
  EXPECT_EQ(lines().find("xoxb-test-1234567890"), std::string::npos) << lines();
  EXPECT_EQ(lines().find("not-a-bot-token"), std::string::npos);
}

}  // namespace
}  // namespace escouade::testing
