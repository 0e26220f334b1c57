#include "protocol/decode.hpp"

#include <boost/json/error.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "protocol/gen/errors.hpp"
#include "protocol/json_read.hpp"

namespace escouade::proto {

namespace json = boost::json;

namespace {

constexpr int kParse = static_cast<int>(ErrorCode::parse);
constexpr int kInvalidRequest = static_cast<int>(ErrorCode::invalid_request);

json::parse_options parse_options(const DecodeOptions& o) {
  json::parse_options p;
  p.max_depth = o.max_depth;
  return p;
}

// Boost.JSON reads a number too large for a double (1e400) as infinity, which no JSON can
// carry back out: such a line is refused rather than echoed as "Infinity" to a peer.
// Only containers and doubles are looked into: the scalars that cannot be one cost a test of
// their kind each (a call's answer: 751 -> 348 instructions, callgrind). The depth is the
// parser's bound.
bool has_non_finite_number(const json::value& v) noexcept {
  const auto worth_a_look = [](const json::value& x) { return x.is_structured() || x.is_double(); };
  switch (v.kind()) {
    case json::kind::double_:
      return !std::isfinite(v.get_double());
    case json::kind::array:
      for (const json::value& x : v.get_array())
        if (worth_a_look(x) && has_non_finite_number(x)) return true;
      return false;
    case json::kind::object:
      for (const auto& member : v.get_object())
        if (worth_a_look(member.value()) && has_non_finite_number(member.value())) return true;
      return false;
    default:
      return false;
  }
}

bool valid_id(const json::value& id) noexcept {
  return id.is_string() || id.is_number() || id.is_null();
}

Invalid invalid(std::string reason, const json::value* id, bool answer_due = true) {
  Invalid i;
  i.code = kInvalidRequest;
  i.reason = std::move(reason);
  if (id && valid_id(*id)) i.id = *id;
  i.answer_due = answer_due;
  return i;
}

// A short line's arena with its first block inside it: one allocation for the line's values
// instead of two (the shared resource, then its first block from the heap). glibc serves a
// request of up to 1032 bytes from its per-thread cache and a larger one from its bins, where a
// burst of them (a decision's 20 answers) made it sort and merge free chunks
// (malloc_consolidate): an answer of 60 bytes took 727 instructions to allocate its 2 KiB arena.
template <std::size_t Bytes>
class InlineArena final : public json::memory_resource {
 public:
  InlineArena() = default;

 private:
  void* do_allocate(std::size_t n, std::size_t align) override { return arena_.allocate(n, align); }
  void do_deallocate(void*, std::size_t, std::size_t) override {}  // all at once, at the end
  bool do_is_equal(const json::memory_resource& other) const noexcept override {
    return this == &other;
  }

  alignas(std::max_align_t) unsigned char bytes_[Bytes];
  json::monotonic_resource arena_{bytes_, sizeof bytes_};
};

using SmallArena = InlineArena<768>;

// The small one with its shared count stays within glibc's per-thread cache (1032 bytes).
static_assert(sizeof(SmallArena) + 64 <= 1032);

// The 2 KiB first blocks of the lines too long for the small arena (a call's answer of 400
// bytes), kept by the thread that freed them for its next line's: glibc's bins took a few
// hundred instructions to allocate such a block and as many to free it, one of each a line. A
// few: the lines whose values are held at once (a decision's answers are each read and dropped
// in turn).
constexpr std::size_t kLargeBlock = 2048;
struct SpareBlocks {
  static constexpr int kKept = 8;
  void* blocks[kKept];
  int count = 0;
  bool closed = false;  // the thread is ending: blocks go back to the heap
};
thread_local SpareBlocks t_spare_blocks;
// Gives the kept blocks back when the thread ends; a block freed after that (a value destroyed
// by another thread-local's destructor) goes straight to the heap.
struct SpareBlocksRelease {
  void arm() noexcept {}  // made, its destructor due, by this thread's first use
  ~SpareBlocksRelease() {
    SpareBlocks& s = t_spare_blocks;
    s.closed = true;
    while (s.count > 0)
      ::operator delete(s.blocks[--s.count]);
  }
};
thread_local SpareBlocksRelease t_spare_blocks_release;

void* take_large_block() {
  SpareBlocks& s = t_spare_blocks;
  if (s.count > 0) return s.blocks[--s.count];
  return ::operator new(kLargeBlock);
}

void give_back_large_block(void* block) noexcept {
  SpareBlocks& s = t_spare_blocks;
  if (!s.closed && s.count < SpareBlocks::kKept) {
    t_spare_blocks_release.arm();
    s.blocks[s.count++] = block;
  } else {
    ::operator delete(block);
  }
}

// A line's arena whose first block is a kept one: the shared resource itself is small enough
// for glibc's per-thread cache.
class LargeArena final : public json::memory_resource {
 public:
  LargeArena() = default;
  ~LargeArena() override {
    arena_.release();
    give_back_large_block(block_);
  }
  LargeArena(const LargeArena&) = delete;
  LargeArena& operator=(const LargeArena&) = delete;

 private:
  void* do_allocate(std::size_t n, std::size_t align) override { return arena_.allocate(n, align); }
  void do_deallocate(void*, std::size_t, std::size_t) override {}  // all at once, at the end
  bool do_is_equal(const json::memory_resource& other) const noexcept override {
    return this == &other;
  }

  unsigned char* block_ = static_cast<unsigned char*>(take_large_block());
  json::monotonic_resource arena_{block_, kLargeBlock};
};

}  // namespace
}  // namespace escouade::proto

