#include "supervisor/stderr_log.hpp"

#include <algorithm>
#include <utility>

namespace escouade::supervisor {

StderrLog::StderrLog(boost::asio::any_io_executor executor, Journal& journal, Clock& clock)
    : journal_(journal),
      clock_(clock),
      summary_timer_(clock.make_timer(std::move(executor))),
      refilled_(clock.now()) {}

void StderrLog::piece(std::string_view piece) {
  const std::size_t room = kLongLineKept - std::min(kLongLineKept, long_.size());
  long_.append(piece.substr(0, room));
  long_dropped_ += piece.size() - std::min(room, piece.size());
}

void StderrLog::line(std::string_view end) {
  if (long_.empty()) {
    // The fast way through a flood: a line past the budget costs no allocation.
    refill();
    if (line_tokens_ < 1) return dropped(end);
  }
  std::string text;
  if (long_.empty()) {
    text = end;
  } else {
    const std::size_t room = kLongLineKept - std::min(kLongLineKept, long_.size());
    text = std::move(long_) + std::string(end.substr(0, room));
    const std::size_t cut = long_dropped_ + end.size() - std::min(room, end.size());
    if (cut > 0) text += " (" + std::to_string(cut) + " more bytes were not kept)";
    long_.clear();
    long_dropped_ = 0;
  }
  if (!take(text.size())) return dropped(text);
  journal_.info("stderr: " + text);
  keep_last(text);
}

void StderrLog::dropped(std::string_view text) {
  ++dropped_lines_;
  dropped_bytes_ += text.size();
  if (!summary_armed_) {
    summary_armed_ = true;
    summary_timer_->wait_until(clock_.now() + kSummaryEvery, lifeline_.guard([this](bool fired) {
      if (!fired) return;  // cancelled by the program's end, which reported
      summary_armed_ = false;
      report_dropped();
    }));
  }
  // Kept even when dropped from the journal: a crash report quotes what it wrote last. The
  // crash report passes through the journal's masking like every line.
  keep_last(text);
}

void StderrLog::keep_last(std::string_view text) {
  last_[last_next_].assign(text.data(), text.size());
  last_next_ = (last_next_ + 1) % kLastLinesKept;
  last_count_ = std::min(last_count_ + 1, kLastLinesKept);
}

void StderrLog::refill() {
  const auto now = clock_.now();
  const double seconds = std::chrono::duration<double>(now - refilled_).count();
  refilled_ = now;
  line_tokens_ = std::min<double>(kBurstLines, line_tokens_ + seconds * kLinesPerSecond);
  byte_tokens_ = std::min<double>(kBurstBytes, byte_tokens_ + seconds * kBytesPerSecond);
}

bool StderrLog::take(std::size_t bytes) {
  refill();
  // A line longer than the whole byte budget passes when the budget is full, so that one long
  // line (a stack trace on one line) is not always lost.
  const double cost = std::min<double>(static_cast<double>(bytes), kBurstBytes);
  if (line_tokens_ < 1 || byte_tokens_ < cost) return false;
  line_tokens_ -= 1;
  byte_tokens_ -= cost;
  return true;
}

void StderrLog::report_dropped() {
  if (dropped_lines_ == 0) return;
  journal_.warn(std::to_string(dropped_lines_) + " line" + (dropped_lines_ == 1 ? "" : "s") +
                " of stderr dropped (" + std::to_string(dropped_bytes_) +
                " bytes): it wrote more than its journal keeps (" +
                std::to_string(kLinesPerSecond) + " lines and " +
                std::to_string(kBytesPerSecond / 1024) + " KiB a second, after a burst of " +
                std::to_string(kBurstLines) + " lines)");
  dropped_lines_ = 0;
  dropped_bytes_ = 0;
}

void StderrLog::program_ended() {
  if (!long_.empty()) line("");  // a last line without its end
  summary_timer_->cancel();
  summary_armed_ = false;
  report_dropped();
}

void StderrLog::new_run() {
  last_count_ = 0;
  last_next_ = 0;
  long_.clear();
  long_dropped_ = 0;
  line_tokens_ = kBurstLines;
  byte_tokens_ = kBurstBytes;
  refilled_ = clock_.now();
}

std::string StderrLog::last_lines() const {
  if (last_count_ == 0) return "none";
  std::string out;
  const std::size_t first = (last_next_ + kLastLinesKept - last_count_) % kLastLinesKept;
  for (std::size_t k = 0; k < last_count_; ++k) {
    if (!out.empty()) out += " | ";
    out += last_[(first + k) % kLastLinesKept];
  }
  return out;
}

}  // namespace escouade::supervisor
