#include "supervisor/stderr_log.hpp"

#include <algorithm>
#include <utility>

namespace escouade::supervisor {

namespace {

// 10000 as "10,000", as the spec writes its numbers.
std::string thousands(std::size_t n) {
  std::string digits = std::to_string(n);
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

}  // namespace

StderrLog::StderrLog(boost::asio::any_io_executor executor, Journal& journal, Clock& clock)
    : journal_(journal),
      clock_(clock),
      summary_timer_(clock.make_timer(std::move(executor))),
      window_start_(clock.now()) {}

void StderrLog::piece(std::string_view piece) {
  const std::size_t room = kLongLineKept - std::min(kLongLineKept, long_.size());
  long_.append(piece.substr(0, room));
  long_dropped_ += piece.size() - std::min(room, piece.size());
}

void StderrLog::line(std::string_view end) {
  if (long_.empty()) {
    // The fast way through a flood: a line past the budget costs no allocation.
    roll();
    if (window_full_) return dropped(end);
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
  window_full_ = true;
  if (!summary_armed_) {
    summary_armed_ = true;
    summary_timer_->wait_until(window_start_ + kWindow, lifeline_.guard([this](bool fired) {
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

void StderrLog::roll() {
  const auto now = clock_.now();
  if (now - window_start_ < kWindow) return;
  // Windows follow each other from the first: a quiet spell skips whole ones.
  window_start_ += kWindow * ((now - window_start_) / kWindow);
  window_lines_ = 0;
  window_bytes_ = 0;
  window_full_ = false;
}

bool StderrLog::take(std::size_t bytes) {
  roll();
  if (window_full_ || window_lines_ >= kWindowLines || window_bytes_ + bytes > kWindowBytes)
    return false;
  ++window_lines_;
  window_bytes_ += bytes;
  return true;
}

void StderrLog::report_dropped() {
  if (dropped_lines_ == 0) return;
  journal_.warn(std::to_string(dropped_lines_) + " line" + (dropped_lines_ == 1 ? "" : "s") +
                " of stderr dropped (" + std::to_string(dropped_bytes_) +
                " bytes): it wrote more than its journal keeps (" + thousands(kWindowLines) +
                " lines or " + std::to_string(kWindowBytes / 1024) + " KiB in " +
                std::to_string(kWindow.count()) + " s)");
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
  window_start_ = clock_.now();
  window_lines_ = 0;
  window_bytes_ = 0;
  window_full_ = false;
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
