// The client's WebSockets against a real wss server in the network lab.

#include <gtest/gtest.h>

#include "net/net_test_fixture.hpp"

namespace escouade::net {
namespace {

// What a socket told: its open, its messages, its close.
struct Told {
  std::optional<Result<void>> open;
  std::vector<std::pair<bool, std::string>> messages;
  std::optional<std::pair<int, std::string>> closed;
};

class NetWebSocket : public NetClient {
 protected:
  std::shared_ptr<WebSocket> open(const std::string& url, Told& told,
                                  std::vector<Header> headers = {}) {
    auto target = policy::judge_url(grant_, url, policy::UrlUse::websocket);
    EXPECT_TRUE(target) << target.error().message;
    if (!target) return nullptr;
    auto ws =
        client_->websocket(*target, std::move(headers), WebSocketLimits{}, {},
                           WebSocketHandlers{[&told](Result<void> r) { told.open = std::move(r); },
                                             [&told](bool text, std::string data) {
                                               told.messages.emplace_back(text, std::move(data));
                                             },
                                             [&told](int code, std::string reason) {
                                               told.closed.emplace(code, std::move(reason));
                                             }});
    run_until([&] { return told.open.has_value(); });
    return ws;
  }
};

TEST_F(NetWebSocket, OpensOverWssSendsAndReceivesInOrderAndClosesWith1000) {
  Told told;
  auto ws = open("wss://chat.example.com/ws", told, {{"Authorization", "Bearer xoxb"}});
  ASSERT_TRUE(told.open && *told.open) << told.open->error().message;
  EXPECT_EQ(chat_.seen().at(0).headers.at("authorization"), "Bearer xoxb");
  ASSERT_TRUE(ws->send(true, "one"));
  ASSERT_TRUE(ws->send(true, "two"));
  ASSERT_TRUE(ws->send(false, std::string("\x00\xff", 2)));
  run_until([&] { return told.messages.size() == 3; });
  ASSERT_EQ(told.messages.size(), 3u);
  EXPECT_EQ(told.messages[0], std::make_pair(true, std::string("echo:one")));
  EXPECT_EQ(told.messages[1], std::make_pair(true, std::string("echo:two")));
  EXPECT_EQ(told.messages[2], std::make_pair(false, std::string("\x00\xff", 2)));
  ws->close();
  run_until([&] { return told.closed.has_value(); });
  ASSERT_TRUE(told.closed);
  EXPECT_EQ(told.closed->first, 1000);
  EXPECT_FALSE(ws->send(true, "late"));
}

TEST_F(NetWebSocket, TheServersCloseAndABrokenConnectionAreTold) {
  Told told;
  auto ws = open("wss://chat.example.com/ws", told);
  ASSERT_TRUE(ws->send(true, "close"));
  run_until([&] { return told.closed.has_value(); });
  ASSERT_TRUE(told.closed);
  EXPECT_EQ(*told.closed, std::make_pair(1001, std::string("bye")));

  Told cut;
  auto ws2 = open("wss://chat.example.com/ws", cut);
  ASSERT_TRUE(ws2->send(true, "drop"));
  run_until([&] { return cut.closed.has_value(); });
  ASSERT_TRUE(cut.closed);
  EXPECT_EQ(cut.closed->first, 1006);
}

TEST_F(NetWebSocket, AMessageOver1MiBClosesTheSocketWith1009) {
  Told told;
  auto ws = open("wss://chat.example.com/ws", told);
  ASSERT_TRUE(ws->send(true, "big:1048576"));
  run_until([&] { return told.messages.size() == 1; });
  ASSERT_EQ(told.messages.size(), 1u);
  EXPECT_EQ(told.messages[0].second.size(), 1048576u);  // 1 MiB is within
  ASSERT_TRUE(ws->send(true, "big:1048577"));
  run_until([&] { return told.closed.has_value(); });
  ASSERT_TRUE(told.closed);
  EXPECT_EQ(told.closed->first, 1009);
  EXPECT_EQ(told.closed->second, "a message over 1 MiB came");
  EXPECT_EQ(told.messages.size(), 1u);
}

TEST_F(NetWebSocket, ASendIsRefusedPast1MiBOrWhenMoreThan256KiBWouldWait) {
  Told told;
  auto ws = open("wss://chat.example.com/ws", told);
  auto too_long = ws->send(true, std::string(1024 * 1024 + 1, 'a'));
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error().code, proto::ErrorCode::refused);
  EXPECT_EQ(too_long.error().message,
            "a message of 1048577 bytes passes 1 MiB, the most a WebSocket message may hold");
  // Nothing waits: a long message goes. Then what waits bounds what may join it.
  ASSERT_TRUE(ws->send(false, std::string(1024 * 1024, 'a')));  // comes back as it is
  auto more = ws->send(true, "b");
  ASSERT_FALSE(more);
  EXPECT_EQ(more.error().message,
            "1048576 bytes already wait to be sent on this socket: with this message they would "
            "pass 256 KiB; send it once they went");
  run_until([&] { return told.messages.size() == 1; });
  ASSERT_TRUE(ws->send(true, std::string(200 * 1024, 'c')));
  ASSERT_TRUE(ws->send(true, std::string(56 * 1024, 'd')));  // 256 KiB waiting at most: within
  EXPECT_FALSE(ws->send(true, "e"));
  run_until([&] { return told.messages.size() == 3; });
  EXPECT_EQ(told.messages.size(), 3u);
}

TEST_F(NetWebSocket, ADeclaredNameOfThisMachineIsRefusedAndAServerThatDeclinesFails) {
  Told refused;
  open("wss://sneaky.example.com/ws", refused);
  ASSERT_TRUE(refused.open && !*refused.open);
  EXPECT_EQ(refused.open->error().code, proto::ErrorCode::refused);
  EXPECT_EQ(loopback_.connections(), 0);

  Told declined;
  open("wss://chat.example.com/hello", declined);  // no WebSocket there
  ASSERT_TRUE(declined.open && !*declined.open);
  EXPECT_EQ(declined.open->error().code, proto::ErrorCode::failed);
  EXPECT_EQ(declined.open->error().message,
            "chat.example.com declined the WebSocket: it answered 200");
}

}  // namespace
}  // namespace escouade::net
