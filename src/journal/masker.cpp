#include "journal/masker.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace escouade {
namespace {

// The dense part of the automaton holds at most this many transitions (1 MiB); states past it,
// deep in long secrets, keep only their own edges and fall back through their failure links.
constexpr std::size_t kDenseBudget = std::size_t{1} << 18;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of the `digits` hex digits at `s[at]`, or -1.
long hex_at(std::string_view s, std::size_t at, std::size_t digits) {
  if (s.size() < at + digits) return -1;
  long value = 0;
  for (std::size_t k = 0; k < digits; ++k) {
    const int d = hex_value(s[at + k]);
    if (d < 0) return -1;
    value = value * 16 + d;
  }
  return value;
}

// One escape sequence read at the start of a text: how many bytes it takes and the bytes it
// stands for (a code point in UTF-8, or one byte). `taken` is 0 when the text starts with no
// escape this masker reads.
struct Escape {
  std::size_t taken = 0;
  std::array<char, 4> bytes{};
  std::size_t count = 0;
};

Escape one_byte(std::size_t taken, char byte) {
  Escape e;
  e.taken = taken;
  e.bytes[0] = byte;
  e.count = 1;
  return e;
}

Escape code_point(std::size_t taken, unsigned long cp) {
  Escape e;
  e.taken = taken;
  auto put = [&e](unsigned long byte) { e.bytes[e.count++] = static_cast<char>(byte); };
  if (cp < 0x80) {
    put(cp);
  } else if (cp < 0x800) {
    put(0xC0 | (cp >> 6));
    put(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    put(0xE0 | (cp >> 12));
    put(0x80 | ((cp >> 6) & 0x3F));
    put(0x80 | (cp & 0x3F));
  } else {
    put(0xF0 | (cp >> 18));
    put(0x80 | ((cp >> 12) & 0x3F));
    put(0x80 | ((cp >> 6) & 0x3F));
    put(0x80 | (cp & 0x3F));
  }
  return e;
}

// `s` starts with a backslash. JSON's escapes (a surrogate pair as one code point; a lone
// surrogate is not read), `\'` and `\xNN`.
Escape read_escape(std::string_view s) {
  if (s.size() < 2) return {};
  switch (s[1]) {
    case '"':
    case '\\':
    case '/':
    case '\'':
      return one_byte(2, s[1]);
    case 'b':
      return one_byte(2, '\b');
    case 'f':
      return one_byte(2, '\f');
    case 'n':
      return one_byte(2, '\n');
    case 'r':
      return one_byte(2, '\r');
    case 't':
      return one_byte(2, '\t');
    case 'x': {
      const long byte = hex_at(s, 2, 2);
      return byte < 0 ? Escape{} : one_byte(4, static_cast<char>(byte));
    }
    case 'u': {
      const long unit = hex_at(s, 2, 4);
      if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return {};
      if (unit < 0xD800 || unit > 0xDBFF) return code_point(6, static_cast<unsigned long>(unit));
      if (s.size() < 12 || s[6] != '\\' || s[7] != 'u') return {};
      const long low = hex_at(s, 8, 4);
      if (low < 0xDC00 || low > 0xDFFF) return {};
      return code_point(12, 0x10000 + ((static_cast<unsigned long>(unit) - 0xD800) << 10) +
                                (static_cast<unsigned long>(low) - 0xDC00));
    }
    default:
      return {};
  }
}

}  // namespace

// Aho–Corasick over the secrets' raw bytes. States are numbered breadth first, so a state's
// failure link is always a smaller number. The first states (the shallow ones, where a scan
// spends nearly all its time) have a full row of transitions over byte classes (a byte in no
// secret is class 0); the deeper ones keep their own edges only.
class Masker::Matcher {
 public:
  explicit Matcher(const std::unordered_set<std::string>& secrets) {
    build_trie(secrets);
    build_classes(secrets);
    build_dense_rows();
    build_starts(secrets);
  }

