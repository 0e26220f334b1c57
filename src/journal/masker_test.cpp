#include "journal/masker.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"
#include "journal/journal.hpp"

namespace escouade {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kBullets(Masker::kMask);

std::string masked(const Masker& masker, std::string text) {
  masker.mask(text);
  return text;
}

// The secret of the issue: a quote, a backslash, a slash and a letter outside ASCII.
const std::string kTricky = "pa\"ss\\word/\xC3\xA9";

TEST(MaskerTest, WithoutASecretLeavesTheTextAsItIs) {
  Masker masker;
  EXPECT_EQ(masker.size(), 0u);
  EXPECT_EQ(masked(masker, "token=abc \\u0041 \xFF"), "token=abc \\u0041 \xFF");
}

TEST(MaskerTest, MasksEveryOccurrenceInsideWordsOrNot) {
  Masker masker;
  masker.add("SECRET");
  EXPECT_EQ(masked(masker, "xxSECRETyy"), "xx" + kBullets + "yy");
  EXPECT_EQ(masked(masker, "SECRET, then SECRET."), kBullets + ", then " + kBullets + ".");
  EXPECT_EQ(masked(masker, "secret and SECRE T stay"), "secret and SECRE T stay");
}

TEST(MaskerTest, IgnoresEmptySecretsAndKnownOnes) {
  Masker masker;
  masker.add("");
  EXPECT_EQ(masker.size(), 0u);
  masker.add("token-1");
  masker.add(std::string("token-1"));
  masker.add("token-2");
  EXPECT_EQ(masker.size(), 2u);
  EXPECT_EQ(masked(masker, "token-1 token-2 token-3"), kBullets + " " + kBullets + " token-3");
}

TEST(MaskerTest, MasksASecretOfOneByteEverywhere) {
  Masker masker;
  masker.add("a");
  EXPECT_EQ(masked(masker, "a banana"),
            kBullets + " b" + kBullets + "n" + kBullets + "n" + kBullets);
}

TEST(MaskerTest, LearnsSecretsAddedAfterAMask) {
  Masker masker;
  masker.add("first-secret");
  EXPECT_EQ(masked(masker, "first-secret second-secret"), kBullets + " second-secret");
  masker.add("second-secret");
  EXPECT_EQ(masked(masker, "first-secret second-secret"), kBullets + " " + kBullets);
}

TEST(MaskerTest, OverlappingSecretsLeaveNoneVisible) {
  Masker masker;
  masker.add("abc");
  masker.add("bcd");
  EXPECT_EQ(masked(masker, "abcd"), kBullets);
  // "abc" then "bcd" only touch in "abcbcd": two masks.
  EXPECT_EQ(masked(masker, "xabcdx abcbcd"), "x" + kBullets + "x " + kBullets + kBullets);
  masker.add("dab");
  EXPECT_EQ(masked(masker, "<abcdabcd>"), "<" + kBullets + ">");
}

TEST(MaskerTest, TheLongestOfNestedSecretsWins) {
  Masker masker;
  masker.add("tok");
  masker.add("token");
  masker.add("ken");
  EXPECT_EQ(masked(masker, "tokenize"), kBullets + "ize");
  EXPECT_EQ(masked(masker, "tok ken"), kBullets + " " + kBullets);
}

TEST(MaskerTest, OverlappingOccurrencesOfOneSecretMakeOneMask) {
  Masker masker;
  masker.add("aba");
  EXPECT_EQ(masked(masker, "ababa"), kBullets);
  EXPECT_EQ(masked(masker, "abaaba"), kBullets + kBullets);  // touching, not overlapping
}

TEST(MaskerTest, MasksTheSecretsJsonForms) {
  Masker masker;
  masker.add(kTricky);
  const std::vector<std::string> forms = {
      kTricky,
      R"(pa\"ss\\word/é)",
      R"(pa\"ss\\word\/é)",
      R"(pa\"ss\\word\/\u00e9)",
      R"(pa\"ss\\word/\u00E9)",
      R"(\u0070a\u0022ss\u005Cword\u002f\u00e9)",  // every character escaped, mixed case
  };
  for (const std::string& form : forms) {
    EXPECT_EQ(masked(masker, R"({"msg":"login with )" + form + R"( failed"})"),
              R"({"msg":"login with )" + kBullets + R"( failed"})")
        << form;
  }
}

TEST(MaskerTest, MasksControlCharactersInEveryEscape) {
  Masker masker;
  const std::string secret = "a\b\f\n\r\t\x01z";
  masker.add(secret);
  for (const std::string& form : {secret, std::string(R"(a\b\f\n\r\t\u0001z)"),
                                  std::string(R"(a\u0008\u000C\u000a\u000D\u0009\u0001z)"),
                                  std::string(R"(a\b\f\n\r\t\x01z)")}) {
    EXPECT_EQ(masked(masker, "<" + form + ">"), "<" + kBullets + ">") << form;
  }
}

TEST(MaskerTest, MasksCharactersOutsideTheBasicPlaneWrittenAsSurrogatePairs) {
  Masker masker;
  masker.add("k\xF0\x9F\x98\x80y");  // k😀y
  EXPECT_EQ(masked(masker, R"(= k\ud83d\ude00y)"), "= " + kBullets);
  EXPECT_EQ(masked(masker, R"(= k\uD83D\uDE00y)"), "= " + kBullets);
  EXPECT_EQ(masked(masker, "= k\xF0\x9F\x98\x80y"), "= " + kBullets);
  // A lone surrogate stands for no character: nothing to match.
  EXPECT_EQ(masked(masker, R"(k\ud83dy k\ude00y)"), R"(k\ud83dy k\ude00y)");
}

TEST(MaskerTest, MasksAnEscapeAtEitherEndOfALongSecret) {
  Masker masker;
  const std::string letters(30, 'k');
  masker.add("\"" + letters);
  masker.add(letters + "/");
  EXPECT_EQ(masked(masker, "(\\\"" + letters + ")"), "(" + kBullets + ")");
  EXPECT_EQ(masked(masker, "(" + letters + "\\/)"), "(" + kBullets + ")");
  EXPECT_EQ(masked(masker, "(\\\\\\\"" + letters + ")"), "(" + kBullets + ")");  // escaped twice
}

TEST(MaskerTest, MasksASecretEscapedTwice) {
  Masker masker;
  masker.add(kTricky);
  // A JSON string holding a JSON text that holds the secret.
  const std::string twice = R"("{\"password\":\"pa\\\"ss\\\\word\\/\\u00e9\"}")";
  EXPECT_EQ(masked(masker, twice), R"("{\"password\":\")" + kBullets + R"(\"}")");
}

TEST(MaskerTest, AStrayBackslashDoesNotHideARawSecret) {
  Masker masker;
  masker.add(R"(C:\new\token)");
  masker.add("plain");
  EXPECT_EQ(masked(masker, R"(path C:\new\token; \q \u12 \x4 plain\)"),
            "path " + kBullets + R"(; \q \u12 \x4 )" + kBullets + "\\");
}

TEST(MaskerTest, MatchesBytesThatAreNotUtf8) {
  Masker masker;
  masker.add("\xFF\xFE-key");
  EXPECT_EQ(masked(masker, "x\xFF\xFE-key\xFF"), "x" + kBullets + "\xFF");
}

TEST(MaskerTest, MasksALineAssembledFromTwoWrites) {
  Masker masker;
  masker.add("s3cr3t-value");
  std::string line = R"(stderr: {"auth":"s3cr3t-)";
  line += R"(value"})";
  EXPECT_EQ(masked(masker, line), R"(stderr: {"auth":")" + kBullets + R"("})");
}

