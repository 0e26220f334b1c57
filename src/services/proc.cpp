#include "services/proc.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/lifeline.hpp"
#include "base/quote.hpp"
#include "base/utf8.hpp"
#include "platform/process.hpp"
#include "platform/process_tree.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "runtime/process_program.hpp"
#include "services/net.hpp"

namespace escouade::services {

namespace asio = boost::asio;
namespace method = proto::method;
using proto::ErrorCode;
using Descriptor = asio::posix::stream_descriptor;

namespace {

// While the plugin has more than kProcOutWindow bytes waiting for its input, how often to look
// again whether it took them.
constexpr std::chrono::milliseconds kBacklogPoll{5};
// Without a pidfd, how often to look whether the program ended.
constexpr std::chrono::milliseconds kExitPoll{20};
constexpr std::size_t kReadBytes = 64 * 1024;

Error refused(std::string message) {
  return make_error(ErrorCode::refused, std::move(message));
}
Error invalid(std::string message) {
  return make_error(ErrorCode::invalid_params, std::move(message));
}
Error failed(std::string message) {
  return make_error(ErrorCode::failed, std::move(message));
}

// A word of a command as the journal writes it: as it is when it is plain, else quoted as JSON
// quotes a string (a space, a quote, a newline or a byte that is not UTF-8 cannot hide).
std::string word(std::string_view w) {
  const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_-./:=@%+,").find(c) != std::string_view::npos;
  });
  return plain ? std::string(w) : quote_name(w);
}

// The command as the journal writes it, word after word.
std::string command_line(const std::string& command, const std::vector<std::string>& args) {
  std::string out = word(command);
  for (const auto& a : args)
    out += " " + word(a);
  return out;
}

std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name) {
  for (const auto& kv : env)
    if (kv.size() > name.size() && kv.compare(0, name.size(), name) == 0 && kv[name.size()] == '=')
      return kv.substr(name.size() + 1);
  return std::nullopt;
}

