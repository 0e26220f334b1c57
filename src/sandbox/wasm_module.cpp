#include "sandbox/wasm_module.hpp"

#include <optional>
#include <vector>

#include "platform/errors.hpp"

namespace escouade::sandbox {

namespace {

// Section ids and descriptor kinds of the core specification.
constexpr std::uint8_t kTypeSection = 1;
constexpr std::uint8_t kImportSection = 2;
constexpr std::uint8_t kMemorySection = 5;
constexpr std::uint8_t kExportSection = 7;
constexpr std::uint8_t kFunctionKind = 0;
constexpr std::uint8_t kTableKind = 1;
constexpr std::uint8_t kMemoryKind = 2;
constexpr std::uint8_t kGlobalKind = 3;
// Limits' flags: bit 0 a maximum follows, bit 1 shared (threads), bit 2 64-bit (memory64).
constexpr std::uint8_t kHasMax = 0x01;
constexpr std::uint8_t kShared = 0x02;
constexpr std::uint8_t kMemory64 = 0x04;

Error refused(std::string why) {
  return make_error(platform::Errc::invalid_argument, std::move(why));
}

// Reads the module's bytes, never past their end.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return pos_ >= bytes_.size(); }
  std::size_t pos() const { return pos_; }
  std::optional<std::uint8_t> byte() {
    if (pos_ >= bytes_.size()) return std::nullopt;
    return static_cast<std::uint8_t>(bytes_[pos_++]);
  }
  // An unsigned LEB128 of at most `bits` bits.
  std::optional<std::uint64_t> leb(unsigned bits) {
    std::uint64_t value = 0;
    for (unsigned shift = 0; shift < bits + 7; shift += 7) {
      auto b = byte();
      if (!b) return std::nullopt;
      value |= static_cast<std::uint64_t>(*b & 0x7f) << shift;
      if (!(*b & 0x80)) {
        if (bits < 64 && (value >> bits) != 0) return std::nullopt;
        return value;
      }
    }
    return std::nullopt;
  }
  std::optional<std::string_view> take(std::uint64_t n) {
    if (n > bytes_.size() - pos_) return std::nullopt;
    auto out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  std::optional<std::string_view> name() {
    auto n = leb(32);
    if (!n) return std::nullopt;
    return take(*n);
  }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

struct Limits {
  std::uint8_t flags = 0;
  std::uint64_t min = 0;
  std::optional<std::uint64_t> max;
};

std::optional<Limits> read_limits(Reader& r) {
  Limits l;
  auto flags = r.byte();
  if (!flags || *flags > 0x07) return std::nullopt;
  l.flags = *flags;
  const unsigned bits = (l.flags & kMemory64) ? 64 : 32;
  auto min = r.leb(bits);
  if (!min) return std::nullopt;
  l.min = *min;
  if (l.flags & kHasMax) {
    auto max = r.leb(bits);
    if (!max) return std::nullopt;
    l.max = *max;
  }
  return l;
}

void put_leb(std::string& out, std::uint64_t v) {
  do {
    std::uint8_t b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    out.push_back(static_cast<char>(b));
  } while (v);
}

// A vector of value types (a function type's parameters or results).
std::optional<std::string> read_value_types(Reader& r) {
  auto count = r.leb(32);
  if (!count) return std::nullopt;
  auto types = r.take(*count);
  if (!types) return std::nullopt;
  return std::string(*types);
}

// The type section: each entry 0x60, then its parameters and results.
std::optional<std::vector<FunctionType>> read_types(Reader& s) {
  auto count = s.leb(32);
  if (!count) return std::nullopt;
  std::vector<FunctionType> types;
  for (std::uint64_t i = 0; i < *count; ++i) {
    auto form = s.byte();
    if (!form || *form != 0x60) return std::nullopt;
    auto params = read_value_types(s);
    auto results = params ? read_value_types(s) : std::nullopt;
    if (!results) return std::nullopt;
    types.push_back(FunctionType{std::move(*params), std::move(*results)});
  }
  return types;
}

std::string quoted(std::string_view module, std::string_view name) {
  return "(\"" + std::string(module) + "\", \"" + std::string(name) + "\")";
}

std::optional<Error> check_memory(const Limits& l, std::uint64_t max_pages) {
  if (l.flags & kShared)
    return refused("its module has a shared memory, which the sandbox refuses");
  if (l.flags & kMemory64)
    return refused("its module has a 64-bit memory (memory64), which the sandbox refuses");
  if (l.min > max_pages)
    return refused("its module asks for " + std::to_string(l.min * kWasmPageBytes / (1024 * 1024)) +
                   " MB of memory at its start, past the " +
                   std::to_string(max_pages * kWasmPageBytes / (1024 * 1024)) +
                   " MB its linear memory may have");
  return std::nullopt;
}

}  // namespace

std::string describe(const FunctionType& type) {
  const auto name = [](char t) -> std::string_view {
    switch (static_cast<std::uint8_t>(t)) {
      case 0x7f:
        return "i32";
      case 0x7e:
        return "i64";
      case 0x7d:
        return "f32";
      case 0x7c:
        return "f64";
      case 0x7b:
        return "v128";
      case 0x70:
        return "funcref";
      case 0x6f:
        return "externref";
      default:
        return "?";
    }
  };
  const auto list = [&](const std::string& types) {
    std::string out;
    for (const char t : types) {
      if (!out.empty()) out += ", ";
      out += name(t);
    }
    return out;
  };
  // One result is written alone, as WASI's documents do: "(i32, i32) -> i32".
  const std::string results =
      type.results.size() == 1 ? list(type.results) : "(" + list(type.results) + ")";
  return "(" + list(type.params) + ") -> " + results;
}

Result<PreparedModule> prepare_module(std::string_view bytes, std::uint64_t max_pages,
                                      const ServedImport& served) {
  static constexpr std::string_view kHeader{"\0asm\1\0\0\0", 8};
  if (bytes.substr(0, 8) != kHeader)
    return refused("its plugin.wasm is not a wasm module (version 1)");
  Reader r(bytes);
  (void)r.take(8);
  PreparedModule out;
  bool has_memory = false;
  bool exports_memory = false;
  bool exports_start = false;
  // Where the memory section lies, to write it again.
  std::size_t memory_at = 0;
  std::size_t memory_end = 0;
  std::optional<Limits> memory;
  std::vector<FunctionType> types;
  const Error unreadable = refused("its plugin.wasm cannot be read: a section is cut or malformed");

  while (!r.done()) {
    const std::size_t section_at = r.pos();
    auto id = r.byte();
    auto size = r.leb(32);
    if (!id || !size) return unreadable;
    auto content = r.take(*size);
    if (!content) return unreadable;
    Reader s(*content);
    if (*id == kTypeSection) {
      auto read = read_types(s);
      if (!read) return unreadable;
      types = std::move(*read);
    } else if (*id == kImportSection) {
      auto count = s.leb(32);
      if (!count) return unreadable;
      for (std::uint64_t i = 0; i < *count; ++i) {
        auto module = s.name();
        auto name = module ? s.name() : std::nullopt;
        auto kind = name ? s.byte() : std::nullopt;
        if (!kind) return unreadable;
        const std::string who = quoted(*module, *name);
        switch (*kind) {
          case kFunctionKind: {
            auto type = s.leb(32);
            if (!type || *type >= types.size()) return unreadable;
            auto serves = served(*module, *name);
            if (!serves)
              return refused("its module imports " + who +
                             ", which the sandbox does not serve: only its WASI subset and "
                             "escouade.call (docs/sandbox.md)");
            if (types[*type] != *serves)
              return refused("its module imports " + who + " as " + describe(types[*type]) +
                             ", but the sandbox serves it as " + describe(*serves));
            break;
          }
          case kMemoryKind: {
            auto l = read_limits(s);
            if (!l) return unreadable;
            if (auto why = check_memory(*l, max_pages)) return *why;
            return refused("its module imports its memory " + who +
                           ": it must define and export it (memory)");
          }
          case kTableKind:
          case kGlobalKind:
            return refused("its module imports " + who + ", a " +
                           (*kind == kTableKind ? "table" : "global") +
                           ", which the sandbox does not serve: only functions");
          default:
            return unreadable;
        }
      }
    } else if (*id == kMemorySection) {
      auto count = s.leb(32);
      if (!count) return unreadable;
      if (*count > 1) return refused("its module has more than one memory");
      if (*count == 1) {
        memory = read_limits(s);
        if (!memory) return unreadable;
        if (auto why = check_memory(*memory, max_pages)) return *why;
        has_memory = true;
        memory_at = section_at;
        memory_end = r.pos();
      }
    } else if (*id == kExportSection) {
      auto count = s.leb(32);
      if (!count) return unreadable;
      for (std::uint64_t i = 0; i < *count; ++i) {
        auto name = s.name();
        auto kind = name ? s.byte() : std::nullopt;
        if (!kind || !s.leb(32)) return unreadable;
        if (*name == "memory" && *kind == kMemoryKind) exports_memory = true;
        if (*name == "_start" && *kind == kFunctionKind) exports_start = true;
      }
    }
  }
  if (!has_memory || !exports_memory)
    return refused(
        "its module exports no memory named \"memory\": a run.wasm plugin is a WASI "
        "command, which defines and exports it");
  if (!exports_start)
    return refused(
        "its module exports no function \"_start\": a run.wasm plugin is a WASI command "
        "(a main, built with --target=wasm32-wasi)");

  if (memory->max && *memory->max <= max_pages) {
    out.bytes.assign(bytes);
    return out;
  }
  // Its memory section again, with the limit as its maximum.
  std::string section;
  section.push_back(1);  // one memory
  section.push_back(static_cast<char>(kHasMax));
  put_leb(section, memory->min);
  put_leb(section, max_pages);
  out.bytes.reserve(bytes.size() + 16);
  out.bytes.append(bytes.substr(0, memory_at));
  out.bytes.push_back(static_cast<char>(kMemorySection));
  put_leb(out.bytes, section.size());
  out.bytes.append(section);
  out.bytes.append(bytes.substr(memory_end));
  out.max_set = true;
  return out;
}

}  // namespace escouade::sandbox
