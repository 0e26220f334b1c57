#pragma once

// Lines waiting for a peer that may not read them: a plugin's input (ProcessProgram), a sandboxed
// instance's input (sandbox::Channel), the app's (escouade-host's stdout). One rule for all
// (protocol/delivery.hpp): a kept line always waits; when the lines waiting would pass the bound,
// the oldest droppable ones go first, as many as it takes; a droppable line that would not fit
// even beside the kept ones alone is dropped itself, and nothing older for it. Kept lines alone
// may pass the bound: their owner then stops reading its peer's output (back-pressure), which
// bounds them. What was dropped is counted until taken.
//
// Thread: not thread-safe; the owner's (the host's thread, or the channel's lock).

#include <cstddef>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "protocol/delivery.hpp"

namespace escouade::runtime {

class LineQueue {
 public:
  // Its text is its own, or shared with the other peers it went to (a fact for ten plugins is
  // one string, not ten): `shared` when set, else `text`.
  struct Line {
    std::string text;
    proto::Delivery delivery;
    std::shared_ptr<const std::string> shared;

    std::string_view view() const noexcept { return shared ? std::string_view(*shared) : text; }
  };

  explicit LineQueue(std::size_t bound) noexcept : bound_(bound) {}

  // Queues `text`, `held` more bytes of the same peer's being held elsewhere (a write under way),
  // counted against the bound. Returns false when `text` itself was dropped.
  bool push(std::string text, proto::Delivery delivery, std::size_t held = 0);
  // The same with a text shared with others, which is never written to.
  bool push(std::shared_ptr<const std::string> text, proto::Delivery delivery,
            std::size_t held = 0);

  // Takes lines from the front, in order, onto the end of `out`, as long as each fits within
  // `limit` bytes (one line at least): one write for a burst, into a buffer its owner keeps, so
  // that a burst is not a fresh allocation (whose pages the allocator may have handed back) each
  // time. A line taken alone into an empty `out` with less room than it needs is moved, not
  // copied: a sandbox helper's start record weighs megabytes.
  void take_joined(std::string& out, std::size_t limit = std::numeric_limits<std::size_t>::max());
  // Takes the line at `at` (a copy of a shared text).
  std::string take(std::size_t at);
  void clear() noexcept;

  const Line& operator[](std::size_t at) const noexcept { return lines_[at]; }
  std::size_t size() const noexcept { return lines_.size(); }
  bool empty() const noexcept { return lines_.empty(); }
  // The bytes of the lines waiting.
  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t bound() const noexcept { return bound_; }
  // The lines dropped since the last take_dropped().
  std::size_t dropped() const noexcept { return dropped_; }
  std::size_t take_dropped() noexcept;

 private:
  // Makes room for a line of `size` bytes; false when it is droppable and must go itself.
  bool make_room(std::size_t size, bool droppable, std::size_t held);
  void forget(const Line& line) noexcept;  // its bytes out of the counts

  std::deque<Line> lines_;
  std::size_t bytes_ = 0;
  std::size_t kept_bytes_ = 0;  // of bytes_, those of kept lines
  std::size_t dropped_ = 0;
  std::size_t bound_;
};

}  // namespace escouade::runtime
