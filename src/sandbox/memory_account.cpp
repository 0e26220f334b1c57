#include "sandbox/memory_account.hpp"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "base/sanitizers.hpp"
#include "sandbox/status_page.hpp"

// AddressSanitizer replaces malloc itself: nothing here may then (base/sanitizers.hpp).

namespace escouade::sandbox::memory {
namespace {

// An account of the table. Zero-initialized: usable before any constructor of the program ran
// (the loader's first calls to malloc come before them).
struct Slot {
  std::atomic<std::uint32_t> generation;  // which opening of the slot a block was charged to
  std::atomic<bool> open;
  std::atomic<std::int64_t> bytes;
  std::atomic<std::uint64_t> engine_heap;
  std::atomic<std::uint64_t> limit;
  std::atomic<bool> refused;      // an allocation past twice its limit was refused: it is over
  std::atomic<StatusPage*> page;  // where its figures are published, if anywhere
};

constexpr std::uint32_t kSlotBits = 12;
constexpr std::uint32_t kSlots = 1u << kSlotBits;  // slot 0 is "none"
constexpr std::uint32_t kSlotMask = kSlots - 1;

constinit Slot g_slots[kSlots] = {};

// The account of every thread that has none of its own (a helper's instance's), or 0.
constinit std::atomic<Account> g_all_threads{0};

// The figures of an account, published where the host reads them.
void publish_bytes(Slot* s, std::int64_t now) noexcept {
  if (StatusPage* page = s->page.load(std::memory_order_relaxed))
    page->account_bytes.store(static_cast<std::uint64_t>(now > 0 ? now : 0),
                              std::memory_order_relaxed);
}

Slot* slot_of(Account account) noexcept {
  const std::uint32_t index = account & kSlotMask;
  if (index == 0) return nullptr;
  Slot& s = g_slots[index];
  return s.generation.load(std::memory_order_relaxed) == (account >> kSlotBits) ? &s : nullptr;
}

}  // namespace
}  // namespace escouade::sandbox::memory

#if !defined(ESCOUADE_ADDRESS_SANITIZER)

// The calling thread's account (initial-exec: the executable's own TLS, readable from the first
// malloc of every thread without allocating).
namespace {
__attribute__((
    tls_model("initial-exec"))) thread_local escouade::sandbox::memory::Account t_account = 0;
// What the thread charged to (or took back from) its own account and has not yet added to the
// account's counter: small charges go there in batches of kBatch, without an atomic each.
__attribute__((tls_model("initial-exec"))) thread_local std::int64_t t_pending = 0;
constexpr std::int64_t kBatch = 32 * 1024;
}  // namespace

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
}

