#pragma once

// Opening a file beneath a folder so that nothing on the way, a link swapped during the call
// included, leads out of it. Linux 5.6 and later: openat2(2) with RESOLVE_BENEATH and
// RESOLVE_NO_MAGICLINKS, where the kernel resolves the path and refuses to leave. Elsewhere, or
// where openat2 is missing (ENOSYS) or forbidden (EPERM from a seccomp filter): a walk of the
// path one part at a time from the folder's descriptor, each part opened with O_NOFOLLOW and
// each link read and resolved by hand within the walk. docs/files.md compares the two.
//
// Thread: every call blocks on the disk; any thread. A BeneathFolder may be used by several
// threads at once. Nothing here throws.

#include <sys/stat.h>

#include <boost/assert/source_location.hpp>
#include <boost/system/result.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.hpp"

namespace escouade::platform {

// Why nothing was opened, as a kind a service turns into its own code.
enum class BeneathFailure {
  escapes,     // the path or a link on it leaves the folder (BeneathRoots: every root)
  link_loop,   // a loop of links, or more than kMaxBeneathLinks of them
  missing,     // no such file (or a part on the way, or the folder to list, is not a folder)
  folder,      // the path names a folder
  not_a_file,  // a FIFO, a socket or a device: closed unread
  denied,      // the system refused access (EACCES, EPERM)
  os_error,    // anything else (EIO, EMFILE, the folder itself cannot be opened...)
  // Kinds of BeneathRoots (beneath_roots.hpp), which open_file never gives:
  hard_link,  // the file has other names, which may be outside the roots
  too_large,  // the file is larger than the caller's limit
  read_only,  // the file lies in a root given for reading only
};

struct BeneathError {
  BeneathFailure kind = BeneathFailure::os_error;
  // The errno behind it (the walk gives the one openat2 would), or 0 for a file of the wrong type.
  int os_errno = 0;
  // A reason without a subject, in English: "a link on the path leaves the folder".
  std::string reason;
};

// The failure an errno of an open beneath a folder means, with its reason ("no such file").
BeneathError beneath_error_from_errno(int err);

// Called by BeneathResult<T>::value() on an error: throws std::system_error.
[[noreturn]] void throw_exception_from_error(const BeneathError& e,
                                             const boost::source_location& loc);

template <class T>
using BeneathResult = boost::system::result<T, BeneathError>;

// Linux's bound on the links followed in one lookup (MAXSYMLINKS); the walk keeps the same.
inline constexpr int kMaxBeneathLinks = 40;

// How the path is resolved. automatic: openat2 where the kernel has it, else the walk.
// openat2_only and walk_only are for tests, which must reach both: openat2_only fails with
// os_error (ENOSYS) where the kernel has no openat2.
enum class BeneathResolver { automatic, openat2_only, walk_only };

// True when this kernel lets this process call openat2 (probed once per call; no state kept).
bool has_openat2();

// openat2(2) of `relative` beneath the folder `dir` with `flags`, RESOLVE_BENEATH and
// RESOLVE_NO_MAGICLINKS, tried again on EAGAIN and EINTR. nullopt when the kernel has no openat2
// or forbids it (ENOSYS, EPERM): the caller walks instead. An EXDEV comes back as escapes.
std::optional<BeneathResult<UniqueFd>> open_with_openat2(int dir, const std::string& relative,
                                                         int flags);

// Where a descriptor's file is now, as the kernel names it: absolute, links resolved; nullopt
// when it cannot be told (no /proc, or the file was deleted: " (deleted)").
std::optional<std::string> real_path_of(int fd);

// Why what `st` describes is not a regular file (a folder: folder; a FIFO, a socket, a device:
// not_a_file, with which it is), or nullopt for a regular file.
std::optional<BeneathError> not_a_regular_file(const struct ::stat& st);

// Device and inode: what tells two names of one file apart from two files.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};

// A regular file opened for reading (O_RDONLY, O_CLOEXEC, O_NOCTTY, O_NONBLOCK). Move-only;
// closes its descriptor when destroyed. Use from one thread at a time.
class BeneathFile {
 public:
  BeneathFile(UniqueFd fd, FileIdentity identity, std::uint64_t links) noexcept
      : fd_(std::move(fd)), identity_(identity), links_(links) {}

  FileIdentity identity() const noexcept { return identity_; }
  // How many names the file has (st_nlink): more than one, and another may be anywhere.
  std::uint64_t links() const noexcept { return links_; }
  int native_handle() const noexcept { return fd_.get(); }

  // Reads from the start until the end of the file or `limit` bytes, whichever comes first,
  // whatever the size the file claimed when opened: it may grow or shrink while read.
  BeneathResult<std::string> read_up_to(std::size_t limit) const;

 private:
  UniqueFd fd_;
  FileIdentity identity_;
  std::uint64_t links_;
};

// A folder held open (O_PATH, O_DIRECTORY, O_CLOEXEC) for lookups beneath it: renaming or
// replacing its path afterwards does not change which folder it is. Move-only.
class BeneathFolder {
 public:
  // Opens `folder` itself; links in `folder` are followed (it is the host's choice, not a
  // plugin's). os_error, missing or denied with the system's reason when it cannot be opened.
  static BeneathResult<BeneathFolder> open(const std::filesystem::path& folder);

  // Opens `relative` ('/' between its parts) beneath this folder, refusing any way out:
  // "..", an absolute path or an absolute link, a relative link that climbs above the folder,
  // a magic link of /proc. ".." and links that stay inside are followed. Only a regular file
  // comes back; folder and not_a_file otherwise, whose descriptor is closed unread.
  BeneathResult<BeneathFile> open_file(std::string_view relative,
                                       BeneathResolver resolver = BeneathResolver::automatic) const;

  // Where `file`, opened beneath this folder, is within it as the system names it now, links
  // resolved ("data/notes.txt" for a "notes" that links there); nullopt when it cannot be told
  // (the file was deleted, no /proc) or is not within it.
  std::optional<std::string> path_within(const BeneathFile& file) const;

  // The identity of the file `name` names in this folder, links followed wherever they lead
  // (the caller compares it, it never reads through it), or nullopt when there is none.
  std::optional<FileIdentity> identity_of(std::string_view name) const;

  // The names in this folder itself (no "." nor ".."), in no particular order: whatever they
  // are (files, folders, links), for the caller to open beneath it and judge each. At most
  // `limit` of them (a folder of a million names is not read whole).
  BeneathResult<std::vector<std::string>> names(std::size_t limit) const;

  // The folder's descriptor (O_PATH where the system has it), for lookups relative to it. Owned
  // by this object: valid while it lives, never to be closed by the caller.
  int native_handle() const noexcept { return fd_.get(); }

 private:
  explicit BeneathFolder(UniqueFd fd) noexcept : fd_(std::move(fd)) {}

  UniqueFd fd_;
};

}  // namespace escouade::platform
