#include "services/run_scope.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <string>
#include <vector>

#include "protocol/gen/methods.hpp"

namespace escouade::services {
namespace {

namespace json = boost::json;

// Something a plugin opened: it says when it is ended.
struct Opened {
  std::vector<std::string>& ended;
  std::string name;
  ~Opened() { ended.push_back(name); }
};

class RunScopeTest : public ::testing::Test {
 protected:
  boost::asio::io_context io_;
  std::vector<std::string> lines_;
  rpc::Session session_{io_.get_executor(), [this](std::string l) { lines_.push_back(l); },
                        [](std::string_view) {}};
};

TEST_F(RunScopeTest, AChannelNotifiesThePluginAfterTheHandlerReturned) {
  RunScope scope(session_);
  PluginChannel channel = scope.channel();
  EXPECT_TRUE(channel.open());
  EXPECT_TRUE(channel.notify<proto::method::TimerFired>(proto::TimerParams{1}));
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(json::parse(lines_[0]).at("method"), "timer/fired");
}

TEST_F(RunScopeTest, AChannelSendsNothingOnceTheRunHasEnded) {
  std::optional<PluginChannel> kept;
  {
    RunScope scope(session_);
    kept = scope.channel();
  }
  EXPECT_FALSE(kept->open());
  EXPECT_FALSE(kept->notify<proto::method::TimerFired>(proto::TimerParams{1}));
  EXPECT_TRUE(lines_.empty());
}

TEST_F(RunScopeTest, AChannelSendsNothingOnceTheSessionIsClosed) {
  RunScope scope(session_);
  PluginChannel channel = scope.channel();
  session_.close();
  EXPECT_FALSE(channel.notify<proto::method::TimerFired>(proto::TimerParams{1}));
  EXPECT_TRUE(lines_.empty());
}

TEST_F(RunScopeTest, WhatThePluginOpenedGoesWithTheRunTheLastFirst) {
  std::vector<std::string> ended;
  {
    RunScope scope(session_);
    scope.hold(std::unique_ptr<Opened>(new Opened{ended, "timer"}));
    scope.hold(std::unique_ptr<Opened>(new Opened{ended, "stream"}));
    scope.on_end([&] { ended.push_back("bookkeeping"); });
    EXPECT_EQ(scope.holding(), 2u);
    EXPECT_TRUE(ended.empty());
  }
  EXPECT_EQ(ended, (std::vector<std::string>{"bookkeeping", "stream", "timer"}));
}

TEST_F(RunScopeTest, WhatIsReleasedEndsAtOnce) {
  std::vector<std::string> ended;
  RunScope scope(session_);
  Opened& timer = scope.hold(std::unique_ptr<Opened>(new Opened{ended, "timer"}));
  scope.release(&timer);
  EXPECT_EQ(ended, std::vector<std::string>{"timer"});
  EXPECT_EQ(scope.holding(), 0u);
}

}  // namespace
}  // namespace escouade::services
