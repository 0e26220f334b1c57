#include "base/lifeline.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <memory>

namespace escouade {
namespace {

TEST(Lifeline, AGuardedHandlerRunsWhileItsOwnerLives) {
  Lifeline owner;
  int calls = 0;
  auto handler = owner.guard([&](int n) { calls += n; });
  handler(2);
  handler(3);
  EXPECT_EQ(calls, 5);
}

TEST(Lifeline, AGuardedHandlerDoesNothingOnceItsOwnerIsGone) {
  int calls = 0;
  std::function<void()> handler;
  {
    Lifeline owner;
    handler = owner.guard([&] { ++calls; });
  }
  handler();
  EXPECT_EQ(calls, 0);
}

TEST(Lifeline, EndStopsEveryHandlerBeforeTheOwnerIsDestroyed) {
  Lifeline owner;
  int calls = 0;
  auto a = owner.guard([&] { ++calls; });
  auto b = owner.guard([&] { ++calls; });
  auto token = owner.token();
  EXPECT_TRUE(token);
  owner.end();
  a();
  b();
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(token);
  EXPECT_TRUE(owner.ended());
}

TEST(Lifeline, AGuardedHandlerKeepsWhatItCapturedUntilItIsDestroyed) {
  auto held = std::make_shared<int>(7);
  std::weak_ptr<int> seen = held;
  std::function<void()> handler;
  {
    Lifeline owner;
    handler = owner.guard([held = std::move(held)] {});
  }
  EXPECT_FALSE(seen.expired());  // the owner's end runs nothing, destroys nothing
  handler = nullptr;
  EXPECT_TRUE(seen.expired());
}

}  // namespace
}  // namespace escouade