namespace escouade::sandbox::memory {
namespace {

// Before a charged block: its account and where glibc's block begins. The word just before the
// block is glibc's chunk size for every block glibc returns (sizes far below 2^56), so a tag in
// its top byte tells a charged block from any other.
struct alignas(16) Header {
  Account account;
  std::uint32_t offset;  // from glibc's block to the one given out
  std::uint64_t tag_size;
};
static_assert(sizeof(Header) == 16);
constexpr std::uint64_t kTag = 0xE5ull << 56;
constexpr std::uint64_t kTagMask = 0xFFull << 56;

Header* header_of(void* p) noexcept {
  return static_cast<Header*>(p) - 1;
}

bool charged(void* p) noexcept {
  const std::uint64_t word = *(static_cast<const std::uint64_t*>(p) - 1);
  return (word & kTagMask) == kTag;
}

void publish_over(Slot* s) noexcept {
  if (StatusPage* page = s->page.load(std::memory_order_relaxed))
    page->over_memory.store(1, std::memory_order_relaxed);
}

// The thread's pending charge added to its account's counter: the counter's new value.
std::int64_t flush(Slot* s) noexcept {
  const std::int64_t pending = t_pending;
  t_pending = 0;
  const std::int64_t now = s->bytes.fetch_add(pending, std::memory_order_relaxed) + pending;
  publish_bytes(s, now);
  return now;
}

// The account the calling thread's blocks are charged to.
Account current() noexcept {
  return t_account ? t_account : g_all_threads.load(std::memory_order_relaxed);
}

// Charges `n` bytes to the account if it stays within twice its limit; false, and nothing
// charged, otherwise. Past its limit it is over. A charge of the thread's own account waits in
// t_pending until the batch is full: the limits are read then (a block of 32 KiB or more fills
// it at once, so no large block goes unchecked).
bool charge(Account account, std::size_t n) noexcept {
  Slot* s = slot_of(account);
  if (!s) return true;
  std::int64_t now = 0;
  if (account == t_account) {
    t_pending += static_cast<std::int64_t>(n);
    if (t_pending < kBatch) return true;
    now = flush(s);
  } else {
    now = s->bytes.fetch_add(static_cast<std::int64_t>(n), std::memory_order_relaxed) +
          static_cast<std::int64_t>(n);
    publish_bytes(s, now);
  }
  const std::uint64_t limit = s->limit.load(std::memory_order_relaxed);
  const std::uint64_t held = static_cast<std::uint64_t>(now > 0 ? now : 0) +
                             s->engine_heap.load(std::memory_order_relaxed);
  if (held <= limit) return true;
  publish_over(s);                     // the instance ends for its memory, however it ends
  if (held <= 2 * limit) return true;  // over: read by the watchdog and the turns
  s->bytes.fetch_sub(static_cast<std::int64_t>(n), std::memory_order_relaxed);
  s->refused.store(true, std::memory_order_relaxed);
  return false;
}

void uncharge(Account account, std::size_t n) noexcept {
  Slot* s = slot_of(account);
  if (!s) return;
  if (account == t_account) {
    t_pending -= static_cast<std::int64_t>(n);
    if (t_pending <= -kBatch) flush(s);
    return;
  }
  publish_bytes(s, s->bytes.fetch_sub(static_cast<std::int64_t>(n), std::memory_order_relaxed) -
                       static_cast<std::int64_t>(n));
}

// A block of `size` bytes aligned to `align` (16 or more, a power of two) charged to `account`.
void* charged_block(Account account, std::size_t size, std::size_t align, bool zero) noexcept {
  const std::size_t offset = align < sizeof(Header) ? sizeof(Header) : align;
  if (size > (std::size_t{1} << 48) - offset) {
    errno = ENOMEM;
    return nullptr;
  }
  const std::size_t total = size + offset;
  if (!charge(account, total)) {
    errno = ENOMEM;
    return nullptr;
  }
  void* base = offset == sizeof(Header) ? (zero ? __libc_calloc(1, total) : __libc_malloc(total))
                                        : __libc_memalign(align, total);
  if (!base) {
    uncharge(account, total);
    return nullptr;
  }
  if (zero && offset != sizeof(Header)) std::memset(base, 0, total);
  void* p = static_cast<char*>(base) + offset;
  Header* h = header_of(p);
  h->account = account;
  h->offset = static_cast<std::uint32_t>(offset);
  h->tag_size = kTag | size;
  return p;
}

std::size_t size_of(const Header* h) noexcept {
  return h->tag_size & ~kTagMask;
}

void release(void* p) noexcept {
  Header* h = header_of(p);
  uncharge(h->account, size_of(h) + h->offset);
  void* base = static_cast<char*>(p) - h->offset;
  h->tag_size = 0;  // a second free of it is glibc's to catch, not ours to misread
  __libc_free(base);
}

bool valid_alignment(std::size_t align) noexcept {
  return align != 0 && (align & (align - 1)) == 0;
}

void* aligned(std::size_t align, std::size_t size) noexcept {
  if (const Account a = current()) return charged_block(a, size, align, false);
  return __libc_memalign(align, size);
}

}  // namespace

bool accounting() noexcept {
  return true;
}

Account open(std::uint64_t limit) noexcept {
  for (std::uint32_t i = 1; i < kSlots; ++i) {
    bool closed = false;
    Slot& s = g_slots[i];
    if (!s.open.compare_exchange_strong(closed, true)) continue;
    const std::uint32_t generation =
        (s.generation.load(std::memory_order_relaxed) + 1) & ((1u << (32 - kSlotBits)) - 1);
    s.bytes.store(0, std::memory_order_relaxed);
    s.engine_heap.store(0, std::memory_order_relaxed);
    s.refused.store(false, std::memory_order_relaxed);
    s.limit.store(limit, std::memory_order_relaxed);
    s.page.store(nullptr, std::memory_order_relaxed);
    s.generation.store(generation, std::memory_order_release);
    const Account account = (generation << kSlotBits) | i;
    t_account = account;
    t_pending = 0;
    return account;
  }
  return 0;
}

void close(Account account) noexcept {
  Account all = account;
  g_all_threads.compare_exchange_strong(all, 0);
  if (t_account == account) {
    t_account = 0;
    t_pending = 0;
  }
  Slot* s = slot_of(account);
  if (!s) return;
  // Blocks still charged to it are forgotten as they are freed: they name this generation.
  s->generation.fetch_add(1, std::memory_order_relaxed);
  s->open.store(false, std::memory_order_release);
}

}  // namespace escouade::sandbox::memory

using escouade::sandbox::memory::charged;
using escouade::sandbox::memory::charged_block;
using escouade::sandbox::memory::header_of;
using escouade::sandbox::memory::release;

