// bench_host's fs/read and proc/spawn figures (issue 32): what the host's files and programs cost
// a plugin, beside the same work done directly. bench/plugins/services.mjs asks the host, in
// the sandbox (run.js) and by Node as a process; Node does the same itself
// (bench/plugins/services-node.mjs); and this program does it in C++ with nothing between, the
// floor. The steps of one iteration are interleaved, so that each figure sits beside its floor
// in one state of the machine.
//   fs_read   a 256 KiB text file of the plugin's folder (fs/read {root: "plugin"}: the path
//             judged, the file opened beneath its root, its text in the answer's JSON); direct:
//             open, read and close of the same file
//   spawn     `true` through proc/spawn (`permissions.commands`: "true") to its proc/exit; direct:
//             posix_spawn of /bin/true and waitpid, by a process this one asks over a pipe
// Each one timed from the call to the plugin to its answer (a call of ~10 µs is in it: see
// sandbox_call and host_call_api for what a call alone costs).

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "host_bench.hpp"

extern char** environ;

namespace host_bench {

namespace json = boost::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kFileBytes = 256 * 1024;

// A plugin folder of services.mjs, as run.js or run by Node, with the 256 KiB file beside it.
fs::path make_services_plugin(const std::string& id, bool node) {
  const fs::path dir = g_root / id;
  fs::create_directories(dir);
  const fs::path sources = fs::path(ESCOUADE_BENCH_JS_PLUGIN).parent_path();
  for (const char* f : {"services.mjs", "services-node.mjs"})
    fs::copy_file(sources / f, dir / f, fs::copy_options::overwrite_existing);
  {
    // Text, as a source file is: lines of words, a few characters JSON escapes.
    std::ofstream data(dir / "data.txt", std::ios::binary);
    std::string text;
    for (int i = 0; text.size() < kFileBytes; ++i)
      text += "line " + std::to_string(i) + ": \"quoted\" words\tand a tab, some text\n";
    text.resize(kFileBytes);
    data << text;
  }
  const std::string run =
      node ? R"({"command":["node","services-node.mjs"]})" : R"({"js":"services.mjs"})";
  std::ofstream(dir / "escouade-plugin.json")
      << R"({"id":")" << id << R"(","version":"1.0.0","name":"bench","run":)" << run
      << R"(,"activation":["event:agent.status"],"permissions":{"events":["agent.status"],)"
         R"("files":{"plugin":"read"},"commands":["true"]}})";
  return dir;
}

std::size_t read_directly(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("open " + file.string());
  std::string bytes(kFileBytes, '\0');
  std::size_t got = 0;
  for (ssize_t n;
       got < bytes.size() && (n = ::read(fd, bytes.data() + got, bytes.size() - got)) > 0;)
    got += static_cast<std::size_t>(n);
  ::close(fd);
  return got;
}

// The floor of a spawn, in a process of its own made before the host (which ends any child of
// its process it did not start): asked by a byte on a pipe, it starts /bin/true with posix_spawn,
// waits for it, and answers with its exit code. The ask's round trip (a few µs) is in its time,
// as a call is in the host's figures.
class DirectSpawner {
 public:
  DirectSpawner() {
    int ask[2], told[2];
    if (::pipe2(ask, O_CLOEXEC) != 0 || ::pipe2(told, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      ::close(ask[1]);
      ::close(told[0]);
      char program[] = "/bin/true";
      char* argv[] = {program, nullptr};
      for (char c; ::read(ask[0], &c, 1) == 1;) {
        pid_t pid = 0;
        int status = 255 << 8;
        if (::posix_spawn(&pid, program, nullptr, nullptr, argv, environ) == 0)
          while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
          }
        const char code = static_cast<char>(WEXITSTATUS(status));
        if (::write(told[1], &code, 1) != 1) break;
      }
      ::_exit(0);
    }
    ::close(ask[0]);
    ::close(told[1]);
    ask_ = ask[1];
    told_ = told[0];
  }
  ~DirectSpawner() {
    ::close(ask_);
    ::close(told_);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  pid_t pid() const { return pid_; }
  int spawn() {
    char c = 0;
    if (::write(ask_, &c, 1) != 1 || ::read(told_, &c, 1) != 1)
      throw std::runtime_error("the direct spawner went away");
    return c;
  }

 private:
  pid_t pid_ = -1;
  int ask_ = -1, told_ = -1;
};

struct Figure {
  const char* key;
  std::function<void()> step;
  std::vector<double> us;
};

// `iterations` rounds of every figure's step in turn, after `warmup` untimed ones.
void interleave(std::vector<Figure>& figures, int iterations, int warmup) {
  for (int i = 0; i < warmup + iterations; ++i)
    for (auto& f : figures) {
      const auto a = Clock::now();
      f.step();
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - a).count();
      if (i >= warmup) f.us.push_back(us);
    }
}

void print(const char* bench, const std::vector<Figure>& figures, int iterations, int beside) {
  std::printf("{\"bench\":\"%s\",\"iterations\":%d", bench, iterations);
  if (beside > 0) std::printf(",\"plugins_beside\":%d", beside);
  for (const auto& f : figures)
    std::printf(",\"%s_p50_us\":%.1f,\"%s_p99_us\":%.1f", f.key, pct(f.us, 0.5), f.key,
                pct(f.us, 0.99));
  std::printf("}\n");
}

}  // namespace

void bench_services(int iterations, int neighbours) {
  DirectSpawner spawner;
  Rig rig;
  rig.context.known_children.insert(spawner.pid());  // not an orphan for the host to end
  // Plugins running beside, idle: each program's end looks among the host's children for
  // orphans, and these are its children too.
  for (int i = 0; i < neighbours; ++i)
    rig.call(rig.add("dev.bench.beside" + std::to_string(i)), "test/echo", json::object{});
  const std::string js =
      rig.add_folder("dev.bench.services", make_services_plugin("dev.bench.services", false));
  const std::string node = rig.add_folder("dev.bench.services-node",
                                          make_services_plugin("dev.bench.services-node", true));
  const fs::path file = g_root / "dev.bench.services" / "data.txt";
  const json::value read_params = json::object{{"path", "data.txt"}};
  auto expect_size = [](const json::value& v) {
    if (v.at("size").to_number<std::size_t>() != kFileBytes)
      throw std::runtime_error("fs/read gave another size");
  };
  auto expect_zero = [](const json::value& v) {
    if (v.at("code").to_number<int>() != 0) throw std::runtime_error("true did not exit 0");
  };

  std::vector<Figure> reads{
      {"direct", [&] { (void)read_directly(file); }, {}},
      {"node_direct", [&] { expect_size(rig.call(node, "test/direct-read", read_params)); }, {}},
      {"node_host", [&] { expect_size(rig.call(node, "test/read", read_params)); }, {}},
      {"sandbox", [&] { expect_size(rig.call(js, "test/read", read_params)); }, {}},
  };
  interleave(reads, iterations, 50);
  print("services_fs_read", reads, iterations, neighbours);

  const json::value none = json::object{};
  std::vector<Figure> spawns{
      {"direct", [&] { (void)spawner.spawn(); }, {}},
      {"node_direct", [&] { expect_zero(rig.call(node, "test/direct-spawn", none)); }, {}},
      {"node_host", [&] { expect_zero(rig.call(node, "test/spawn", none)); }, {}},
      {"sandbox", [&] { expect_zero(rig.call(js, "test/spawn", none)); }, {}},
  };
  interleave(spawns, iterations / 4, 20);
  print("services_spawn", spawns, iterations / 4, neighbours);
}

}  // namespace host_bench
