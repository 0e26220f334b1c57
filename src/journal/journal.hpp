#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace escouade {

enum class JournalLevel { debug, info, warn, error };

struct JournalOptions {
  // The `<data dir>/plugin-logs` folder; created when missing.
  std::filesystem::path dir;
  // The plugin's id from its validated manifest: the journal is `<dir>/<plugin_id>.log`.
  std::string plugin_id;
  // Past this size, `<id>.log` becomes `<id>.log.1` (replacing an older one) and a new `<id>.log`
  // starts. A line that would take the file past it goes to the new file.
  std::uint64_t max_bytes = 1024 * 1024;
  // How many lines the in-memory tail keeps: tail(n) returns at most that many.
  std::size_t tail_lines = 500;
  // The time of each line; the system clock when empty.
  std::function<std::chrono::system_clock::time_point()> clock;
};

// One plugin's journal: lines in English, `2026-11-29T23:40:01.123Z info  <text>` (UTC,
// milliseconds), appended to `<dir>/<id>.log` with one write(2) each, so a crash of the host loses
// at most the line being written.
//
// Used from the host's single thread only: it has no locks.
//
// The tail is a bounded in-memory ring (`tail_lines` lines), seeded at construction from the end
// of `<id>.log` and, when that has fewer lines, of `<id>.log.1`, reading both backwards; a line
// that could not be written still enters it. A write error never throws: it is counted, the file
// is closed and the next line opens it again (the folder is created again if it was removed).
class Journal {
 public:
  explicit Journal(JournalOptions options);
  Journal(Journal&&) noexcept = default;
  Journal& operator=(Journal&&) noexcept = default;
  ~Journal() = default;

  // Rewrites a text in place before it reaches the file or the tail (the secrets' masking).
  void set_masker(std::function<void(std::string&)> masker);
  // Applies the masker to `text` now: for a caller that cuts a text before journaling it (a
  // cut secret would no longer be recognised).
  void mask(std::string& text) const {
    if (masker_) masker_(text);
  }

  // The one path every line takes: the masker sees the whole text, then it is escaped (see
  // escape.hpp), cut past 16 KiB with `… (N more bytes)`, written and kept in the tail.
  void write(JournalLevel level, std::string_view text);
  void debug(std::string_view text) { write(JournalLevel::debug, text); }
  void info(std::string_view text) { write(JournalLevel::info, text); }
  void warn(std::string_view text) { write(JournalLevel::warn, text); }
  void error(std::string_view text) { write(JournalLevel::error, text); }

  // The last `n` lines (at most `tail_lines`), oldest first, without their line break.
  std::vector<std::string> tail(std::size_t n = 500) const;

  // How many lines could not be written to the file since construction.
  std::uint64_t write_failures() const noexcept { return write_failures_; }

  const std::filesystem::path& path() const noexcept { return path_; }
  const std::filesystem::path& rotated_path() const noexcept { return rotated_path_; }

  // The escaped text of one entry stops at this many bytes.
  static constexpr std::size_t kMaxEntryBytes = 16 * 1024;

 private:
  // An open file descriptor, closed with its owner.
  class FileHandle {
   public:
    FileHandle() = default;
    explicit FileHandle(int fd) noexcept : fd_(fd) {}
    FileHandle(FileHandle&& other) noexcept : fd_(other.release()) {}
    FileHandle& operator=(FileHandle&& other) noexcept;
    ~FileHandle() { reset(); }

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    void reset() noexcept;
    int release() noexcept;

   private:
    int fd_ = -1;
  };

  bool ensure_open();
  bool open_file();
  void rotate();
  bool append_to_file(std::string_view line);
  void remember(std::string line);

  std::filesystem::path dir_;
  std::filesystem::path path_;
  std::filesystem::path rotated_path_;
  std::uint64_t max_bytes_;
  std::size_t tail_lines_;
  std::function<std::chrono::system_clock::time_point()> clock_;
  std::function<void(std::string&)> masker_;

  FileHandle file_;
  std::uint64_t size_ = 0;        // of `path_`, as of the last fstat plus what we wrote since
  bool needs_newline_ = false;    // the file ends inside a line (a torn write): end it first
  std::deque<std::string> ring_;  // the tail, oldest first
  std::uint64_t write_failures_ = 0;
};

}  // namespace escouade