extern "C" {

void* malloc(std::size_t size) noexcept {
  if (const auto a = escouade::sandbox::memory::current()) return charged_block(a, size, 16, false);
  return __libc_malloc(size);
}

void free(void* p) noexcept {
  if (!p) return;
  if (charged(p))
    release(p);
  else
    __libc_free(p);
}

void* calloc(std::size_t n, std::size_t size) noexcept {
  if (const auto a = escouade::sandbox::memory::current()) {
    if (size != 0 && n > static_cast<std::size_t>(-1) / size) {
      errno = ENOMEM;
      return nullptr;
    }
    return charged_block(a, n * size, 16, true);
  }
  return __libc_calloc(n, size);
}

void* realloc(void* p, std::size_t size) noexcept {
  using namespace escouade::sandbox::memory;
  if (!p) return malloc(size);
  if (!charged(p)) return __libc_realloc(p, size);  // made before its thread had an account
  if (size == 0) {
    free(p);
    return nullptr;
  }
  // A charged block stays charged to the account that made it, whichever thread grows it.
  Header* h = header_of(p);
  const std::size_t old = size_of(h);
  if (h->offset != sizeof(Header)) {  // an aligned block: a new one, aligned alike
    void* fresh = charged_block(h->account, size, h->offset, false);
    if (!fresh) return nullptr;
    std::memcpy(fresh, p, old < size ? old : size);
    release(p);
    return fresh;
  }
  const Account account = h->account;
  if (size > (std::size_t{1} << 48) - sizeof(Header) ||
      (size > old && !charge(account, size - old))) {
    errno = ENOMEM;
    return nullptr;
  }
  void* base = __libc_realloc(h, size + sizeof(Header));
  if (!base) {
    if (size > old) uncharge(account, size - old);
    return nullptr;
  }
  if (size < old) uncharge(account, old - size);
  static_cast<Header*>(base)->tag_size = kTag | size;
  return static_cast<Header*>(base) + 1;
}

void* memalign(std::size_t align, std::size_t size) noexcept {
  if (!escouade::sandbox::memory::valid_alignment(align)) {
    errno = EINVAL;
    return nullptr;
  }
  return escouade::sandbox::memory::aligned(align, size);
}

void* aligned_alloc(std::size_t align, std::size_t size) noexcept {
  return memalign(align, size);
}

int posix_memalign(void** out, std::size_t align, std::size_t size) noexcept {
  if (!escouade::sandbox::memory::valid_alignment(align) || align % sizeof(void*) != 0)
    return EINVAL;
  void* p = escouade::sandbox::memory::aligned(align, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(std::size_t size) noexcept {
  return memalign(4096, size);
}

void* pvalloc(std::size_t size) noexcept {
  return memalign(4096, (size + 4095) & ~std::size_t{4095});
}

std::size_t malloc_usable_size(void* p) noexcept {
  if (!p) return 0;
  if (escouade::sandbox::memory::charged(p))
    return escouade::sandbox::memory::size_of(escouade::sandbox::memory::header_of(p));
  // glibc's own reading of its chunk's size word (glibc can no longer be asked: this definition
  // replaces its): the flags in the low bits, 16 bytes of header for a mapped chunk, 8 for one
  // of its heaps.
  const std::uint64_t word = *(static_cast<const std::uint64_t*>(p) - 1);
  return (word & ~std::uint64_t{7}) - ((word & 2) ? 16 : 8);
}

}  // extern "C"

namespace escouade::sandbox::memory {
namespace {
std::int64_t own_pending(Account account) noexcept {
  return account == t_account ? t_pending : 0;
}
}  // namespace
}  // namespace escouade::sandbox::memory

#else  // AddressSanitizer: no account, everything reads 0

namespace escouade::sandbox::memory {
namespace {
std::int64_t own_pending(Account) noexcept {
  return 0;
}
}  // namespace
bool accounting() noexcept {
  return false;
}
Account open(std::uint64_t) noexcept {
  return 0;
}
void close(Account) noexcept {}
}  // namespace escouade::sandbox::memory

#endif

namespace escouade::sandbox::memory {

std::uint64_t bytes(Account account) noexcept {
  const Slot* s = slot_of(account);
  if (!s) return 0;
  // Read on the account's own thread, its pending charge is counted too.
  const std::int64_t b = s->bytes.load(std::memory_order_relaxed) + own_pending(account);
  return b > 0 ? static_cast<std::uint64_t>(b) : 0;
}

bool over(Account account) noexcept {
  const Slot* s = slot_of(account);
  if (!s) return false;
  return s->refused.load(std::memory_order_relaxed) ||
         bytes(account) + s->engine_heap.load(std::memory_order_relaxed) >
             s->limit.load(std::memory_order_relaxed);
}

void engine_heap(Account account, std::uint64_t heap) noexcept {
  if (Slot* s = slot_of(account)) s->engine_heap.store(heap, std::memory_order_relaxed);
}

void charge_all_threads(Account account) noexcept {
  g_all_threads.store(account, std::memory_order_relaxed);
}

void set_limit(Account account, std::uint64_t limit) noexcept {
  if (Slot* s = slot_of(account)) s->limit.store(limit, std::memory_order_relaxed);
}

void publish(Account account, StatusPage* page) noexcept {
  if (Slot* s = slot_of(account)) {
    s->page.store(page, std::memory_order_relaxed);
    publish_bytes(s, static_cast<std::int64_t>(bytes(account)));
  }
}

}  // namespace escouade::sandbox::memory
