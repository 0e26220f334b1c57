#include "base/base64.hpp"

#include <gtest/gtest.h>

namespace escouade {
namespace {

TEST(Base64, EncodesRfc4648sVectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode(std::string("\xff\xfe\x00\x01", 4)), "//4AAQ==");
}

TEST(Base64, DecodesWhatItEncodesAndRefusesWhatIsNotBase64) {
  std::string all;
  for (int i = 0; i < 256; ++i)
    all += static_cast<char>(i);
  for (std::size_t n = 0; n <= all.size(); n += 37)
    EXPECT_EQ(base64_decode(base64_encode(all.substr(0, n))), all.substr(0, n));
  EXPECT_EQ(base64_decode("Zm9vYmE="), "fooba");
  EXPECT_FALSE(base64_decode("Zm9"));       // not a multiple of 4
  EXPECT_FALSE(base64_decode("Zm9v!A=="));  // outside the alphabet
  EXPECT_FALSE(base64_decode("Zg==Zg=="));  // padding in the middle
  EXPECT_FALSE(base64_decode("Zh=="));      // bits left over
  EXPECT_FALSE(base64_decode("Z==="));
}

}  // namespace
}  // namespace escouade