// The file that runs: the first of `folders` holding an executable regular file of that name.
// On a worker: it reads the disk.
std::optional<std::string> find_program(const std::string& name,
                                        const std::vector<std::string>& folders) {
  for (const auto& folder : folders) {
    std::string candidate = folder;
    if (!candidate.empty() && candidate.back() != '/') candidate += '/';
    candidate += name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return std::nullopt;
}

// Text for proc/out: `data` up to its last whole character, the rest left in `carry` for the
// next read; what is not UTF-8 becomes U+FFFD (the protocol carries text only).
std::string take_text(std::string& carry, std::string_view piece, bool at_end) {
  std::string data = std::move(carry);
  data += piece;
  carry.clear();
  if (!at_end) {
    const std::size_t whole = utf8_complete_prefix(data);
    carry = data.substr(whole);
    data.resize(whole);
  }
  if (!is_valid_utf8(data)) data = to_valid_utf8(data);
  return data;
}

struct Program {
  std::int64_t id = 0;
  std::string line;  // its command, as the journal says it
  platform::Spawned child;
  std::unique_ptr<Descriptor> in, out, err, pidfd;
  std::unique_ptr<asio::steady_timer> poll;    // without a pidfd
  std::unique_ptr<asio::steady_timer> linger;  // its pipes' bound once it ended
  std::string carry[2];                        // stdout's and stderr's cut characters
  // proc/write: what waits to be written to its input, and whether a write is under way.
  std::string input;
  std::string writing;
  bool input_closing = false;  // close asked: its input ends once `input` is written
  bool input_closed = false;
  bool killed = false;       // proc/kill: its code is null
  bool reaped = false;       // its pid is no longer its own (or the run's end took it over)
  bool ended = false;        // its end was seen
  bool tree_ending = false;  // its leader ended: its tree is being ended, then it is reaped
  bool gone = false;         // the run ended: nothing more is said of it
  bool lingered = false;     // its pipes stayed open past the bound after its end: not read more
  std::optional<platform::ExitStatus> status;
};
using ProgramPtr = std::shared_ptr<Program>;

// The proc/* of one run. Held by its RunScope: when the run ends, every program still running
// ends with its tree. Thread: the host's.
class RunPrograms {
 public:
  RunPrograms(const ProcContext& ctx, PluginChannel channel, std::shared_ptr<ServedPlugin> plugin)
      : ctx_(ctx), channel_(std::move(channel)), plugin_(std::move(plugin)) {}
  ~RunPrograms() {
    lifeline_.end();
    for (auto& [id, p] : programs_)
      end_with_run(*p);
  }
  RunPrograms(const RunPrograms&) = delete;
  RunPrograms& operator=(const RunPrograms&) = delete;

  void spawn(const proto::ProcSpawnParams& p, rpc::Reply<method::ProcSpawn> reply);
  void write(const proto::ProcWriteParams& p, rpc::Reply<method::ProcWrite> reply);
  void kill(const proto::ProcRef& p, rpc::Reply<method::ProcKill> reply);

 private:
  struct Launch {
    std::vector<std::string> argv;
    std::filesystem::path cwd;
    std::vector<std::string> env;
    std::vector<std::string> folders;  // where its name is looked up
    std::string where;                 // "in /w/repo (agent \"a1\")", for the journal
  };
  Result<Launch> prepare(const proto::ProcSpawnParams& p) const;
  static platform::SpawnRequest request(const Launch& launch, const std::string& found);
  void started(Launch launch, Result<platform::Spawned> spawned,
               rpc::Reply<method::ProcSpawn>& reply);
  asio::awaitable<void> run(ProgramPtr p);
  asio::awaitable<void> pump(ProgramPtr p, int which);
  asio::awaitable<void> watch_end(ProgramPtr p);
  void write_next(const ProgramPtr& p);
  void forget(int pid);
  void end_with_run(Program& p);
  // Ends the tree of `pid` (not reaped), off this thread when the host has a tree ender; `then`
  // on this thread afterwards.
  void end_tree(int pid, std::function<void()> then);
  Program* find(std::int64_t id);

  template <class Reply>
  void answer_error(const char* m, const Error& e, Reply& reply) {
    journal_error(*plugin_->journal, m, e);
    reply.error(e);
  }

  ProcContext ctx_;
  PluginChannel channel_;
  std::shared_ptr<ServedPlugin> plugin_;
  std::map<std::int64_t, ProgramPtr> programs_;  // running, or their end not yet told
  std::size_t starting_ = 0;                     // found on the PATH by the workers now
  std::int64_t next_id_ = 1;
  Lifeline lifeline_;
};

Result<RunPrograms::Launch> RunPrograms::prepare(const proto::ProcSpawnParams& p) const {
  const std::vector<std::string> args = p.args.value_or(std::vector<std::string>{});
  if (auto why = policy::program_name_refusal(p.command))
    return refused(quote_name(p.command) + ": " + *why);
  if (auto why = plugin_->commands.refusal(p.command, args)) return refused(*why);

  const policy::Agent* agent = nullptr;
  if (p.agent) {
    agent = ctx_.agents ? ctx_.agents->find(*p.agent) : nullptr;
    if (!agent) return refused("no agent " + quote_name(*p.agent) + ": the app has not set it");
  }
  const auto fenced = [&](const std::string& project) {
    const auto& book = ctx_.agents->projects;
    auto it = book.find(project);
    const bool is_private = it == book.end() || it->second.is_private;
    return is_private && !plugin_->on_for(project);
  };
  // An agent of a private project lends neither its folder nor its environment to a plugin that
  // is not on for that project.
  if (agent && fenced(agent->project))
    return refused("agent " + quote_name(agent->key) +
                   " works in a private project (« Projet privé ») where the plugin is not on");

  Launch launch;
  if (!p.dir) {
    if (plugin_->temp_folder.empty())
      return failed("the plugin has no temporary folder (the host has no data folder)");
    launch.cwd = plugin_->temp_folder;
    launch.where = "in its temporary folder";
  } else if (*p.dir == proto::ProcSpawnParamsDir::agent) {
    if (!agent) return invalid("params.agent: the agent whose folder it runs in, for dir agent");
    if (!agent->agent) return refused("agent " + quote_name(agent->key) + " has no folder");
    launch.cwd = *agent->agent;
    launch.where = "in " + launch.cwd.string() + " (agent " + quote_name(agent->key) + ")";
  } else {
    const std::string project = p.project ? *p.project : agent ? agent->project : std::string();
    if (project.empty())
      return invalid("params.project: the project it runs in, or an agent that works in one");
    if (fenced(project))
      return refused("project " + quote_name(project) +
                     " is private (« Projet privé ») and the plugin is not on for it");
    auto it = ctx_.agents->projects.find(project);
    if (it == ctx_.agents->projects.end() || it->second.folder.empty())
      return refused("project " + quote_name(project) + " has no folder");
    launch.cwd = it->second.folder;
    launch.where = "in " + launch.cwd.string() + " (project " + quote_name(project) + ")";
  }

  std::map<std::string, std::string, std::less<>> extra;
  if (p.env) {
    for (const auto& [name, value] : *p.env) {
      if (auto why = policy::env_entry_form_problem(name, value))
        return invalid("params.env " + quote_name(name) + ": " + *why);
      if (auto why = policy::env_refusal(name))
        return refused("env " + quote_name(name) + ": " + *why);
      extra.emplace(name, value);
    }
  }
  launch.env = policy::program_environment(agent ? agent->env : ctx_.base_env, extra);
  const auto path = env_value(launch.env, "PATH");
  if (!path || path->empty())
    return refused(std::string(agent ? "agent " + quote_name(agent->key) : "the app") +
                   " has no PATH to find " + quote_name(p.command) + " on");
  launch.folders = policy::search_folders(*path);
  if (launch.folders.empty())
    return refused("the PATH " + quote_name(*path) + " has no absolute folder to find " +
                   quote_name(p.command) + " in");
  launch.argv.push_back(p.command);
  launch.argv.insert(launch.argv.end(), args.begin(), args.end());
  return launch;
}

// What a worker did: the file found on the PATH, and the child started from it.
struct Started {
  std::optional<std::string> found;
  Result<platform::Spawned> child = make_error(ErrorCode::failed, "not started");
};

void RunPrograms::spawn(const proto::ProcSpawnParams& p, rpc::Reply<method::ProcSpawn> reply) {
  auto launch = prepare(p);
  if (!launch) return answer_error("proc/spawn", launch.error(), reply);
  if (programs_.size() + starting_ >= kProgramsAtOnce) {
    return answer_error(
        "proc/spawn",
        refused(std::to_string(kProgramsAtOnce) +
                " programs already run, the most a plugin may have at once; one must end first"),
        reply);
  }
  platform::ignore_default_sigpipe();  // a program that closed its input: EPIPE, not the end
  ++starting_;
  auto held = std::make_shared<rpc::Reply<method::ProcSpawn>>(std::move(reply));
  auto shared = std::make_shared<Launch>(std::move(*launch));
  runtime::TreeEnder* ender = ctx_.processes->ender;
  // Found and started off the host's thread: the lookup reads the disk, and the start waits for
  // the program's exec. Without a tree ender (a host of tests), only the lookup: the start then
  // runs on the host's thread, where the rounds of orphans run too.
  ctx_.workers->run(
      plugin_->manifest.id,
      [shared, ender] {
        Started s;
        s.found = find_program(shared->argv[0], shared->folders);
        if (s.found && ender) {
          ender->start_child([&] {
            s.child = platform::spawn(request(*shared, *s.found));
            return s.child ? s.child->pid : -1;
          });
        }
        return s;
      },
      [this, alive = lifeline_.token(), held, shared, ender](Started s) mutable {
        if (!alive || !channel_.open()) {
          // The run ended meanwhile: the child goes at once, with its tree.
          if (s.child && ender) {
            platform::close_fds(*s.child);
            // Known as starting until reaped there, so that no round of orphans takes it.
            ender->end_and_reap(s.child->pid, [ender, pid = s.child->pid] { ender->adopted(pid); });
          }
          return;
        }
        --starting_;
        if (!s.found) {
          std::string path;
          for (const auto& f : shared->folders)
            path += (path.empty() ? "" : ":") + f;
          return answer_error(
              "proc/spawn",
              failed(word(shared->argv[0]) + " is not found on the PATH (" + path + ")"), *held);
        }
        if (!ender) s.child = platform::spawn(request(*shared, *s.found));
        started(std::move(*shared), std::move(s.child), *held);
      });
}

platform::SpawnRequest RunPrograms::request(const Launch& launch, const std::string& found) {
  platform::SpawnRequest req;
  req.argv = launch.argv;
  req.executable = found;  // exactly the file found: PATH is not searched again
  req.cwd = launch.cwd;
  req.env = launch.env;
  return req;
}

void RunPrograms::started(Launch launch, Result<platform::Spawned> spawned,
                          rpc::Reply<method::ProcSpawn>& reply) {
  const std::string line =
      command_line(launch.argv[0], {launch.argv.begin() + 1, launch.argv.end()});
  if (!spawned)
    return answer_error("proc/spawn", failed(line + ": " + spawned.error().message), reply);

  auto p = std::make_shared<Program>();
  p->id = next_id_++;
  p->line = line;
  p->child = *spawned;
  auto& known = *ctx_.processes;
  known.known_children.insert(p->child.pid);
  if (known.ender) known.ender->adopted(p->child.pid);
  if (known.reaper) {
    const int pipes[] = {p->child.stdin_fd, p->child.stdout_fd, p->child.stderr_fd};
    (void)known.reaper->add(p->child.pid, pipes);
  }
  p->in = std::make_unique<Descriptor>(ctx_.host, p->child.stdin_fd);
  p->out = std::make_unique<Descriptor>(ctx_.host, p->child.stdout_fd);
  p->err = std::make_unique<Descriptor>(ctx_.host, p->child.stderr_fd);
  if (p->child.pidfd >= 0)
    p->pidfd = std::make_unique<Descriptor>(ctx_.host, p->child.pidfd);
  else
    p->poll = std::make_unique<asio::steady_timer>(ctx_.host);
  programs_[p->id] = p;
  plugin_->journal->info("proc/spawn " + line + " " + launch.where + ": program " +
                         std::to_string(p->id) + ", pid " + std::to_string(p->child.pid));
  reply.result(proto::ProcSpawnResult{p->id});
  asio::co_spawn(ctx_.host, run(p), asio::detached);
}

asio::awaitable<void> RunPrograms::run(ProgramPtr p) {
  using namespace asio::experimental::awaitable_operators;
  co_await (pump(p, 0) && pump(p, 1) && watch_end(p));
  if (p->gone) co_return;
  // Its output is all told; then its end.
  proto::ProcExitParams exit;
  exit.proc = p->id;
  if (!p->killed && p->status && p->status->code) exit.code = *p->status->code;
  const std::string how = p->killed ? "killed" : p->status ? p->status->describe() : "ended";
  plugin_->journal->info("program " + std::to_string(p->id) + " (" + p->line + ") ended: " + how);
  programs_.erase(p->id);
  channel_.notify<method::ProcExit>(exit);
}

asio::awaitable<void> RunPrograms::pump(ProgramPtr p, int which) {
  Descriptor* d = which == 0 ? p->out.get() : p->err.get();
  const auto stream =
      which == 0 ? proto::ProcOutParamsStream::stdout_ : proto::ProcOutParamsStream::stderr_;
  std::string buf(kReadBytes, '\0');
  asio::steady_timer wait(ctx_.host);
  for (;;) {
    // The plugin has not taken what it was sent: the program waits on its writes.
    while (!p->gone && !p->lingered && channel_.open() &&
           channel_.input_backlog() > kProcOutWindow) {
      wait.expires_after(kBacklogPoll);
      co_await wait.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (p->gone) co_return;
    if (p->lingered) {
      // Its end came 2 s ago and something out of its tree still holds the pipe: what is in
      // the pipe now is its output's last, read without waiting for more.
      boost::system::error_code ec;
      d->non_blocking(true, ec);
      for (bool more = true; more;) {
        const std::size_t n = d->read_some(asio::buffer(buf), ec);
        more = !ec;
        std::string text = take_text(p->carry[which], std::string_view(buf.data(), n), !more);
        if (!text.empty())
          channel_.notify<method::ProcOut>(proto::ProcOutParams{p->id, stream, text});
      }
      co_return;
    }
    auto [ec, n] =
        co_await d->async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
    if (p->gone) co_return;
    if (ec == asio::error::operation_aborted && p->lingered) {
      p->carry[which].append(buf.data(), n);
      continue;  // what is left in the pipe, read above
    }
    const bool at_end = static_cast<bool>(ec);
    std::string text = take_text(p->carry[which], std::string_view(buf.data(), n), at_end);
    if (!text.empty()) channel_.notify<method::ProcOut>(proto::ProcOutParams{p->id, stream, text});
    if (at_end) co_return;
  }
}

asio::awaitable<void> RunPrograms::watch_end(ProgramPtr p) {
  // Its end: the leader exited, or was killed.
  for (;;) {
    if (p->pidfd) {
      auto [ec] =
          co_await p->pidfd->async_wait(Descriptor::wait_read, asio::as_tuple(asio::use_awaitable));
      if (p->gone) co_return;
      if (!ec) break;
    } else {
      p->poll->expires_after(kExitPoll);
      co_await p->poll->async_wait(asio::as_tuple(asio::use_awaitable));
      if (p->gone) co_return;
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(p->child.pid), &info, WEXITED | WNOHANG | WNOWAIT) ==
              0 &&
          info.si_pid != 0)
        break;
    }
  }
  // What it started and left behind ends with it, so that its pipes close; its pid stays its
  // own (not reaped) until its tree is ended.
  asio::steady_timer done(ctx_.host, asio::steady_timer::time_point::max());
  // The frame waits on `done` until this runs, whatever happened meanwhile.
  p->tree_ending = true;
  end_tree(p->child.pid, [&done] { done.cancel(); });
  co_await done.async_wait(asio::as_tuple(asio::use_awaitable));
  if (p->gone) co_return;
  p->status = platform::try_wait(p->child.pid);
  p->reaped = true;
  p->ended = true;
  forget(p->child.pid);
  // Something that left its tree may still hold its pipes: told anyway after a bound.
  p->linger = std::make_unique<asio::steady_timer>(ctx_.host, ctx_.processes->linger);
  p->linger->async_wait([p](boost::system::error_code ec) {
    if (ec || p->gone) return;
    p->lingered = true;  // a pump waiting on the plugin's input stops too
    boost::system::error_code ignored;
    p->out->cancel(ignored);
    p->err->cancel(ignored);
  });
  if (p->in && !p->input_closed) {
    boost::system::error_code ignored;
    p->in->close(ignored);
    p->input_closed = true;
  }
}

