#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace escouade {

class JournalFile;
class JournalWriter;

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
  // The thread that writes the file, shared by the journals that use it: it lives as long as
  // the last of them (a journal held by a completion still queued after its host ended must
  // still find it). Null: each line is written at once, on the caller's thread (the CLI's
  // tools, tests).
  std::shared_ptr<JournalWriter> writer;
};

// `2026-11-29T23:40:01.123Z`: a time in UTC to the millisecond, as journal lines and traces
// (trace_file.hpp) begin, appended to `out`.
void append_utc_time(std::string& out, std::chrono::system_clock::time_point time);

// One plugin's journal: lines in English, `2026-11-29T23:40:01.123Z info  <text>` (UTC,
// milliseconds), appended to `<dir>/<id>.log` (journal_file.hpp). With a writer, the host's
// thread only masks, formats and queues a line; the writer's thread writes the queue in batches,
// so a crash of the host loses what it had not written yet (see docs/journal.md).
//
// Used from one thread only (the host's): it has no locks.
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
  ~Journal();

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

  // How many lines could not be written to the file since construction (a full writer's queue
  // included).
  std::uint64_t write_failures() const noexcept;

  const std::filesystem::path& path() const noexcept;
  const std::filesystem::path& rotated_path() const noexcept;

  // The escaped text of one entry stops at this many bytes.
  static constexpr std::size_t kMaxEntryBytes = 16 * 1024;

 private:
  void remember(std::string_view line);
  // Writes or queues one formatted line (ending with '\n'); false when it was lost.
  bool send(std::string_view line);

  std::shared_ptr<JournalFile> file_;  // shared with the writer's queue until it is written
  std::shared_ptr<JournalWriter> writer_;
  std::size_t tail_lines_;
  std::function<std::chrono::system_clock::time_point()> clock_;
  std::function<void(std::string&)> masker_;
  // The tail: lines in the order they came, the oldest at ring_start_ once it is full (its
  // buffer then takes the next line: no allocation, no deque bookkeeping, a line).
  std::vector<std::string> ring_;
  std::size_t ring_start_ = 0;
  std::string masked_;         // the masker's copy of a line, its room kept from line to line
  std::string line_;           // the line being formatted, its room kept likewise
  std::uint64_t lost_ = 0;     // lines the writer's full queue refused, not yet reported
  std::uint64_t refused_ = 0;  // the same, in all
};

}  // namespace escouade
