#include "sandbox/compile_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "base/private_dirs.hpp"
#include "base/unique_fd.hpp"

namespace escouade::sandbox {

namespace {

namespace fs = std::filesystem;

// A file: this line, the key's digest (32 bytes), the stencil's digest (32 bytes), the stencil's
// size (8 bytes, little-endian), the version of Escouade it was compiled for (kVersionBytes,
// padded with zeros: for the journal's sentence), the stencil.
constexpr std::string_view kMagic = "escouade-stencil 3\n";
constexpr std::size_t kVersionBytes = 32;
constexpr std::size_t kHeadBytes = kMagic.size() + 32 + 32 + 8 + kVersionBytes;
constexpr std::string_view kSuffix = ".stencil";
constexpr std::string_view kPartial = ".partial-";
// A partial file this old was left by a host that died while writing it.
constexpr auto kStalePartial = std::chrono::minutes(10);

std::string_view bytes_of(const Sha256::Digest& d) {
  return std::string_view(reinterpret_cast<const char*>(d.data()), d.size());
}

// The first 16 hexadecimal digits of the digest of `text`: what file names group by.
std::string short_hex(std::string_view text) {
  return Sha256::hex(Sha256::of(text)).substr(0, 16);
}

bool read_exactly(int fd, char* out, std::size_t n) {
  while (n > 0) {
    const ssize_t got = ::read(fd, out, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t w = ::write(fd, data.data(), data.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(w));
  }
  return true;
}

}  // namespace

CompileCache::CompileCache(fs::path folder) : folder_(std::move(folder)) {}

std::string CompileCache::build() {
  return std::string("escouade ") + ESCOUADE_HOST_VERSION + ", mozjs " + ESCOUADE_ENGINE_VERSION;
}

CompileCache::Key CompileCache::key_of(std::string_view plugin_id, std::string_view name,
                                       std::string_view source, std::string_view escouade_version) {
  // Each part is preceded by its length: no two different lists of parts hash alike.
  Sha256 h;
  const auto part = [&](std::string_view p) {
    const std::string size = std::to_string(p.size()) + ":";
    h.update(size).update(p);
  };
  part(build());
  part(plugin_id);
  part(name);
  part(source);
  part(escouade_version);
  Key key;
  key.digest = h.finish();
  key.escouade.assign(escouade_version.substr(0, kVersionBytes));
  key.owner = std::string(plugin_id) + '\0' + std::string(name);
  return key;
}

std::string CompileCache::owner_prefix(const Key& key) const {
  return short_hex(build()) + "-" + short_hex(key.owner) + "-";
}

fs::path CompileCache::file_of(const Key& key) const {
  return folder_ / (owner_prefix(key) + Sha256::hex(key.digest) + std::string(kSuffix));
}

void CompileCache::remember(const Key& key, std::shared_ptr<const std::string> stencil) {
  // Under mutex_.
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (it->digest == key.digest) {
      kept_bytes_ -= it->stencil->size();
      kept_.erase(it);
      break;
    }
  }
  if (stencil->size() > kMaxKeptBytes) return;
  kept_bytes_ += stencil->size();
  kept_.push_front(Kept{key.digest, std::move(stencil)});
  while (kept_bytes_ > kMaxKeptBytes && !kept_.empty()) {
    kept_bytes_ -= kept_.back().stencil->size();
    kept_.pop_back();
  }
}

std::shared_ptr<const std::string> CompileCache::find(const Key& key) {
  {
    std::lock_guard lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->digest != key.digest) continue;
      kept_.splice(kept_.begin(), kept_, it);
      ++counts_.from_memory;
      return kept_.front().stencil;
    }
  }
  auto stencil = read_file(key);
  if (!stencil) return nullptr;
  auto shared = std::make_shared<const std::string>(*std::move(stencil));
  std::lock_guard lock(mutex_);
  ++counts_.from_disk;
  remember(key, shared);
  return shared;
}

