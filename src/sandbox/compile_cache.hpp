#pragma once

// Compiled run.js bundles (the engine's stencils, encoded), kept by the host for the helpers that
// run them: in memory for the host's life, and on disk across runs (escouade-host: under its data
// folder). An entry is made only by a compile helper, which runs nothing of the bundle, and is
// decoded only in a helper: the host reads, hashes and passes bytes, it never decodes one.
//
// Keyed by the SHA-256 of the engine's build, Escouade's version, the plugin, its module's name
// and the bundle's text: any change of these compiles again. Each entry holds the SHA-256 of its
// stencil, checked before the stencil is handed to a helper: a damaged file is dropped, never
// given. A stencil that passes that check and still does not decode (another engine's) is
// dropped when its helper says so, or when its helper ends before saying its module is ready; a
// damaged or hostile one costs a compile, never the host. The checks are against damage and
// stale files, not a writer: the folder is the user's own (0700), and whoever can write there can
// already run code as the user.
//
// Thread-safe. Every call but counts() may touch the disk: call them on a worker.

#include <cstddef>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/sha256.hpp"

namespace escouade::sandbox {

class CompileCache {
 public:
  // In memory at most, in all: the most recently used stencils.
  static constexpr std::size_t kMaxKeptBytes = 64u * 1024u * 1024u;
  // A stencil larger than this is neither kept nor read back.
  static constexpr std::size_t kMaxStencilBytes = 96u * 1024u * 1024u;
  // Files of this build kept in the folder at most: past it, the least recently used go.
  static constexpr std::size_t kMaxFiles = 256;

  // `folder` empty: in memory only.
  explicit CompileCache(std::filesystem::path folder);

  struct Key {
    Sha256::Digest digest{};  // of everything the stencil depends on
    std::string owner;        // the plugin and its module: what an entry of an older key shares
    std::string escouade;     // the version of Escouade it is for (its first 32 bytes)
  };
  static Key key_of(std::string_view plugin_id, std::string_view name, std::string_view source,
                    std::string_view escouade_version = {});
  // When the cache's folder holds an entry of the same plugin and module for another key (an
  // older bundle, or another version of Escouade), the version of Escouade it was compiled for:
  // what the journal says when the module is compiled again.
  std::optional<std::string> compiled_before(const Key& key) const;
  // What the keys and file names take as the engine's build: "escouade 0.1.0, mozjs 102.15.1".
  static std::string build();

  // The stencil kept for `key`, its digest checked: from memory, else from its file; null when
  // there is none, or none whole. Shared, not copied: a stencil may weigh megabytes.
  std::shared_ptr<const std::string> find(const Key& key);
  // A compile helper's stencil for `key`: kept in memory and written (0600, beside then renamed,
  // so that a reader sees a whole file or none), in place of the entries of the same plugin and
  // module (an older key). Once a process, after its first write: the files of another build go,
  // partial files a host left when it died go, and past kMaxFiles the least recently used.
  void keep(const Key& key, std::string stencil);
  // An entry that did not decode, or whose helper died before its module was ready: forgotten
  // and its file removed.
  void drop(const Key& key);

  struct Counts {
    std::size_t kept = 0;         // stencils compile helpers made
    std::size_t from_memory = 0;  // found in memory
    std::size_t from_disk = 0;    // found in a file
    std::size_t written = 0;      // files written
    std::size_t dropped = 0;      // entries dropped (damaged, stale)
  };
  Counts counts() const;

 private:
  struct Kept {
    Sha256::Digest digest;
    std::shared_ptr<const std::string> stencil;
  };
  std::filesystem::path file_of(const Key& key) const;
  std::string owner_prefix(const Key& key) const;
  std::optional<std::string> read_file(const Key& key);
  void write_file(const Key& key, const std::string& stencil);
  void prune();
  void remember(const Key& key, std::shared_ptr<const std::string> stencil);

  std::filesystem::path folder_;
  mutable std::mutex mutex_;
  std::list<Kept> kept_;  // the most recently used first
  std::size_t kept_bytes_ = 0;
  Counts counts_;
  bool pruned_ = false;
};

}  // namespace escouade::sandbox
