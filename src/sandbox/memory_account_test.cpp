// The memory account: real malloc and free, replaced in this test program as in every program
// that runs the sandbox. Built with AddressSanitizer, nothing is replaced, and these tests say so
// and skip.
#include "sandbox/memory_account.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace escouade::sandbox::memory {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

#define SKIP_WITHOUT_ACCOUNTS()                                         \
  if (!accounting())                                                    \
  GTEST_SKIP() << "built with AddressSanitizer, which replaces malloc " \
                  "itself: this build has no memory account"

// Runs `f(account)` on a thread of its own with an account of `limit` opened there.
template <class F>
void on_instance_thread(std::uint64_t limit, F f) {
  std::thread([&] {
    const Account a = open(limit);
    f(a);
    close(a);
  }).join();
}

// Keeps the compiler from dropping an allocation it can see is unused.
void* keep(void* p) {
  asm volatile("" : : "g"(p) : "memory");
  return p;
}

TEST(MemoryAccount, ABlockMadeOnItsThreadIsChargedAndItsFreeAnywhereTakesItBack) {
  SKIP_WITHOUT_ACCOUNTS();
  // Another thread, made before the account opened (a thread made on the instance's thread
  // would charge the instance for its own bookkeeping), frees the block it is given.
  std::promise<void*> given;
  std::promise<void> freed;
  std::thread freer([&] {
    std::free(given.get_future().get());
    freed.set_value();
  });
  auto freed_future = freed.get_future();
  Account account = 0;
  on_instance_thread(64 * kMiB, [&](Account a) {
    account = a;
    ASSERT_NE(a, 0u);
    const auto before = bytes(a);
    void* block = keep(std::malloc(3 * kMiB));
    ASSERT_NE(block, nullptr);
    std::memset(block, 1, 3 * kMiB);
    EXPECT_GE(bytes(a) - before, 3 * kMiB);
    EXPECT_LT(bytes(a) - before, 3 * kMiB + 64);
    given.set_value(block);
    freed_future.wait();
    EXPECT_EQ(bytes(a), before);
  });
  freer.join();
  EXPECT_EQ(bytes(account), 0u);  // a closed account reads nothing
}

TEST(MemoryAccount, AnotherThreadsBlocksAreNotCharged) {
  SKIP_WITHOUT_ACCOUNTS();
  // The other thread is made before the account opens: it works while the account is open.
  std::promise<void> opened;
  std::promise<std::vector<char>*> made;
  std::thread other([&] {
    opened.get_future().wait();
    std::free(keep(std::malloc(8 * kMiB)));
    made.set_value(new std::vector<char>(4 * kMiB));
  });
  on_instance_thread(64 * kMiB, [&](Account a) {
    const auto before = bytes(a);
    opened.set_value();
    std::vector<char>* v = made.get_future().get();
    EXPECT_EQ(bytes(a), before);
    delete v;  // freed on the instance's thread: not its block, nothing taken back
    EXPECT_EQ(bytes(a), before);
  });
  other.join();
}

TEST(MemoryAccount, PastItsLimitItIsOverAndPastTwiceItsLimitAnAllocationFails) {
  SKIP_WITHOUT_ACCOUNTS();
  on_instance_thread(8 * kMiB, [&](Account a) {
    std::vector<void*> held;
    held.push_back(keep(std::malloc(6 * kMiB)));
    EXPECT_FALSE(over(a));
    held.push_back(keep(std::malloc(4 * kMiB)));  // 10 MiB of 8: over, still given
    ASSERT_NE(held.back(), nullptr);
    EXPECT_TRUE(over(a));
    void* past = keep(std::malloc(8 * kMiB));  // 18 MiB of a hard 16: refused
    EXPECT_EQ(past, nullptr);
    EXPECT_LT(bytes(a), 16 * kMiB);
    for (void* p : held)
      std::free(p);
    EXPECT_TRUE(over(a)) << "a refused allocation keeps it over: it must end";
  });
}

TEST(MemoryAccount, SmallBlocksAreChargedInBatchesAndStillReachTheLimit) {
  SKIP_WITHOUT_ACCOUNTS();
  on_instance_thread(1 * kMiB, [&](Account a) {
    std::vector<void*> held;
    held.reserve(100000);  // its own block (800 KB, charged too) is made before the count
    const auto before = bytes(a);
    for (int i = 0; i < 100000 && !over(a); ++i)
      held.push_back(keep(std::malloc(32)));
    EXPECT_TRUE(over(a));  // 48 bytes each with the header: past the rest of 1 MiB soon
    EXPECT_LT(held.size(), 10000u);
    for (void* p : held)
      std::free(p);
    EXPECT_EQ(bytes(a), before) << "the own thread reads its pending charges too";
  });
}

