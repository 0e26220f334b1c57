// net/* as a sandboxed plugin's session sees them, in the network lab (tests/support/
// net_lab.hpp): real TLS servers with a test CA, names that resolve where they must not.

#include "services/net.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <optional>

#include "base/base64.hpp"
#include "base/temp_dir.hpp"
#include "net/client.hpp"
#include "services/bind.hpp"
#include "support/test_ca.hpp"
#include "support/test_web_server.hpp"

namespace escouade::services {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

class NetService : public ::testing::Test {
 protected:
  explicit NetService(manifest::RunKind kind = manifest::RunKind::js)
      : chat_("203.0.113.10", 443, ca_.issue({"chat.example.com"})) {
    std::ofstream(dir_.path() / "ca.pem") << ca_.pem();
    client_ = *net::Client::make(io_.get_executor(), net::Settings{"", dir_.path() / "ca.pem"});
    JournalOptions jo;
    jo.dir = dir_.path();
    jo.plugin_id = "dev.escouade.slack";
    plugin_->manifest.id = jo.plugin_id;
    plugin_->manifest.run.kind = kind;
    plugin_->egress.plugin_id = jo.plugin_id;
    plugin_->journal = std::make_shared<Journal>(std::move(jo));
    plugin_->egress.hosts = {"chat.example.com", "sneaky.example.com"};
    ctx_.net = {client_.get(), {}};
    session_.emplace(
        io_.get_executor(), [this](std::string l) { sent_.push_back(json::parse(l)); },
        [](std::string_view) {});
    run_.emplace(*session_);
    bind_services(*session_, *run_, ctx_, plugin_);
  }
  ~NetService() override {
    session_->close();
    run_.reset();
  }

  void send(std::string_view method, std::string_view params, std::optional<int> id) {
    session_->feed_line(
        R"({"jsonrpc":"2.0",)" + (id ? R"("id":)" + std::to_string(*id) + "," : std::string()) +
        R"("method":")" + std::string(method) + R"(","params":)" + std::string(params) + "}");
  }
  // Sends a request; returns its answer once it came.
  json::value call(std::string_view method, std::string_view params) {
    const int id = next_id_++;
    send(method, params, id);
    json::value answer;
    run_until([&] {
      for (const auto& m : sent_)
        if (m.as_object().contains("id") && m.at("id") == id) answer = m;
      return !answer.is_null();
    });
    return answer;
  }
  template <class Done>
  void run_until(Done done, std::chrono::milliseconds at_most = 30s) {
    const auto until = std::chrono::steady_clock::now() + at_most;  // a safety net only
    while (!done() && std::chrono::steady_clock::now() < until) {
      io_.restart();
      io_.run_one_for(50ms);
    }
  }
  std::vector<json::object> notifications(std::string_view method) const {
    std::vector<json::object> out;
    for (const auto& m : sent_)
      if (m.as_object().contains("method") && m.at("method").as_string() == method)
        out.push_back(m.at("params").as_object());
    return out;
  }
  std::string journal_text() const {
    std::string all;
    for (const auto& l : plugin_->journal->tail(100))
      all += l + "\n";
    return all;
  }
  static std::int64_t code(const json::value& answer) {
    return answer.at("error").at("code").as_int64();
  }

