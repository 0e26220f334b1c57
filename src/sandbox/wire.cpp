#include "sandbox/wire.hpp"

#include "base/utf8.hpp"

namespace escouade::sandbox::wire {

namespace {

void put_u32(std::string& out, std::uint32_t n) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

void put_u64(std::string& out, std::uint64_t n) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

void put_bytes(std::string& out, std::string_view bytes) {
  put_u64(out, bytes.size());
  out.append(bytes);
}

// Reads from the front of `in`; false, and nothing taken, when it is too short.
bool take_u64(std::string_view& in, std::uint64_t& n) {
  if (in.size() < 8) return false;
  n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(in[static_cast<std::size_t>(i)]);
  in.remove_prefix(8);
  return true;
}

bool take_u32(std::string_view& in, std::uint32_t& n) {
  if (in.size() < 4) return false;
  n = 0;
  for (int i = 3; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(in[static_cast<std::size_t>(i)]);
  in.remove_prefix(4);
  return true;
}

bool take_bytes(std::string_view& in, std::string& out) {
  std::uint64_t n = 0;
  if (!take_u64(in, n) || n > in.size()) return false;
  out.assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

}  // namespace

void append_record(std::string& out, char kind, std::string_view bytes) {
  out.push_back(kind);
  put_u32(out, static_cast<std::uint32_t>(bytes.size()));
  out.append(bytes);
}

std::string count(std::uint64_t n) {
  std::string out;
  put_u64(out, n);
  return out;
}

std::optional<std::uint64_t> count_of(std::string_view bytes) {
  std::uint64_t n = 0;
  if (bytes.size() != 8 || !take_u64(bytes, n)) return std::nullopt;
  return n;
}

std::string encode(const Start& s) {
  std::string out;
  out.reserve(64 + s.name.size() + s.url.size() + s.folder.size() + s.source.size() +
              s.stencil.size());
  out.push_back(static_cast<char>(s.kind));
  put_u64(out, s.memory_bytes);
  put_u32(out, s.turn_ms);
  put_u32(out, s.turn_deciding_ms);
  put_bytes(out, s.name);
  put_bytes(out, s.url);
  put_bytes(out, s.folder);
  put_bytes(out, s.source);
  put_bytes(out, s.stencil);
  put_u64(out, s.root_files.size());
  for (const auto& [name, text] : s.root_files) {
    put_bytes(out, name);
    put_bytes(out, text);
  }
  return out;
}

std::optional<Start> decode_start(std::string_view in) {
  Start s;
  if (in.empty()) return std::nullopt;
  const auto kind = static_cast<std::uint8_t>(in[0]);
  if (kind < 1 || kind > 3) return std::nullopt;
  s.kind = static_cast<Start::Kind>(kind);
  in.remove_prefix(1);
  std::uint64_t files = 0;
  if (!take_u64(in, s.memory_bytes) || !take_u32(in, s.turn_ms) ||
      !take_u32(in, s.turn_deciding_ms) || !take_bytes(in, s.name) || !take_bytes(in, s.url) ||
      !take_bytes(in, s.folder) || !take_bytes(in, s.source) || !take_bytes(in, s.stencil) ||
      !take_u64(in, files) || files > in.size() / 16) {
    return std::nullopt;
  }
  for (std::uint64_t i = 0; i < files; ++i) {
    std::string name;
    std::string text;
    if (!take_bytes(in, name) || !take_bytes(in, text)) return std::nullopt;
    s.root_files.emplace_back(std::move(name), std::move(text));
  }
  if (!in.empty()) return std::nullopt;
  return s;
}

std::string encode(const Ended& e) {
  std::string out(1, e.refusal ? 'R' : 'C');
  out += e.reason;
  return out;
}

std::optional<Ended> decode_ended(std::string_view in) {
  if (in.empty() || (in[0] != 'R' && in[0] != 'C')) return std::nullopt;
  Ended e;
  e.refusal = in[0] == 'R';
  std::string_view reason = in.substr(1);
  if (reason.size() > kMaxReasonBytes) {
    reason = reason.substr(0, kMaxReasonBytes);
    reason = reason.substr(0, utf8_complete_prefix(reason));
  }
  if (!is_valid_utf8(reason)) return std::nullopt;
  e.reason.assign(reason);
  return e;
}

}  // namespace escouade::sandbox::wire