  // Calls `on_match(end, length)` for each end position in `text` where an occurrence of a
  // secret ends, with the longest such occurrence: the shorter ones ending there lie inside it.
  template <class OnMatch>
  void scan(std::string_view text, OnMatch&& on_match) const {
    std::uint32_t state = 0;
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t size = text.size();
    for (std::size_t i = 0; i < size; ++i) {
      // At the root, a byte that starts no secret with the byte after it leads back to the root
      // with no match (1-byte secrets mark every pair they start): skip it.
      if (state == 0) {
        while (i + 1 < size && !starts_pair(bytes[i], bytes[i + 1]))
          ++i;
      }
      state = next(state, bytes[i]);
      if (const std::uint32_t length = longest_out_[state]; length != 0) on_match(i + 1, length);
    }
  }

 private:
  struct Edge {
    unsigned char byte;
    std::uint32_t to;
  };

  std::uint32_t next(std::uint32_t state, unsigned char byte) const {
    while (state >= dense_states_) {
      for (std::uint32_t e = edges_begin_[state]; e != edges_begin_[state + 1]; ++e)
        if (edges_[e].byte == byte) return edges_[e].to;
      state = fail_[state];
    }
    return dense_[(std::size_t{state} << row_shift_) + class_of_[byte]];
  }

  bool starts_pair(unsigned char first, unsigned char second) const {
    const std::size_t pair = std::size_t{first} << 8 | second;
    return (pairs_[pair >> 6] >> (pair & 63)) & 1;
  }

  void build_starts(const std::unordered_set<std::string>& secrets) {
    pairs_.fill(0);
    auto mark = [this](std::size_t pair) { pairs_[pair >> 6] |= std::uint64_t{1} << (pair & 63); };
    for (const std::string& secret : secrets) {
      const std::size_t first = static_cast<unsigned char>(secret[0]);
      if (secret.size() == 1) {
        for (std::size_t second = 0; second < 256; ++second)
          mark(first << 8 | second);
      } else {
        mark(first << 8 | static_cast<unsigned char>(secret[1]));
      }
    }
  }

  std::uint32_t child(std::uint32_t state, unsigned char byte) const {
    for (std::uint32_t e = edges_begin_[state]; e != edges_begin_[state + 1]; ++e)
      if (edges_[e].byte == byte) return edges_[e].to;
    return 0;
  }

  void build_trie(const std::unordered_set<std::string>& secrets) {
    // A first trie in insertion order, then renumbered breadth first.
    std::vector<std::vector<Edge>> kids(1);
    std::vector<std::uint32_t> terminal_length(1, 0);
    for (const std::string& secret : secrets) {
      std::uint32_t at = 0;
      for (const char c : secret) {
        const auto byte = static_cast<unsigned char>(c);
        auto& out = kids[at];
        auto it =
            std::find_if(out.begin(), out.end(), [byte](const Edge& e) { return e.byte == byte; });
        if (it != out.end()) {
          at = it->to;
          continue;
        }
        const auto made = static_cast<std::uint32_t>(kids.size());
        out.push_back({byte, made});
        kids.emplace_back();
        terminal_length.push_back(0);
        at = made;
      }
      terminal_length[at] = static_cast<std::uint32_t>(secret.size());
    }

    const std::size_t count = kids.size();
    std::vector<std::uint32_t> order;  // breadth-first order of the first trie's states
    std::vector<std::uint32_t> renamed(count);
    order.reserve(count);
    order.push_back(0);
    for (std::size_t k = 0; k < order.size(); ++k) {
      renamed[order[k]] = static_cast<std::uint32_t>(k);
      for (const Edge& e : kids[order[k]])
        order.push_back(e.to);
    }

    edges_begin_.assign(count + 1, 0);
    edges_.clear();
    edges_.reserve(count);
    longest_out_.assign(count, 0);
    for (std::size_t k = 0; k < count; ++k) {
      edges_begin_[k] = static_cast<std::uint32_t>(edges_.size());
      for (const Edge& e : kids[order[k]])
        edges_.push_back({e.byte, renamed[e.to]});
      longest_out_[k] = terminal_length[order[k]];
    }
    edges_begin_[count] = static_cast<std::uint32_t>(edges_.size());

    fail_.assign(count, 0);
    for (std::uint32_t state = 0; state < count; ++state) {
      for (std::uint32_t e = edges_begin_[state]; e != edges_begin_[state + 1]; ++e) {
        const std::uint32_t to = edges_[e].to;
        if (state != 0) {
          std::uint32_t f = fail_[state];
          while (f != 0 && child(f, edges_[e].byte) == 0)
            f = fail_[f];
          fail_[to] = child(f, edges_[e].byte);
        }
        // The failure state is shallower, so numbered before `to` and already complete.
        if (longest_out_[to] == 0) longest_out_[to] = longest_out_[fail_[to]];
      }
    }
  }

