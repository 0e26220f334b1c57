#include "journal/journal_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <system_error>
#include <utility>

#include "base/private_dirs.hpp"

namespace escouade {
namespace {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

JournalFile::JournalFile(std::filesystem::path dir, const std::string& plugin_id,
                         std::uint64_t max_bytes)
    : dir_(std::move(dir)),
      path_(dir_ / (plugin_id + ".log")),
      rotated_path_(dir_ / (plugin_id + ".log.1")),
      max_bytes_(max_bytes) {}

void JournalFile::append(std::string_view text, std::size_t count) {
  if (count == 0 || text.empty()) return;
  if (!ensure_open()) {
    failures_ += count;
    return;
  }
  // The usual batch, whole lines after a whole one that leave the file within its size, is
  // written from where it is, in one write(2).
  const bool fits = count == 1 ? !past_size(size_, text.size()) : size_ + text.size() <= max_bytes_;
  if (!needs_newline_ && fits) {
    flush(text, count);
    return;
  }
  // Line by line: a torn line ended first, and the line that would take the file past its size
  // starting a new one.
  std::string batch = needs_newline_ ? "\n" : "";
  std::size_t in_batch = 0;
  std::size_t done = 0;  // lines of `text` written or in `batch`
  for (std::size_t at = 0; at < text.size(); ++done) {
    const std::size_t nl = text.find('\n', at);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    const std::string_view line = text.substr(at, end - at);
    at = end;
    if (past_size(size_ + batch.size(), line.size())) {
      if (!flush(batch, in_batch)) {
        failures_ += count - done;
        return;
      }
      batch.clear();
      rotate();
      if (!open_file()) {
        failures_ += count - done;
        return;
      }
      batch = needs_newline_ ? "\n" : "";
      in_batch = 0;
    }
    batch += line;
    ++in_batch;
  }
  flush(batch, in_batch);
}

bool JournalFile::flush(std::string_view data, std::size_t count) {
  if (data.empty()) return true;
  if (!write_all(file_.get(), data)) {
    failures_ += count;
    file_.reset();  // the next batch opens it again, and ends a torn line first
    return false;
  }
  size_ += data.size();
  needs_newline_ = false;
  return true;
}

bool JournalFile::ensure_open() {
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

bool JournalFile::open_file() {
  file_.reset();
  // A folder that cannot be made shows as a failed open. Both are the user's alone: what a
  // plugin writes may quote what it was given.
  (void)create_private_directories(dir_);
  UniqueFd file(::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!file) return false;
  struct stat st {};
  if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  size_ = static_cast<std::uint64_t>(st.st_size);
  needs_newline_ = false;
  if (st.st_size > 0) {
    char last = '\n';
    if (::pread(file.get(), &last, 1, st.st_size - 1) == 1) needs_newline_ = last != '\n';
  }
  file_ = std::move(file);
  return true;
}

void JournalFile::rotate() {
  file_.reset();
  // rename(2) replaces an older `.1`. When it fails, the lines go on in the current file: a
  // file past its size is better than a lost line.
  std::error_code ignored;
  std::filesystem::rename(path_, rotated_path_, ignored);
}

}  // namespace escouade
