// SHA-256 against the examples of FIPS 180-4 (NIST's "SHA256.pdf", "SHA2_Additional.pdf") and
// against itself fed in pieces of every size.

#include "base/sha256.hpp"

#include <gtest/gtest.h>

#include <string>

namespace escouade {
namespace {

std::string hex_of(std::string_view bytes) {
  return Sha256::hex(Sha256::of(bytes));
}

TEST(Sha256, TheStandardsExamples) {
  EXPECT_EQ(hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex_of(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 55 and 56 bytes: the length fits in the last block, or needs one more.
  EXPECT_EQ(hex_of(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(hex_of(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

TEST(Sha256, PiecesOfAnySizeGiveTheSameDigest) {
  std::string text;
  for (int i = 0; i < 1000; ++i)
    text.push_back(static_cast<char>(i * 7 + 3));
  const auto whole = Sha256::of(text);
  for (std::size_t piece = 1; piece <= 130; ++piece) {
    Sha256 h;
    for (std::size_t at = 0; at < text.size(); at += piece)
      h.update(std::string_view(text).substr(at, piece));
    EXPECT_EQ(h.finish(), whole) << "pieces of " << piece;
  }
}

// A view of nothing (no pointer at all) hashes as the empty string, without touching memory.
TEST(Sha256, AnEmptyViewWithoutAPointerIsTheEmptyString) {
  Sha256 h;
  h.update(std::string_view()).update("abc").update(std::string_view());
  EXPECT_EQ(h.finish(), Sha256::of("abc"));
  EXPECT_EQ(Sha256::hex(Sha256::of(std::string_view())),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace escouade