  void build_classes(const std::unordered_set<std::string>& secrets) {
    class_of_.fill(0);
    std::array<bool, 256> used{};
    for (const std::string& secret : secrets)
      for (const char c : secret)
        used[static_cast<unsigned char>(c)] = true;
    representative_.assign(1, 0);
    for (std::size_t byte = 0; byte < 256; ++byte) {
      if (!used[byte]) continue;
      class_of_[byte] = static_cast<std::uint16_t>(representative_.size());
      representative_.push_back(static_cast<unsigned char>(byte));
    }
    classes_ = static_cast<std::uint32_t>(representative_.size());
    while ((std::uint32_t{1} << row_shift_) < classes_)
      ++row_shift_;
  }

  void build_dense_rows() {
    const std::size_t count = fail_.size();
    const std::size_t row = std::size_t{1} << row_shift_;
    dense_states_ =
        static_cast<std::uint32_t>(std::clamp<std::size_t>(kDenseBudget / row, 1, count));
    dense_.assign(std::size_t{dense_states_} * row, 0);
    for (std::uint32_t state = 0; state < dense_states_; ++state) {
      std::uint32_t* to_of = &dense_[std::size_t{state} << row_shift_];
      const std::uint32_t* fallback = &dense_[std::size_t{fail_[state]} << row_shift_];
      for (std::uint32_t c = 1; c < classes_; ++c) {
        const std::uint32_t to = child(state, representative_[c]);
        to_of[c] = to != 0 ? to : (state == 0 ? 0 : fallback[c]);
      }
    }
  }

