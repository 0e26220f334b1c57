#include "journal/journal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <utility>

#include "base/quote.hpp"
#include "journal/journal_file.hpp"
#include "journal/journal_writer.hpp"

namespace escouade {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // …

// What the journal writes instead of a text whose masking failed: never the text itself, which may
// hold a secret.
constexpr std::string_view kMaskingFailed = "(a line was withheld: masking its secrets failed)";

std::string_view level_name(JournalLevel level) {
  switch (level) {
    case JournalLevel::debug:
      return "debug";
    case JournalLevel::info:
      return "info";
    case JournalLevel::warn:
      return "warn";
    case JournalLevel::error:
      return "error";
  }
  return "info";
}

}  // namespace

void append_utc_time(std::string& out, std::chrono::system_clock::time_point time) {
  // The date and time to the second are formatted once a second (per thread): formatting them
  // for every line was a third of a journal line's cost.
  using namespace std::chrono;
  thread_local sys_seconds cached_second{sys_seconds::min()};
  thread_local char cached[20];  // "2026-11-29T23:40:01"
  const auto ms = floor<milliseconds>(time);
  const auto second = floor<seconds>(ms);
  if (second != cached_second) {
    const auto day = floor<days>(second);
    const year_month_day date{day};
    const hh_mm_ss clock{second - day};
    fmt::format_to_n(cached, sizeof cached, "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
                     static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                     static_cast<unsigned>(date.day()), clock.hours().count(),
                     clock.minutes().count(), clock.seconds().count());
    cached_second = second;
  }
  const auto milli = static_cast<int>((ms - second).count());
  const char tail[5] = {'.', static_cast<char>('0' + milli / 100),
                        static_cast<char>('0' + milli / 10 % 10),
                        static_cast<char>('0' + milli % 10), 'Z'};
  out.append(cached, 19).append(tail, 5);
}

namespace {

// `2026-11-29T23:40:01.123Z info  `: the time in UTC to the millisecond, the level padded to five.
void append_prefix(std::string& out, std::chrono::system_clock::time_point time,
                   JournalLevel level) {
  append_utc_time(out, time);
  const std::string_view name = level_name(level);
  char tail[8] = {' '};
  std::size_t n = 1;
  for (char c : name)
    tail[n++] = c;
  while (n < 1 + 5)
    tail[n++] = ' ';
  tail[n++] = ' ';
  out.append(tail, n);
}

// The last `n` lines of the file at `path`, oldest first, without their line break. Reads the file
// backwards in blocks until it holds them, so the cost follows the lines asked for, not the
// file's size. A missing or unreadable file has no lines.
std::vector<std::string> read_last_lines(const std::filesystem::path& path, std::size_t n) {
  std::vector<std::string> lines;
  if (n == 0) return lines;
  std::ifstream in(path, std::ios::binary);
  if (!in) return lines;
  in.seekg(0, std::ios::end);
  const std::streamoff end = in.tellg();
  if (end <= 0) return lines;

  // Once the text read holds n line breaks before its last line, it holds the last n lines whole.
  constexpr std::streamoff kBlock = 64 * 1024;
  std::vector<std::string> blocks;  // newest first
  std::streamoff pos = end;
  std::size_t breaks = 0;
  while (pos > 0 && breaks < n) {
    const std::streamoff size = std::min(kBlock, pos);
    pos -= size;
    std::string block(static_cast<std::size_t>(size), '\0');
    in.seekg(pos);
    if (!in.read(block.data(), size)) return lines;
    std::string_view counted = block;
    if (blocks.empty() && counted.back() == '\n') counted.remove_suffix(1);  // ends the last line
    breaks += static_cast<std::size_t>(std::count(counted.begin(), counted.end(), '\n'));
    blocks.push_back(std::move(block));
  }
  std::string text;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it)
    text += *it;
  if (text.back() == '\n') text.pop_back();
  if (text.empty()) return lines;

