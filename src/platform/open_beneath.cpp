#include "platform/open_beneath.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <system_error>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/syscall.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
struct open_how {
  __u64 flags;
  __u64 mode;
  __u64 resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_BENEATH 0x08
#endif
#ifndef SYS_openat2
#define SYS_openat2 437  // the same number on every architecture
#endif
#endif

#include "base/os_message.hpp"

namespace escouade::platform {

namespace {

// O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; O_NOCTTY: a
// terminal never becomes the host's controlling terminal.
constexpr int kFileFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
#if defined(O_PATH)
constexpr int kFolderFlags = O_PATH | O_DIRECTORY | O_CLOEXEC;
#else
constexpr int kFolderFlags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
#endif

// openat2 answers EAGAIN when a rename raced a ".." of the lookup; a few tries, then failed.
constexpr int kOpenat2Tries = 8;

// openat2 says EXDEV for every way out; the walk says the same, so both read alike.
constexpr const char* kEscapes =
    "the path leaves the folder (through '..', an absolute link or a link that climbs out)";

BeneathError failure(BeneathFailure kind, int err, std::string reason) {
  return BeneathError{kind, err, std::move(reason)};
}

BeneathError from_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return failure(BeneathFailure::missing, err, "no such file");
    case EXDEV:
      return failure(BeneathFailure::escapes, err, kEscapes);
    case ELOOP:
      return failure(BeneathFailure::link_loop, err, "a loop of links");
    case EACCES:
    case EPERM:
      return failure(BeneathFailure::denied, err, "cannot be opened: permission denied");
    case ENXIO:  // a socket, or a device without its driver
      return failure(BeneathFailure::not_a_file, err, "is not a regular file");
    default:
      return failure(BeneathFailure::os_error, err, "cannot be opened: " + os_message(err));
  }
}

// Keeps `fd` only when it is a regular file.
BeneathResult<BeneathFile> accept_opened(UniqueFd fd) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return from_errno(errno);
  const FileIdentity identity{static_cast<std::uint64_t>(st.st_dev),
                              static_cast<std::uint64_t>(st.st_ino)};
  if (auto refused = not_a_regular_file(st)) return *std::move(refused);
  return BeneathFile(std::move(fd), identity, static_cast<std::uint64_t>(st.st_nlink));
}

#if defined(__linux__)
long call_openat2(int dirfd, const char* path, std::uint64_t flags, std::uint64_t resolve) {
  open_how how{};
  how.flags = flags;
  how.resolve = resolve;
  return ::syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

bool openat2_unavailable(int err) {
  return err == ENOSYS || err == EPERM;
}
#endif

// The outcome of openat2: a regular file, or nullopt when the kernel has none or forbids it.
std::optional<BeneathResult<BeneathFile>> open_file_with_openat2(int root,
                                                                 const std::string& path) {
  auto opened = open_with_openat2(root, path, kFileFlags);
  if (!opened) return std::nullopt;
  if (!*opened) return opened->error();
  return accept_opened(std::move(**opened));
}

// Splits `text` on '/' and puts its parts, in order, before the parts still to walk. Empty and
// "." parts are dropped: they do not move the walk.
void push_parts_front(std::deque<std::string>& pending, std::string_view text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t slash = text.find('/', start);
    if (slash == std::string_view::npos) slash = text.size();
    const std::string_view part = text.substr(start, slash - start);
    if (!part.empty() && part != ".") parts.emplace_back(part);
    start = slash + 1;
  }
  pending.insert(pending.begin(), parts.begin(), parts.end());
}

// One resolution of a path by hand, from the root's descriptor. Every part is opened with
// O_NOFOLLOW relative to the folder the walk holds; ".." goes back to the folder the walk came
// from, never to the kernel's parent, so it cannot climb above the root; each link is read and
// its target walked in its place, an absolute one refused.
class Walk {
 public:
  explicit Walk(int root) noexcept : root_(root) {}

