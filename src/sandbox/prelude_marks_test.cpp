// Whether a line may be the run.js prelude's own (sandbox/prelude_marks.hpp): the same answer as
// looking for each mark in turn, on the lines the host writes and on lines made to hide a mark.

#include "sandbox/prelude_marks.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>

namespace escouade::sandbox {
namespace {

// The definition: any of the marks anywhere in the line.
bool holds_a_mark(std::string_view line) {
  for (const std::string_view mark : {"escouade-", "\"net/", "\"ws/", "\"proc/", "\"timer/fired\""})
    if (line.find(mark) != std::string_view::npos) return true;
  return false;
}

TEST(PreludeMarks, TheLinesOfThePreludesOwnHoldAMark) {
  for (const std::string_view line :
       {R"({"jsonrpc":"2.0","id":"escouade-net:ab12cd34ef56gh78:3","result":{"stream":4}})",
        R"({"jsonrpc":"2.0","id":"escouade-timer:x:1","result":null})",
        R"({"jsonrpc":"2.0","method":"net/chunk","params":{"stream":4,"data":"hi"}})",
        R"({"jsonrpc":"2.0","method":"net/end","params":{"stream":4}})",
        R"({"jsonrpc":"2.0","method":"ws/message","params":{"socket":1,"text":"x"}})",
        R"({"jsonrpc":"2.0","method":"proc/exit","params":{"process":2,"code":0}})",
        R"({"jsonrpc":"2.0","method":"timer/fired","params":{"timer":1}})", "escouade-", "\"net/",
        "\"timer/fired\"\n", "x-escouade-y"}) {
    EXPECT_TRUE(may_be_the_preludes(line)) << line;
  }
}

TEST(PreludeMarks, LinesOfTheBundleWithoutAMarkGoStraightToIt) {
  for (
      const std::string_view line :
      {R"({"jsonrpc":"2.0","id":7,"method":"permissions/decide","params":{"request":)"
       R"({"id":"r-1","kind":"command","tool":"Bash","input":{"command":"npm test -- --watch=false"}}}})",
       R"({"jsonrpc":"2.0","id":"escouade","method":"test/echo"})",
       R"({"jsonrpc":"2.0","method":"agent.status","params":{"x":"a net/","y":"its timer/fired"}})",
       R"({"a":"escouad-e","b":"-escouade","c":"scouade-","d":"timer/fire"})", "", "-", "--------",
       "escouade", "\"", "\"net", "\"timer/fired", "\"ws"}) {
    EXPECT_FALSE(may_be_the_preludes(line)) << line;
  }
}

TEST(PreludeMarks, AnswersAsLookingForEachMarkOnLinesMadeToHideThem) {
  // Lines of the marks' pieces, quotes, dashes and letters, in every order: each mark split,
  // doubled, at the start and at the end of a line.
  const std::string_view pieces[] = {
      "escouade-", "escouade", "scouade-", "e",     "-", "\"", "net/", "ws/", "proc/",
      "timer/",    "fired",    "fired\"",  "\"net", "/", "x",  "\\",   "\n"};
  std::mt19937 random(32);
  int with = 0, without = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string line;
    const int n = static_cast<int>(random() % 12);
    for (int k = 0; k < n; ++k)
      line += pieces[random() % std::size(pieces)];
    const bool expected = holds_a_mark(line);
    ASSERT_EQ(may_be_the_preludes(line), expected) << line;
    (expected ? with : without)++;
  }
  // Both answers were asked often enough to mean something.
  EXPECT_GT(with, 2000);
  EXPECT_GT(without, 2000);
}

}  // namespace
}  // namespace escouade::sandbox
