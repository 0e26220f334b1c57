#include "sandbox/spidermonkey/compile_cache.hpp"

#include <fcntl.h>
#include <js/CompilationAndEvaluation.h>
#include <js/SourceText.h>
#include <js/Transcoding.h>
#include <js/experimental/JSStencil.h>
#include <jsfriendapi.h>
#include <mozilla/RefPtr.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <list>
#include <mutex>
#include <sstream>
#include <vector>

namespace escouade::sandbox::spidermonkey {

namespace {

// A file: this line, then the engine's build, the module's name and the bundle's text (each its
// size in 8 bytes, then its bytes), the stencil's checksum (FNV-1a, 8 bytes), the stencil.
constexpr std::string_view kMagic = "escouade-stencil 1\n";
// Kept in memory at most: the newest first. A host runs tens of plugins, not hundreds.
constexpr std::size_t kMaxKept = 64;
// A file larger than this is not read.
constexpr std::uintmax_t kMaxFileBytes = 64ull * 1024 * 1024;
// Files of this build kept in the folder at most: past it, the least recently used go.
constexpr std::size_t kMaxFiles = 256;
// A partial file this old was left by a host that died while writing it.
constexpr auto kStalePartial = std::chrono::minutes(10);

constexpr std::uint64_t kFnvBasis = 0xcbf29ce484222325ull;

std::uint64_t fnv1a(std::uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

void put_size(std::string& out, std::uint64_t n) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

bool take_size(std::string_view& in, std::uint64_t& n) {
  if (in.size() < 8) return false;
  n = 0;
  for (int i = 0; i < 8; ++i)
    n |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  in.remove_prefix(8);
  return true;
}

bool take_text(std::string_view& in, std::string_view expected) {
  std::uint64_t n = 0;
  if (!take_size(in, n) || n != expected.size() || in.size() < n) return false;
  if (in.substr(0, n) != expected) return false;
  in.remove_prefix(n);
  return true;
}

JS::CompileOptions& module_options(JS::CompileOptions& options, const std::string& name) {
  options.setFileAndLine(name.c_str(), 1);
  return options;
}

}  // namespace

// What is kept is the stencil's encoding, never a stencil: a stencil is decoded in the runtime of
// the instance that uses it and dies with it there (one kept across runtimes, and released after
// the one that made it was destroyed, crashed the engine's shutdown at exit).
struct CompileCache::Impl {
  std::filesystem::path folder;
  mutable std::mutex mutex;
  struct Kept {
    std::string name;
    std::string source;
    std::shared_ptr<const std::string> encoded;
  };
  std::list<Kept> kept;
  Counts counts;

  std::once_flag pruned;

  // "<build>-<bundle>.stencil": the build's hash first, so that another build's files are known
  // by their names alone.
  static std::string build_prefix() {
    char hex[18];
    std::snprintf(hex, sizeof hex, "%016llx-",
                  static_cast<unsigned long long>(fnv1a(kFnvBasis, engine_build())));
    return hex;
  }
  std::filesystem::path file_of(std::string_view source, const std::string& name) const {
    std::uint64_t h = kFnvBasis;
    h = fnv1a(h, name);
    h = fnv1a(h, std::string_view("\0", 1));
    h = fnv1a(h, source);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return folder / (build_prefix() + hex + ".stencil");
  }

  // Once a process, after its first write: the files of other builds go (an update of the host
  // or of the engine made them useless), partial files left by a host that died go, and of this
  // build's, the least recently used past kMaxFiles. Only names this cache writes are touched.
  void prune() {
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::string mine = build_prefix();
    struct File {
      fs::path path;
      fs::file_time_type used;
    };
    std::vector<File> kept_files;
    const auto now = fs::file_time_type::clock::now();
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const std::string file = entry.path().filename().string();
      const bool stencil = file.size() > 8 && file.ends_with(".stencil");
      const auto partial_at = file.find(".stencil.partial-");
      if (!stencil && partial_at == std::string::npos) continue;  // not the cache's
      std::error_code e;
      if (!entry.is_regular_file(e) || entry.is_symlink(e)) continue;
      const auto used = entry.last_write_time(e);
      if (e) continue;
      if (partial_at != std::string::npos) {
        if (now - used > kStalePartial) fs::remove(entry.path(), e);
      } else if (!file.starts_with(mine)) {
        fs::remove(entry.path(), e);
      } else {
        kept_files.push_back({entry.path(), used});
      }
    }
    if (kept_files.size() <= kMaxFiles) return;
    std::sort(kept_files.begin(), kept_files.end(),
              [](const File& a, const File& b) { return a.used > b.used; });
    for (std::size_t i = kMaxFiles; i < kept_files.size(); ++i)
      fs::remove(kept_files[i].path, ec);
  }

