#pragma once

// Whether this build runs under AddressSanitizer (GCC's __SANITIZE_ADDRESS__, clang's
// __has_feature): it replaces malloc itself and makes frames larger, so the parts that count or
// watch an instance's memory step aside, and a helper's stack is larger. One test of it for the
// project: ESCOUADE_ADDRESS_SANITIZER for the preprocessor, kAddressSanitizer for the code.

#if defined(__SANITIZE_ADDRESS__)
#define ESCOUADE_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ESCOUADE_ADDRESS_SANITIZER 1
#endif
#endif

namespace escouade {

#if defined(ESCOUADE_ADDRESS_SANITIZER)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace escouade
