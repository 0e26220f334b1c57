#include "policy/paths.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "protocol/gen/errors.hpp"

namespace escouade::policy::paths_test {
namespace {

constexpr auto kInvalid = proto::ErrorCode::invalid_params;
constexpr auto kRefused = proto::ErrorCode::refused;

struct PathCase {
  const char* name;
  std::string path;
  // Empty: the path is accepted.
  std::string reason;
  proto::ErrorCode code = proto::ErrorCode::internal;  // when refused
  std::vector<std::string> parts = {};
};

void PrintTo(const PathCase& c, std::ostream* out) {
  *out << c.name;
}

PathCase ok(const char* name, std::string path, std::vector<std::string> parts) {
  return PathCase{name, std::move(path), "", proto::ErrorCode::internal, std::move(parts)};
}

PathCase no(const char* name, std::string path, proto::ErrorCode code, std::string reason) {
  return PathCase{name, std::move(path), std::move(reason), code};
}

class OwnFileParts : public ::testing::TestWithParam<PathCase> {};

TEST_P(OwnFileParts, VerdictAndReason) {
  const PathCase& c = GetParam();
  const auto parts = own_file_parts(c.path);
  if (c.reason.empty()) {
    ASSERT_TRUE(parts) << parts.error().message;
    EXPECT_EQ(*parts, c.parts);
  } else {
    ASSERT_FALSE(parts) << "accepted";
    EXPECT_EQ(parts.error().code, c.code);
    EXPECT_EQ(parts.error().message, c.reason);
  }
}

const std::string kAbsolute = "an absolute path (paths are relative to the folder)";
const std::string kDrive = "a Windows drive (paths are relative to the folder)";
const std::string kBackslash = "a backslash ('/' is the only separator)";
const std::string kClimb = "a '..' part (a path may not climb, even within the folder)";
const std::string kHidden = "a hidden file or folder";
const std::string kEmptyPart = "an empty part (a//b, or a '/' at the end)";
const std::string kDot = "a '.' part (name the file without it)";

INSTANTIATE_TEST_SUITE_P(
    Cases, OwnFileParts,
    ::testing::Values(
        ok("AtTheRoot", "rules.json", {"rules.json"}),
        ok("InASubfolder", "data/words.txt", {"data", "words.txt"}),
        ok("PercentIsNotDecoded", "%2e%2e", {"%2e%2e"}),
        ok("PercentInAFolderName", "%2e%2e/x", {"%2e%2e", "x"}),
        ok("ASpace", "my notes.txt", {"my notes.txt"}),
        ok("UnicodeName", "donn\xc3\xa9\x65s/\xc3\xa9t\xc3\xa9.txt",
           {"donn\xc3\xa9\x65s", "\xc3\xa9t\xc3\xa9.txt"}),
        ok("ANewlineIsPartOfTheName", "a\nb", {"a\nb"}),
        ok("OtherControlCharacters", "a\x01\x7f", {"a\x01\x7f"}),
        ok("DotsInsideAName", "a..b/c.", {"a..b", "c."}),
        ok("ManifestInASubfolder", "sub/escouade-plugin.json", {"sub", "escouade-plugin.json"}),
        ok("ManifestAsAFolder", "escouade-plugin.json/x", {"escouade-plugin.json", "x"}),
        ok("ManifestWithASuffix", "escouade-plugin.json.bak", {"escouade-plugin.json.bak"}),
        ok("ColonAfterTheStart", "notes:v2.txt", {"notes:v2.txt"}),
        ok("LongestPart", std::string(255, 'a'), {std::string(255, 'a')}),
        no("Empty", "", kInvalid, "an empty path"),
        no("NulInside", std::string("a\0b", 3), kInvalid, "a NUL character in the path"),
        no("NotUtf8", "a\xff", kInvalid, "a path that is not UTF-8"),
        no("TooLong", std::string(4097, 'a'), kInvalid, "a path longer than 4096 bytes"),
        no("FiveThousandBytes", std::string(5000, 'a'), kInvalid, "a path longer than 4096 bytes"),
        no("PartTooLong", std::string(256, 'a'), kInvalid, "a part longer than 255 bytes"),
        no("Absolute", "/etc/passwd", kRefused, kAbsolute),
        no("DoubleSlashAbsolute", "//etc/passwd", kRefused, kAbsolute),
        no("JustASlash", "/", kRefused, kAbsolute), no("Drive", "C:\\x", kRefused, kDrive),
        no("DriveWithSlash", "c:/x", kRefused, kDrive),
        no("DriveRelative", "C:x", kRefused, kDrive),
        no("UncPath", "\\\\server\\x", kRefused, kBackslash),
        no("BackslashClimb", "a\\..\\b", kRefused, kBackslash),
        no("BackslashInAName", "a\\b", kRefused, kBackslash),
        no("ClimbOut", "../x", kRefused, kClimb), no("ClimbFurther", "a/../../x", kRefused, kClimb),
        no("ClimbThatStaysInside", "a/../b", kRefused, kClimb),
        no("JustDotDot", "..", kRefused, kClimb), no("TrailingDotDot", "a/..", kRefused, kClimb),
        no("Env", ".env", kRefused, kHidden), no("GitConfig", ".git/config", kRefused, kHidden),
        no("HiddenInTheMiddle", "a/.hidden/b", kRefused, kHidden),
        no("HiddenAtTheEnd", "a/.secret", kRefused, kHidden),
        no("ThreeDots", "...x", kRefused, kHidden),
        no("Manifest", "escouade-plugin.json", kRefused, "the manifest"),
        no("ManifestUpperCase", "ESCOUADE-PLUGIN.JSON", kRefused, "the manifest"),
        no("ManifestMixedCase", "Escouade-Plugin.Json", kRefused, "the manifest"),
        no("ManifestAfterDot", "./escouade-plugin.json", kRefused, "the manifest"),
        no("ManifestAfterEmptyParts", ".//escouade-plugin.json", kRefused, "the manifest"),
        no("ManifestThroughAClimb", "a/../escouade-plugin.json", kRefused, kClimb),
        no("TrailingSlash", "data/", kInvalid, kEmptyPart),
        no("EmptyPart", "a//b", kInvalid, kEmptyPart), no("DotAtTheStart", "./a", kInvalid, kDot),
        no("DotInTheMiddle", "a/./b", kInvalid, kDot), no("JustDot", ".", kInvalid, kDot),
        no("ClimbWinsOverEmptyPart", "a//../x", kRefused, kClimb)),
    [](const auto& p) { return std::string(p.param.name); });

TEST(OwnFileParts, ExactlyTheLongestPathIsJudgedOnItsParts) {
  std::string path;
  while (path.size() + 101 <= kMaxOwnPathBytes)
    path += std::string(100, 'a') + "/";
  path += std::string(kMaxOwnPathBytes - path.size(), 'b');
  ASSERT_EQ(path.size(), kMaxOwnPathBytes);
  const auto parts = own_file_parts(path);
  ASSERT_TRUE(parts) << parts.error().message;
  EXPECT_EQ(parts->size(), 41u);
}

}  // namespace
}  // namespace escouade::policy::paths_test
