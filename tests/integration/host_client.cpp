#include "host_client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace escouade::testing {

namespace fs = std::filesystem;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

json::value unmasked(json::value answer) {
  json::object& o = answer.as_object();
  const json::value* hex = o.if_contains("resultHex");
  if (!hex) return answer;
  std::string text;
  const std::string_view digits(hex->as_string());
  for (std::size_t i = 0; i + 1 < digits.size(); i += 2)
    text += static_cast<char>(std::stoi(std::string(digits.substr(i, 2)), nullptr, 16));
  o["result"] = text;
  o.erase("resultHex");
  return answer;
}

fs::path make_plugin(const fs::path& parent, const PluginSpec& spec) {
  const fs::path dir = parent / spec.id;
  fs::create_directories(dir);
  const fs::path program = spec.program.empty() ? fs::path(ESCOUADE_FIXTURE_PLUGIN) : spec.program;
  fs::copy_file(program, dir / "plugin", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "mode") << spec.mode << "\n";
  json::array activation, events;
  for (const auto& a : spec.activation)
    activation.emplace_back(a);
  for (const auto& e : spec.events)
    events.emplace_back(e);
  json::object permissions{{"events", events}, {"decide", spec.decide}};
  if (!spec.secrets.empty()) {
    json::array secrets;
    for (const auto& k : spec.secrets)
      secrets.emplace_back(k);
    permissions["secrets"] = std::move(secrets);
  }
  json::object manifest{{"id", spec.id},
                        {"version", "1.0.0"},
                        {"name", "Fixture " + spec.mode},
                        {"run", json::object{{"command", json::array{"./plugin"}}}},
                        {"activation", activation},
                        {"permissions", std::move(permissions)}};
  if (!spec.settings.empty()) manifest["contributes"] = json::object{{"settings", spec.settings}};
  std::ofstream(dir / "escouade-plugin.json") << json::serialize(manifest);
  return dir;
}

json::value fact(std::string_view name, std::int64_t seq, std::string_view project) {
  return json::object{
      {"name", name},
      {"version", 1},
      {"seq", seq},
      {"at", "2026-11-29T10:00:00Z"},
      {"project", json::object{{"id", project}, {"name", "Project One"}, {"private", false}}},
      {"data", json::object{{"status", "working"}, {"was", "idle"}}}};
}

HostClient::HostClient(std::vector<std::string> extra_args) {
  int to_host[2], from_host[2];
  if (::pipe2(to_host, O_CLOEXEC) != 0 || ::pipe2(from_host, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_host[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_host[1], 1);
  std::vector<std::string> args{ESCOUADE_HOST_BINARY, "--data-dir", data_.path().string()};
  // Secrets in a file store of the test's own unless the test names a keychain: no test touches
  // the keychain of the machine it runs on.
  if (std::find(extra_args.begin(), extra_args.end(), "--keychain") == extra_args.end()) {
    args.push_back("--keychain");
    args.push_back("file:" + (data_.path() / "test-keychain").string());
  }
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&pid_, args[0].c_str(), &actions, nullptr, argv.data(), environ) != 0) {
    throw std::runtime_error("cannot start escouade-host");
  }
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_host[0]);
  ::close(from_host[1]);
  in_ = to_host[1];
  out_ = from_host[0];
}

