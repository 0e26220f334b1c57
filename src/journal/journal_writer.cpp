#include "journal/journal_writer.hpp"

#include <algorithm>

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

bool JournalWriter::submit(std::shared_ptr<JournalFile> file, std::string line) {
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
    queue_.push_back(Entry{std::move(file), std::move(line)});
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
  std::vector<Entry> batch;
  std::vector<std::string> lines;
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
      batch.swap(queue_);
      queued_bytes_ = 0;
    }
    // Each file's lines in their order, one append per file: stable_sort keeps the order of
    // the lines of one file, which is all the journal promises.
    std::stable_sort(batch.begin(), batch.end(),
                     [](const Entry& a, const Entry& b) { return a.file < b.file; });
    std::size_t files = 0;
    for (std::size_t i = 0; i < batch.size();) {
      JournalFile& file = *batch[i].file;
      lines.clear();
      for (; i < batch.size() && batch[i].file.get() == &file; ++i)
        lines.push_back(std::move(batch[i].line));
      file.append(lines);
      // Every few files, the core is offered to whoever waits for it: a batch of 20 files (a
      // decision asked of 20 plugins) is 40 system calls (fstat and write), which in one burst
      // held the host's thread up on a shared core (docs/journal.md).
      if (++files % kFilesBetweenYields == 0 && i < batch.size()) std::this_thread::yield();
    }
    const std::uint64_t count = batch.size();
    batch.clear();  // the last owner of a journal's file may be here: closed on this thread
    {
      std::lock_guard lock(mutex_);
      done_ += count;
    }
    written_.notify_all();
  }
}

}  // namespace escouade
