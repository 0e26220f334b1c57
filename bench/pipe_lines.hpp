#pragma once

// What the whole-process floors (pipe_floor.cpp, floors.cpp) share: a parent that re-executes
// itself (/proc/self/exe) as a child on two pipes, and lines read from and written to them.
// Single-threaded; every object owns its descriptors and closes them when it goes.

#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace bench {

// A command line the benchmark cannot use: main prints it with the usage and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `text` as a count, or a UsageError naming `what`.
inline std::uint64_t parse_count(std::string_view what, std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) {
    throw UsageError(std::string(what) + ": expected a non-negative integer, got '" +
                     std::string(text) + "'");
  }
  return value;
}

inline constexpr std::size_t kReadBufferBytes = 64 * 1024;
inline constexpr const char* kSelfExe = "/proc/self/exe";

[[noreturn]] inline void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset(other.fd_);
      other.fd_ = -1;
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  void reset(int fd = -1) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Writes all of `data`, blocking; throws on errors.
inline void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw_errno("write");
    }
    data += written;
    size -= static_cast<std::size_t>(written);
  }
}

inline void write_all(int fd, std::string_view text) {
  write_all(fd, text.data(), text.size());
}

// The bytes read from one descriptor, split into '\n'-terminated lines. `read_some` reads once
// (for a poll loop), `next_line` hands out the complete lines already read.
class LineBuffer {
 public:
  LineBuffer() : buffer_(kReadBufferBytes) {}

  // Stores the next complete line (without '\n') in `line`, valid until the next read_some.
  // Returns false when no complete line is buffered.
  bool next_line(std::string_view& line) {
    if (scan_ >= end_) {
      return false;
    }
    char* data = buffer_.data();
    const void* newline = std::memchr(data + scan_, '\n', end_ - scan_);
    if (newline == nullptr) {
      scan_ = end_;
      return false;
    }
    const auto pos = static_cast<std::size_t>(static_cast<const char*>(newline) - data);
    line = std::string_view(data + begin_, pos - begin_);
    begin_ = pos + 1;
    scan_ = begin_;
    return true;
  }

  // One read(2) into the buffer. Returns the bytes read (0 at end of input), or -1 with errno
  // EAGAIN on a non-blocking descriptor with nothing to read; throws on other errors and on
  // end of input inside an unterminated line.
  ssize_t read_some(int fd) {
    make_room();
    for (;;) {
      const ssize_t got = ::read(fd, buffer_.data() + end_, buffer_.size() - end_);
      if (got < 0) {
        if (errno == EINTR) {
          continue;
        }
        if (errno == EAGAIN) {
          return -1;
        }
        throw_errno("read");
      }
      if (got == 0 && begin_ != end_) {
        throw std::runtime_error("unexpected end of input inside a line");
      }
      end_ += static_cast<std::size_t>(got);
      return got;
    }
  }

 private:
  void make_room() {
    if (begin_ == end_) {
      begin_ = end_ = scan_ = 0;
      return;
    }
    if (end_ < buffer_.size()) {
      return;
    }
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      scan_ -= begin_;
      begin_ = 0;
    } else {
      buffer_.resize(buffer_.size() * 2);
    }
  }

  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t scan_ = 0;
  std::size_t end_ = 0;
};

// Blocking lines from one descriptor.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}

  // Stores the next line (without '\n') in `line`, valid until the next call. Returns false on
  // end of input at a line boundary; throws on read errors and on end of input inside a line.
  bool next_line(std::string_view& line) {
    while (!lines_.next_line(line)) {
      if (lines_.read_some(fd_) == 0) {
        return false;
      }
    }
    return true;
  }

 private:
  int fd_;
  LineBuffer lines_;
};

// The nearest-rank percentile of sorted samples; `fraction` in (0, 1].
inline double percentile(const std::vector<double>& sorted, double fraction) {
  const auto rank =
      static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

// A copy of this program (/proc/self/exe) started with `args` (argv[0] first), or `program`
// (looked for on PATH) when one is given, its stdin and stdout piped to the parent, its stderr
// the parent's. Both pipes are O_CLOEXEC, so a child holds no other child's pipe and sees the
// end of its input when the parent closes it.
class ChildProcess {
 public:
  explicit ChildProcess(const std::vector<std::string>& args, const std::string& program = {}) {
    int to_child[2];
    int from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) < 0) {
      throw_errno("pipe2");
    }
    UniqueFd child_stdin(to_child[0]);
    stdin_.reset(to_child[1]);
    if (::pipe2(from_child, O_CLOEXEC) < 0) {
      throw_errno("pipe2");
    }
    UniqueFd child_stdout(from_child[1]);
    stdout_.reset(from_child[0]);

    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (const std::string& arg : args) {
      argv.push_back(const_cast<char*>(arg.c_str()));
    }
    argv.push_back(nullptr);

    pid_ = ::fork();
    if (pid_ < 0) {
      throw_errno("fork");
    }
    if (pid_ == 0) {
      if (::dup2(child_stdin.get(), STDIN_FILENO) < 0 ||
          ::dup2(child_stdout.get(), STDOUT_FILENO) < 0) {
        _exit(127);
      }
      if (program.empty()) {
        ::execv(kSelfExe, argv.data());
      } else {
        ::execvp(program.c_str(), argv.data());
      }
      static constexpr char kMessage[] = "a child's exec failed\n";
      [[maybe_unused]] const ssize_t ignored =
          ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
      _exit(127);
    }
  }

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  ~ChildProcess() { reap(); }

  int stdin_fd() const { return stdin_.get(); }
  int stdout_fd() const { return stdout_.get(); }

  void close_stdin() { stdin_.reset(); }

  // Closes both pipes and reaps the child; throws unless it exited with 0.
  void finish() {
    const std::string failure = reap();
    if (!failure.empty()) {
      throw std::runtime_error(failure);
    }
  }

  // Closes both pipes and reaps the child; returns a description of how it failed, or an
  // empty string if it exited with 0.
  std::string reap() {
    stdin_.reset();
    stdout_.reset();
    if (pid_ <= 0) {
      return {};
    }
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0) {
      if (errno != EINTR) {
        pid_ = -1;
        return std::string("waitpid: ") + std::strerror(errno);
      }
    }
    pid_ = -1;
    if (WIFSIGNALED(status)) {
      return "child killed by signal " + std::to_string(WTERMSIG(status));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return "child exited with status " + std::to_string(WEXITSTATUS(status));
    }
    return {};
  }

 private:
  UniqueFd stdin_;
  UniqueFd stdout_;
  pid_t pid_ = -1;
};

}  // namespace bench