  BeneathResult<BeneathFile> run(std::string_view relative) {
    if (!relative.empty() && relative.front() == '/') {
      return failure(BeneathFailure::escapes, EXDEV, kEscapes);
    }
    push_parts_front(pending_, relative);
    if (pending_.empty()) return failure(BeneathFailure::folder, EISDIR, "is a folder, not a file");
    while (!pending_.empty()) {
      std::string name = std::move(pending_.front());
      pending_.pop_front();
      const bool last = pending_.empty();
      if (name == "..") {
        if (entered_.empty()) return failure(BeneathFailure::escapes, EXDEV, kEscapes);
        entered_.pop_back();
        if (last) return failure(BeneathFailure::folder, EISDIR, "is a folder, not a file");
        continue;
      }
      const int flags = last ? kFileFlags : kFolderFlags;
      const int fd = ::openat(at(), name.c_str(), flags | O_NOFOLLOW);
      if (fd >= 0) {
        if (last) return accept_opened(UniqueFd(fd));
        entered_.emplace_back(fd);
        continue;
      }
      const int err = errno;
      // A link met with O_NOFOLLOW: ELOOP for a file, ENOTDIR for a folder wanted.
      if (err != ELOOP && err != ENOTDIR) return from_errno(err);
      if (auto stop = step_through_link(std::move(name), err)) return *std::move(stop);
    }
    // The last part was a link whose target ended in ".." or nothing: a folder.
    return failure(BeneathFailure::folder, EISDIR, "is a folder, not a file");
  }

 private:
  int at() const noexcept { return entered_.empty() ? root_ : entered_.back().get(); }

  std::optional<BeneathError> count_link() {
    if (++links_ <= kMaxBeneathLinks) return std::nullopt;
    return failure(BeneathFailure::link_loop, ELOOP, "a loop of links");
  }

