#include "platform/beneath_roots.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <memory>
#include <utility>

#include "base/os_message.hpp"

namespace escouade::platform {

struct BeneathRoots::Root {
  std::string name;
  std::string real_path;  // absolute, no link in it, no trailing '/' (but "/" itself)
  bool writable = false;
  BeneathFolder folder;
};

namespace {

using Roots = std::vector<BeneathRoots::Root>;

// The policy layer has removed "..", absolute forms and the like from the path itself: what
// leads out can only be a link.
constexpr const char* kEscapes = "a link on the path leads outside every root of the agent";

// A file that exists but is not one the call found: a rename or a new file raced it. A few
// tries, then the call gives up.
constexpr int kWriteTries = 3;

BeneathError failure(BeneathFailure kind, int err, std::string reason) {
  return BeneathError{kind, err, std::move(reason)};
}

BeneathError escapes() {
  return failure(BeneathFailure::escapes, EXDEV, kEscapes);
}

BeneathError no_such_root() {
  return failure(BeneathFailure::os_error, EINVAL, "the start is not one of the roots");
}

// The parts of `text` between its '/'s, without empty and "." parts: they do not move a walk.
std::vector<std::string> split_parts(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t slash = text.find('/', start);
    if (slash == std::string_view::npos) slash = text.size();
    const std::string_view part = text.substr(start, slash - start);
    if (!part.empty() && part != ".") parts.emplace_back(part);
    start = slash + 1;
  }
  return parts;
}

// The first `count` parts, '/' between them: a path relative to a root.
std::string join_parts(const std::vector<std::string>& parts, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  return out;
}

// An absolute path with its ".." resolved by the text alone, never above "/".
std::vector<std::string> normalise_absolute(std::string_view absolute) {
  std::vector<std::string> out;
  for (auto& part : split_parts(absolute)) {
    if (part == "..") {
      if (!out.empty()) out.pop_back();
    } else {
      out.push_back(std::move(part));
    }
  }
  return out;
}

// True when `path` is `folder` or beneath it, part by part ("/a/bc" is not beneath "/a/b").
bool holds(const std::string& folder, const std::string& path) {
  if (folder == "/") return !path.empty() && path.front() == '/';
  if (path.compare(0, folder.size(), folder) != 0) return false;
  return path.size() == folder.size() || path[folder.size()] == '/';
}

// The deepest root whose real path holds `path`, or nullopt.
std::optional<std::size_t> deepest_root(const Roots& roots, const std::string& path) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (!holds(roots[i].real_path, path)) continue;
    if (!best || roots[i].real_path.size() > roots[*best].real_path.size()) best = i;
  }
  return best;
}

std::optional<std::size_t> find_root(const Roots& roots, std::string_view name) {
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (roots[i].name == name) return i;
  }
  return std::nullopt;
}

// What the resolution found: an O_PATH descriptor (never of a link), and the root it was
// reached in.
struct Located {
  UniqueFd fd;
  std::size_t root = 0;
};

// One resolution by hand, across the roots. Every part is opened O_PATH | O_NOFOLLOW relative
// to a descriptor the walk holds, so a link swapped during the call is met as a link, read
// through its own descriptor and judged; ".." goes back to the folder the walk came from, never
// to the kernel's parent. What would lead above the root the walk is in becomes an absolute
// path, which continues beneath the deepest root that holds it, or stops the walk.
class Walk {
 public:
  Walk(const Roots& roots, std::size_t start) noexcept : roots_(roots), root_(start) {}

