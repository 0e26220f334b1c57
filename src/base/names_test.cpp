#include "base/names.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace escouade {
namespace {

TEST(Names, TheSameNameIsSharedNotCopied) {
  Names names;
  const Names::Name a = names.of("permissions/decide");
  const Names::Name b = names.of(std::string("permissions/") + "decide");
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(*a, "permissions/decide");
  EXPECT_NE(names.of("events/fact").get(), a.get());
  EXPECT_EQ(names.kept(), 2u);
}

// An app may call a plugin by any name: past kMax, names are made for their use, not kept, and
// a name given out stays good whatever is kept.
TEST(Names, PastTheBoundANameIsMadeForItsUseAndNoMoreAreKept) {
  Names names;
  std::vector<Names::Name> given;
  for (std::size_t i = 0; i < Names::kMax + 100; ++i)
    given.push_back(names.of("test/method-" + std::to_string(i)));
  EXPECT_EQ(names.kept(), Names::kMax);
  for (std::size_t i = 0; i < given.size(); ++i)
    EXPECT_EQ(*given[i], "test/method-" + std::to_string(i));
  // A kept one is still shared; one past the bound is a new string each time.
  EXPECT_EQ(names.of("test/method-0").get(), given[0].get());
  const std::string late = "test/method-" + std::to_string(Names::kMax + 5);
  EXPECT_NE(names.of(late).get(), given[Names::kMax + 5].get());
  EXPECT_EQ(*names.of(late), late);
}

}  // namespace
}  // namespace escouade