void RunPrograms::forget(int pid) {
  auto& ctx = *ctx_.processes;
  ctx.known_children.erase(pid);
  if (ctx.reaper) (void)ctx.reaper->remove(pid);
  // What it started that left its group came to the host: ended too.
  if (ctx.ender) ctx.ender->end_orphans(ctx.known_children, nullptr);
}

void RunPrograms::end_with_run(Program& p) {
  p.gone = true;
  boost::system::error_code ignored;
  for (auto* d : {p.in.get(), p.out.get(), p.err.get(), p.pidfd.get()})
    if (d) d->close(ignored);
  if (p.poll) p.poll->cancel();
  if (p.linger) p.linger->cancel();
  if (p.reaped) return;
  p.reaped = true;
  auto* ctx = ctx_.processes;
  const int pid = p.child.pid;
  const auto forget = [ctx, pid] {
    ctx->known_children.erase(pid);
    if (ctx->reaper) (void)ctx->reaper->remove(pid);
  };
  if (ctx->ender) {
    // Known, and watched by the reaper, until it is reaped there.
    ctx->ender->end_and_reap(pid, forget);
    return;
  }
  platform::kill_tree(pid);
  platform::wait_exit(p.child);
  forget();
}

void RunPrograms::end_tree(int pid, std::function<void()> then) {
  if (ctx_.processes->ender) {
    ctx_.processes->ender->end(pid, std::move(then));
    return;
  }
  // No tree ender (a host of tests): on this thread, the completion later, as the ender's is.
  platform::kill_tree(pid);
  if (then) asio::post(ctx_.host, std::move(then));
}