  BeneathResult<Located> run(std::string_view relative) {
    if (!relative.empty() && relative.front() == '/') return escapes();
    const auto parts = split_parts(relative);
    pending_.assign(parts.begin(), parts.end());
    while (!pending_.empty()) {
      std::string name = std::move(pending_.front());
      pending_.pop_front();
      if (name == "..") {
        if (!entered_.empty()) {
          entered_.pop_back();
          names_.pop_back();
          continue;
        }
        // Only a link met after an absolute jump brings a ".." to a root's top (those that
        // climb are caught when read): its parent, by the text.
        if (auto stop = jump(roots_[root_].real_path + "/..")) return *std::move(stop);
        continue;
      }
      const int fd = ::openat(at(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) return beneath_error_from_errno(errno);
      UniqueFd held(fd);
      struct stat st {};
      if (::fstat(held.get(), &st) != 0) return beneath_error_from_errno(errno);
      if (S_ISLNK(st.st_mode)) {
        if (auto stop = follow(held.get())) return *std::move(stop);
        continue;
      }
      if (pending_.empty()) return Located{std::move(held), root_};
      if (!S_ISDIR(st.st_mode)) return beneath_error_from_errno(ENOTDIR);
      entered_.push_back(std::move(held));
      names_.push_back(std::move(name));
    }
    // The path, or a link at its end, named a folder the walk holds (a root itself included).
    const int fd = ::openat(at(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return beneath_error_from_errno(errno);
    return Located{UniqueFd(fd), root_};
  }

 private:
  int at() const noexcept {
    return entered_.empty() ? roots_[root_].folder.native_handle() : entered_.back().get();
  }

  // The real path of the folder the walk is in, by the names it entered.
  std::string here() const {
    std::string out = roots_[root_].real_path;
    for (const auto& name : names_)
      out += "/" + name;
    return out;
  }

  // Whether the parts of a relative link read in the current folder climb above the root.
  bool climbs(std::string_view target) const {
    std::size_t depth = entered_.size();
    for (const auto& part : split_parts(target)) {
      if (part != "..") {
        ++depth;
      } else if (depth == 0) {
        return true;
      } else {
        --depth;
      }
    }
    return false;
  }

  // `link` is an O_PATH descriptor of a link: puts its target in its place, or tells why the
  // walk stops. The text read is that of the link opened, not of whatever bears its name now.
  std::optional<BeneathError> follow(int link) {
    if (++links_ > kMaxBeneathLinks) {
      return failure(BeneathFailure::link_loop, ELOOP, "a loop of links");
    }
    char target[PATH_MAX];
    const ssize_t n = ::readlinkat(link, "", target, sizeof target);
    if (n < 0) return beneath_error_from_errno(errno);
    if (static_cast<std::size_t>(n) >= sizeof target) {
      return beneath_error_from_errno(ENAMETOOLONG);
    }
    const std::string_view text(target, static_cast<std::size_t>(n));
    if (text.empty()) return beneath_error_from_errno(ENOENT);
    if (text.front() == '/') return jump(text);
    if (climbs(text)) return jump(here() + "/" + std::string(text));
    const auto parts = split_parts(text);
    pending_.insert(pending_.begin(), parts.begin(), parts.end());
    return std::nullopt;
  }

  // Continues at `absolute`, normalised by its text, beneath the deepest root that holds it.
  std::optional<BeneathError> jump(std::string_view absolute) {
    const auto parts = normalise_absolute(absolute);
    std::optional<std::size_t> best;
    std::size_t best_depth = 0;
    for (std::size_t i = 0; i < roots_.size(); ++i) {
      const auto root = split_parts(roots_[i].real_path);
      if (root.size() > parts.size() || !std::equal(root.begin(), root.end(), parts.begin())) {
        continue;
      }
      if (!best || root.size() > best_depth) {
        best = i;
        best_depth = root.size();
      }
    }
    if (!best) return escapes();
    root_ = *best;
    entered_.clear();
    names_.clear();
    pending_.insert(pending_.begin(), parts.begin() + static_cast<std::ptrdiff_t>(best_depth),
                    parts.end());
    return std::nullopt;
  }

  const Roots& roots_;
  std::size_t root_;
  std::vector<UniqueFd> entered_;   // the folders entered below the root, innermost last
  std::vector<std::string> names_;  // their names, in step with entered_
  std::deque<std::string> pending_;
  int links_ = 0;
};

// Resolves `relative` from the root `start`, links followed within the roots: openat2 first
// (the kernel keeps the lookup beneath the start root), the walk when openat2 is missing or
// forbidden, or when a link leaves the start root and another root may hold its target.
BeneathResult<Located> locate(const Roots& roots, std::size_t start, std::string_view relative,
                              BeneathResolver resolver) {
  if (relative.find('\0') != std::string_view::npos) {
    return failure(BeneathFailure::missing, ENOENT, "no such file");
  }
  if (resolver != BeneathResolver::walk_only) {
    auto opened = open_with_openat2(roots[start].folder.native_handle(),
                                    relative.empty() ? std::string(".") : std::string(relative),
                                    O_PATH | O_CLOEXEC);
    if (opened) {
      if (*opened) return Located{std::move(**opened), start};
      if (opened->error().kind != BeneathFailure::escapes) return opened->error();
      if (roots.size() == 1) return escapes();
    } else if (resolver == BeneathResolver::openat2_only) {
      return failure(BeneathFailure::os_error, ENOSYS,
                     "cannot be opened: this system has no openat2 for this process");
    }
  }
  return Walk(roots, start).run(relative);
}

// The real path of what `fd` names, found in the root `reached`, and the root it lies in.
struct Placed {
  std::string real_path;
  std::size_t root = 0;
};

BeneathResult<Placed> place(const Roots& roots, int fd, std::size_t reached) {
  auto real = real_path_of(fd);
  if (!real) return failure(BeneathFailure::missing, ENOENT, "no such file (deleted meanwhile)");
  // A folder on the way renamed out of the root after the lookup, for instance.
  if (!holds(roots[reached].real_path, *real)) return escapes();
  const std::size_t root = deepest_root(roots, *real).value_or(reached);
  return Placed{*std::move(real), root};
}

// Nothing unless `st` is a regular file of one name.
std::optional<BeneathError> refuse_unless_file(const struct stat& st) {
  if (S_ISREG(st.st_mode)) {
    if (st.st_nlink > 1) {
      return failure(BeneathFailure::hard_link, 0,
                     "the file has other names (a hard link), which may be outside the roots");
    }
    return std::nullopt;
  }
  return not_a_regular_file(st);
}

std::optional<BeneathError> refuse_unless_writable(const Roots& roots, std::size_t root) {
  if (roots[root].writable) return std::nullopt;
  return failure(BeneathFailure::read_only, EROFS,
                 "the path leads into " + roots[root].name + ", which is given for reading only");
}

// Opens for I/O the very file an O_PATH descriptor holds, through its /proc link (which names
// that file, whatever its path names now); `opened` is its fstat, checked before.
BeneathResult<UniqueFd> reopen(int fd, int flags, const struct stat& opened) {
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const int reopened = ::open(link.c_str(), flags);
  if (reopened < 0) return beneath_error_from_errno(errno);
  UniqueFd out(reopened);
  struct stat st {};
  if (::fstat(out.get(), &st) != 0) return beneath_error_from_errno(errno);
  if (st.st_dev != opened.st_dev || st.st_ino != opened.st_ino) {
    return failure(BeneathFailure::os_error, ESTALE,
                   "cannot be opened: the file changed during the call");
  }
  if (auto refused = refuse_unless_file(st)) return *std::move(refused);
  return out;
}

BeneathResult<std::uint64_t> write_all(int fd, std::string_view data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      return failure(BeneathFailure::os_error, err, "cannot be written: " + os_message(err));
    }
    done += static_cast<std::size_t>(n);
  }
  return static_cast<std::uint64_t>(done);
}

FsKind kind_of(mode_t mode) {
  if (S_ISREG(mode)) return FsKind::file;
  if (S_ISDIR(mode)) return FsKind::dir;
  if (S_ISLNK(mode)) return FsKind::link;
  return FsKind::other;
}

// The folder a new file goes in: the deepest folder of `parts` that exists, found by `locate`,
// then the rest made beneath it one part at a time (mkdirat, then opened O_NOFOLLOW: a link
// raced in there stops the call). The root it lies in must be writable before anything is made.
BeneathResult<Located> make_folders(const Roots& roots, std::size_t start,
                                    const std::vector<std::string>& parts,
                                    BeneathResolver resolver) {
  std::size_t existing = parts.size();
  BeneathResult<Located> found = locate(roots, start, join_parts(parts, existing), resolver);
  while (!found && found.error().kind == BeneathFailure::missing && existing > 0) {
    --existing;
    found = locate(roots, start, join_parts(parts, existing), resolver);
  }
  if (!found) return found.error();
  struct stat st {};
  if (::fstat(found->fd.get(), &st) != 0) return beneath_error_from_errno(errno);
  if (!S_ISDIR(st.st_mode)) return beneath_error_from_errno(ENOTDIR);
  auto placed = place(roots, found->fd.get(), found->root);
  if (!placed) return placed.error();
  // The folders made and the file lie in that root: a root is a folder that exists.
  if (auto refused = refuse_unless_writable(roots, placed->root)) return *std::move(refused);
  Located folder{std::move(found->fd), placed->root};
  for (std::size_t i = existing; i < parts.size(); ++i) {
    const char* name = parts[i].c_str();
    if (::mkdirat(folder.fd.get(), name, 0777) != 0 && errno != EEXIST) {
      return beneath_error_from_errno(errno);
    }
    const int fd = ::openat(folder.fd.get(), name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return beneath_error_from_errno(errno == ELOOP ? ENOTDIR : errno);
    folder.fd = UniqueFd(fd);
  }
  return folder;
}

struct DirCloser {
  void operator()(DIR* dir) const noexcept { ::closedir(dir); }
};

}  // namespace

BeneathRoots::BeneathRoots(std::vector<Root> roots) noexcept : roots_(std::move(roots)) {}
BeneathRoots::BeneathRoots(BeneathRoots&&) noexcept = default;
BeneathRoots& BeneathRoots::operator=(BeneathRoots&&) noexcept = default;
BeneathRoots::~BeneathRoots() = default;

BeneathResult<BeneathRoots> BeneathRoots::open(std::vector<RootSpec> specs) {
  if (specs.empty()) return failure(BeneathFailure::os_error, EINVAL, "no root was given");
  std::vector<Root> roots;
  roots.reserve(specs.size());
  for (auto& spec : specs) {
    if (find_root(roots, spec.name)) {
      return failure(BeneathFailure::os_error, EINVAL, "two roots are named " + spec.name);
    }
    auto folder = BeneathFolder::open(spec.path);
    if (!folder) return folder.error();
    auto real = real_path_of(folder->native_handle());
    if (!real) {
      return failure(BeneathFailure::os_error, ENOENT,
                     "cannot tell the real path of the folder " + spec.path.string());
    }
    roots.push_back(
        Root{std::move(spec.name), *std::move(real), spec.writable, *std::move(folder)});
  }
  return BeneathRoots(std::move(roots));
}

BeneathResult<FsRead> BeneathRoots::read(std::string_view start, std::string_view relative,
                                         std::size_t limit, BeneathResolver resolver) const {
  const auto from = find_root(roots_, start);
  if (!from) return no_such_root();
  auto found = locate(roots_, *from, relative, resolver);
  if (!found) return found.error();
  // Judged on the O_PATH descriptor: a FIFO or a device is never opened for reading.
  struct stat st {};
  if (::fstat(found->fd.get(), &st) != 0) return beneath_error_from_errno(errno);
  if (auto refused = refuse_unless_file(st)) return *std::move(refused);
  auto placed = place(roots_, found->fd.get(), found->root);
  if (!placed) return placed.error();
  auto fd = reopen(found->fd.get(), O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK, st);
  if (!fd) return fd.error();
  const BeneathFile file(
      std::move(*fd),
      FileIdentity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)},
      static_cast<std::uint64_t>(st.st_nlink));
  // One byte past the limit tells a file of exactly `limit` bytes from a larger one.
  auto bytes = file.read_up_to(limit == SIZE_MAX ? limit : limit + 1);
  if (!bytes) return bytes.error();
  if (bytes->size() > limit) {
    return failure(BeneathFailure::too_large, EFBIG, "the file is larger than the limit");
  }
  return FsRead{*std::move(bytes), std::move(placed->real_path), roots_[placed->root].name};
}

