#include "base/utf8.hpp"

#include <gtest/gtest.h>

#include <string>

namespace escouade {
namespace {

TEST(Utf8, AcceptsWellFormedText) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii, long enough for the eight-byte path"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9"));               // é
  EXPECT_TRUE(is_valid_utf8("\xE2\x80\xA2\xE2\x80\xA2"));  // ••
  EXPECT_TRUE(is_valid_utf8("\xF0\x9F\x98\x80 emoji"));    // U+1F600
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));          // U+10FFFF
  EXPECT_TRUE(is_valid_utf8(std::string("nul \0 inside", 12)));
}

TEST(Utf8, RefusesMalformedText) {
  EXPECT_FALSE(is_valid_utf8("\x80"));              // a continuation byte first
  EXPECT_FALSE(is_valid_utf8("\xC3"));              // cut character
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // overlong, three bytes
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate U+D800
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("abcdefgh\xE2\x80"));  // cut after the fast path
}

// The check steps over ASCII 32 and 8 bytes at a time: it must stop at the end of what it is
// given, whatever lies past it. A byte that is not UTF-8 sits right after each view here, and
// the view is at every length and offset around the steps (fuzz_policy found a read one byte
// past a view of 32 bytes).
TEST(Utf8, ReadsNothingPastTheEndAtAnyLength) {
  for (std::size_t offset = 0; offset < 8; ++offset) {
    for (std::size_t n = 0; n <= 100; ++n) {
      std::string buffer(offset, 'o');
      buffer.append(n, 'a');
      buffer.push_back('\xff');
      const std::string_view view(buffer.data() + offset, n);
      EXPECT_TRUE(is_valid_utf8(view)) << "offset " << offset << ", length " << n;
      if (n > 0) {
        std::string bad(buffer);
        bad[offset + n - 1] = '\xff';  // the last byte of the view is not UTF-8 either
        EXPECT_FALSE(is_valid_utf8(std::string_view(bad.data() + offset, n))) << n;
      }
    }
  }
}

TEST(Utf8, CompletePrefixStopsBeforeACutCharacter) {
  const std::string bullet = "\xE2\x80\xA2";
  EXPECT_EQ(utf8_complete_prefix("ab"), 2u);
  EXPECT_EQ(utf8_complete_prefix("ab" + bullet), 5u);
  EXPECT_EQ(utf8_complete_prefix("ab" + bullet.substr(0, 1)), 2u);
  EXPECT_EQ(utf8_complete_prefix("ab" + bullet.substr(0, 2)), 2u);
  EXPECT_EQ(utf8_complete_prefix("\xF0\x9F\x98"), 0u);
}

TEST(Utf8, ValidTextKeepsWhatIsWellFormedAndReplacesEachBadByte) {
  EXPECT_EQ(to_valid_utf8("plain é ✓ 😀"), "plain é ✓ 😀");
  EXPECT_EQ(to_valid_utf8("a\xff"
                          "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(to_valid_utf8("\xC3"), "\xEF\xBF\xBD");                  // cut at the end
  EXPECT_EQ(to_valid_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // an overlong '/'
  EXPECT_EQ(to_valid_utf8("\xED\xA0\x80"),                           // a surrogate
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(is_valid_utf8(to_valid_utf8("\x80\x80x\xF5")));
}

}  // namespace
}  // namespace escouade