Program* RunPrograms::find(std::int64_t id) {
  auto it = programs_.find(id);
  return it == programs_.end() ? nullptr : it->second.get();
}

void RunPrograms::write(const proto::ProcWriteParams& w, rpc::Reply<method::ProcWrite> reply) {
  auto it = programs_.find(w.proc);
  if (it == programs_.end()) {
    return answer_error("proc/write",
                        w.proc > 0 && w.proc < next_id_
                            ? failed("program " + std::to_string(w.proc) + " has ended")
                            : invalid("params.proc: no program " + std::to_string(w.proc)),
                        reply);
  }
  const ProgramPtr& p = it->second;
  const std::string data = w.data.value_or("");
  if (p->input_closed || p->input_closing || p->ended)
    return answer_error("proc/write",
                        failed("the input of program " + std::to_string(p->id) + " is closed"),
                        reply);
  if (p->input.size() + p->writing.size() + data.size() > kProcInputBytes) {
    return answer_error("proc/write",
                        failed("program " + std::to_string(p->id) +
                               " has not read what it was given: more than 1 MiB would wait"),
                        reply);
  }
  p->input += data;
  if (w.close.value_or(false)) p->input_closing = true;
  write_next(p);
  reply.result(nullptr);
}

void RunPrograms::write_next(const ProgramPtr& p) {
  if (!p->writing.empty() || p->gone || p->input_closed) return;
  if (p->input.empty()) {
    if (p->input_closing) {
      boost::system::error_code ignored;
      p->in->close(ignored);
      p->input_closed = true;
    }
    return;
  }
  p->writing = std::move(p->input);
  p->input.clear();
  asio::async_write(
      *p->in, asio::buffer(p->writing),
      [this, p, alive = lifeline_.token()](boost::system::error_code ec, std::size_t) {
        if (!alive || p->gone) return;
        p->writing.clear();
        if (ec) {
          // It closed its input or ended: what waits is dropped with it.
          p->input.clear();
          p->input_closed = true;
          return;
        }
        write_next(p);
      });
}

