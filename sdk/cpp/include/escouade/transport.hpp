#pragma once

// How the SDK reaches Escouade: lines in, lines out. A Transport is the one seam between the
// plugin's logic and its file descriptors; tests give the Plugin one of their own. Single
// threaded: one Transport is used by one thread at a time.

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#if (defined(__unix__) || defined(__APPLE__)) && !defined(__wasi__)
#define ESCOUADE_SDK_POSIX 1
#include <fcntl.h>
#endif
#if defined(ESCOUADE_SDK_POSIX) || defined(__wasi__)
// read(2) and write(2) on descriptors: POSIX, and wasm32-wasi (wasi-libc's, over fd_read and
// fd_write).
#define ESCOUADE_SDK_FD 1
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>
#endif

namespace escouade {

class Transport {
 public:
  virtual ~Transport() = default;
  // Blocks until a whole line came (without its '\n'), or returns false at the end of input
  // (a last line without '\n' is still given).
  virtual bool read_line(std::string& line) = 0;
  // Writes `line` and a '\n' in full; false when the other side is gone.
  virtual bool write_line(std::string_view line) = 0;
  // Pushes out what write_line buffered, before the plugin exits.
  virtual void flush() {}
};

#ifdef ESCOUADE_SDK_FD

// Reads and writes two file descriptors with read(2) and writev(2), unbuffered on the way out:
// each line leaves in full, in one write when the other side takes it, before write_line
// returns. Reads take what is there (up to 64 KiB), so several lines, or part of one, may come
// in one read. Does not own the descriptors.
class FdTransport final : public Transport {
 public:
  FdTransport(int in, int out) : in_(in), out_(out) {}

  bool read_line(std::string& line) override {
    for (;;) {
      if (auto nl = buffer_.find('\n', start_ + scanned_); nl != std::string::npos) {
        line.assign(buffer_, start_, nl - start_);
        start_ = nl + 1;
        scanned_ = 0;
        if (start_ == buffer_.size()) {
          buffer_.clear();
          start_ = 0;
        }
        return true;
      }
      // The lines taken leave the buffer before it grows, not one by one: a read of many lines
      // moves the rest of its bytes once, not once a line.
      buffer_.erase(0, start_);
      start_ = 0;
      scanned_ = buffer_.size();
      // On the heap, once: wasm32-wasi's whole stack is 64 KiB.
      if (!chunk_) chunk_ = std::make_unique<char[]>(kChunkBytes);
      const ssize_t n = ::read(in_, chunk_.get(), kChunkBytes);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (buffer_.empty()) return false;
        line = std::move(buffer_);
        buffer_.clear();
        scanned_ = 0;
        return true;
      }
      const std::string_view got(chunk_.get(), static_cast<std::size_t>(n));
      if (buffer_.empty()) {
        // A read that begins a line and holds its end (a line a read, as Escouade writes
        // them): the line is taken from the read itself, and only what follows it is kept.
        const auto nl = got.find('\n');
        if (nl != std::string_view::npos) {
          line.assign(got.data(), nl);
          buffer_.assign(got.substr(nl + 1));
          return true;
        }
        scanned_ = got.size();
      }
      buffer_.append(got);
    }
  }

  bool write_line(std::string_view line) override {
    // The line and its '\n' in one writev: no copy of the line to add the '\n'.
    char newline = '\n';
    iovec parts[2] = {{const_cast<char*>(line.data()), line.size()}, {&newline, 1}};
    iovec* next = parts;
    int left = 2;
    while (left > 0) {
      const ssize_t n = ::writev(out_, next, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      // What was written leaves the parts: whole ones, then the start of the next.
      auto done = static_cast<std::size_t>(n);
      while (left > 0 && done >= next->iov_len) {
        done -= next->iov_len;
        ++next;
        --left;
      }
      if (left > 0) {
        next->iov_base = static_cast<char*>(next->iov_base) + done;
        next->iov_len -= done;
      }
    }
    return true;
  }

 private:
  static constexpr std::size_t kChunkBytes = 65536;
  int in_;
  int out_;
  std::string buffer_;
  std::size_t start_ = 0;    // where the next line begins in buffer_
  std::size_t scanned_ = 0;  // bytes from start_ on known to hold no '\n'
  std::unique_ptr<char[]> chunk_;
};

#endif  // ESCOUADE_SDK_FD

#ifdef ESCOUADE_SDK_POSIX

// The protocol's own descriptor: a private copy of the standard output, after which fd 1 points
// at the standard error. From then on, a stray printf or std::cout of the plugin's code goes to
// stderr (which the journal keeps) and can never break a protocol line. The copy is closed on
// exec, so programs the plugin starts cannot write on it either. Returns -1 (and leaves fd 1 as
// it is) when the system refuses.
inline int take_protocol_stdout() {
  std::fflush(stdout);
  const int protocol = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (protocol < 0) return -1;
  if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    ::close(protocol);
    return -1;
  }
  return protocol;
}

#endif  // ESCOUADE_SDK_POSIX

// The standard input and output through <cstdio>: for systems with neither dup2 nor read(2),
// or when the move of fd 1 failed.
class StdioTransport final : public Transport {
 public:
  StdioTransport(std::FILE* in, std::FILE* out) : in_(in), out_(out) {}

  bool read_line(std::string& line) override {
    line.clear();
    bool any = false;
    for (int c = std::fgetc(in_); c != EOF; c = std::fgetc(in_)) {
      any = true;
      if (c == '\n') return true;
      line.push_back(static_cast<char>(c));
    }
    return any;
  }

  bool write_line(std::string_view line) override {
    if (std::fwrite(line.data(), 1, line.size(), out_) != line.size()) return false;
    if (std::fputc('\n', out_) == EOF) return false;
    return std::fflush(out_) == 0;
  }

  void flush() override { std::fflush(out_); }

 private:
  std::FILE* in_;
  std::FILE* out_;
};

// The transport of a plugin Escouade runs: stdin, and stdout kept for the protocol alone (on
// POSIX, fd 1 then points at stderr, see take_protocol_stdout). Call once, at start.
//
// On wasm32-wasi the module's stdout is the protocol and there is no dup2: the lines go straight
// to fd 0 and fd 1 with read and write (a whole line a call each way, where <cstdio> took one
// byte a call of fgetc), after what <cstdio> held for stdout, which leaves first.
inline std::unique_ptr<Transport> stdio_transport() {
#ifdef ESCOUADE_SDK_POSIX
  if (const int protocol = take_protocol_stdout(); protocol >= 0) {
    return std::make_unique<FdTransport>(STDIN_FILENO, protocol);
  }
#elif defined(__wasi__)
  std::fflush(stdout);
  return std::make_unique<FdTransport>(STDIN_FILENO, STDOUT_FILENO);
#endif
  return std::make_unique<StdioTransport>(stdin, stdout);
}

}  // namespace escouade