// Agrees with a plain search for every secret when no escape is involved. The last settings
// have enough long secrets over many byte values that most states of the automaton are past its
// dense rows; in the very last, secrets and texts are cut from one random text, so that partial
// matches run deep and fall back through failure links often.
TEST(MaskerTest, AgreesWithAPlainSearch) {
  struct Setting {
    int secrets;
    int byte_values;
    int longest;
    bool cut_from_one_text;
  };
  std::mt19937 random(20261129);
  for (const Setting& setting : {Setting{5, 4, 6, false}, Setting{40, 3, 5, false},
                                 Setting{300, 200, 60, false}, Setting{300, 200, 60, true}}) {
    const int byte_values = setting.byte_values;
    auto random_text = [&random, byte_values](std::size_t length) {
      std::string s;
      for (std::size_t k = 0; k < length; ++k) {
        int c = '0' + static_cast<int>(random() % static_cast<unsigned>(byte_values));
        if (c >= '\\') ++c;  // never a backslash: no escape to decode
        s += static_cast<char>(c);
      }
      return s;
    };
    const std::string source = random_text(3000);
    auto some_text = [&](std::size_t length) {
      if (!setting.cut_from_one_text) return random_text(length);
      return source.substr(random() % (source.size() - length), length);
    };
    Masker masker;
    std::vector<std::string> secrets;
    for (int k = 0; k < setting.secrets; ++k) {
      secrets.push_back(some_text(1 + random() % static_cast<unsigned>(setting.longest)));
      masker.add(secrets.back());
    }
    for (int round = 0; round < 200; ++round) {
      std::string text;
      while (text.size() < 200)
        text += some_text(1 + random() % 80);
      for (int k = 0; k < 3; ++k)  // a few real occurrences
        text.insert(random() % text.size(), secrets[random() % secrets.size()]);

      std::vector<bool> covered(text.size() + 1, false);
      for (const std::string& secret : secrets)
        for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 1))
          for (std::size_t k = at; k < at + secret.size(); ++k)
            covered[k] = true;
      // Occurrences that overlap make one mask, ones that only touch make two: the plain search
      // marks where each starts to tell them apart.
      std::vector<std::size_t> run_end(text.size() + 1, 0);
      for (const std::string& secret : secrets)
        for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 1))
          run_end[at] = std::max(run_end[at], at + secret.size());
      std::string expected;
      for (std::size_t k = 0; k < text.size();) {
        if (!covered[k]) {
          expected += text[k++];
          continue;
        }
        std::size_t end = run_end[k];
        for (std::size_t j = k; j < end; ++j)
          end = std::max(end, run_end[j]);
        expected += kBullets;
        k = end;
      }
      ASSERT_EQ(masked(masker, text), expected) << text;
    }
  }
}

