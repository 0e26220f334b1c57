#include "journal/journal_writer.hpp"

#include <string>

#include "journal/journal_file.hpp"

namespace escouade {

JournalWriter::JournalWriter(std::size_t max_queued_bytes)
    : max_queued_bytes_(max_queued_bytes), thread_([this] { run(); }) {}

JournalWriter::~JournalWriter() {
  {
    std::lock_guard lock(mutex_);
    ending_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

bool JournalWriter::submit(const std::shared_ptr<JournalFile>& file, std::string_view line) {
  bool was_empty = false;
  {
    std::lock_guard lock(mutex_);
    if (queued_bytes_ + line.size() > max_queued_bytes_) {
      ++dropped_;
      return false;
    }
    queued_bytes_ += line.size();
    ++submitted_;
    was_empty = queue_.empty();
    // The file's lines gather in its own text, kept from batch to batch: a line is a copy of its
    // bytes, with no string or reference count of its own (callgrind, bench_host decide 100:
    // about 700 instructions a line fewer, in the host's thread and the writer's).
    if (file->queued_lines_++ == 0) queue_.push_back(file);
    file->queued_.append(line);
  }
  // Only the first line of a batch wakes the writer: waking it for each line of a burst (a
  // decision journals one line per plugin asked) made a context switch per line.
  if (was_empty) wake_.notify_one();
  return true;
}

void JournalWriter::flush() {
  std::unique_lock lock(mutex_);
  const std::uint64_t target = submitted_;
  if (done_ >= target) return;
  ++flushing_;
  wake_.notify_one();  // a writer gathering writes now
  written_.wait(lock, [&] { return done_ >= target; });
  --flushing_;
}

void JournalWriter::hold() {
  std::lock_guard lock(mutex_);
  held_ = true;
}

void JournalWriter::release() {
  {
    std::lock_guard lock(mutex_);
    held_ = false;
  }
  wake_.notify_one();
}

std::uint64_t JournalWriter::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

void JournalWriter::run() {
  std::vector<std::shared_ptr<JournalFile>> files;
  std::vector<std::size_t> counts;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return ending_ || (!held_ && !queue_.empty()); });
      if (queue_.empty()) return;  // ending, and everything written
      if (!ending_) {
        // The gathering window: the rest of the burst that woke it joins this batch instead of
        // waking it again, one batch a window at most under a flood. Lines queued meanwhile do
        // not wake it (the queue is not empty); a flush or the end does.
        wake_.wait_for(lock, kGather, [&] { return ending_ || flushing_ > 0; });
        if (held_ && !ending_) continue;  // held meanwhile (tests)
      }
      // Each file's queued lines become the ones it writes; its emptied buffer takes the next.
      files.swap(queue_);
      counts.clear();
      for (const auto& file : files) {
        file->writing_.swap(file->queued_);
        counts.push_back(file->queued_lines_);
        file->queued_lines_ = 0;
      }
      queued_bytes_ = 0;
    }
    // One append a file, its lines in their order, which is all the journal promises.
    std::uint64_t count = 0;
    for (std::size_t i = 0; i < files.size(); ++i) {
      JournalFile& file = *files[i];
      file.append(file.writing_, counts[i]);
      count += counts[i];
      file.writing_.clear();
      if (file.writing_.capacity() > kKeptBufferBytes) std::string().swap(file.writing_);
      // Every few files, the core is offered to whoever waits for it: a batch of 20 files (a
      // decision asked of 20 plugins) is 40 system calls (fstat and write), which in one burst
      // held the host's thread up on a shared core (docs/journal.md).
      if ((i + 1) % kFilesBetweenYields == 0 && i + 1 < files.size()) std::this_thread::yield();
    }
    files.clear();  // the last owner of a journal's file may be here: closed on this thread
    {
      std::lock_guard lock(mutex_);
      done_ += count;
    }
    written_.notify_all();
  }
}

}  // namespace escouade