std::optional<std::string> CompileCache::read_file(const Key& key) {
  if (folder_.empty()) return std::nullopt;
  const fs::path path = file_of(key);
  // No link followed: the file is the cache's own, or it is not read.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) return std::nullopt;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string head(kHeadBytes, '\0');
  if (!read_exactly(fd.get(), head.data(), head.size())) return std::nullopt;
  std::string_view h = head;
  if (h.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  h.remove_prefix(kMagic.size());
  if (h.substr(0, 32) != bytes_of(key.digest)) return std::nullopt;  // another key's
  h.remove_prefix(32);
  const std::string_view sum = h.substr(0, 32);
  h.remove_prefix(32);
  std::uint64_t size = 0;
  for (int i = 7; i >= 0; --i)
    size = (size << 8) | static_cast<unsigned char>(h[static_cast<std::size_t>(i)]);
  if (size > kMaxStencilBytes) return std::nullopt;
  // The version it was compiled for follows; the key's digest has it already.
  std::string stencil(size, '\0');
  char extra = 0;
  if (!read_exactly(fd.get(), stencil.data(), stencil.size()) || ::read(fd.get(), &extra, 1) != 0) {
    return std::nullopt;  // cut short, or longer than it says
  }
  if (bytes_of(Sha256::of(stencil)) != sum) {
    // Damaged: never handed to a helper, and gone, so that the next compile writes it whole.
    std::error_code ignored;
    fs::remove(path, ignored);
    std::lock_guard lock(mutex_);
    ++counts_.dropped;
    return std::nullopt;
  }
  // Used now: its time is what pruning keeps the most recent by.
  ::futimens(fd.get(), nullptr);
  return stencil;
}

void CompileCache::keep(const Key& key, std::string stencil) {
  if (stencil.empty() || stencil.size() > kMaxStencilBytes) return;
  auto shared = std::make_shared<const std::string>(std::move(stencil));
  {
    std::lock_guard lock(mutex_);
    ++counts_.kept;
    remember(key, shared);
  }
  write_file(key, *shared);
}

void CompileCache::write_file(const Key& key, const std::string& stencil) {
  if (folder_.empty()) return;
  std::error_code ec = create_private_directories(folder_);  // the data folder's too, if new
  ::chmod(folder_.c_str(), 0700);
  std::string head(kMagic);
  head += bytes_of(key.digest);
  head += bytes_of(Sha256::of(stencil));
  for (int i = 0; i < 8; ++i)
    head.push_back(static_cast<char>((stencil.size() >> (8 * i)) & 0xff));
  head += key.escouade;
  head.append(kVersionBytes - key.escouade.size(), '\0');
  const fs::path path = file_of(key);
  const std::string partial = path.string() + std::string(kPartial) + std::to_string(::getpid());
  UniqueFd fd(::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return;
  const bool ok = write_all(fd.get(), head) && write_all(fd.get(), stencil);
  fd.reset();
  if (!ok || ::rename(partial.c_str(), path.c_str()) != 0) {
    ::unlink(partial.c_str());
    return;
  }
  // The entries of an older key of the same plugin and module are useless now.
  const std::string prefix = owner_prefix(key);
  const std::string mine = path.filename().string();
  for (const auto& entry : fs::directory_iterator(folder_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name != mine && name.starts_with(prefix) && name.ends_with(kSuffix)) {
      std::error_code e;
      fs::remove(entry.path(), e);
    }
  }
  bool prune_now = false;
  {
    std::lock_guard lock(mutex_);
    ++counts_.written;
    prune_now = !std::exchange(pruned_, true);
  }
  if (prune_now) prune();
}

std::optional<std::string> CompileCache::compiled_before(const Key& key) const {
  if (folder_.empty()) return std::nullopt;
  std::error_code ec;
  const std::string prefix = owner_prefix(key);
  const std::string mine = file_of(key).filename().string();
  for (const auto& entry : fs::directory_iterator(folder_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == mine || !name.starts_with(prefix) || !name.ends_with(kSuffix)) continue;
    UniqueFd fd(::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    std::string head(kHeadBytes, '\0');
    if (!fd || !read_exactly(fd.get(), head.data(), head.size()) ||
        std::string_view(head).substr(0, kMagic.size()) != kMagic)
      continue;
    std::string version = head.substr(kHeadBytes - kVersionBytes);
    version.resize(version.find('\0') == std::string::npos ? version.size() : version.find('\0'));
    return version;
  }
  return std::nullopt;
}

void CompileCache::drop(const Key& key) {
  {
    std::lock_guard lock(mutex_);
    ++counts_.dropped;
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->digest == key.digest) {
        kept_bytes_ -= it->stencil->size();
        kept_.erase(it);
        break;
      }
    }
  }
  if (folder_.empty()) return;
  std::error_code ignored;
  fs::remove(file_of(key), ignored);
}

void CompileCache::prune() {
  std::error_code ec;
  const std::string build_prefix = short_hex(build()) + "-";
  struct File {
    fs::path path;
    fs::file_time_type used;
  };
  std::vector<File> current;
  const auto now = fs::file_time_type::clock::now();
  for (const auto& entry : fs::directory_iterator(folder_, ec)) {
    const std::string name = entry.path().filename().string();
    const bool stencil = name.ends_with(kSuffix);
    const bool partial =
        name.find(std::string(kSuffix) + std::string(kPartial)) != std::string::npos;
    if (!stencil && !partial) continue;  // not the cache's
    std::error_code e;
    if (entry.is_symlink(e) || !entry.is_regular_file(e)) continue;
    const auto used = entry.last_write_time(e);
    if (e) continue;
    if (partial) {
      if (now - used > kStalePartial) fs::remove(entry.path(), e);
    } else if (!name.starts_with(build_prefix)) {
      fs::remove(entry.path(), e);  // another build's: an update of the host or the engine
    } else {
      current.push_back({entry.path(), used});
    }
  }
  if (current.size() <= kMaxFiles) return;
  std::sort(current.begin(), current.end(),
            [](const File& a, const File& b) { return a.used > b.used; });
  for (std::size_t i = kMaxFiles; i < current.size(); ++i)
    fs::remove(current[i].path, ec);
}

CompileCache::Counts CompileCache::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace escouade::sandbox