void RunPrograms::kill(const proto::ProcRef& k, rpc::Reply<method::ProcKill> reply) {
  Program* p = find(k.proc);
  if (!p) {
    return answer_error("proc/kill",
                        k.proc > 0 && k.proc < next_id_
                            ? failed("program " + std::to_string(k.proc) + " has ended")
                            : invalid("params.proc: no program " + std::to_string(k.proc)),
                        reply);
  }
  // Once its leader ended its tree is already being ended and its pid soon reaped: a second
  // kill_tree could reach a pid given to another process.
  if (!p->ended && !p->killed && !p->tree_ending) {
    p->killed = true;
    plugin_->journal->info("proc/kill program " + std::to_string(p->id) + " (" + p->line + ")");
    // The whole tree; its end then comes by the pidfd, and proc/exit with a null code.
    end_tree(p->child.pid, nullptr);
  }
  reply.result(nullptr);
}

}  // namespace

void serve_proc(rpc::Session& session, RunScope& run, const ProcContext& ctx,
                std::shared_ptr<ServedPlugin> plugin) {
  RunPrograms& programs =
      run.hold(std::make_unique<RunPrograms>(ctx, run.channel(), std::move(plugin)));
  session.serve<method::ProcSpawn>(
      [p = &programs](const proto::ProcSpawnParams& params, rpc::Reply<method::ProcSpawn> r) {
        p->spawn(params, std::move(r));
      });
  session.serve<method::ProcWrite>(
      [p = &programs](const proto::ProcWriteParams& params, rpc::Reply<method::ProcWrite> r) {
        p->write(params, std::move(r));
      });
  session.serve<method::ProcKill>(
      [p = &programs](const proto::ProcRef& params, rpc::Reply<method::ProcKill> r) {
        p->kill(params, std::move(r));
      });
}

}  // namespace escouade::services
