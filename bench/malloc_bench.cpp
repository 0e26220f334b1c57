// The memory account's cost (src/sandbox/memory_account.hpp), in a program of its own: this one
// replaces malloc as a sandbox helper (escouade-sandbox) does, which bench_host, the host, must
// not. A malloc/free pair of 64 bytes by glibc itself (the floor), through the replacement on a
// thread without an account, and charged to an account. Prints one line of JSON.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "sandbox/memory_account.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void __libc_free(void*);
}

namespace {

using Clock = std::chrono::steady_clock;
namespace memory = escouade::sandbox::memory;

void bench_malloc_account(int pairs) {
  auto timed = [&](auto alloc, auto release) {
    std::vector<void*> blocks(64);
    const auto a = Clock::now();
    for (int i = 0; i < pairs; i += 64) {
      for (auto& b : blocks)
        b = alloc(64);
      for (auto* b : blocks)
        release(b);
    }
    return std::chrono::duration<double, std::nano>(Clock::now() - a).count() / pairs;
  };
  auto glibc = [&] { return timed(__libc_malloc, __libc_free); };
  auto replaced = [&] { return timed(malloc, free); };
  double floor_ns = 0, unaccounted_ns = 0, accounted_ns = 0;
  std::thread([&] {
    floor_ns = glibc();
    unaccounted_ns = replaced();
    const auto account = memory::open(64ull * 1024 * 1024);
    accounted_ns = replaced();
    memory::close(account);
    // Again, in the other order, and the best of each kept: the machine's noise, not the code.
    floor_ns = std::min(floor_ns, glibc());
    unaccounted_ns = std::min(unaccounted_ns, replaced());
  }).join();
  std::printf(
      "{\"bench\":\"malloc_account\",\"pairs\":%d,\"accounted\":%s,\"glibc_ns\":%.1f,"
      "\"replaced_no_account_ns\":%.1f,\"replaced_charged_ns\":%.1f}\n",
      pairs, memory::accounting() ? "true" : "false", floor_ns, unaccounted_ns, accounted_ns);
}

}  // namespace

int main() {
  bench_malloc_account(10'000'000);
  return 0;
}