BeneathResult<FsWritten> BeneathRoots::write(std::string_view start, std::string_view relative,
                                             std::string_view data, bool append,
                                             BeneathResolver resolver) const {
  const auto from = find_root(roots_, start);
  if (!from) return no_such_root();
  const auto parts = split_parts(relative);
  if (parts.empty()) return failure(BeneathFailure::folder, EISDIR, "is a folder, not a file");
  const int mode = append ? O_APPEND : O_TRUNC;
  for (int attempt = 0; attempt < kWriteTries; ++attempt) {
    auto found = locate(roots_, *from, relative, resolver);
    if (found) {
      struct stat st {};
      if (::fstat(found->fd.get(), &st) != 0) return beneath_error_from_errno(errno);
      if (auto refused = refuse_unless_file(st)) return *std::move(refused);
      auto placed = place(roots_, found->fd.get(), found->root);
      if (!placed) return placed.error();
      if (auto refused = refuse_unless_writable(roots_, placed->root)) return *std::move(refused);
      auto fd = reopen(found->fd.get(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK | mode, st);
      if (!fd) return fd.error();
      auto written = write_all(fd->get(), data);
      if (!written) return written.error();
      return FsWritten{std::move(placed->real_path), *written, roots_[placed->root].name};
    }
    if (found.error().kind != BeneathFailure::missing) return found.error();

    const std::vector<std::string> folder_parts(parts.begin(), parts.end() - 1);
    auto folder = make_folders(roots_, *from, folder_parts, resolver);
    if (!folder) return folder.error();
    // O_EXCL: a name there now (a racing writer, a link to nothing) is judged on the next try.
    const int fd = ::openat(
        folder->fd.get(), parts.back().c_str(),
        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK | mode, 0666);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      return beneath_error_from_errno(errno);
    }
    UniqueFd created(fd);
    auto placed = place(roots_, created.get(), folder->root);
    if (!placed) return placed.error();
    auto written = write_all(created.get(), data);
    if (!written) return written.error();
    return FsWritten{std::move(placed->real_path), *written, roots_[placed->root].name};
  }
  return failure(BeneathFailure::missing, ENOENT,
                 "no such file: a link to nothing, or a name that kept changing during the call");
}

