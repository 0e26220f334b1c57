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

bool take_view(std::string_view& in, std::string_view& out) {
  std::uint64_t n = 0;
  if (!take_u64(in, n) || n > in.size()) return false;
  out = in.substr(0, n);
  in.remove_prefix(n);
  return true;
}

// A count of padding bytes (at most 7), then as many zeros.
bool skip_padding(std::string_view& in) {
  if (in.empty()) return false;
  const auto pad = static_cast<unsigned char>(in[0]);
  if (pad > 7 || in.size() < 1u + pad) return false;
  for (std::size_t i = 1; i <= pad; ++i)
    if (in[i] != '\0') return false;
  in.remove_prefix(1u + pad);
  return true;
}

bool take_bytes(std::string_view& in, std::string& out) {
  std::string_view view;
  if (!take_view(in, view)) return false;
  out.assign(view);
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

std::string start_record(const Start& s) {
  std::size_t size = 1 + 8 + 4 + 4 + 8;
  for (std::string_view part : {std::string_view(s.name), std::string_view(s.url),
                                std::string_view(s.folder), s.source, s.stencil})
    size += 8 + part.size();
  // The stencil's bytes begin at a multiple of 8 from the body's start (the helper reads the
  // body into an allocation of its own, which malloc aligns): the engine uses them in place.
  const std::size_t before_stencil = 1 + 8 + 4 + 4 + 8 + 8 + s.name.size() + 8 + s.url.size() + 8 +
                                     s.folder.size() + 8 + s.source.size() + 1 + 8;
  const std::size_t pad = (8 - before_stencil % 8) % 8;
  size += 1 + pad;
  size += 8;
  for (const auto& [name, text] : s.root_files)
    size += 16 + name.size() + text.size();
  std::string out;
  out.reserve(kHeaderBytes + size);
  out.push_back(static_cast<char>(ToHelper::start));
  put_u32(out, static_cast<std::uint32_t>(size));
  out.push_back(static_cast<char>(s.kind));
  put_u64(out, s.memory_bytes);
  put_u32(out, s.turn_ms);
  put_u32(out, s.turn_deciding_ms);
  put_u64(out, s.net_bytes);
  put_bytes(out, s.name);
  put_bytes(out, s.url);
  put_bytes(out, s.folder);
  put_bytes(out, s.source);
  out.push_back(static_cast<char>(pad));
  out.append(pad, '\0');
  put_bytes(out, s.stencil);
  put_u64(out, s.root_files.size());
  for (const auto& [name, text] : s.root_files) {
    put_bytes(out, name);
    put_bytes(out, text);
  }
  return out;
}

std::optional<Start> decode_start(std::shared_ptr<const std::string> body) {
  if (!body || body->empty()) return std::nullopt;
  std::string_view in = *body;
  Start s;
  const auto kind = static_cast<std::uint8_t>(in[0]);
  if (kind < 1 || kind > 4) return std::nullopt;
  s.kind = static_cast<Start::Kind>(kind);
  in.remove_prefix(1);
  std::uint64_t files = 0;
  if (!take_u64(in, s.memory_bytes) || !take_u32(in, s.turn_ms) ||
      !take_u32(in, s.turn_deciding_ms) || !take_u64(in, s.net_bytes) || !take_bytes(in, s.name) ||
      !take_bytes(in, s.url) || !take_bytes(in, s.folder) || !take_view(in, s.source) ||
      !skip_padding(in) || !take_view(in, s.stencil) || !take_u64(in, files) ||
      files > in.size() / 16) {
    return std::nullopt;
  }
  for (std::uint64_t i = 0; i < files; ++i) {
    std::string name;
    std::string text;
    if (!take_bytes(in, name) || !take_bytes(in, text)) return std::nullopt;
    s.root_files.emplace_back(std::move(name), std::move(text));
  }
  if (!in.empty()) return std::nullopt;
  s.held = std::move(body);
  return s;
}

std::string encode(const Ended& e) {
  std::string out(1, e.refusal ? 'R' : 'C');
  put_bytes(out, e.reason);
  put_bytes(out, e.turn);
  return out;
}

std::optional<Ended> decode_ended(std::string_view in) {
  if (in.empty() || (in[0] != 'R' && in[0] != 'C')) return std::nullopt;
  Ended e;
  e.refusal = in[0] == 'R';
  in.remove_prefix(1);
  std::string_view reason;
  std::string_view turn;
  if (!take_view(in, reason) || !take_view(in, turn) || !in.empty()) return std::nullopt;
  const auto capped = [](std::string_view text) {
    if (text.size() <= kMaxReasonBytes) return text;
    text = text.substr(0, kMaxReasonBytes);
    return text.substr(0, utf8_complete_prefix(text));
  };
  reason = capped(reason);
  turn = capped(turn);
  if (!is_valid_utf8(reason) || !is_valid_utf8(turn)) return std::nullopt;
  e.reason.assign(reason);
  e.turn.assign(turn);
  return e;
}

}  // namespace escouade::sandbox::wire
