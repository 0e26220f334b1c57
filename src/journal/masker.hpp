#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace escouade {

// The secrets given to one plugin, and their masking in the text its journal keeps
// (docs/masking.md).
//
// What is masked: each occurrence of a secret, as its raw bytes or written in escapes (JSON's
// `\" \\ \/ \b \f \n \r \t \uXXXX`, surrogate pairs, either hex case, `\'`, and the journal's own
// `\xNN`), any mix of them, escaped once or twice (a JSON string inside a JSON string), inside a
// longer word or not. The union of everything any occurrence covers is masked: each run of
// overlapping occurrences becomes one `••••`, so no part of any secret stays visible.
//
// Used from the host's single thread only: it has no locks. mask() is const for its callers but
// builds the matcher after an add() and keeps scratch buffers, so two threads may not share one
// Masker even to read.
class Masker {
 public:
  // Four U+2022 BULLET, what an occurrence becomes.
  static constexpr std::string_view kMask = "\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2";

  Masker();
  Masker(Masker&&) noexcept;
  Masker& operator=(Masker&&) noexcept;
  ~Masker();

  // Remembers `secret` (copied) from now on. Empty: ignored. Already known: nothing changes. Any
  // length counts, a 1-byte secret included (docs/masking.md says why). The matcher is rebuilt at
  // the next mask() (about 7 ms for 1,000 secrets of 30 bytes; docs/masking.md).
  void add(std::string_view secret);

  // Rewrites, in one pass, every occurrence of any form of any known secret in `text` with
  // kMask. Without a known secret, returns at once. Text is bytes: invalid UTF-8 is matched too.
  void mask(std::string& text) const;

  // How many distinct secrets are known.
  std::size_t size() const noexcept { return secrets_.size(); }

 private:
  class Matcher;  // the automaton over the secrets' bytes, defined in masker.cpp

  // A span of bytes, [begin, end).
  struct Span {
    std::size_t begin;
    std::size_t end;
  };

  // A text with its escapes decoded. Its bytes come in runs: from `at` to the next run's `at`,
  // they are either the source's bytes `from` as they are (`literal`), or what the one escape
  // `from` stands for.
  struct DecodedView {
    struct Run {
      std::size_t at;
      Span from;
      bool literal;
    };
    std::string bytes;
    std::vector<Run> runs;
  };

  // Fills found_ with the spans of `text` that occurrences cover (the longest ending at each
  // byte, sorted by start, not merged), and levels_ with the decoded views it read; returns how
  // many (0 when the text has no escape).
  std::size_t find(std::string_view text) const;
  // Sorts found_ and merges its overlapping spans.
  void merge_found() const;
  // Adds to found_ the occurrences in levels_[level] that hold an escape of that level: it scans
  // only the bytes near one. The others are the previous level's, found there.
  void scan_near_escapes(std::size_t level) const;
  // The span of the original text that bytes [first, last] of levels_[level] come from.
  Span text_span(std::size_t level, std::size_t first, std::size_t last) const;
  void ensure_matcher() const;

  std::unordered_set<std::string> secrets_;
  std::size_t longest_secret_ = 0;

  // Built lazily by mask(); null when out of date.
  mutable std::unique_ptr<Matcher> matcher_;
  // Scratch kept between calls so a line costs no allocation once the sizes are reached.
  mutable std::vector<Span> found_;
  // How many times a text is decoded: a secret in a JSON string, and in a JSON string written
  // inside another one.
  static constexpr std::size_t kDecodeLevels = 2;
  mutable std::array<DecodedView, kDecodeLevels> levels_;
  mutable std::string rewritten_;
};

}  // namespace escouade
