#pragma once

// How a program's standard error becomes journal lines, the same for a process and a sandboxed
// instance: a line per '\n' (a '\r' before it dropped), and a line longer than 16 KiB in pieces
// cut at a character's end, since stderr is free text, kept and never refused.
//
// Thread: one at a time (the reader of that program's stderr).

#include <cstddef>
#include <string>
#include <string_view>

#include "base/utf8.hpp"

namespace escouade::runtime {

class StderrLines {
 public:
  static constexpr std::size_t kPieceBytes = 16 * 1024;

  // Feeds bytes of its stderr: on_line(std::string_view) for each complete line, on_piece(
  // std::string_view) for each 16 KiB piece of a line whose end has not come; at_end, what is
  // left goes to on_line. The views live until the callback returns.
  template <class OnLine, class OnPiece>
  void feed(std::string_view bytes, bool at_end, OnLine&& on_line, OnPiece&& on_piece) {
    pending_.append(bytes);
    std::size_t start = 0;
    for (;;) {
      const std::size_t nl = pending_.find('\n', start);
      if (nl == std::string::npos) break;
      std::string_view line(pending_.data() + start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      on_line(line);
      start = nl + 1;
    }
    pending_.erase(0, start);
    while (pending_.size() >= kPieceBytes) {
      std::size_t cut = utf8_complete_prefix(std::string_view(pending_).substr(0, kPieceBytes));
      if (cut == 0) cut = kPieceBytes;
      on_piece(std::string_view(pending_).substr(0, cut));
      pending_.erase(0, cut);
    }
    if (at_end && !pending_.empty()) {
      on_line(std::string_view(pending_));
      pending_.clear();
    }
  }

 private:
  std::string pending_;
};

}  // namespace escouade::runtime
