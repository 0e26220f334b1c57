#include "runtime/module_fingerprint.hpp"

#include <gtest/gtest.h>

namespace escouade::runtime {
namespace {

// SHA-256 of "abc" (FIPS 180-2's example).
constexpr std::string_view kAbc =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(ModuleFingerprint, AMatchingDigestPassesInEitherCase) {
  EXPECT_FALSE(fingerprint_mismatch("plugin.wasm", "abc", kAbc));
  std::string upper(kAbc);
  for (char& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_FALSE(fingerprint_mismatch("plugin.wasm", "abc", upper));
}

TEST(ModuleFingerprint, ADifferentModuleIsRefusedNamingBothDigests) {
  const auto why = fingerprint_mismatch("plugin.wasm", "abd", kAbc);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->rfind("its module plugin.wasm does not match the fingerprint of its store: its "
                       "SHA-256 is ",
                       0),
            0u)
      << *why;
  EXPECT_NE(
      why->find(", the store's version.json says " + std::string(kAbc) + "; it was not compiled"),
      std::string::npos)
      << *why;
}

TEST(ModuleFingerprint, OnlySixtyFourHexDigitsAreADigest) {
  EXPECT_TRUE(is_sha256_hex(kAbc));
  EXPECT_FALSE(is_sha256_hex(kAbc.substr(1)));
  EXPECT_FALSE(is_sha256_hex(std::string(kAbc) + "0"));
  EXPECT_FALSE(is_sha256_hex(std::string(63, 'a') + "g"));
  EXPECT_FALSE(is_sha256_hex(""));
}

}  // namespace
}  // namespace escouade::runtime
