#pragma once

// What a plugin writes on its stderr, as its journal keeps it: each line journaled whole (a long
// one is gathered from its pieces, so that the masking of secrets sees it whole), within a
// budget, and the last lines kept for a crash report.
//
// The budget is journald's default rate limit (RateLimitIntervalSec=30s, RateLimitBurst=10000):
// in each window of kWindow from the first line, kWindowLines lines and kWindowBytes bytes. Past
// either, the rest of the window is not journaled: its lines are counted, and when the window
// ends (or the program does) a line says "N lines of stderr dropped (B bytes)". A dropped line
// costs no masking and no write. The bytes keep a flood from rotating the journal's history
// away: 512 KiB of text a window (52 bytes a line on average at 10,000 lines), under 1 MB a
// window with each line's date and level, so what the journal held before the worst flood
// stays in its 2 MB (the file and the one before) for a minute at least, not for seconds.
//
// Thread: the host's; its timer's handler is guarded.

#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/clock.hpp"
#include "base/lifeline.hpp"
#include "journal/journal.hpp"

namespace escouade::supervisor {

class StderrLog {
 public:
  static constexpr std::chrono::seconds kWindow{30};
  static constexpr std::size_t kWindowLines = 10000;
  static constexpr std::size_t kWindowBytes = 512 * 1024;
  // Of a line that comes in pieces, the bytes kept (the journal keeps 16 KiB of an entry).
  static constexpr std::size_t kLongLineKept = 64 * 1024;
  // The last lines quoted in a crash report.
  static constexpr std::size_t kLastLinesKept = 10;

  StderrLog(boost::asio::any_io_executor executor, Journal& journal, Clock& clock);

  // The start of a line longer than the program's read buffer.
  void piece(std::string_view piece);
  // The end of a line (all of it, when it came in one piece).
  void line(std::string_view end);
  // The program ended: a line left without its end and the count of what was dropped are
  // journaled now; last_lines() still has its lines.
  void program_ended();
  // A new program starts: no lines yet, and a full budget.
  void new_run();
  // The last lines, " | " between them, or "none": for the crash report.
  std::string last_lines() const;

 private:
  bool take(std::size_t bytes);
  // A new window begins when the last one is over.
  void roll();
  void dropped(std::string_view text);
  void keep_last(std::string_view text);
  void report_dropped();

  Journal& journal_;
  Clock& clock_;
  std::unique_ptr<Timer> summary_timer_;
  // The last lines, a ring whose strings keep their capacity: a flood costs no allocation.
  std::array<std::string, kLastLinesKept> last_;
  std::size_t last_next_ = 0;     // where the next line goes
  std::size_t last_count_ = 0;    // how many of last_ hold a line
  std::string long_;              // the pieces of a long line so far
  std::size_t long_dropped_ = 0;  // its bytes past kLongLineKept
  Clock::TimePoint window_start_;
  std::size_t window_lines_ = 0;  // journaled in this window
  std::size_t window_bytes_ = 0;
  bool window_full_ = false;         // a line was dropped: the rest of the window is
  std::uint64_t dropped_lines_ = 0;  // since the last summary
  std::uint64_t dropped_bytes_ = 0;
  bool summary_armed_ = false;
  Lifeline lifeline_;
};

}  // namespace escouade::supervisor