TEST(MemoryAccount, ItsGcHeapCountsWithItsBlocks) {
  SKIP_WITHOUT_ACCOUNTS();
  on_instance_thread(8 * kMiB, [&](Account a) {
    void* p = keep(std::malloc(5 * kMiB));
    EXPECT_FALSE(over(a));
    engine_heap(a, 4 * kMiB);
    EXPECT_TRUE(over(a));
    engine_heap(a, 1 * kMiB);
    EXPECT_FALSE(over(a));
    std::free(p);
  });
}

TEST(MemoryAccount, ReallocKeepsTheContentAndTheChargeFollowsTheSize) {
  SKIP_WITHOUT_ACCOUNTS();
  on_instance_thread(64 * kMiB, [&](Account a) {
    const auto before = bytes(a);
    auto* p = static_cast<char*>(std::malloc(100));
    std::memcpy(p, "the first bytes", 16);
    p = static_cast<char*>(std::realloc(p, 5 * kMiB));
    ASSERT_NE(p, nullptr);
    EXPECT_STREQ(p, "the first bytes");
    EXPECT_GE(bytes(a) - before, 5 * kMiB);
    p = static_cast<char*>(std::realloc(p, 10));
    EXPECT_STREQ(std::string(p, 9).c_str(), "the first");
    EXPECT_LT(bytes(a) - before, 64u);
    // Grown past twice the limit: refused, and the block is left as it was (called through a
    // pointer the compiler cannot see through: it takes any realloc for one that freed it).
    void* (*volatile grow)(void*, std::size_t) = std::realloc;
    EXPECT_EQ(grow(p, 200 * kMiB), nullptr);
    EXPECT_EQ(std::string(p, 9), "the first");
    std::free(p);
    EXPECT_EQ(bytes(a), before);
  });
}

TEST(MemoryAccount, AlignedBlocksAreAlignedAndCharged) {
  SKIP_WITHOUT_ACCOUNTS();
  on_instance_thread(64 * kMiB, [&](Account a) {
    const auto before = bytes(a);
    void* p = nullptr;
    ASSERT_EQ(posix_memalign(&p, 4096, kMiB), 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 4096, 0u);
    void* q = keep(aligned_alloc(64, 1000));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q) % 64, 0u);
    auto* big = new (std::align_val_t{256}) char[300];
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big) % 256, 0u);
    EXPECT_GE(bytes(a) - before, kMiB + 1000 + 300);
    q = std::realloc(q, 2 * kMiB);  // an aligned block grown stays aligned
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q) % 64, 0u);
    EXPECT_EQ(posix_memalign(&p, 3, 10), EINVAL);  // p is left as it was
    std::free(p);
    std::free(q);
    ::operator delete[](big, std::align_val_t{256});
    EXPECT_EQ(bytes(a), before);
  });
}

TEST(MemoryAccount, CallocZeroesAndRefusesAnOverflowingSize) {
  SKIP_WITHOUT_ACCOUNTS();
  on_instance_thread(64 * kMiB, [&](Account) {
    auto* p = static_cast<unsigned char*>(std::calloc(1000, 1000));
    ASSERT_NE(p, nullptr);
    for (int i = 0; i < 1000 * 1000; i += 4099)
      EXPECT_EQ(p[i], 0);
    EXPECT_GE(malloc_usable_size(p), 1000u * 1000u);
    std::free(p);
    volatile std::size_t huge = std::size_t{1} << 40;  // a product past SIZE_MAX, at run time
    EXPECT_EQ(std::calloc(huge, huge), nullptr);
  });
}

TEST(MemoryAccount, UsableSizeOfAnUnchargedBlockIsGlibcs) {
  SKIP_WITHOUT_ACCOUNTS();
  for (std::size_t n : {1u, 24u, 1000u, 200000u, 5000000u}) {
    void* p = keep(std::malloc(n));
    const std::size_t usable = malloc_usable_size(p);
    EXPECT_GE(usable, n);
    EXPECT_LT(usable, n + 4096 + 64);
    std::memset(p, 0, usable);  // all of it is the block's
    std::free(p);
  }
}

TEST(MemoryAccount, AClosedAccountForgetsItsBlocksAndItsSlotServesAnother) {
  SKIP_WITHOUT_ACCOUNTS();
  void* left = nullptr;
  Account first = 0;
  on_instance_thread(64 * kMiB, [&](Account a) {
    first = a;
    left = keep(std::malloc(2 * kMiB));
  });
  on_instance_thread(64 * kMiB, [&](Account b) {
    EXPECT_NE(b, first);  // the same slot, perhaps, but not the same account
    const auto before = bytes(b);
    std::free(left);  // the first account's block: this one is not touched
    EXPECT_EQ(bytes(b), before);
  });
}

}  // namespace
}  // namespace escouade::sandbox::memory