// The journal, wired as the host wires it, writes and keeps no form of the secret.
class MaskedJournalTest : public ::testing::Test {
 protected:
  TempDir dir_{"escouade-masker"};
  const fs::path& root_ = dir_.path();
};

TEST_F(MaskedJournalTest, TheFileAndTheTailHoldNoFormOfTheSecret) {
  Masker masker;
  const std::string with_newline = "line1\nline2-secret";
  masker.add(kTricky);
  masker.add(with_newline);

  JournalOptions options;
  options.dir = root_;
  options.plugin_id = "dev.example.guard";
  Journal journal(std::move(options));
  journal.set_masker([&masker](std::string& text) { masker.mask(text); });

  const std::vector<std::string> forms = {
      kTricky,
      R"(pa\"ss\\word/é)",
      R"(pa\"ss\\word\/\u00e9)",
      R"(pa\"ss\\word\/\u00E9)",
      R"(pa\\\"ss\\\\word\\/\\u00e9)",
      with_newline,
      R"(line1\nline2-secret)",
      R"(line1\u000Aline2-secret)",
  };
  for (const std::string& form : forms)
    journal.info(R"(stderr: {"token":")" + form + R"("})");
  journal.warn("log: the key was xx" + kTricky + "yy");
  journal.error("crashed with exit code 1; last stderr: " + with_newline);

  std::ifstream in(journal.path(), std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::string file = bytes.str();
  std::string tail;
  for (const std::string& line : journal.tail())
    tail += line + "\n";

  for (const std::string* kept : {&file, &tail}) {
    for (const std::string& form : forms)
      EXPECT_THAT(*kept, Not(HasSubstr(form)));
    EXPECT_THAT(*kept, Not(HasSubstr("word")));
    EXPECT_THAT(*kept, Not(HasSubstr("line2-secret")));
    EXPECT_THAT(*kept, HasSubstr(R"(stderr: {"token":")" + kBullets + R"("})"));
    EXPECT_THAT(*kept, HasSubstr("the key was xx" + kBullets + "yy"));
    EXPECT_THAT(*kept, HasSubstr("last stderr: " + kBullets + "\n"));
  }
  EXPECT_EQ(journal.tail().size(), forms.size() + 2);
}

}  // namespace
}  // namespace escouade
