#pragma once

// The memory account of each sandboxed instance: what it holds outside its engine's GC heap
// (the contents of its ArrayBuffers and typed arrays, the elements of its arrays, the characters
// of its long strings, its engine's own tables) is malloc'd, and the GC heap's cap does not see
// it (notes/spidermonkey-102.md). So the sandbox's helper (escouade-sandbox) replaces malloc
// (glibc's documented way: malloc, free, calloc, realloc and the aligned ones defined in the
// program) and charges every block made on an instance's thread to that instance's account,
// whichever thread frees it; a helper runs one instance, and charges its other threads (the
// engine's compilation and sweeping, the watchdog) to it too (charge_all_threads).
//
// An account has a limit: past it (its blocks plus the GC heap it was last told of) it is
// "over", which the watchdog and the instance's turns read to stop the instance; an allocation
// that would take it past twice its limit fails (malloc returns null, which the engine reports
// as out of memory). The soft limit ends the instance; the hard one bounds what it can take
// before the watchdog sees it, without failing the engine's own small allocations while it ends.
//
// Blocks made on other threads carry nothing and cost one thread-local read more. Built with
// AddressSanitizer, which replaces malloc itself, nothing is replaced: accounting() is false and
// every account reads 0 (the sandbox then judges the GC heap alone, docs/sandbox.md).
//
// Thread: open() and close() on the instance's thread; the rest from any thread. Accounts live
// in a fixed table that is never freed: reading a closed one is harmless.

#include <cstdint>

namespace escouade::sandbox {
struct StatusPage;
}

namespace escouade::sandbox::memory {

// Whether this build charges malloc to accounts.
bool accounting() noexcept;

// An account's number; 0 is none.
using Account = std::uint32_t;

// Opens an account of `limit` bytes and charges the calling thread's allocations to it until
// close(). 0 when accounting() is false or every account is taken (4095 at once).
Account open(std::uint64_t limit) noexcept;
// The calling thread's allocations are charged to nothing again; the account is free for
// another instance (the blocks still charged to it are then forgotten as they are freed).
void close(Account account) noexcept;

// What is charged to it now: its live blocks, with their headers. Its own thread's last charges
// reach the counter in batches of 32 KiB: read from another thread it may lag by that much.
std::uint64_t bytes(Account account) noexcept;
// Its blocks and the GC heap it was told of are past its limit, or an allocation past twice its
// limit was refused.
bool over(Account account) noexcept;
// The size of the instance's GC heap (not malloc'd: the engine maps its own chunks), counted
// with its blocks against its limit.
void engine_heap(Account account, std::uint64_t bytes) noexcept;

// A helper's whole process is one instance's: every thread without an account of its own charges
// its blocks to `account` from now on (0: none again). Their charges are not batched.
void charge_all_threads(Account account) noexcept;
// Its limit changed (a helper made before it knew its plugin's).
void set_limit(Account account, std::uint64_t limit) noexcept;
// Where the account's figures go as they change, for the host to read (status_page.hpp): its
// bytes at each batch, and that it went over or refused an allocation. nullptr: nowhere.
void publish(Account account, StatusPage* page) noexcept;

}  // namespace escouade::sandbox::memory
