#pragma once

// The file operations of fs/* beneath a set of roots: the folders an agent is given (agent,
// agentRepo, agentHome) or a plugin owns (plugin, temp). The policy layer has judged the TEXT of
// the path and hands over a start root and a path relative to it ('/' between its parts, free
// of "..", "~", absolute forms, "." and empty parts; "" is the root itself). This layer judges
// the FILE ACTUALLY OPENED, so that no link on the way, one swapped during the call included,
// leads outside the roots.
//
// Resolution: openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS from the start root's
// descriptor (O_PATH: nothing with side effects is opened). When the kernel says a link leaves
// the start root and there are other roots, or openat2 is missing or forbidden, or the resolver
// says walk_only: a walk one part at a time, each part opened O_PATH | O_NOFOLLOW relative to a
// descriptor held, each link read through its own descriptor and followed by hand. A relative
// link that stays in its root continues there; an absolute one, or a relative one that climbs
// above its root, becomes an absolute path (normalised lexically from the root's real path) and
// continues beneath the deepest root that holds it, else the walk stops: escapes.
//
// The root a file lies in is the deepest root whose real path holds the file's real path: the
// one the walk reached it in, or a root nested inside that one. That root is reported, and
// must be writable for a write.
//
// Thread: every call blocks on the disk; any thread. A BeneathRoots may be used by several
// threads at once. Nothing here throws.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/open_beneath.hpp"

namespace escouade::platform {

// A folder given to an agent or a plugin, under the name the policy layer calls it by.
struct RootSpec {
  std::string name;
  std::filesystem::path path;  // links in it are followed once, when opened (the host's choice)
  bool writable = false;
};

enum class FsKind { file, dir, link, other };  // other: a FIFO, a socket, a device

struct FsStat {
  FsKind kind = FsKind::other;
  std::uint64_t bytes = 0;                  // st_size
  std::optional<std::int64_t> modified_ms;  // since the epoch
};

// One name of a folder. `name` holds the bytes on disk as they are (a newline, invalid UTF-8):
// the caller encodes it. A link is kind `link`, never followed; `bytes` is then its own size.
struct FsListEntry {
  std::string name;
  FsKind kind = FsKind::other;
  std::uint64_t bytes = 0;
};

// Sorted by name (bytewise). truncated: the folder had more names than asked for; which ones
// came back is then the system's order, not the first ones by name.
struct FsListing {
  std::vector<FsListEntry> entries;
  bool truncated = false;
};

// real_path: the file's absolute path as the system names it, links resolved. root: the name
// of the root it lies in.
struct FsRead {
  std::string bytes;
  std::string real_path;
  std::string root;
};

struct FsWritten {
  std::string real_path;
  std::uint64_t bytes = 0;
  std::string root;
};

// The roots of one agent or plugin, each held open by its descriptor: renaming or replacing a
// root's path afterwards changes nothing. Move-only.
//
// In every call, `start` names the root `relative` is relative to (os_error when no root has
// that name), and a link is followed only where it leads within the roots. Failures: missing
// (no such file, or a part of the path is not a folder), escapes ("a link on the path leads
// outside every root of the agent"), link_loop, denied (EACCES), os_error, plus those each call
// names.
class BeneathRoots {
 public:
  // Opens each root's folder (O_PATH) and keeps its real path. Fails when one cannot be opened
  // (its reason names the folder), when there is none, or when two share a name.
  static BeneathResult<BeneathRoots> open(std::vector<RootSpec> roots);

  // The content of a regular file, at most `limit` bytes. folder; not_a_file for a FIFO, a
  // socket or a device, which is never opened for reading; hard_link when the file has other
  // names (they may be outside the roots); too_large past `limit`.
  BeneathResult<FsRead> read(std::string_view start, std::string_view relative, std::size_t limit,
                             BeneathResolver resolver = BeneathResolver::automatic) const;

  // Writes `data` whole into a regular file: created (0666 less the umask) if absent, truncated
  // unless `append`. The folders on the way are made where missing (0777 less the umask). A
  // link on the way, the last part included, is followed within the roots. folder, not_a_file
  // (never opened), hard_link as for read; read_only when the root the file lies in is not
  // writable, checked before anything is made or truncated.
  BeneathResult<FsWritten> write(std::string_view start, std::string_view relative,
                                 std::string_view data, bool append,
                                 BeneathResolver resolver = BeneathResolver::automatic) const;

  // What the path names, links followed. Nothing but an O_PATH descriptor is opened: a FIFO is
  // `other`, never read.
  BeneathResult<FsStat> stat(std::string_view start, std::string_view relative,
                             BeneathResolver resolver = BeneathResolver::automatic) const;

  // The names of a folder (links followed to reach it), at most `max_entries` of them; no more
  // than max_entries + 1 are ever read. missing ("is not a folder") when the path names a file
  // or anything else that is not a folder.
  BeneathResult<FsListing> list(std::string_view start, std::string_view relative,
                                std::size_t max_entries,
                                BeneathResolver resolver = BeneathResolver::automatic) const;

  // The real path the path names, links followed. When its last parts do not exist: the real
  // path of the deepest part that does, a folder, with the rest appended as written.
  BeneathResult<std::string> canon(std::string_view start, std::string_view relative,
                                   BeneathResolver resolver = BeneathResolver::automatic) const;

  BeneathRoots(BeneathRoots&&) noexcept;
  BeneathRoots& operator=(BeneathRoots&&) noexcept;
  ~BeneathRoots();

  // One root held open, with its real path; defined in beneath_roots.cpp.
  struct Root;

 private:
  explicit BeneathRoots(std::vector<Root> roots) noexcept;

  std::vector<Root> roots_;
};

}  // namespace escouade::platform
