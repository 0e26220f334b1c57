#pragma once

// The file side of one plugin's journal: `<dir>/<id>.log` and its rotation to `<id>.log.1`.
// Lines reach it already formatted and ended; it writes a batch of them in as few write(2) calls
// as the rotation allows, so a crash of the host cuts at most the write under way.
//
// Thread: one at a time. A Journal without a writer calls it on its own thread; with one, only
// the writer's thread does once the journal is made. write_failures() may be read anywhere.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/unique_fd.hpp"

namespace escouade {

class JournalFile {
 public:
  JournalFile(std::filesystem::path dir, const std::string& plugin_id, std::uint64_t max_bytes);

  // Appends `text`, `count` whole lines each ending with '\n', oldest first. Past `max_bytes`
  // the file becomes `.log.1` (replacing an older one) and a new one starts; a line that would
  // take the file past it goes to the new file. A write error never throws: its lines are
  // counted as failures, the file is closed and the next batch opens it again (the folder is
  // made again if it was removed).
  void append(std::string_view text, std::size_t count);

  // Opens the file now (the journal's construction): a failure is not counted, the next append
  // tries again.
  void open_now() { open_file(); }

  std::uint64_t write_failures() const noexcept { return failures_.load(); }
  const std::filesystem::path& path() const noexcept { return path_; }
  const std::filesystem::path& rotated_path() const noexcept { return rotated_path_; }

 private:
  bool ensure_open();
  bool open_file();
  void rotate();
  // Whether a line of `bytes` written after `before` bytes would take the file past its size
  // (and so goes to a new file). An empty file takes any line.
  bool past_size(std::uint64_t before, std::size_t bytes) const noexcept {
    return before > 0 && before + bytes > max_bytes_;
  }
  // Writes `data` (whole lines, `count` of them) to the open file.
  bool flush(std::string_view data, std::size_t count);

  std::filesystem::path dir_;
  std::filesystem::path path_;
  std::filesystem::path rotated_path_;
  std::uint64_t max_bytes_;
  UniqueFd file_;
  std::uint64_t size_ = 0;      // of `path_`, as of the last fstat plus what was written since
  bool needs_newline_ = false;  // the file ends inside a line (a torn write): end it first
  std::atomic<std::uint64_t> failures_{0};

  // The writer's (journal_writer.hpp): the lines queued for this file and how many, under the
  // writer's lock; and, on its thread alone, those it is writing. The two buffers trade places
  // each batch, so a file's lines are queued without an allocation a line.
  friend class JournalWriter;
  std::string queued_;
  std::size_t queued_lines_ = 0;
  std::string writing_;
};

}  // namespace escouade
