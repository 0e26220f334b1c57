#include "base/quote.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "base/utf8.hpp"

namespace escouade {
namespace {

constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();
const std::string kEllipsis = "\xE2\x80\xA6";

TEST(QuoteName, WritesAStringAsJsonDoes) {
  EXPECT_EQ(quote_name("data/words.txt"), R"("data/words.txt")");
  EXPECT_EQ(quote_name(""), R"("")");
  EXPECT_EQ(quote_name("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(quote_name("line\nnext\ttab\r"), R"("line\nnext\ttab\r")");
  EXPECT_EQ(quote_name(std::string_view("nul\0one\x01", 8)), R"("nul\u0000one\u0001")");
  EXPECT_EQ(quote_name("caf\xC3\xA9"), "\"caf\xC3\xA9\"");
  EXPECT_EQ(quote_name("bad\xFF"
                       "byte"),
            "\"bad\xEF\xBF\xBD"
            "byte\"");
  EXPECT_EQ(quote_name("del\x7F"), R"("del\u007F")");
}

TEST(QuoteName, CutsALongTextAtACharacterAndSaysHowLongItWas) {
  EXPECT_EQ(quote_name("abcdef", 3), "\"abc\"\xE2\x80\xA6 (6 bytes)");
  EXPECT_EQ(quote_name("ab\xC3\xA9", 3), "\"ab\xC3\xA9\"");  // the character is kept whole
  EXPECT_EQ(quote_name("abc", 3), R"("abc")");
}

TEST(QuoteForJournal, KeepsAShortTextWhole) {
  EXPECT_EQ(quote_for_journal("hello", 200), "hello");
  EXPECT_EQ(quote_for_journal("", 200), "");
  EXPECT_EQ(quote_for_journal("abc", 3), "abc");
  EXPECT_EQ(quote_for_journal("abcd", 3), "abc" + kEllipsis);
  EXPECT_EQ(quote_for_journal("abc", 0), kEllipsis);
}

TEST(QuoteForJournal, CountsCharactersAndNeverCutsOne) {
  const std::string e = "\xC3\xA9";              // é, two bytes
  const std::string euro = "\xE2\x82\xAC";       // €, three bytes
  const std::string smile = "\xF0\x9F\x98\x80";  // U+1F600, four bytes
  EXPECT_EQ(quote_for_journal(e + e + e, 2), e + e + kEllipsis);
  EXPECT_EQ(quote_for_journal(smile + smile + smile, 1), smile + kEllipsis);
  EXPECT_EQ(quote_for_journal(euro + "uro", 1), euro + kEllipsis);

  const std::string mixed = "a" + e + euro + smile + "b" + smile + e;
  for (std::size_t chars = 0; chars <= 8; ++chars) {
    std::string quoted = quote_for_journal(mixed, chars);
    EXPECT_TRUE(is_valid_utf8(quoted)) << chars;
  }
  EXPECT_EQ(quote_for_journal(mixed, 4), "a" + e + euro + smile + kEllipsis);
  EXPECT_EQ(quote_for_journal(mixed, 7), mixed);
}

TEST(QuoteForJournal, EscapesWhatItKeeps) {
  EXPECT_EQ(quote_for_journal("a\nb\rc\x01", 200), "a\\nb\\rc\\x01");
  EXPECT_EQ(quote_for_journal("a\nb\rc", 2), "a\\n" + kEllipsis);
  EXPECT_EQ(quote_for_journal("tab\there", 200), "tab\there");
}

TEST(QuoteForJournal, CountsAnInvalidByteAsOneCharacter) {
  EXPECT_EQ(quote_for_journal("\xFF"
                              "ab",
                              2),
            "\\xFFa" + kEllipsis);
  EXPECT_EQ(quote_for_journal("\xE2\x82", 200), "\\xE2\\x82");           // a cut €
  EXPECT_EQ(quote_for_journal("\xC0\xAF", 200), "\\xC0\\xAF");           // an overlong '/'
  EXPECT_EQ(quote_for_journal("\xED\xA0\x80", 1), "\\xED" + kEllipsis);  // a surrogate
}

TEST(EscapeForJournal, EscapesControlCharactersAndLineSeparators) {
  std::string out;
  const std::string text = std::string("nul\0 esc\x1B del\x7F", 14) + " nel\xC2\x85 csi\xC2\x9B" +
                           " ls\xE2\x80\xA8 ps\xE2\x80\xA9 keep\\n \xC2\xA0 \xE2\x80\xA2";
  EXPECT_EQ(append_escaped_for_journal(out, text, kNoLimit, kNoLimit), text.size());
  EXPECT_EQ(out,
            "nul\\x00 esc\\x1B del\\x7F nel\\u0085 csi\\u009B ls\\u2028 ps\\u2029 keep\\n "
            "\xC2\xA0 \xE2\x80\xA2");
}

TEST(EscapeForJournal, StopsBeforeAnEscapeOrACharacterPassesTheBudget) {
  std::string out = "prefix:";
  EXPECT_EQ(append_escaped_for_journal(out, "ab\ncd", kNoLimit, 3), 2u);
  EXPECT_EQ(out, "prefix:ab");  // `\n` takes two bytes: only one was left

  out.clear();
  EXPECT_EQ(append_escaped_for_journal(out, "a\xC3\xA9", kNoLimit, 2), 1u);
  EXPECT_EQ(out, "a");

  out.clear();
  EXPECT_EQ(append_escaped_for_journal(out, "a\xFF", kNoLimit, 4), 1u);
  EXPECT_EQ(out, "a");  // `\xFF` takes four bytes
}

TEST(EscapeForJournal, ARunOfPlainTextKeepsBothBudgets) {
  // Plain ASCII is appended a run at a time: the run stops at the budget of characters, at the
  // budget of bytes, and at the first character to escape, which is then escaped.
  const std::string text = std::string(40, 'a') + "\tb\nc" + std::string(10, 'd');
  std::string out;
  EXPECT_EQ(append_escaped_for_journal(out, text, 25, kNoLimit), 25u);
  EXPECT_EQ(out, std::string(25, 'a'));
  out = "x";
  EXPECT_EQ(append_escaped_for_journal(out, text, kNoLimit, 30), 30u);
  EXPECT_EQ(out, "x" + std::string(30, 'a'));
  out.clear();
  EXPECT_EQ(append_escaped_for_journal(out, text, kNoLimit, kNoLimit), text.size());
  EXPECT_EQ(out, std::string(40, 'a') + "\tb\\nc" + std::string(10, 'd'));
  out.clear();
  EXPECT_EQ(append_escaped_for_journal(out, text, 42, kNoLimit), 42u);  // a, tab, b
  EXPECT_EQ(out, std::string(40, 'a') + "\tb");
}

TEST(EscapeForJournal, FindsWhatToEscapeAtEveryPlaceOfAWord) {
  // Plain text is scanned eight bytes at a time: each byte that is escaped, or kept though it
  // is not printable ASCII (a tab), is put at every offset of three words, and the bytes
  // around it at the edges of the printable range (space and tilde).
  struct Case {
    std::string in;
    std::string out;
  };
  const Case cases[] = {{std::string(1, '\0'), "\\x00"},
                        {"\x01", "\\x01"},
                        {"\x1F", "\\x1F"},
                        {"\x7F", "\\x7F"},
                        {"\x80", "\\x80"},
                        {"\xFF", "\\xFF"},
                        {"\xC2\x85", "\\u0085"},
                        {"\xE2\x80\xA8", "\\u2028"},
                        {"\n", "\\n"},
                        {"\r", "\\r"},
                        {"\t", "\t"},
                        {"\xC3\xA9", "\xC3\xA9"},
                        {" ", " "},
                        {"~", "~"}};
  for (const Case& c : cases) {
    for (std::size_t at = 0; at <= 24; ++at) {
      const std::string before = std::string(at, 'a');
      const std::string after = " ~" + std::string(30 - at, 'z');
      const std::string text = before + c.in + after;
      std::string out;
      EXPECT_EQ(append_escaped_for_journal(out, text, kNoLimit, kNoLimit), text.size());
      EXPECT_EQ(out, before + c.out + after) << "offset " << at << ", " << c.out;
      // A byte budget that ends just before it: the text is cut there.
      out.clear();
      if (c.out.size() > 1) {
        EXPECT_EQ(append_escaped_for_journal(out, text, kNoLimit, at + c.out.size() - 1), at);
        EXPECT_EQ(out, before);
      }
    }
  }
}

}  // namespace
}  // namespace escouade
