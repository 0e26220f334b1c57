#include "conformance/leftovers.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <system_error>

namespace escouade::conformance {

namespace fs = std::filesystem;

namespace {

std::string read_whole(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The state letter of /proc/<pid>/stat: after the last ')' and a space.
char state_of(int pid) {
  const std::string stat = read_whole(fs::path("/proc") / std::to_string(pid) / "stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return '?';
  return stat[close + 2];
}

bool holds_mark(int pid, std::string_view mark) {
  const std::string env = read_whole(fs::path("/proc") / std::to_string(pid) / "environ");
  std::size_t at = 0;
  while (at < env.size()) {
    std::size_t end = env.find('\0', at);
    if (end == std::string::npos) end = env.size();
    if (std::string_view(env).substr(at, end - at) == mark) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

std::string make_run_token() {
  std::random_device rd;
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::to_string(::getpid()) + "-" + std::to_string(now) + "-" + std::to_string(rd());
}

std::vector<Leftover> find_leftovers(std::string_view token) {
  std::vector<Leftover> out;
  const std::string mark = std::string(kRunMarkVariable) + "=" + std::string(token);
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(name);
    if (pid == ::getpid() || !holds_mark(pid, mark)) continue;
    const char state = state_of(pid);
    if (state == 'Z' || state == 'X' || state == '?') continue;
    std::string comm = read_whole(it->path() / "comm");
    while (!comm.empty() && comm.back() == '\n')
      comm.pop_back();
    out.push_back({pid, std::move(comm)});
  }
  return out;
}

std::size_t kill_leftovers(std::string_view token) {
  std::size_t signalled = 0;
  for (int round = 0; round < 8; ++round) {
    const auto left = find_leftovers(token);
    if (left.empty()) break;
    for (const auto& l : left) {
      if (::kill(l.pid, SIGKILL) == 0) ++signalled;
    }
    ::usleep(10'000);
  }
  return signalled;
}

}  // namespace escouade::conformance
