#pragma once

// What passes between the host and a sandbox helper (escouade-sandbox) besides the plugin's own
// output: records, each one byte of kind, four of length (little-endian) and that many bytes.
//
//   host -> helper, on its stdin: the start record (what the instance runs), then the lines the
//     plugin is sent, each marked kept or droppable, and the count of decisions it holds;
//   helper -> host, on its descriptor 3: that its module is ready, how it ended, that its input
//     filled or drained while it read ahead, a compiled bundle (a compile helper).
//
// The plugin's stdout and stderr are the helper's own, raw, read by the host as a process's are.
// No I/O here: pure encoding and decoding, the same on both sides. The host reads what a helper
// writes as hostile (its sizes capped, every field checked); the helper trusts the host.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace escouade::sandbox::wire {

inline constexpr std::size_t kHeaderBytes = 5;

// Host -> helper.
enum class ToHelper : char {
  start = 'S',      // a Start, once, first
  line = 'L',       // a line for its input ('\n' included) that is never dropped
  droppable = 'D',  // a notification's line, which may be dropped while its input is full
  decisions = 'H',  // how many permissions/decide it holds now (a count), before the next line
};

// Helper -> host.
enum class ToHost : char {
  ready = 'K',          // its module compiled or decoded, before any of its code ran
  ended = 'E',          // an Ended: how its instance ended, last
  input_full = 'F',     // a count: bytes of input it holds unread; notifications are dropped
  input_drained = 'N',  // a count: notifications dropped while its input was full
  stencil = 'T',        // a compile helper's result: the bundle compiled, encoded
  stale_stencil = 'X',  // the stencil it was given did not decode: compiled again from source
};

// One record, to append to a stream.
void append_record(std::string& out, char kind, std::string_view bytes);
inline std::string record(char kind, std::string_view bytes) {
  std::string out;
  append_record(out, kind, bytes);
  return out;
}
template <class Kind>
std::string record(Kind kind, std::string_view bytes) {
  return record(static_cast<char>(kind), bytes);
}

// Splits a stream into records. Bounded: a record longer than `max_bytes` is an error (a hostile
// or broken writer), after which it reads nothing more.
class RecordReader {
 public:
  explicit RecordReader(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // Calls on_record(kind, bytes) for each whole record of what came so far; false once a record
  // was over the bound.
  template <class F>
  bool feed(std::string_view bytes, F&& on_record);
  bool failed() const noexcept { return failed_; }
  // Bytes held of a record not yet whole.
  std::size_t buffered() const noexcept { return buffer_.size(); }

 private:
  std::size_t max_bytes_;
  std::string buffer_;
  bool failed_ = false;
};

// A count (8 bytes, little-endian).
std::string count(std::uint64_t n);
std::optional<std::uint64_t> count_of(std::string_view bytes);

// What one helper runs: the start record.
//
// Its bundle (or module) and its stencil may weigh megabytes: they are viewed, never copied. On
// the host, the caller keeps what they view until start_record() has made the record, on a
// worker; in the helper, `held` is the record they were read in, read once from its pipe. (On
// this machine a page first touched costs ~16 us: each copy of a 6 MB start cost ~25 ms.)
struct Start {
  // compile_js: the bundle compiled, its stencil sent; compile_wasm: the module checked and
  // compiled by the engine, a mark of it sent (compiled wasm cannot be kept); nothing runs.
  enum class Kind : std::uint8_t { js = 1, wasm = 2, compile_js = 3, compile_wasm = 4 };
  Kind kind = Kind::js;
  std::uint64_t memory_bytes = 64ull * 1024 * 1024;
  std::uint32_t turn_ms = 2000;
  std::uint32_t turn_deciding_ms = 500;
  std::uint64_t net_bytes = 1024 * 1024;  // what run.js's fetch reads whole, at most
  std::string name;          // how messages name its module: "dist/plugin.mjs", "plugin.wasm"
  std::string url;           // its module's import.meta.url (a run.js bundle)
  std::string folder;        // process.cwd() and where readFileSync's paths are (a run.js bundle)
  std::string_view source;   // the bundle's text, or plugin.wasm's bytes
  std::string_view stencil;  // the bundle compiled before (a cache entry), or empty
  std::vector<std::pair<std::string, std::string>> root_files;  // what readFileSync may read
  std::shared_ptr<const std::string> held;  // what source and stencil view, once decoded
};
// The whole record (its kind and length first), made in one allocation.
std::string start_record(const Start& start);
// A start record's bytes (after its kind and length): source and stencil view `body`, which the
// Start holds.
std::optional<Start> decode_start(std::shared_ptr<const std::string> body);

// How an instance ended, as the helper tells it.
struct Ended {
  bool refusal = false;  // it cannot run as it is: never restarted by itself
  std::string reason;    // the sentence of the journal
  std::string turn;      // a turn stopped past its budget: the line it handled, cut; or empty
};
std::string encode(const Ended& ended);
// Capped: a reason longer than kMaxReasonBytes is cut at a character's end.
std::optional<Ended> decode_ended(std::string_view bytes);
inline constexpr std::size_t kMaxReasonBytes = 4096;

template <class F>
bool RecordReader::feed(std::string_view bytes, F&& on_record) {
  if (failed_) return false;
  // Whole records straight from `bytes` when nothing is held; the rest kept.
  auto take = [&](std::string_view& from) {
    while (from.size() >= kHeaderBytes) {
      std::uint32_t length = 0;
      for (int i = 4; i >= 1; --i)
        length = (length << 8) | static_cast<unsigned char>(from[static_cast<std::size_t>(i)]);
      if (length > max_bytes_) {
        failed_ = true;
        return false;
      }
      if (from.size() - kHeaderBytes < length) return true;
      on_record(from[0], from.substr(kHeaderBytes, length));
      from.remove_prefix(kHeaderBytes + length);
    }
    return true;
  };
  // A record begun and not whole: room for all of it at once, not doubled piece by piece (a
  // stencil weighs megabytes). Its length was checked against the bound.
  auto make_room = [&] {
    if (buffer_.size() < kHeaderBytes) return;
    std::size_t length = 0;
    for (int i = 4; i >= 1; --i)
      length = (length << 8) | static_cast<unsigned char>(buffer_[static_cast<std::size_t>(i)]);
    buffer_.reserve(kHeaderBytes + length);
  };
  if (buffer_.empty()) {
    if (!take(bytes)) return false;
    buffer_.assign(bytes);
    make_room();
    return true;
  }
  buffer_.append(bytes);
  std::string_view held = buffer_;
  if (!take(held)) return false;
  buffer_.erase(0, buffer_.size() - held.size());
  if (buffer_.empty()) {
    std::string().swap(buffer_);  // a large record's room is not kept
    return true;
  }
  make_room();
  return true;
}

}  // namespace escouade::sandbox::wire
