#include "runtime/line_queue.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace escouade::runtime {
namespace {

using proto::Delivery;

std::vector<std::string> texts(const LineQueue& q) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < q.size(); ++i)
    out.push_back(std::string(q[i].view()));
  return out;
}

TEST(LineQueue, KeptLinesAlwaysWaitEvenPastTheBound) {
  LineQueue q(10);
  EXPECT_TRUE(q.push("answer-1\n", Delivery::kept));
  EXPECT_TRUE(q.push("answer-2\n", Delivery::kept));
  EXPECT_EQ(q.bytes(), 18u);
  EXPECT_EQ(q.dropped(), 0u);
  EXPECT_EQ(texts(q), (std::vector<std::string>{"answer-1\n", "answer-2\n"}));
}

TEST(LineQueue, PastTheBoundTheOldestDroppableLinesGoFirstAndKeptOnesStay) {
  LineQueue q(12);
  EXPECT_TRUE(q.push("f1\n", Delivery::droppable));
  EXPECT_TRUE(q.push("k1\n", Delivery::kept));
  EXPECT_TRUE(q.push("f2\n", Delivery::droppable));
  EXPECT_TRUE(q.push("k2\n", Delivery::kept));  // 12 bytes: at the bound, not past it
  EXPECT_TRUE(q.push("f3\n", Delivery::droppable));
  EXPECT_EQ(texts(q), (std::vector<std::string>{"k1\n", "f2\n", "k2\n", "f3\n"}));
  EXPECT_EQ(q.dropped(), 1u);
  EXPECT_TRUE(q.push("f4\n", Delivery::droppable));  // f2 goes
  EXPECT_EQ(texts(q), (std::vector<std::string>{"k1\n", "k2\n", "f3\n", "f4\n"}));
  EXPECT_EQ(q.dropped(), 2u);
  EXPECT_TRUE(q.push("f5-f5\n", Delivery::droppable));  // f3 and f4 go, then it fits
  EXPECT_EQ(texts(q), (std::vector<std::string>{"k1\n", "k2\n", "f5-f5\n"}));
  EXPECT_EQ(q.bytes(), 12u);
  EXPECT_EQ(q.dropped(), 4u);
}

// A fact too large to fit beside the kept lines is the one dropped: the older facts, which would
// not make room for it, stay.
TEST(LineQueue, ADroppableLineThatCannotFitIsDroppedItselfAndNothingOlder) {
  LineQueue q(12);
  EXPECT_TRUE(q.push("kept-1\n", Delivery::kept));
  EXPECT_TRUE(q.push("f1\n", Delivery::droppable));
  EXPECT_FALSE(q.push("a-large-fact\n", Delivery::droppable));
  EXPECT_EQ(texts(q), (std::vector<std::string>{"kept-1\n", "f1\n"}));
  EXPECT_EQ(q.take_dropped(), 1u);
  EXPECT_EQ(q.dropped(), 0u);
}

TEST(LineQueue, AKeptLinePastTheBoundPushesOutDroppableOnes) {
  LineQueue q(8);
  EXPECT_TRUE(q.push("fact\n", Delivery::droppable));
  EXPECT_TRUE(q.push("timer\n", Delivery::kept));  // 11 bytes: the fact goes to make room
  EXPECT_EQ(texts(q), (std::vector<std::string>{"timer\n"}));
  EXPECT_EQ(q.dropped(), 1u);
  EXPECT_TRUE(q.push("answer\n", Delivery::kept));  // nothing droppable left: it waits past
  EXPECT_EQ(q.bytes(), 13u);
}

TEST(LineQueue, BytesHeldElsewhereCountAgainstTheBound) {
  LineQueue q(10);
  EXPECT_FALSE(q.push("fact\n", Delivery::droppable, 8));  // a write of 8 under way
  EXPECT_TRUE(q.push("fact\n", Delivery::droppable, 5));
  EXPECT_EQ(q.dropped(), 1u);
}

// take_joined into a fresh string: what it took.
std::string joined(LineQueue& q, std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  std::string out;
  q.take_joined(out, limit);
  return out;
}

TEST(LineQueue, TakeJoinedTakesInOrderUpToItsLimitAndMovesALoneLine) {
  LineQueue q(1 << 20);
  std::string big(1000, 'x');
  const char* data = big.data();
  q.push(std::move(big), Delivery::kept);
  const std::string alone = joined(q);
  EXPECT_EQ(alone.data(), data) << "moved, not copied";
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(joined(q), "");

  for (const char* l : {"a\n", "bb\n", "ccc\n", "dddd\n"})
    q.push(l, Delivery::droppable);
  EXPECT_EQ(joined(q, 5), "a\nbb\n");  // stops once 5 bytes are taken
  EXPECT_EQ(q.bytes(), 9u);
  EXPECT_EQ(joined(q, 1), "ccc\n");  // one line at least
  EXPECT_EQ(joined(q), "dddd\n");
  EXPECT_EQ(q.bytes(), 0u);
}

