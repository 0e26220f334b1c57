// The main of the test binaries that run in the network lab (net_lab.hpp): the process enters
// its private namespace before gtest or anything else starts a thread. Listing the tests (ctest's
// discovery at build time) needs no lab.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "support/net_lab.hpp"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    listing = listing || std::strcmp(argv[i], "--gtest_list_tests") == 0;
  if (!listing) {
    if (const std::string why = escouade::test::enter_net_lab(); !why.empty()) {
      std::fprintf(stderr, "the network lab cannot be entered: %s\n", why.c_str());
      return 1;
    }
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