  TempDir dir_{"escouade-net-service"};
  test::TestCa ca_;
  test::TestWebServer chat_;
  boost::asio::io_context io_;
  std::shared_ptr<net::Client> client_;
  std::shared_ptr<ServedPlugin> plugin_ = std::make_shared<ServedPlugin>();
  ServiceContext ctx_;
  std::optional<rpc::Session> session_;
  std::optional<RunScope> run_;
  std::vector<json::value> sent_;
  int next_id_ = 1;
};

TEST_F(NetService, AFetchAnswersItsStatusHeadersAndBodyAsTextOrBase64) {
  auto a = call("net/fetch", R"({"url":"https://chat.example.com/hello"})");
  ASSERT_TRUE(a.as_object().contains("result")) << json::serialize(a);
  EXPECT_EQ(a.at("result").at("status"), 200);
  EXPECT_EQ(a.at("result").at("body"), "hello from chat.example.com");
  EXPECT_EQ(a.at("result").at("headers").at("content-type"), "text/plain");

  auto b = call("net/fetch", R"({"url":"https://chat.example.com/binary"})");
  EXPECT_FALSE(b.at("result").as_object().contains("body"));
  EXPECT_EQ(base64_decode(std::string(b.at("result").at("bodyBase64").as_string())),
            std::string("\xff\xfe\x00\x01\x80", 5));

  auto posted = call("net/fetch", R"({"url":"https://chat.example.com/echo","method":"POST",)"
                                  R"("headers":{"Authorization":"Bearer t"},"bodyBase64":"aGk="})");
  ASSERT_TRUE(posted.as_object().contains("result")) << json::serialize(posted);
  EXPECT_EQ(chat_.seen().back().body, "hi");
  EXPECT_EQ(chat_.seen().back().headers.at("authorization"), "Bearer t");
}

TEST_F(NetService, RefusalsAnswer32003AndTheJournalKeepsEach) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"url":"https://example.org/"})",
       "example.org is not in permissions.network of dev.escouade.slack"},
      {R"({"url":"https://sneaky.example.com/hello"})",
       "sneaky.example.com resolves to 127.0.0.1, an address of this machine or of the local "
       "network (loopback)"},
      {R"({"url":"https://0x7f.1/"})",
       "127.0.0.1 is an IP address written in the URL, which permissions.network of "
       "dev.escouade.slack does not name"},
      {R"({"url":"http://chat.example.com/hello"})",
       "http://chat.example.com/hello: only https is sent to chat.example.com, not http"},
  };
  for (const auto& [params, sentence] : cases) {
    auto a = call("net/fetch", params);
    EXPECT_EQ(code(a), -32003) << params;
    EXPECT_EQ(a.at("error").at("message"), sentence);
    EXPECT_THAT(journal_text(), HasSubstr(std::string("net/fetch refused: ") + sentence));
  }
  EXPECT_EQ(code(call("net/fetch", R"({"url":"https://chat.example.com/","body":"a",)"
                                   R"("bodyBase64":"YQ=="})")),
            -32602);
  EXPECT_EQ(code(call("net/fetch", R"({"url":"https://chat.example.com/","bodyBase64":"%%"})")),
            -32602);
  EXPECT_EQ(code(call("net/fetch", R"({"url":"https://1.2.3.4.5/"})")), -32602);
  EXPECT_EQ(code(call("net/stream", R"({"url":"https://example.org/"})")), -32003);
  EXPECT_TRUE(chat_.seen().empty());
}

TEST_F(NetService, AnAnswerPastTheManifestsLimitFails32004) {
  auto a = call("net/fetch", R"({"url":"https://chat.example.com/big?bytes=1048577"})");
  EXPECT_EQ(code(a), -32004);
  EXPECT_THAT(journal_text(), HasSubstr("net/fetch failed: the answer of chat.example.com is "
                                        "larger than 1 MiB"));
  plugin_->manifest.limits.net_bytes = 2 * 1024 * 1024;
  auto b = call("net/fetch", R"({"url":"https://chat.example.com/big?bytes=1048577"})");
  ASSERT_TRUE(b.as_object().contains("result")) << json::serialize(b);
  EXPECT_EQ(b.at("result").at("body").as_string().size(), 1048577u);
}

TEST_F(NetService, AStreamSendsTextChunksWholeCharactersThenItsEnd) {
  auto a = call("net/stream", R"({"url":"https://chat.example.com/chunked"})");
  ASSERT_TRUE(a.as_object().contains("result")) << json::serialize(a);
  const auto id = a.at("result").at("stream").as_int64();
  EXPECT_EQ(a.at("result").at("status"), 200);
  run_until([&] { return !notifications("net/end").empty(); });
  std::string text;
  for (const auto& c : notifications("net/chunk")) {
    EXPECT_EQ(c.at("stream"), id);
    ASSERT_TRUE(c.contains("data")) << "every piece was text";
    text += c.at("data").as_string();
  }
  EXPECT_EQ(text, "caf\xc3\xa9 au lait");
  ASSERT_EQ(notifications("net/end").size(), 1u);
  EXPECT_FALSE(notifications("net/end")[0].contains("error"));
}

TEST_F(NetService, EightStreamsAtOnceAndACancelledOneSaysNoMore) {
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 8; ++i) {
    auto a = call("net/stream", R"({"url":"https://chat.example.com/sse","sse":true})");
    ASSERT_TRUE(a.as_object().contains("result")) << json::serialize(a);
    ids.push_back(a.at("result").at("stream").as_int64());
  }
  auto ninth = call("net/stream", R"({"url":"https://chat.example.com/sse","sse":true})");
  EXPECT_EQ(code(ninth), -32003);
  EXPECT_EQ(ninth.at("error").at("message"),
            "8 streams are already open, the most a sandboxed plugin may have at once; one must "
            "end or be cancelled first");
  send("net/cancel", R"({"stream":)" + std::to_string(ids[0]) + "}", std::nullopt);
  auto again = call("net/stream", R"({"url":"https://chat.example.com/sse","sse":true})");
  ASSERT_TRUE(again.as_object().contains("result")) << json::serialize(again);
  run_until([&] { return notifications("net/chunk").size() >= 16; });
  for (int i = 0; i < 5; ++i) {
    io_.restart();
    io_.run_one_for(20ms);
  }
  EXPECT_TRUE(notifications("net/end").empty());
}

TEST_F(NetService, ASocketCarriesMessagesBothWaysAndItsCloseIsTold) {
  auto a = call("ws/open", R"({"url":"wss://chat.example.com/ws",)"
                           R"("headers":{"Authorization":"Bearer xoxb-secret-1"}})");
  ASSERT_TRUE(a.as_object().contains("result")) << json::serialize(a);
  const auto socket = a.at("result").at("socket").as_int64();
  const std::string s = std::to_string(socket);
  EXPECT_TRUE(call("ws/send", R"({"socket":)" + s + R"(,"text":"hi"})").at("result").is_null());
  EXPECT_TRUE(
      call("ws/send", R"({"socket":)" + s + R"(,"dataBase64":"AP8="})").at("result").is_null());
  run_until([&] { return notifications("ws/message").size() == 2; });
  const auto m = notifications("ws/message");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].at("text"), "echo:hi");
  EXPECT_EQ(m[1].at("dataBase64"), "AP8=");
  EXPECT_EQ(code(call("ws/send", R"({"socket":)" + s + R"(,"text":"a","dataBase64":"AA=="})")),
            -32602);
  EXPECT_TRUE(call("ws/close", R"({"socket":)" + s + "}").at("result").is_null());
  run_until([&] { return !notifications("ws/closed").empty(); });
  ASSERT_EQ(notifications("ws/closed").size(), 1u);
  EXPECT_EQ(notifications("ws/closed")[0].at("code"), 1000);
  EXPECT_EQ(code(call("ws/send", R"({"socket":)" + s + R"(,"text":"late"})")), -32602);
  // Its handshake's headers never reach the journal.
  EXPECT_THAT(journal_text(), ::testing::Not(HasSubstr("xoxb-secret-1")));
}

TEST_F(NetService, FourSocketsAtOnceWssOnlyAndNoneLeftAfterTheRun) {
  EXPECT_EQ(code(call("ws/open", R"({"url":"ws://chat.example.com/ws"})")), -32003);
  EXPECT_EQ(code(call("ws/open", R"({"url":"wss://sneaky.example.com/ws"})")), -32003);
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(
        call("ws/open", R"({"url":"wss://chat.example.com/ws"})").as_object().contains("result"));
  auto fifth = call("ws/open", R"({"url":"wss://chat.example.com/ws"})");
  EXPECT_EQ(code(fifth), -32003);
  EXPECT_EQ(fifth.at("error").at("message"),
            "4 WebSockets are already open, the most a sandboxed plugin may have at once; one "
            "must close first");
  session_->close();
  run_.reset();  // the run ends: its sockets are cut, and no one is told
  run_until([] { return false; }, 300ms);
  EXPECT_TRUE(notifications("ws/closed").empty());
  run_.emplace(*session_);
}

TEST_F(NetService, ARunsFetchesShareAConnectionThatEndsWithTheRun) {
  chat_.keep_alive(true);
  for (int i = 0; i < 3; ++i) {
    auto a = call("net/fetch", R"({"url":"https://chat.example.com/hello"})");
    ASSERT_TRUE(a.as_object().contains("result")) << json::serialize(a);
  }
  auto s = call("net/stream", R"({"url":"https://chat.example.com/chunked"})");
  ASSERT_TRUE(s.as_object().contains("result")) << json::serialize(s);
  run_until([&] { return !notifications("net/end").empty(); });
  ASSERT_TRUE(call("net/fetch", R"({"url":"https://chat.example.com/hello"})")
                  .as_object()
                  .contains("result"));
  EXPECT_EQ(chat_.connections(), 1);
  EXPECT_EQ(chat_.ended(), 0);
  session_->close();
  run_.reset();  // the run ends: the connection it kept alive closes
  run_until([&] { return chat_.ended() == 1; });
  EXPECT_EQ(chat_.ended(), 1);
  run_.emplace(*session_);
}

class NetServiceForAProcess : public NetService {
 protected:
  NetServiceForAProcess() : NetService(manifest::RunKind::command) {}
};

TEST_F(NetServiceForAProcess, HasItsOwnNetworkAndIsAnsweredMethodNotFound) {
  EXPECT_EQ(code(call("net/fetch", R"({"url":"https://chat.example.com/hello"})")), -32601);
  EXPECT_EQ(code(call("net/stream", R"({"url":"https://chat.example.com/hello"})")), -32601);
  EXPECT_EQ(code(call("ws/open", R"({"url":"wss://chat.example.com/ws"})")), -32601);
  EXPECT_TRUE(chat_.seen().empty());
}

}  // namespace
}  // namespace escouade::services
