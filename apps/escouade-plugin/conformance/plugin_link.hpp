#pragma once

// The bench's end of one run of a plugin's program: the host's own parts put together as the
// supervisor does (runtime::ProcessProgram, rpc::Session with the services bound, the journal
// and its masker), with every line in both directions watched on the way. What it sees of each
// line is kept for the checks: what was not JSON-RPC 2.0 on stdout, every answer with the call
// it answers (its result held to the schema of that call's method), answers to nothing, ids
// echoed with another type, the calls the plugin made and how they were answered, its exit.
//
// Thread: the io executor given, only (the host's thread as far as the host's parts know).
// Lives until the run ends: it is closed, the ServiceContext's workers closed and the loop
// drained before it is destroyed (base/event_loop.hpp).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/report.hpp"
#include "journal/trace_file.hpp"
#include "protocol/decode.hpp"
#include "protocol/schema_validator.hpp"
#include "rpc/session.hpp"
#include "runtime/program.hpp"
#include "services/context.hpp"
#include "services/run_scope.hpp"

namespace escouade::conformance {

// An answer the plugin wrote (an element of a batch, or a whole line).
struct SeenAnswer {
  proto::Message message;
  std::size_t line = 0;  // index of the line it came on (lines_seen() order)
  bool in_batch = false;
  std::string text;  // the whole line, quoted
  // The call of ours it answers (its id echoed exactly); empty for an answer to nothing.
  std::string method;
  bool matched = false;
};

// Something the plugin wrote that breaks a rule, with the line quoted.
struct Fault {
  std::size_t line = 0;
  std::string reason;
  std::string text;
};

class PluginLink {
 public:
  using Clock = std::chrono::steady_clock;

  // Its program comes from `programs` (the host's own routing factory), which outlives it.
  PluginLink(boost::asio::any_io_executor executor, runtime::ProgramFactory& programs,
             const services::ServiceContext& services,
             std::shared_ptr<services::ServedPlugin> plugin, runtime::ProgramSpec spec);
  ~PluginLink();
  PluginLink(const PluginLink&) = delete;
  PluginLink& operator=(const PluginLink&) = delete;

  // Spawns the program; an error says why it could not start.
  Result<void> start();
  // Ends its whole tree (kill_tree) if it still runs; `exited` follows.
  void stop();
  // It answered initialize with protocol 1: it may have its secrets from now on.
  void handshake_passed() { run_->mark_ready(); }
  // At the end of the run: the session closed (answers still owed go nowhere) and the tree
  // ended if it still runs. What was seen stays readable.
  void close();

  // A call through the session (the host's own path): its outcome, timeout included.
  boost::asio::awaitable<rpc::CallOutcome> call(std::string method,
                                                std::optional<boost::json::value> params,
                                                std::chrono::milliseconds timeout);
  void notify(std::string_view method, std::optional<boost::json::value> params);
  // A line written as it is ('\n' added), bypassing the session: malformed lines, batches, ids
  // of every type. The requests it carries are remembered, so their answers are matched.
  void send_raw(std::string line);

  // Waits until `done()` holds, the program has exited, or `timeout` passed; `done` is asked
  // again at each line the plugin writes, and every `poll` when one is given. Its last answer.
  boost::asio::awaitable<bool> until(std::function<bool()> done, std::chrono::milliseconds timeout,
                                     std::optional<std::chrono::milliseconds> poll = {});
  // Waits for the answer to the raw request with this id (exactly that JSON value), for at most
  // `timeout`; nullptr when none came.
  boost::asio::awaitable<const SeenAnswer*> answer_to(const boost::json::value& id,
                                                      std::chrono::milliseconds timeout);
  // The answer whose id is exactly `id`, when it came.
  const SeenAnswer* find_answer(const boost::json::value& id) const;