// Their values free nothing one by one, as with monotonic_resource itself.
template <std::size_t Bytes>
struct boost::json::is_deallocate_trivial<escouade::proto::InlineArena<Bytes>> : std::true_type {};
template <>
struct boost::json::is_deallocate_trivial<escouade::proto::LargeArena> : std::true_type {};

namespace escouade::proto {

Decoder::Decoder(DecodeOptions options)
    : parser_(json::storage_ptr(), parse_options(options)), max_batch_(options.max_batch) {}

Parsed Decoder::decode(std::string_view line) {
  Parsed out;
  // One arena per line: the line's values are allocated in it and released together when the
  // last of them goes. Counted with callgrind on a 400-byte fact: 13% fewer instructions than
  // one heap allocation per key, string and container (bench/decode_loop.cpp).
  const std::size_t first_block = line.size() * 2 + 256;
  if (first_block <= 768) {
    parser_.reset(json::make_shared_resource<SmallArena>());
  } else if (first_block <= 2048) {
    parser_.reset(json::make_shared_resource<LargeArena>());
  } else {
    parser_.reset(json::make_shared_resource<json::monotonic_resource>(first_block));
  }
  json::error_code ec;
  parser_.write(line.data(), line.size(), ec);
  if (ec) {
    Invalid i;
    i.code = kParse;
    i.reason = "the line is not JSON (" + ec.message() + ")";
    out.entries.emplace_back(std::move(i));
    return out;
  }
  json::value v = parser_.release();
  if (has_non_finite_number(v)) {
    Invalid i;
    i.code = kParse;
    i.reason = "the line holds a number too large to be represented";
    out.entries.emplace_back(std::move(i));
    return out;
  }
  if (json::array* a = v.if_array()) {
    if (a->empty()) {
      out.entries.emplace_back(invalid("an empty batch", nullptr));
      return out;
    }
    if (a->size() > max_batch_) {
      out.entries.emplace_back(invalid("a batch of " + std::to_string(a->size()) +
                                           " messages, more than the " +
                                           std::to_string(max_batch_) + " one may hold",
                                       nullptr));
      return out;
    }
    out.batch = true;
    out.entries.reserve(a->size());
    for (json::value& element : *a)
      out.entries.push_back(classify(std::move(element)));
    return out;
  }
  out.entries.push_back(classify(std::move(v)));
  return out;
}

Entry classify(json::value&& v) {
  json::object* o = v.if_object();
  if (!o) return invalid("a message must be a JSON object", nullptr);

  const json::value* jsonrpc = nullptr;
  json::value* id = nullptr;
  json::value* method = nullptr;
  json::value* params = nullptr;
  json::value* result = nullptr;
  json::value* error = nullptr;
  for (auto& m : *o) {
    const std::string_view k = m.key();
    if (k == "jsonrpc")
      jsonrpc = &m.value();
    else if (k == "id")
      id = &m.value();
    else if (k == "method")
      method = &m.value();
    else if (k == "params")
      params = &m.value();
    else if (k == "result")
      result = &m.value();
    else if (k == "error")
      error = &m.value();
    // Other members are not JSON-RPC's; they are ignored.
  }

  const bool answer_shaped = !method && (result || error);
  if (!jsonrpc || !jsonrpc->is_string() || jsonrpc->get_string() != "2.0") {
    return invalid("\"jsonrpc\" must be \"2.0\"", id, !answer_shaped);
  }
  if (id && !valid_id(*id)) {
    return invalid("\"id\" must be a string, a number or null", nullptr, !answer_shaped);
  }

  Message msg;
  if (method) {
    if (!method->is_string()) return invalid("\"method\" must be a string", id);
    if (result || error) return invalid("a request carries no \"result\" nor \"error\"", id);
    if (params && !params->is_null() && !params->is_object() && !params->is_array()) {
      return invalid("\"params\" must be an object or an array", id);
    }
    msg.kind = id ? MessageKind::request : MessageKind::notification;
    if (id) adopt(msg.id, std::move(*id));
    msg.method.assign(method->get_string().data(), method->get_string().size());
    // "params": null is taken as no params: the protocol's schema gives shutdown null params.
    if (params && !params->is_null()) adopt(msg.params, std::move(*params));
    return msg;
  }
  if (!result && !error) {
    return invalid("a message needs \"method\" (a call) or \"result\" or \"error\" (an answer)",
                   id);
  }
  if (result && error)
    return invalid("an answer carries \"result\" or \"error\", not both", id, false);
  if (!id) return invalid("an answer must carry the \"id\" of its request", nullptr, false);
  adopt(msg.id, std::move(*id));
  if (result) {
    msg.kind = MessageKind::response;
    adopt(msg.result, std::move(*result));
    return msg;
  }
  json::object* e = error->if_object();
  if (!e) return invalid("\"error\" must be an object", &msg.id, false);
  const json::value* code = e->if_contains("code");
  const json::value* message = e->if_contains("message");
  if (!code || !code->is_int64() || code->get_int64() < INT32_MIN ||
      code->get_int64() > INT32_MAX) {
    return invalid("\"error.code\" must be an integer", &msg.id, false);
  }
  if (!message || !message->is_string()) {
    return invalid("\"error.message\" must be a string", &msg.id, false);
  }
  msg.kind = MessageKind::error_response;
  msg.error.code = static_cast<int>(code->get_int64());
  msg.error.message.assign(message->get_string().data(), message->get_string().size());
  if (json::value* data = e->if_contains("data")) adopt(msg.error.data, std::move(*data));
  return msg;
}

}  // namespace escouade::proto