  std::shared_ptr<const std::string> in_memory(std::string_view source, const std::string& name) {
    std::lock_guard lock(mutex);
    for (auto it = kept.begin(); it != kept.end(); ++it) {
      if (it->name == name && it->source == source) {
        kept.splice(kept.begin(), kept, it);
        return kept.front().encoded;
      }
    }
    return nullptr;
  }

  void keep(std::string_view source, const std::string& name,
            std::shared_ptr<const std::string> encoded) {
    std::lock_guard lock(mutex);
    for (const auto& k : kept)
      if (k.name == name && k.source == source) return;
    kept.push_front(Kept{name, std::string(source), std::move(encoded)});
    if (kept.size() > kMaxKept) kept.pop_back();
  }

  // The file's encoded stencil, when the file is this bundle's for this build, whole.
  std::shared_ptr<const std::string> from_disk(std::string_view source, const std::string& name) {
    if (folder.empty()) return nullptr;
    const auto path = file_of(source, name);
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec || size > kMaxFileBytes) return nullptr;
    std::ifstream in(path, std::ios::binary);
    if (!in) return nullptr;
    std::ostringstream bytes;
    bytes << in.rdbuf();
    const std::string file = std::move(bytes).str();
    std::string_view rest = file;
    if (rest.substr(0, kMagic.size()) != kMagic) return nullptr;
    rest.remove_prefix(kMagic.size());
    std::uint64_t sum = 0;
    if (!take_text(rest, engine_build()) || !take_text(rest, name) || !take_text(rest, source) ||
        !take_size(rest, sum) || sum != fnv1a(kFnvBasis, rest))
      return nullptr;  // another bundle's, another build's, or damaged: never decoded
    // Used now: its time is what pruning keeps the most recent by.
    std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), ec);
    return std::make_shared<const std::string>(rest);
  }

  // Written beside, then renamed: a reader sees a whole file or none.
  void write(std::string_view encoded, std::string_view source, const std::string& name) {
    if (folder.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    ::chmod(folder.c_str(), 0700);
    std::string head(kMagic);
    put_size(head, engine_build().size());
    head += engine_build();
    put_size(head, name.size());
    head += name;
    put_size(head, source.size());
    head += source;
    put_size(head, fnv1a(kFnvBasis, encoded));
    const auto path = file_of(source, name);
    const auto partial = path.string() + ".partial-" + std::to_string(::getpid());
    const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return;
    auto all = [&](std::string_view data) {
      while (!data.empty()) {
        const ssize_t w = ::write(fd, data.data(), data.size());
        if (w <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(w));
      }
      return true;
    };
    const bool ok = all(head) && all(encoded);
    ::close(fd);
    if (!ok || ::rename(partial.c_str(), path.c_str()) != 0) {
      ::unlink(partial.c_str());
      return;
    }
    std::call_once(pruned, [&] { prune(); });
    std::lock_guard lock(mutex);
    ++counts.written;
  }

  void count(std::size_t Counts::*which) {
    std::lock_guard lock(mutex);
    ++(counts.*which);
  }

  // A stencil of this runtime decoded from `encoded`; null when it does not decode.
  static RefPtr<JS::Stencil> decode(JSContext* cx, const JS::CompileOptions& options,
                                    const std::string& encoded) {
    JS::DecodeOptions decode(options);
    JS::TranscodeRange range(reinterpret_cast<const std::uint8_t*>(encoded.data()), encoded.size());
    JS::Stencil* raw = nullptr;
    if (JS::DecodeStencil(cx, decode, range, &raw) != JS::TranscodeResult::Ok || !raw) {
      JS_ClearPendingException(cx);
      return nullptr;
    }
    return already_AddRefed<JS::Stencil>(raw);
  }

  // The stencil, decoded from memory or disk, or compiled (and then kept, encoded); null with an
  // exception pending when it does not compile.
  RefPtr<JS::Stencil> stencil_of(JSContext* cx, const JS::CompileOptions& options,
                                 std::string_view source, const std::string& name) {
    if (auto encoded = in_memory(source, name)) {
      if (auto s = decode(cx, options, *encoded)) {
        count(&Counts::from_memory);
        return s;
      }
    }
    if (auto encoded = from_disk(source, name)) {
      if (auto s = decode(cx, options, *encoded)) {
        count(&Counts::from_disk);
        keep(source, name, std::move(encoded));
        return s;
      }
    }
    JS::SourceText<mozilla::Utf8Unit> text;
    if (!text.init(cx, source.data(), source.size(), JS::SourceOwnership::Borrowed)) return nullptr;
    RefPtr<JS::Stencil> s = JS::CompileModuleScriptToStencil(cx, options, text);
    if (!s) return nullptr;
    count(&Counts::compiled);
    JS::TranscodeBuffer buffer;
    if (JS::EncodeStencil(cx, s.get(), buffer) == JS::TranscodeResult::Ok) {
      auto encoded = std::make_shared<const std::string>(
          reinterpret_cast<const char*>(buffer.begin()), buffer.length());
      write(*encoded, source, name);
      keep(source, name, std::move(encoded));
    } else {
      JS_ClearPendingException(cx);  // not kept: the next instance compiles it again
    }
    return s;
  }
};

