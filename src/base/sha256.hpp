#pragma once

// SHA-256 (FIPS 180-4), for the sandbox's compile cache: its entries are named by the digest of
// what they were made from, and checked by the digest of what they hold. Not a password hash nor
// a MAC; only OpenSSL's folder (src/net) may use OpenSSL, so the cache has its own.
//
// Thread: an object is one thread's at a time; the functions are pure.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace escouade {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256() noexcept;
  // Adds bytes to what is hashed.
  Sha256& update(std::string_view bytes) noexcept;
  // The digest of everything added; the object is spent (make a new one to hash again).
  Digest finish() noexcept;

  static Digest of(std::string_view bytes) noexcept { return Sha256().update(bytes).finish(); }
  // 64 lowercase hexadecimal digits.
  static std::string hex(const Digest& digest);

 private:
  void block(const std::uint8_t* p) noexcept;

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // in bytes
};

}  // namespace escouade