TEST(LineQueue, TakeJoinedWritesIntoTheRoomItIsGiven) {
  LineQueue q(1 << 20);
  std::string out;
  out.reserve(4096);
  const char* room = out.data();
  for (const char* l : {"a\n", "bb\n"})
    q.push(l, Delivery::kept);
  q.take_joined(out);
  EXPECT_EQ(out, "a\nbb\n");
  EXPECT_EQ(out.data(), room) << "no new buffer for a burst that fits";

  // A line alone that fits is copied into the room too, not moved over it.
  out.clear();
  q.push(std::string(1000, 'y'), Delivery::kept);
  q.take_joined(out);
  EXPECT_EQ(out, std::string(1000, 'y'));
  EXPECT_EQ(out.data(), room);

  // What is already there stays in front; the limit counts it.
  out = "z\n";
  for (const char* l : {"c\n", "d\n", "e\n"})
    q.push(l, Delivery::kept);
  q.take_joined(out, 4);
  EXPECT_EQ(out, "z\nc\n");
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.bytes(), 4u);
}

TEST(LineQueue, TakeJoinedNeverGrowsItsRoomPastTheLimit) {
  // The owner keeps a buffer of `limit` bytes from write to write and gives back a larger one:
  // a take that grew it past the limit made every write a fresh allocation.
  LineQueue q(1 << 20);
  for (int i = 0; i < 10; ++i)
    q.push(std::string(999, 'a' + i) + "\n", Delivery::droppable);
  std::string out;
  q.take_joined(out, 4096);
  EXPECT_EQ(out.size(), 4000u) << "four whole lines; the fifth would pass the limit";
  EXPECT_LE(out.capacity(), 4096u);
  EXPECT_EQ(q.size(), 6u);

  // Grown from a smaller room: to the limit, not to twice the room.
  std::string small;
  small.reserve(3000);
  q.take_joined(small, 4096);
  EXPECT_EQ(small.size(), 4000u);
  EXPECT_LE(small.capacity(), 4096u);
  EXPECT_EQ(small.substr(0, 3), "eee");

  // A line longer than the limit still goes, alone.
  q.push(std::string(5000, 'z') + "\n", Delivery::kept);
  out.clear();
  q.take_joined(out, 4096);
  EXPECT_EQ(out.size(), 2000u) << "the two lines left before it";
  out.clear();
  q.take_joined(out, 4096);
  EXPECT_EQ(out.size(), 5001u);
  EXPECT_TRUE(q.empty());
}

// A line shared with other queues (a fact for several plugins) counts, drops and joins as its
// own would, and is never written to.
TEST(LineQueue, ASharedLineIsCountedDroppedAndTakenAsAnOwnedOne) {
  LineQueue q(12);
  auto fact = std::make_shared<const std::string>("fact\n");
  EXPECT_TRUE(q.push(fact, Delivery::droppable));
  EXPECT_TRUE(q.push(fact, Delivery::droppable));
  EXPECT_EQ(q.bytes(), 10u);
  EXPECT_EQ(fact.use_count(), 3);
  EXPECT_TRUE(q.push("kept\n", Delivery::kept));  // 15 > 12: the oldest fact goes
  EXPECT_EQ(q.dropped(), 1u);
  EXPECT_EQ(fact.use_count(), 2);
  EXPECT_EQ(texts(q), (std::vector<std::string>{"fact\n", "kept\n"}));

  // Taken alone into an empty buffer, a shared line is copied, not moved away from the others.
  std::string out;
  q.take_joined(out, 5);
  EXPECT_EQ(out, "fact\n");
  EXPECT_EQ(*fact, "fact\n");
  EXPECT_EQ(fact.use_count(), 1);
  EXPECT_TRUE(q.push(fact, Delivery::kept));
  EXPECT_EQ(q.take(1), "fact\n");
  EXPECT_EQ(*fact, "fact\n");
  EXPECT_EQ(q.bytes(), 5u);
}

TEST(LineQueue, WhatALimitedTakeLeavesCanStillBeDropped) {
  // Lines left by a take stay under the queue's rule: the oldest droppable go first.
  LineQueue q(13);
  for (const char* l : {"f1\n", "f2\n", "f3\n"})
    q.push(l, Delivery::droppable);
  std::string out;
  q.take_joined(out, 3);
  EXPECT_EQ(out, "f1\n");
  EXPECT_TRUE(q.push("kept-1\n", Delivery::kept, out.size()));  // 3 held + 6 + 7 > 13: f2 goes
  EXPECT_EQ(texts(q), (std::vector<std::string>{"f3\n", "kept-1\n"}));
  EXPECT_EQ(q.dropped(), 1u);
}

TEST(LineQueue, ALineTakenFromTheMiddleLeavesTheOthersInOrder) {
  LineQueue q(100);
  for (const char* l : {"1\n", "2\n", "3\n"})
    q.push(l, Delivery::kept);
  EXPECT_EQ(q.take(1), "2\n");
  EXPECT_EQ(texts(q), (std::vector<std::string>{"1\n", "3\n"}));
  EXPECT_EQ(q.bytes(), 4u);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.bytes(), 0u);
}

}  // namespace
}  // namespace escouade::runtime