CompileCache::CompileCache(std::filesystem::path folder) : impl_(std::make_unique<Impl>()) {
  impl_->folder = std::move(folder);
}

CompileCache::~CompileCache() = default;

CompileCache::Counts CompileCache::counts() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->counts;
}

std::string engine_build() {
  static const std::string build =
      std::string("escouade-host ") + ESCOUADE_HOST_VERSION + " " + JS_GetImplementationVersion();
  return build;
}

JSObject* cached_module(JSContext* cx, CompileCache& cache, std::string_view source,
                        const std::string& name) {
  JS::CompileOptions options(cx);
  module_options(options, name);
  RefPtr<JS::Stencil> stencil = cache.impl().stencil_of(cx, options, source, name);
  if (!stencil) return nullptr;
  JS::InstantiateOptions instantiate(options);
  return JS::InstantiateModuleStencil(cx, instantiate, stencil.get());
}

bool compile_into(JSContext* cx, CompileCache& cache, std::string_view source,
                  const std::string& name) {
  JS::CompileOptions options(cx);
  module_options(options, name);
  RefPtr<JS::Stencil> stencil = cache.impl().stencil_of(cx, options, source, name);
  if (!stencil) {
    JS_ClearPendingException(cx);
    return false;
  }
  return true;
}

JSScript* script_compiled_once(JSContext* cx, std::string_view source, const char* name) {
  JS::CompileOptions options(cx);
  options.setFileAndLine(name, 1);
  // The first instance compiles and encodes it; its text is a constant of this program, so
  // the encoding is this build's and needs no check but the decoder's own.
  static std::once_flag once;
  static std::string* encoded = nullptr;
  std::call_once(once, [&] {
    JS::SourceText<mozilla::Utf8Unit> text;
    if (!text.init(cx, source.data(), source.size(), JS::SourceOwnership::Borrowed)) return;
    RefPtr<JS::Stencil> compiled = JS::CompileGlobalScriptToStencil(cx, options, text);
    JS::TranscodeBuffer buffer;
    if (compiled && JS::EncodeStencil(cx, compiled.get(), buffer) == JS::TranscodeResult::Ok)
      encoded = new std::string(reinterpret_cast<const char*>(buffer.begin()), buffer.length());
    JS_ClearPendingException(cx);  // this instance compiles it again below
  });
  RefPtr<JS::Stencil> stencil;
  if (encoded) stencil = CompileCache::Impl::decode(cx, options, *encoded);
  if (!stencil) {
    JS::SourceText<mozilla::Utf8Unit> text;
    if (!text.init(cx, source.data(), source.size(), JS::SourceOwnership::Borrowed)) return nullptr;
    stencil = JS::CompileGlobalScriptToStencil(cx, options, text);
    if (!stencil) return nullptr;
  }
  JS::InstantiateOptions instantiate(options);
  return JS::InstantiateGlobalStencil(cx, instantiate, stencil.get());
}

}  // namespace escouade::sandbox::spidermonkey
