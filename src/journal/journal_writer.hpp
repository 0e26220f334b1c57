#pragma once

// The thread that writes the host's journals, so that no write(2) to a journal, however slow the
// disk, runs on the host's thread. Journals hand it formatted lines, which join their file's
// queued text (no allocation a line); it wakes, takes everything queued, and writes each
// journal's lines in one batch (docs/journal.md).
//
// Bounded: past kMaxQueuedBytes waiting in all, a line is refused; its journal counts it and says
// how many it lost in its next line that is taken.
//
// Thread: submit() and flush() from any thread; the destructor writes everything queued, then
// joins its thread.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace escouade {

class JournalFile;

class JournalWriter {
 public:
  static constexpr std::size_t kMaxQueuedBytes = 8 * 1024 * 1024;
  // How long the writer, once woken, lets lines gather before it writes them (flush() and the
  // end cut it short). Each file gets one write(2) a batch: a decision of 20 plugins journals a
  // line in each of 20 files, and with 1 ms the writes of those files cost a decision 5 to 8 %
  // of its time on one core (docs/PERFORMANCE.md).
  static constexpr std::chrono::microseconds kGather{10000};
  // How many files the writer writes before it offers the core to others.
  static constexpr std::size_t kFilesBetweenYields = 4;
  // A file's buffer larger than this after its batch is written is given back (a flood's).
  static constexpr std::size_t kKeptBufferBytes = 64 * 1024;

  explicit JournalWriter(std::size_t max_queued_bytes = kMaxQueuedBytes);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Queues one formatted line (ending with '\n') for `file`; returns false when it was dropped
  // because the queue was full.
  bool submit(const std::shared_ptr<JournalFile>& file, std::string_view line);
  // Returns once every line submitted before the call has been written (or has failed).
  void flush();

  // Lines dropped because the queue was full, since construction.
  std::uint64_t dropped() const;

  // For tests, a disk that does not take lines: while held, the writer takes nothing from the
  // queue (the destructor still writes it all).
  void hold();
  void release();

 private:
  void run();

  mutable std::mutex mutex_;
  std::condition_variable wake_;     // the writer: lines queued, or the end
  std::condition_variable written_;  // flush(): a batch was written
  // The files with lines queued, each once, in the order of their first line since the last
  // batch; their lines are in each file's own queue (JournalFile's queued_).
  std::vector<std::shared_ptr<JournalFile>> queue_;
  std::size_t queued_bytes_ = 0;
  std::uint64_t submitted_ = 0;  // lines taken into the queue, in all
  std::uint64_t done_ = 0;       // lines written or failed, in all
  std::uint64_t dropped_ = 0;
  const std::size_t max_queued_bytes_;
  bool held_ = false;
  bool ending_ = false;
  int flushing_ = 0;    // flush() calls waiting: the gathering window ends at once
  std::thread thread_;  // last: it starts once everything above is built
};

}  // namespace escouade