  // What was seen, in order.
  std::size_t lines_seen() const noexcept { return lines_; }
  const std::vector<SeenAnswer>& answers() const noexcept { return answers_; }
  const std::vector<Fault>& stdout_faults() const noexcept { return stdout_faults_; }
  const std::vector<Fault>& answer_faults() const noexcept { return answer_faults_; }
  // Answers to no call of ours, or to a notification, from line `since` on; not those that
  // answer the bench's answer to one of the plugin's own calls (answers_to_answers).
  std::vector<const SeenAnswer*> stray_answers(std::size_t since) const;
  // Answers whose id is that of one of the plugin's own calls: it answered the bench's answer
  // as if it were a request.
  std::vector<const SeenAnswer*> answers_to_answers() const;
  const std::vector<CallRecord>& calls() const noexcept { return calls_; }
  // Calls the plugin made that the bench has not answered yet.
  std::size_t calls_unanswered() const noexcept { return owed_.size(); }

  bool exited() const noexcept { return exit_.has_value(); }
  const std::optional<runtime::ProgramEnd>& exit_status() const noexcept { return exit_; }
  // Whether the leader process has ended (a zombie counts), even before `exited` is delivered.
  bool leader_ended() const;
  std::optional<int> pid() const { return program_ ? program_->pid() : std::nullopt; }
  // What the journal's "started:" line says of it: "pid 4120, ./guard", "dist/plugin.mjs in the
  // sandbox".
  std::string describe() const { return program_ ? program_->describe() : std::string(); }
  // Whether it runs in Escouade's sandbox (run.js, run.wasm), in a helper process of the host's.
  bool sandboxed() const noexcept {
    return kind_ == runtime::RunKind::js || kind_ == runtime::RunKind::wasm;
  }
  // Its last lines of standard error (at most 5), for a reason.
  std::string last_stderr() const;

  // Every line both ways goes to `trace` too (masked), when given.
  void trace_to(std::shared_ptr<TraceFile> trace) { trace_ = std::move(trace); }
  // The check whose messages are sent from now on (each line sent is remembered with it).
  void checking(std::string check) { check_ = std::move(check); }
  // A line sent, with the check that sent it and the method of its first message.
  struct Sent {
    std::string check;
    std::string method;
  };
  // Who sent the line that begins with `turn` (a sandboxed instance names the line of the turn
  // it was stopped in, cut: ProgramEnd::turn): the last such line's, or nullopt.
  std::optional<Sent> sent_by(std::string_view turn) const;

 private:
  struct Issued {
    std::string method;
    bool raw = false;
  };

  void incoming(std::string_view line);
  void outgoing(std::string_view line);
  void note_answer(proto::Message&& m, bool in_batch, std::string_view line);
  void note_call(const proto::Message& m);
  void wake();
  // What was sent: remembered for sent_by, and the decisions it asks counted (a sandboxed
  // instance has the shorter turn while it holds one, as under the supervisor).
  void sent(std::string_view line, const proto::Parsed& parsed, bool raw);
  void decisions_changed();

  boost::asio::any_io_executor executor_;
  std::shared_ptr<services::ServedPlugin> plugin_;
  runtime::RunKind kind_;
  std::unique_ptr<runtime::Program> program_;  // null when no factory runs its kind
  std::unique_ptr<rpc::Session> session_;
  std::unique_ptr<services::RunScope> run_;  // what the plugin opens goes with the link
  proto::Decoder in_decoder_;
  proto::Decoder out_decoder_;
  proto::SchemaValidator validator_;

  std::size_t lines_ = 0;
  std::map<std::string, Issued> issued_;  // by the id's JSON text
  std::vector<SeenAnswer> answers_;
  std::vector<Fault> stdout_faults_;
  std::vector<Fault> answer_faults_;
  std::vector<CallRecord> calls_;
  std::map<std::string, std::size_t> owed_;  // a call of the plugin's, by id text: its record
  std::vector<std::string> stderr_tail_;
  std::optional<runtime::ProgramEnd> exit_;

  // The one wait in progress (the checks run one after the other).
  std::function<void()> waiter_;

  std::shared_ptr<TraceFile> trace_;
  std::string check_;
  struct SentLine {
    Sent by;
    std::string start;  // its first kSentKept bytes
  };
  static constexpr std::size_t kSentKept = 300;  // as much as a sandbox's end names
  std::vector<SentLine> sent_;
  std::map<std::string, bool> decisions_open_;  // permissions/decide asked, by id: sent raw
};

}  // namespace escouade::conformance
