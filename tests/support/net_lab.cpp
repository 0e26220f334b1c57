#include "support/net_lab.hpp"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

extern char** environ;

namespace escouade::test {

namespace {

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

bool write_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// Runs `ip` with `args` (no shell), from the usual places.
std::string run_ip(std::vector<std::string> args) {
  const char* ip = ::access("/usr/sbin/ip", X_OK) == 0 ? "/usr/sbin/ip" : "/sbin/ip";
  std::vector<char*> argv{const_cast<char*>(ip)};
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, ip, nullptr, nullptr, argv.data(), environ) != 0)
    return errno_text(std::string("cannot run ") + ip + " (iproute2)");
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line = "ip";
    for (auto& a : args)
      line += " " + a;
    return line + " failed";
  }
  return {};
}

}  // namespace

std::string enter_net_lab() {
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) != 0)
    return errno_text("unshare(user, net, mount) (the net tests need user namespaces)");
  write_file("/proc/self/setgroups", "deny");
  if (!write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
      !write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n"))
    return errno_text("the user namespace's id maps");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return errno_text("making the mounts private");

  // /etc/hosts of the lab, in a file of this process's own, bound over the real one.
  char path[] = "/tmp/escouade-lab-hosts-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return errno_text("a hosts file");
  ::close(fd);
  {
    std::ofstream hosts(path);
    hosts << "127.0.0.1 localhost\n::1 localhost\n";
    for (const LabHost& h : kLabHosts)
      hosts << h.address << " " << h.name << "\n";
  }
  const int bound = ::mount(path, "/etc/hosts", nullptr, MS_BIND, nullptr);
  ::unlink(path);  // the mount keeps the file; nothing is left behind
  if (bound != 0) return errno_text("bind-mounting /etc/hosts");

  if (auto e = run_ip({"link", "set", "lo", "up"}); !e.empty()) return e;
  for (const char* a : kLabAddresses)
    if (auto e = run_ip({"addr", "add", a, "dev", "lo"}); !e.empty()) return e;
  return {};
}

}  // namespace escouade::test