HostClient::~HostClient() {
  if (in_ >= 0) ::close(in_);
  if (pid_ > 0) {
    // Give it the chance to close its plugins, then make sure.
    int status = 0;
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (out_ >= 0) ::close(out_);
}

void HostClient::send_line(const std::string& line) {
  std::string l = line + "\n";
  std::size_t off = 0;
  while (off < l.size()) {
    ssize_t n = ::write(in_, l.data() + off, l.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("the host's input is closed");
    off += static_cast<std::size_t>(n);
  }
}

std::size_t HostClient::read_answers(std::size_t n, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  std::size_t answers = 0, ok = 0;
  std::string line;
  while (answers < n && read_line(line, deadline)) {
    json::value v = json::parse(line);
    if (v.as_object().contains("method")) {
      notifications_.push_back(std::move(v));
      continue;
    }
    ++answers;
    ok += v.as_object().contains("result") ? 1 : 0;
  }
  return ok;
}

bool HostClient::read_line(std::string& line, Clock::time_point deadline) {
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{out_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    char buf[65536];
    ssize_t n = ::read(out_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

void HostClient::take(const std::string& line) {
  json::value v = json::parse(line);
  if (json::array* batch = v.if_array()) {  // a batch's answers, each with the whole line
    for (json::value& e : *batch)
      answers_.push_back(Read{std::move(e), line});
    return;
  }
  if (v.as_object().contains("method")) {
    notifications_.push_back(std::move(v));
  } else {
    answers_.push_back(Read{std::move(v), line});
  }
}

HostClient::Answer HostClient::call(const std::string& method, json::value params,
                                    std::chrono::seconds limit) {
  const std::int64_t id = next_id_++;
  send_line(json::serialize(json::object{
      {"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}}));
  try {
    return answer_to(id, limit);
  } catch (const std::runtime_error&) {
    throw std::runtime_error("no answer to " + method + " from escouade-host");
  }
}

HostClient::Answer HostClient::answer_to(const json::value& id, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    for (auto it = answers_.begin(); it != answers_.end(); ++it) {
      if (it->value.at("id") == id) {
        Answer a;
        a.line = it->line;
        const auto& o = it->value.as_object();
        if (const json::value* e = o.if_contains("error")) {
          a.error_code = static_cast<int>(e->at("code").as_int64());
          a.error_message = std::string(e->at("message").as_string());
        } else {
          a.result = o.at("result");
        }
        answers_.erase(it);
        return a;
      }
    }
    std::string line;
    if (!read_line(line, deadline)) {
      throw std::runtime_error("no answer to " + json::serialize(id) + " from escouade-host");
    }
    take(line);
  }
}

json::value HostClient::wait_status(const std::string& id, const std::string& state,
                                    std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  std::size_t seen = 0;
  for (;;) {
    for (; seen < notifications_.size(); ++seen) {
      const auto& n = notifications_[seen];
      if (n.at("method") != "host/statusChanged") continue;
      const auto& p = n.at("params");
      if (p.at("id") == json::value(id) && p.at("state") == json::value(state)) return p;
    }
    std::string line;
    if (!read_line(line, deadline)) {
      throw std::runtime_error("no status " + state + " for " + id);
    }
    take(line);
  }
}

std::string HostClient::load_and_enable(const fs::path& folder) {
  auto loaded = call("host/load", json::object{{"folder", folder.string()}});
  if (!loaded.ok()) throw std::runtime_error("host/load: " + loaded.error_message);
  std::string id(loaded.result.at("id").as_string());
  auto enabled = call(
      "host/enable",
      json::object{
          {"id", id},
          {"project", json::object{{"id", "p1"}, {"name", "Project One"}, {"private", false}}}});
  if (!enabled.ok()) throw std::runtime_error("host/enable: " + enabled.error_message);
  return id;
}

void HostClient::enable(const std::string& id, const std::string& project, bool is_private,
                        const fs::path& folder) {
  json::object pr{{"id", project}, {"name", "Project " + project}, {"private", is_private}};
  if (!folder.empty()) pr["folder"] = folder.string();
  auto enabled = call("host/enable", json::object{{"id", id}, {"project", std::move(pr)}});
  if (!enabled.ok()) throw std::runtime_error("host/enable: " + enabled.error_message);
}

json::value HostClient::call_plugin(const std::string& id, const std::string& method,
                                    json::value params) {
  auto a = call("host/call",
                json::object{{"id", id}, {"method", method}, {"params", std::move(params)}});
  if (!a.ok()) throw std::runtime_error("host/call " + method + ": " + a.error_message);
  return a.result;
}

std::string HostClient::journal_file(const std::string& id) {
  // The host writes its journals on a thread of their own: the file is read once it holds the
  // last line the journal has now (10 s at most, a safety net). A host that has ended drained
  // its writer before it exited: its file is whole.
  const auto tail = pid_ > 0 && in_ >= 0 ? journal(id) : std::vector<std::string>{};
  const auto read = [&] {
    std::ifstream f(data_.path() / "plugin-logs" / (id + ".log"), std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string bytes = read();
  while (!tail.empty() && bytes.find(tail.back()) == std::string::npos &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    bytes = read();
  }
  return bytes;
}

std::vector<std::string> HostClient::journal(const std::string& id) {
  auto a = call("host/journal", json::object{{"id", id}});
  std::vector<std::string> lines;
  if (!a.ok()) return lines;
  for (const auto& l : a.result.at("lines").as_array())
    lines.emplace_back(l.as_string());
  return lines;
}

std::string HostClient::wait_journal(const std::string& id, const std::string& text,
                                     std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    for (const auto& l : journal(id)) {
      if (l.find(text) != std::string::npos) return l;
    }
    if (Clock::now() > deadline) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

json::value HostClient::status(const std::string& id) {
  auto a = call("host/status", json::object{{"id", id}});
  if (!a.ok()) throw std::runtime_error("host/status: " + a.error_message);
  return a.result.at(0);
}

int HostClient::wait_exit(std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (Clock::now() > deadline) return -1;
    // Keep reading what it writes, so that it never blocks on a full pipe.
    std::string line;
    if (read_line(line, Clock::now() + std::chrono::milliseconds(10))) take(line);
  }
}

int HostClient::close_and_wait(std::chrono::seconds limit) {
  ::close(in_);
  in_ = -1;
  return wait_exit(limit);
}

void HostClient::kill_host() {
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

bool process_alive(int pid) {
  // read(2), not a stream: a process reaped between the open and the read makes the read fail
  // with ESRCH, which libstdc++'s filebuf turns into an exception.
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return false;
  const std::string s(buf, static_cast<std::size_t>(n));
  auto close = s.rfind(')');
  return !(close != std::string::npos && close + 2 < s.size() && s[close + 2] == 'Z');
}

bool eventually(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace escouade::testing
