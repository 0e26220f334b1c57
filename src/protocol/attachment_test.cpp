#include "protocol/attachment.hpp"

#include <gtest/gtest.h>

namespace escouade::proto {
namespace {

TEST(Attachment, TheAgentIsNamedByItsIdOrItsKey) {
  EXPECT_EQ(attached_agent(R"({"agent":"a1","files":[]})"), "a1");
  EXPECT_EQ(attached_agent(R"({"agent":{"id":"a2","name":"Ada"}})"), "a2");
  EXPECT_EQ(attached_agent(R"({"key":"k3"})"), "k3");
  EXPECT_EQ(attached_agent(R"({"agent":{"name":"no id"},"key":"k4"})"), "k4");
}

TEST(Attachment, NothingNamedIsNoAgent) {
  EXPECT_EQ(attached_agent(""), "");
  EXPECT_EQ(attached_agent("[1,2]"), "");
  EXPECT_EQ(attached_agent(R"({"agent":7})"), "");
  EXPECT_EQ(attached_agent(R"({"agent":{"id":1}})"), "");
  EXPECT_EQ(attached_agent("{not json"), "");
}

}  // namespace
}  // namespace escouade::proto
