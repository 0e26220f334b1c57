#include "journal/journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <limits>
#include <system_error>
#include <utility>

#include "base/quote.hpp"

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

// `2026-11-29T23:40:01.123Z info  `: the time in UTC to the millisecond, the level padded to five.
void append_prefix(std::string& out, std::chrono::system_clock::time_point time,
                   JournalLevel level) {
  using namespace std::chrono;
  const auto ms = floor<milliseconds>(time);
  const auto day = floor<days>(ms);
  const year_month_day date{day};
  const hh_mm_ss clock{ms - day};
  fmt::format_to(std::back_inserter(out), "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z {:<5} ",
                 static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                 static_cast<unsigned>(date.day()), clock.hours().count(), clock.minutes().count(),
                 clock.seconds().count(), clock.subseconds().count(), level_name(level));
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
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

Journal::FileHandle& Journal::FileHandle::operator=(FileHandle&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void Journal::FileHandle::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int Journal::FileHandle::release() noexcept {
  return std::exchange(fd_, -1);
}

Journal::Journal(JournalOptions options)
    : dir_(std::move(options.dir)),
      path_(dir_ / (options.plugin_id + ".log")),
      rotated_path_(dir_ / (options.plugin_id + ".log.1")),
      max_bytes_(options.max_bytes),
      tail_lines_(options.tail_lines),
      clock_(options.clock ? std::move(options.clock)
                           : [] { return std::chrono::system_clock::now(); }) {
  auto current = read_last_lines(path_, tail_lines_);
  if (current.size() < tail_lines_) {
    auto older = read_last_lines(rotated_path_, tail_lines_ - current.size());
    std::move(older.begin(), older.end(), std::back_inserter(ring_));
  }
  std::move(current.begin(), current.end(), std::back_inserter(ring_));
  // A failure here is not counted: no line is lost yet, and the first write tries again.
  open_file();
}

void Journal::set_masker(std::function<void(std::string&)> masker) {
  masker_ = std::move(masker);
}

void Journal::write(JournalLevel level, std::string_view text) {
  std::string masked(text);
  if (masker_) {
    try {
      masker_(masked);
    } catch (...) {
      masked = kMaskingFailed;
    }
  }

  std::string line;
  append_prefix(line, clock_(), level);
  const std::size_t taken = append_escaped_for_journal(
      line, masked, std::numeric_limits<std::size_t>::max(), kMaxEntryBytes);
  if (taken < masked.size()) {
    fmt::format_to(std::back_inserter(line), "{} ({} more bytes)", kEllipsis,
                   masked.size() - taken);
  }
  line += '\n';

  if (!append_to_file(line)) ++write_failures_;
  line.pop_back();
  remember(std::move(line));
}

std::vector<std::string> Journal::tail(std::size_t n) const {
  n = std::min(n, ring_.size());
  return {ring_.end() - static_cast<std::ptrdiff_t>(n), ring_.end()};
}

bool Journal::ensure_open() {
  if (file_) {
    // A file unlinked under us (its folder removed, or itself deleted) would still take writes
    // that nobody reads: open the path again instead.
    struct stat st {};
    if (::fstat(file_.get(), &st) == 0 && st.st_nlink > 0) {
      size_ = static_cast<std::uint64_t>(st.st_size);
      return true;
    }
    file_.reset();
  }
  return open_file();
}

bool Journal::open_file() {
  file_.reset();
  std::error_code ignored;  // a folder that cannot be made shows as a failed open
  std::filesystem::create_directories(dir_, ignored);
  FileHandle file(::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!file) return false;
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) return false;
  size_ = static_cast<std::uint64_t>(st.st_size);
  needs_newline_ = false;
  if (st.st_size > 0) {
    char last = '\n';
    if (::pread(file.get(), &last, 1, st.st_size - 1) == 1) needs_newline_ = last != '\n';
  }
  file_ = std::move(file);
  return true;
}

void Journal::rotate() {
  file_.reset();
  // rename(2) replaces an older `.1`. When it fails, the line goes on in the current file: a
  // file past its size is better than a lost line.
  std::error_code ignored;
  std::filesystem::rename(path_, rotated_path_, ignored);
}

bool Journal::append_to_file(std::string_view line) {
  if (!ensure_open()) return false;
  if (size_ > 0 && size_ + line.size() + (needs_newline_ ? 1 : 0) > max_bytes_) {
    rotate();
    if (!open_file()) return false;
  }
  std::string ended;  // the torn line's end and this line, in one write
  if (needs_newline_) ended = std::string("\n").append(line);
  const std::string_view data = needs_newline_ ? std::string_view(ended) : line;
  if (!write_all(file_.get(), data)) {
    file_.reset();  // the next line opens it again, and ends a torn line first
    return false;
  }
  size_ += data.size();
  needs_newline_ = false;
  return true;
}

void Journal::remember(std::string line) {
  if (tail_lines_ == 0) return;
  if (ring_.size() == tail_lines_) ring_.pop_front();
  ring_.push_back(std::move(line));
}

}  // namespace escouade
