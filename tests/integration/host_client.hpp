#pragma once

// Drives a real escouade-host process as an app would: JSON-RPC 2.0 lines on its stdin, answers
// and notifications read from its stdout. Plugin folders are made from the fixture plugin.
// Every wait has a deadline, only as a safety net: no test asserts on time.

#include <sys/types.h>

#include <boost/json/value.hpp>
#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"

namespace escouade::testing {

// A temporary folder, removed with its object (base/temp_dir.hpp).
struct TempDir : escouade::TempDir {
  TempDir() : escouade::TempDir("escouade-it") {}
};

struct PluginSpec {
  std::string id;
  std::string mode = "good";
  std::vector<std::string> activation = {"event:agent.status"};
  std::vector<std::string> events = {"agent.status"};
  bool decide = true;
  std::vector<std::string> secrets{};
  // contributes.settings, as the manifest writes it ({"name": {"type", "default"?}}).
  boost::json::object settings{};
  // The program copied as ./plugin; empty: the fixture plugin.
  std::filesystem::path program{};
};

// Makes <parent>/<id>/ with escouade-plugin.json, the fixture (or `program`) as ./plugin and its
// mode.
std::filesystem::path make_plugin(const std::filesystem::path& parent, const PluginSpec& spec);

// The answer the fixture's test/ask relays, with its string result as the plugin got it (the
// host masks the plugin's secrets in what it relays to the app; resultHex carries it through).
boost::json::value unmasked(boost::json::value answer);

// A fact of `name` for project p1, numbered `seq`.
boost::json::value fact(std::string_view name, std::int64_t seq, std::string_view project = "p1");

class HostClient {
 public:
  // Starts escouade-host with its own data dir and `extra_args`; without a --keychain among
  // them, a file store in the data dir keeps the secrets.
  explicit HostClient(std::vector<std::string> extra_args = {});
  ~HostClient();  // kills the host if it still runs
  HostClient(const HostClient&) = delete;
  HostClient& operator=(const HostClient&) = delete;

  struct Answer {
    boost::json::value result;      // when it succeeded
    std::optional<int> error_code;  // when it failed
    std::string error_message;
    std::string line;  // the answer's line, as escouade-host wrote it
    bool ok() const { return !error_code; }
  };

  // Sends a request and waits for its answer.
  Answer call(const std::string& method, boost::json::value params,
              std::chrono::seconds limit = std::chrono::seconds(30));
  // Waits for the answer whose id is `id` (to a line sent with send_line).
  Answer answer_to(const boost::json::value& id,
                   std::chrono::seconds limit = std::chrono::seconds(30));
  // Sends a raw line (no '\n' needed). Blocks while the host does not read: another thread may
  // send while this one reads.
  void send_line(const std::string& line);
  // Reads until `n` answers came (notifications are kept); returns how many of them succeeded,
  // or fewer than `n` answers at the deadline.
  std::size_t read_answers(std::size_t n, std::chrono::seconds limit = std::chrono::seconds(60));

  // Waits for a host/statusChanged of plugin `id` in `state`; returns its params.
  boost::json::value wait_status(const std::string& id, const std::string& state,
                                 std::chrono::seconds limit = std::chrono::seconds(30));
  // The notifications received so far (host/statusChanged...), oldest first.
  const std::deque<boost::json::value>& notifications() const { return notifications_; }

  // Loads, switches on for project p1 ("Project One", not private) and returns the id.
  std::string load_and_enable(const std::filesystem::path& folder);
  // Switches a loaded plugin on for another project.
  void enable(const std::string& id, const std::string& project, bool is_private = false,
              const std::filesystem::path& folder = {});
  // host/call, its result (fails the test on an error).
  boost::json::value call_plugin(const std::string& id, const std::string& method,
                                 boost::json::value params);
  // The bytes of the plugin's journal file on disk, once it holds what the journal has now.
  std::string journal_file(const std::string& id);
  std::vector<std::string> journal(const std::string& id);
  // Waits until a journal line of `id` contains `text`; returns it, or an empty string once
  // `limit` passed without one (check it: a wait that found nothing is not a failure by itself).
  [[nodiscard]] std::string wait_journal(const std::string& id, const std::string& text,
                                         std::chrono::seconds limit = std::chrono::seconds(30));
  boost::json::value status(const std::string& id);

  // Closes the host's stdin; waits for it to exit and returns its exit code.
  int close_and_wait(std::chrono::seconds limit = std::chrono::seconds(20));
  // Waits for the host to exit (after host/shutdown).
  int wait_exit(std::chrono::seconds limit = std::chrono::seconds(20));
  void kill_host();

  pid_t pid() const { return pid_; }
  const std::filesystem::path& data_dir() const { return data_.path(); }
  const std::filesystem::path& plugins_dir() const { return plugins_.path(); }

 private:
  // Reads one line within `limit`; false on the end of the output or the deadline.
  bool read_line(std::string& line, std::chrono::steady_clock::time_point deadline);
  void take(const std::string& line);

  TempDir data_;
  TempDir plugins_;
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
  std::int64_t next_id_ = 1;
  std::deque<boost::json::value> notifications_;
  struct Read {
    boost::json::value value;
    std::string line;
  };
  std::deque<Read> answers_;
};

// Whether a process exists and is not a zombie.
bool process_alive(int pid);
// Waits for `done` with a deadline (a safety net); returns done().
bool eventually(const std::function<bool()>& done,
                std::chrono::seconds limit = std::chrono::seconds(20));

}  // namespace escouade::testing