  std::array<std::uint16_t, 256> class_of_{};
  std::vector<unsigned char> representative_;  // a byte of each class
  std::uint32_t classes_ = 1;
  std::uint32_t row_shift_ = 0;  // a row holds 2^row_shift_ >= classes_ transitions
  std::uint32_t dense_states_ = 1;
  std::vector<std::uint32_t> dense_;         // dense_states_ rows
  std::array<std::uint64_t, 1024> pairs_{};  // the first two bytes of each secret, as bits
  std::vector<std::uint32_t> edges_begin_;
  std::vector<Edge> edges_;
  std::vector<std::uint32_t> fail_;
  std::vector<std::uint32_t> longest_out_;  // the longest secret that ends the state's bytes
};

namespace {

// Decodes the escapes of `src` into `out`; a backslash that starts no escape stays as it is.
// Returns whether an escape was read.
template <class View>
bool decode_escapes(std::string_view src, View& out) {
  out.bytes.clear();
  out.runs.clear();
  auto add_literal = [&out, src](std::size_t begin, std::size_t end) {
    if (!out.runs.empty() && out.runs.back().literal && out.runs.back().from.end == begin)
      out.runs.back().from.end = end;
    else
      out.runs.push_back({out.bytes.size(), {begin, end}, true});
    out.bytes.append(src.data() + begin, end - begin);
  };
  bool read_any = false;
  for (std::size_t i = 0; i < src.size();) {
    const std::size_t backslash = std::min(src.find('\\', i), src.size());
    if (backslash > i) {
      add_literal(i, backslash);
      i = backslash;
      continue;
    }
    const Escape escape = read_escape(src.substr(i));
    if (escape.taken == 0) {
      add_literal(i, i + 1);
      ++i;
      continue;
    }
    out.runs.push_back({out.bytes.size(), {i, i + escape.taken}, false});
    out.bytes.append(escape.bytes.data(), escape.count);
    i += escape.taken;
    read_any = true;
  }
  return read_any;
}

// The span of the source that the decoded byte `at` of `view` comes from.
template <class Span, class View>
Span source_span(const View& view, std::size_t at) {
  const auto run = std::prev(std::partition_point(view.runs.begin(), view.runs.end(),
                                                  [at](const auto& r) { return r.at <= at; }));
  if (!run->literal) return run->from;
  const std::size_t begin = run->from.begin + (at - run->at);
  return {begin, begin + 1};
}

}  // namespace

Masker::Masker() = default;
Masker::Masker(Masker&&) noexcept = default;
Masker& Masker::operator=(Masker&&) noexcept = default;
Masker::~Masker() = default;

void Masker::add(std::string_view secret) {
  if (secret.empty()) return;
  if (!secrets_.emplace(secret).second) return;
  longest_secret_ = std::max(longest_secret_, secret.size());
  matcher_.reset();
}

void Masker::ensure_matcher() const {
  if (!matcher_) matcher_ = std::make_unique<Matcher>(secrets_);
}

Masker::Span Masker::text_span(std::size_t level, std::size_t first, std::size_t last) const {
  for (;;) {
    const Span span{source_span<Span>(levels_[level], first).begin,
                    source_span<Span>(levels_[level], last).end};
    if (level == 0) return span;
    --level;
    first = span.begin;
    last = span.end - 1;
  }
}

void Masker::scan_near_escapes(std::size_t level) const {
  const DecodedView& view = levels_[level];
  const std::size_t reach = longest_secret_ - 1;
  Span window{0, 0};
  auto scan_window = [&] {
    if (window.end == window.begin) return;
    const std::string_view bytes(view.bytes.data() + window.begin, window.end - window.begin);
    matcher_->scan(bytes, [&](std::size_t end, std::size_t length) {
      end += window.begin;
      found_.push_back(text_span(level, end - length, end - 1));
    });
  };
  for (std::size_t k = 0; k < view.runs.size(); ++k) {
    if (view.runs[k].literal) continue;
    const std::size_t end = k + 1 < view.runs.size() ? view.runs[k + 1].at : view.bytes.size();
    const Span near{view.runs[k].at > reach ? view.runs[k].at - reach : 0,
                    std::min(view.bytes.size(), end + reach)};
    if (near.begin <= window.end) {
      window.end = std::max(window.end, near.end);
    } else {
      scan_window();
      window = near;
    }
  }
  scan_window();
}

std::size_t Masker::find(std::string_view text) const {
  found_.clear();
  matcher_->scan(text, [this](std::size_t end, std::size_t length) {
    found_.push_back({end - length, end});
  });

  std::size_t decoded = 0;
  for (std::string_view source = text; decoded < levels_.size(); ++decoded) {
    if (source.find('\\') == std::string_view::npos) break;
    if (!decode_escapes(source, levels_[decoded])) break;
    scan_near_escapes(decoded);
    source = levels_[decoded].bytes;
  }

  std::sort(found_.begin(), found_.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  return decoded;
}

void Masker::merge_found() const {
  if (found_.size() > 1) {
    std::size_t kept = 0;
    for (std::size_t k = 1; k < found_.size(); ++k) {
      if (found_[k].begin < found_[kept].end)
        found_[kept].end = std::max(found_[kept].end, found_[k].end);
      else
        found_[++kept] = found_[k];
    }
    found_.resize(kept + 1);
  }
}

void Masker::mask(std::string& text) const {
  if (secrets_.empty() || text.empty()) return;
  ensure_matcher();
  find(text);
  if (found_.empty()) return;
  merge_found();
  rewritten_.clear();
  std::size_t at = 0;
  for (const Span& span : found_) {
    rewritten_.append(text, at, span.begin - at);
    rewritten_.append(kMask);
    at = span.end;
  }
  rewritten_.append(text, at);
  text.swap(rewritten_);
}

}  // namespace escouade