  // `name` could not be opened without following it: puts its target in its place, or tells
  // why the walk stops. A name that changed between the calls is tried again, within the bound
  // on links, so a swapping attacker cannot keep the walk going.
  std::optional<BeneathError> step_through_link(std::string name, int open_errno) {
    struct stat st {};
    if (::fstatat(at(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return from_errno(errno);
    if (!S_ISLNK(st.st_mode)) {
      // A file where a folder was wanted; a folder or file there now means it was just swapped.
      if (open_errno == ENOTDIR && !S_ISDIR(st.st_mode)) return from_errno(ENOTDIR);
      if (auto stop = count_link()) return stop;
      pending_.push_front(std::move(name));
      return std::nullopt;
    }
    if (auto stop = count_link()) return stop;
    char target[PATH_MAX];
    const ssize_t n = ::readlinkat(at(), name.c_str(), target, sizeof target);
    if (n < 0) {
      if (errno != EINVAL) return from_errno(errno);
      pending_.push_front(std::move(name));  // no longer a link
      return std::nullopt;
    }
    if (static_cast<std::size_t>(n) >= sizeof target) return from_errno(ENAMETOOLONG);
    const std::string_view text(target, static_cast<std::size_t>(n));
    if (text.empty()) return from_errno(ENOENT);
    if (text.front() == '/') return failure(BeneathFailure::escapes, EXDEV, kEscapes);
    push_parts_front(pending_, text);
    return std::nullopt;
  }

  int root_;
  std::vector<UniqueFd> entered_;  // the folders entered below the root, innermost last
  std::deque<std::string> pending_;
  int links_ = 0;
};

}  // namespace

BeneathError beneath_error_from_errno(int err) {
  return from_errno(err);
}

std::optional<BeneathResult<UniqueFd>> open_with_openat2(int dir, const std::string& relative,
                                                         int flags) {
#if defined(__linux__)
  for (int attempt = 0; attempt < kOpenat2Tries; ++attempt) {
    const long fd = call_openat2(dir, relative.c_str(), static_cast<std::uint64_t>(flags),
                                 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
    if (fd >= 0) return UniqueFd(static_cast<int>(fd));
    const int err = errno;
    if (err == EINTR || err == EAGAIN) continue;
    if (openat2_unavailable(err)) return std::nullopt;
    return from_errno(err);
  }
  return failure(BeneathFailure::os_error, EAGAIN,
                 "cannot be opened: the folder kept changing during the call");
#else
  (void)dir;
  (void)relative;
  (void)flags;
  return std::nullopt;
#endif
}

void throw_exception_from_error(const BeneathError& e, const boost::source_location&) {
  throw std::system_error(e.os_errno, std::generic_category(), e.reason);
}

bool has_openat2() {
#if defined(__linux__)
  const long fd = call_openat2(AT_FDCWD, ".", O_PATH | O_CLOEXEC, RESOLVE_BENEATH);
  if (fd >= 0) {
    ::close(static_cast<int>(fd));
    return true;
  }
  return !openat2_unavailable(errno);
#else
  return false;
#endif
}

BeneathResult<std::string> BeneathFile::read_up_to(std::size_t limit) const {
  constexpr std::size_t kChunk = 64 * 1024;
  // At most this much is taken on the size's word before a byte is read: a sparse file may
  // claim terabytes.
  constexpr std::size_t kMostTrusted = 64 * 1024 * 1024;
  // Read straight into the string, made at first as large as the file says it is now and one
  // byte more, so that the read after the last byte sees the end: no chunk copied from a buffer
  // and no growth copying what was read, for a file that keeps its size (bench_host services:
  // a 256 KiB file was copied 448 KiB worth in 64 KiB chunks and two growths). A file that
  // says nothing of its size (/proc's, or an empty one) is read a page first, and one that grows
  // meanwhile is read on in larger and larger steps.
  std::size_t first = 4096;
  struct stat st {};
  if (::fstat(fd_.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    first = std::min(static_cast<std::size_t>(st.st_size), kMostTrusted) + 1;
  std::string out;
  std::size_t got = 0;
  while (got < limit) {
    if (got == out.size())
      out.resize(got == 0 ? std::min(first, limit)
                          : got + std::min(limit - got, std::max(kChunk, got)));
    const ssize_t n =
        ::pread(fd_.get(), out.data() + got, out.size() - got, static_cast<off_t>(got));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      return failure(BeneathFailure::os_error, err, "cannot be read: " + os_message(err));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

BeneathResult<BeneathFolder> BeneathFolder::open(const std::filesystem::path& folder) {
  const int fd = ::open(folder.c_str(), kFolderFlags);
  if (fd < 0) {
    const int err = errno;
    BeneathError e = from_errno(err);
    e.reason = "cannot open the folder " + folder.string() + ": " + os_message(err);
    return e;
  }
  return BeneathFolder(UniqueFd(fd));
}

BeneathResult<BeneathFile> BeneathFolder::open_file(std::string_view relative,
                                                    BeneathResolver resolver) const {
  if (relative.find('\0') != std::string_view::npos) {
    return failure(BeneathFailure::missing, ENOENT, "no such file");
  }
  if (resolver != BeneathResolver::walk_only) {
    auto opened = open_file_with_openat2(fd_.get(), std::string(relative));
    if (opened) return *std::move(opened);
    if (resolver == BeneathResolver::openat2_only) {
      return failure(BeneathFailure::os_error, ENOSYS,
                     "cannot be opened: this system has no openat2 for this process");
    }
  }
  return Walk(fd_.get()).run(relative);
}

std::optional<BeneathError> not_a_regular_file(const struct ::stat& st) {
  if (S_ISREG(st.st_mode)) return std::nullopt;
  if (S_ISDIR(st.st_mode))
    return failure(BeneathFailure::folder, EISDIR, "is a folder, not a file");
  if (S_ISFIFO(st.st_mode))
    return failure(BeneathFailure::not_a_file, 0, "is a FIFO, not a regular file");
  if (S_ISSOCK(st.st_mode))
    return failure(BeneathFailure::not_a_file, 0, "is a socket, not a regular file");
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    return failure(BeneathFailure::not_a_file, 0, "is a device, not a regular file");
  return failure(BeneathFailure::not_a_file, 0, "is not a regular file");
}

std::optional<std::string> real_path_of(int fd) {
#ifdef __APPLE__
  char buf[PATH_MAX];
  if (::fcntl(fd, F_GETPATH, buf) != 0) return std::nullopt;
  return std::string(buf);
#else
  char buf[PATH_MAX];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof buf) return std::nullopt;
  std::string path(buf, static_cast<std::size_t>(n));
  if (path.size() > 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0) {
    return std::nullopt;
  }
  return path;
#endif
}

std::optional<std::string> BeneathFolder::path_within(const BeneathFile& file) const {
  const auto folder = real_path_of(fd_.get());
  const auto opened = real_path_of(file.native_handle());
  if (!folder || !opened) return std::nullopt;
  const std::string prefix = *folder == "/" ? "/" : *folder + "/";
  if (opened->compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  return opened->substr(prefix.size());
}

std::optional<FileIdentity> BeneathFolder::identity_of(std::string_view name) const {
  struct stat st {};
  if (::fstatat(fd_.get(), std::string(name).c_str(), &st, 0) != 0) return std::nullopt;
  return FileIdentity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

BeneathResult<std::vector<std::string>> BeneathFolder::names(std::size_t limit) const {
  // The folder held, not its path: a new descriptor that can be read (O_PATH cannot).
  const int fd = ::openat(fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    BeneathError e = from_errno(err);
    e.reason = "cannot list the folder: " + os_message(err);
    return e;
  }
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    const int err = errno;
    ::close(fd);
    BeneathError e = from_errno(err);
    e.reason = "cannot list the folder: " + os_message(err);
    return e;
  }
  std::vector<std::string> out;
  while (out.size() < limit) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (!entry) break;
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    out.emplace_back(name);
  }
  ::closedir(dir);
  return out;
}

}  // namespace escouade::platform