  std::string_view rest = text;
  while (lines.size() < n) {
    const auto br = rest.rfind('\n');
    if (br == std::string_view::npos) {
      if (pos == 0) lines.emplace_back(rest);  // the file's first line; otherwise a cut one
      break;
    }
    lines.emplace_back(rest.substr(br + 1));
    rest = rest.substr(0, br);
  }
  std::reverse(lines.begin(), lines.end());
  return lines;
}

}  // namespace

Journal::Journal(JournalOptions options)
    : file_(std::make_shared<JournalFile>(std::move(options.dir), options.plugin_id,
                                          options.max_bytes)),
      writer_(options.writer),
      tail_lines_(options.tail_lines),
      clock_(options.clock ? std::move(options.clock)
                           : [] { return std::chrono::system_clock::now(); }) {
  auto current = read_last_lines(file_->path(), tail_lines_);
  if (current.size() < tail_lines_) {
    auto older = read_last_lines(file_->rotated_path(), tail_lines_ - current.size());
    std::move(older.begin(), older.end(), std::back_inserter(ring_));
  }
  std::move(current.begin(), current.end(), std::back_inserter(ring_));
  // A failure here is not counted: no line is lost yet, and the first write tries again.
  file_->open_now();
}

Journal::~Journal() = default;

void Journal::set_masker(std::function<void(std::string&)> masker) {
  masker_ = std::move(masker);
}

void Journal::write(JournalLevel level, std::string_view text) {
  std::string_view masked = text;
  if (masker_) {
    masked_.assign(text);
    try {
      masker_(masked_);
    } catch (...) {
      masked_ = kMaskingFailed;
    }
    masked = masked_;
  }

  const auto now = clock_();
  if (lost_ > 0) {
    std::string note;
    append_prefix(note, now, JournalLevel::warn);
    fmt::format_to(std::back_inserter(note),
                   "{} journal line{} lost: they came faster than the disk took them", lost_,
                   lost_ == 1 ? " was" : "s were");
    if (send(note + '\n')) {
      lost_ = 0;
      remember(note);  // once, when it reaches the file too
    }
  }

  // Formatted in a buffer the journal keeps, handed on as a view: the writer copies its bytes
  // into the file's queue.
  std::string& line = line_;
  line.clear();
  line.reserve(32 + masked.size() + masked.size() / 8);
  append_prefix(line, now, level);
  const std::size_t taken = append_escaped_for_journal(
      line, masked, std::numeric_limits<std::size_t>::max(), kMaxEntryBytes);
  if (taken < masked.size()) {
    fmt::format_to(std::back_inserter(line), "{} ({} more bytes)", kEllipsis,
                   masked.size() - taken);
  }
  remember(line);
  line += '\n';
  const bool sent = send(line);
  if (line.capacity() > 4 * kMaxEntryBytes) std::string().swap(line);
  if (!sent) {
    // Counted once for the line itself: a note that could not go either is not a lost line.
    ++lost_;
    ++refused_;
  }
}

bool Journal::send(std::string_view line) {
  if (!writer_) {
    file_->append(line, 1);
    return true;
  }
  return writer_->submit(file_, line);
}

std::vector<std::string> Journal::tail(std::size_t n) const {
  n = std::min(n, ring_.size());
  std::vector<std::string> out;
  out.reserve(n);
  // The newest n, oldest first: from n before the end of the ring's order, wrapping round.
  std::size_t at = (ring_start_ + ring_.size() - n) % std::max<std::size_t>(ring_.size(), 1);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(ring_[at]);
    if (++at == ring_.size()) at = 0;
  }
  return out;
}

std::uint64_t Journal::write_failures() const noexcept {
  return file_->write_failures() + refused_;
}

const std::filesystem::path& Journal::path() const noexcept {
  return file_->path();
}

const std::filesystem::path& Journal::rotated_path() const noexcept {
  return file_->rotated_path();
}

void Journal::remember(std::string_view line) {
  if (tail_lines_ == 0) return;
  if (ring_.size() < tail_lines_) {
    ring_.emplace_back(line);
    return;
  }
  // Full: the oldest line's buffer takes the new one, which becomes the newest.
  ring_[ring_start_].assign(line);
  if (++ring_start_ == ring_.size()) ring_start_ = 0;
}

}  // namespace escouade
