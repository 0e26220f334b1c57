// The file store: one file per secret in a folder of its own, replaced whole by rename.
//
// A secret's file name is its name with every byte outside [A-Za-z0-9._-] written %XX, and a
// leading '.' written %2E: no name can hold a '/', be "." or "..", or start with '.', so every
// secret stays a plain entry of the folder, and the temporary files (".tmp.*") never clash
// with one.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <system_error>

#include "base/os_message.hpp"
#include "base/unique_fd.hpp"
#include "base/utf8.hpp"
#include "platform/errors.hpp"
#include "platform/keychain.hpp"

namespace escouade::platform {
namespace {

// The keychain cannot be reached; what was given cannot be kept (platform/errors.hpp).
constexpr Errc kUnreachable = Errc::unreachable;
constexpr Errc kCannotKeep = Errc::invalid_argument;

bool kept_as_is(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::string file_name_of(const std::string& name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (kept_as_is(c) && !(i == 0 && c == '.')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

Result<void> write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(kUnreachable, os_message(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

class FileKeychain final : public Keychain {
 public:
  explicit FileKeychain(std::filesystem::path dir) : dir_(std::move(dir)) {
    (void)ensure_dir();  // again, with its error reported, at each set
  }

  Result<std::optional<std::string>> get(const std::string& name) override {
    if (name.empty()) return make_error(kCannotKeep, "a keychain name is never empty");
    std::lock_guard hold(lock_);
    const std::filesystem::path file = dir_ / file_name_of(name);
    UniqueFd fd{::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
    if (!fd) {
      if (errno == ENOENT) return std::optional<std::string>{};
      return make_error(kUnreachable, "the file store cannot read the secret " + name + " in " +
                                          dir_.string() + ": " + os_message(errno));
    }
    std::string value;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        return make_error(kUnreachable, "the file store cannot read the secret " + name + " in " +
                                            dir_.string() + ": " + os_message(errno));
      }
      value.append(buffer, static_cast<std::size_t>(n));
    }
    return std::optional<std::string>{std::move(value)};
  }

  Result<void> set(const std::string& name, const std::string& value) override {
    if (name.empty()) return make_error(kCannotKeep, "a keychain name is never empty");
    if (!is_valid_utf8(value)) {
      return make_error(kCannotKeep,
                        "the secret " + name + " is not UTF-8 text, which a keychain keeps");
    }
    std::lock_guard hold(lock_);
    if (auto ok = ensure_dir(); !ok) return ok.error();
    auto failed = [&](const std::string& reason) {
      return make_error(kUnreachable, "the file store cannot keep the secret " + name + " in " +
                                          dir_.string() + ": " + reason);
    };
    const std::filesystem::path file = dir_ / file_name_of(name);
    std::string temp = (dir_ / ".tmp.XXXXXX").string();
    UniqueFd fd{::mkostemp(temp.data(), O_CLOEXEC)};  // 0600
    if (!fd) return failed(os_message(errno));
    // Until the rename, the temporary file is ours to remove on any failure.
    auto discard = [&](const std::string& reason) {
      ::unlink(temp.c_str());
      return failed(reason);
    };
    if (::fchmod(fd.get(), 0600) != 0) return discard(os_message(errno));
    if (auto ok = write_all(fd.get(), value); !ok) return discard(ok.error().message);
    if (::fsync(fd.get()) != 0) return discard(os_message(errno));
    if (::close(fd.release()) != 0) return discard(os_message(errno));
    if (::rename(temp.c_str(), file.c_str()) != 0) return discard(os_message(errno));
    sync_dir();
    return {};
  }

  Result<void> remove(const std::string& name) override {
    if (name.empty()) return make_error(kCannotKeep, "a keychain name is never empty");
    std::lock_guard hold(lock_);
    const std::filesystem::path file = dir_ / file_name_of(name);
    if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
      return make_error(kUnreachable, "the file store cannot forget the secret " + name + " in " +
                                          dir_.string() + ": " + os_message(errno));
    }
    sync_dir();
    return {};
  }

  std::string describe() const override {
    return "the file store in " + dir_.string() + " (not a keychain)";
  }

 private:
  // Creates the folder and its missing parents, each 0700. A folder that exists keeps its mode.
  Result<void> ensure_dir() {
    std::error_code ec;
    if (std::filesystem::is_directory(dir_, ec)) return {};
    std::filesystem::path partial;
    for (const std::filesystem::path& part : dir_) {
      partial /= part;
      if (::mkdir(partial.c_str(), 0700) == 0) {
        ::chmod(partial.c_str(), 0700);  // whatever the umask took away
      } else if (errno != EEXIST) {
        return make_error(kUnreachable, "the file store cannot create its folder " + dir_.string() +
                                            ": " + os_message(errno));
      }
    }
    if (!std::filesystem::is_directory(dir_, ec)) {
      return make_error(kUnreachable,
                        "the file store's folder " + dir_.string() + " is not a folder");
    }
    return {};
  }

  // Makes a rename or an unlink durable. Best effort: the entry is already changed for every
  // reader, and a failure here has nothing left to undo.
  void sync_dir() const {
    UniqueFd fd{::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (fd) ::fsync(fd.get());
  }

  const std::filesystem::path dir_;
  std::mutex lock_;
};

}  // namespace

std::unique_ptr<Keychain> make_file_keychain(std::filesystem::path dir) {
  return std::make_unique<FileKeychain>(std::move(dir));
}

}  // namespace escouade::platform
