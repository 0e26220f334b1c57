#include "protocol/json_strings.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace escouade::proto {
namespace {

namespace json = boost::json;

void hide(std::string& s) {
  for (std::size_t at = s.find("s3cret"); at != std::string::npos; at = s.find("s3cret", at))
    s.replace(at, 6, "••••");
}

TEST(JsonStrings, EveryStringAndKeyIsRewritten) {
  json::value v = json::parse(
      R"({"a":"my s3cret","list":["x","s3cret",{"deep":["s3cret!"]}],"s3cret key":1,"n":2.5})");
  rewrite_strings(v, hide);
  EXPECT_EQ(v,
            json::parse(
                R"({"a":"my ••••","list":["x","••••",{"deep":["••••!"]}],"•••• key":1,"n":2.5})"));
}

TEST(JsonStrings, WhatHasNoStringIsLeftAsItIs) {
  json::value v = json::parse(R"([1,true,null,{"k":[2]}])");
  const json::value before = v;
  int calls = 0;
  rewrite_strings(v, [&](std::string&) { ++calls; });
  EXPECT_EQ(v, before);
  EXPECT_EQ(calls, 1);  // the one key
}

}  // namespace
}  // namespace escouade::proto