BeneathResult<FsStat> BeneathRoots::stat(std::string_view start, std::string_view relative,
                                         BeneathResolver resolver) const {
  const auto from = find_root(roots_, start);
  if (!from) return no_such_root();
  auto found = locate(roots_, *from, relative, resolver);
  if (!found) return found.error();
  struct stat st {};
  if (::fstat(found->fd.get(), &st) != 0) return beneath_error_from_errno(errno);
  return FsStat{kind_of(st.st_mode), static_cast<std::uint64_t>(st.st_size),
                static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000 +
                    static_cast<std::int64_t>(st.st_mtim.tv_nsec) / 1'000'000};
}

BeneathResult<FsListing> BeneathRoots::list(std::string_view start, std::string_view relative,
                                            std::size_t max_entries,
                                            BeneathResolver resolver) const {
  const auto from = find_root(roots_, start);
  if (!from) return no_such_root();
  auto found = locate(roots_, *from, relative, resolver);
  if (!found) return found.error();
  struct stat st {};
  if (::fstat(found->fd.get(), &st) != 0) return beneath_error_from_errno(errno);
  if (!S_ISDIR(st.st_mode)) {
    return failure(BeneathFailure::missing, ENOTDIR, "is not a folder");
  }
  // The folder found, not its path: a descriptor that can be read (O_PATH cannot).
  const int fd = ::openat(found->fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return beneath_error_from_errno(errno);
  std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd));
  if (!dir) {
    const int err = errno;
    ::close(fd);
    return beneath_error_from_errno(err);
  }
  // One name past the bound tells a full folder from a larger one; no more is read.
  std::vector<std::string> names;
  while (names.size() <= max_entries) {
    errno = 0;
    const dirent* entry = ::readdir(dir.get());
    if (!entry) {
      if (errno != 0) {
        const int err = errno;
        return failure(BeneathFailure::os_error, err, "cannot list the folder: " + os_message(err));
      }
      break;
    }
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  FsListing listing;
  listing.truncated = names.size() > max_entries;
  std::sort(names.begin(), names.end());
  if (listing.truncated) names.resize(max_entries);
  listing.entries.reserve(names.size());
  for (auto& name : names) {
    struct stat entry {};
    if (::fstatat(::dirfd(dir.get()), name.c_str(), &entry, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // removed since it was read
      listing.entries.push_back(FsListEntry{std::move(name), FsKind::other, 0});
      continue;
    }
    listing.entries.push_back(FsListEntry{std::move(name), kind_of(entry.st_mode),
                                          static_cast<std::uint64_t>(entry.st_size)});
  }
  return listing;
}

BeneathResult<std::string> BeneathRoots::canon(std::string_view start, std::string_view relative,
                                               BeneathResolver resolver) const {
  const auto from = find_root(roots_, start);
  if (!from) return no_such_root();
  const auto parts = split_parts(relative);
  std::size_t existing = parts.size();
  auto found = locate(roots_, *from, relative, resolver);
  while (!found && found.error().kind == BeneathFailure::missing && existing > 0) {
    --existing;
    found = locate(roots_, *from, join_parts(parts, existing), resolver);
  }
  if (!found) return found.error();
  if (existing < parts.size()) {
    // What follows must be within a folder.
    struct stat st {};
    if (::fstat(found->fd.get(), &st) != 0) return beneath_error_from_errno(errno);
    if (!S_ISDIR(st.st_mode)) return beneath_error_from_errno(ENOTDIR);
  }
  auto placed = place(roots_, found->fd.get(), found->root);
  if (!placed) return placed.error();
  std::string out = std::move(placed->real_path);
  for (std::size_t i = existing; i < parts.size(); ++i) {
    if (out.back() != '/') out += '/';
    out += parts[i];
  }
  return out;
}

}  // namespace escouade::platform
