#pragma once

// Cuts a byte stream into lines, one protocol message per line. No I/O: bytes are fed in as
// they are read, lines come out through callbacks.

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace escouade::proto {

// The largest line accepted by default. The largest message the protocol allows is a net/fetch
// answer of 32 MiB (limits.netBytes at most) carried in base64: 32 MiB * 4/3 = 44,739,243
// bytes, plus its headers and the JSON-RPC envelope. 48 MiB leaves room for those.
inline constexpr std::size_t kDefaultMaxLineBytes = 48u * 1024u * 1024u;

class LineFramer {
 public:
  explicit LineFramer(std::size_t max_line_bytes = kDefaultMaxLineBytes)
      : max_line_bytes_(max_line_bytes) {}

  // Feeds the bytes of one read. For each complete line, calls on_line(std::string_view) with
  // the line without its '\n' (and without a '\r' before it); the view lives until on_line
  // returns. Empty lines are skipped. A line that grows past the maximum is dropped: on_too_long
  // (std::size_t limit) is called once, as soon as it passes the limit, and everything up to its
  // next '\n' is thrown away without being kept, after which framing goes on normally.
  template <class OnLine, class OnTooLong>
  void feed(std::string_view bytes, OnLine&& on_line, OnTooLong&& on_too_long);

  // At the end of the stream: the last line if it had no '\n' (empty when there was none).
  // The framer is then empty again.
  std::string finish();

  // Bytes held for a line whose '\n' has not come yet.
  std::size_t pending_bytes() const noexcept { return pending_.size(); }
  std::size_t max_line_bytes() const noexcept { return max_line_bytes_; }
  // Whether the framer is skipping the rest of an oversized line.
  bool skipping() const noexcept { return skipping_; }
  // Lines dropped for their size, and the bytes thrown away with them, since the start.
  std::size_t dropped_lines() const noexcept { return dropped_lines_; }
  std::size_t dropped_bytes() const noexcept { return dropped_bytes_; }

 private:
  template <class OnLine>
  void emit(std::string_view line, OnLine& on_line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) on_line(line);
  }

  template <class OnTooLong>
  void start_skipping(std::size_t bytes, OnTooLong& on_too_long) {
    skipping_ = true;
    ++dropped_lines_;
    dropped_bytes_ += bytes;
    pending_.clear();
    pending_.shrink_to_fit();
    on_too_long(max_line_bytes_);
  }

  static constexpr std::size_t kKeptCapacity = 1u << 20;

  std::size_t max_line_bytes_;
  std::string pending_;
  bool skipping_ = false;
  std::size_t dropped_lines_ = 0;
  std::size_t dropped_bytes_ = 0;
};

template <class OnLine, class OnTooLong>
void LineFramer::feed(std::string_view bytes, OnLine&& on_line, OnTooLong&& on_too_long) {
  while (!bytes.empty()) {
    const char* nl = static_cast<const char*>(std::memchr(bytes.data(), '\n', bytes.size()));
    const std::size_t upto = nl ? static_cast<std::size_t>(nl - bytes.data()) : bytes.size();
    if (skipping_) {
      dropped_bytes_ += upto;
      if (!nl) return;
      skipping_ = false;
    } else if (pending_.empty() && nl) {
      // The whole line is in this read: no copy.
      if (upto > max_line_bytes_) {
        start_skipping(upto, on_too_long);
        skipping_ = false;
      } else {
        emit(bytes.substr(0, upto), on_line);
      }
    } else if (pending_.size() + upto > max_line_bytes_) {
      start_skipping(pending_.size() + upto, on_too_long);
      if (!nl) return;
      skipping_ = false;
    } else {
      pending_.append(bytes.data(), upto);
      if (!nl) return;
      emit(pending_, on_line);
      pending_.clear();
      // Keep a buffer for the next line, but not the memory of a rare huge one.
      if (pending_.capacity() > kKeptCapacity) pending_.shrink_to_fit();
    }
    bytes.remove_prefix(upto + 1);
  }
}

}  // namespace escouade::proto
