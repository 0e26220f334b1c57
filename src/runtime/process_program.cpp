#include "runtime/process_program.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/write_now.hpp"
#include "platform/process_tree.hpp"
#include "platform/write_batch.hpp"
#include "protocol/gen/errors.hpp"
#include "runtime/line_queue.hpp"
#include "runtime/pipe_reader.hpp"
#include "runtime/stderr_lines.hpp"

namespace escouade::runtime {

namespace asio = boost::asio;
using Descriptor = asio::posix::stream_descriptor;

namespace {

// What the host holds for a plugin that does not read its input: bytes written and not yet
// taken by the pipe (docs/SECURITY.md, "bounded"). 4 MiB: far above what a plugin that reads
// leaves waiting, and at most 16 answers of files/read's largest.
constexpr std::size_t kInputBacklog = 4u * 1024u * 1024u;
// Without a pidfd (kernels before 5.3), how often to look whether the process ended.
constexpr std::chrono::milliseconds kExitPoll{50};
// What a write's buffer may keep between writes (a longer line's is given back once written),
// and the most bytes of queued lines one write takes: what waits beyond stays in the queue,
// where droppable lines may still go.
constexpr std::size_t kKeptWriteRoom = 256u * 1024u;

}  // namespace

// Everything the asynchronous handlers touch. They co-own it (shared_ptr), so it outlives the
// ProcessProgram as long as one of them is queued; `owner` tells them whether the ProcessProgram
// still exists, and none of them delivers an event once it does not (docs/lifetimes.md).
struct ProcessProgram::State {
  asio::any_io_executor executor;
  ProgramSpec spec;
  ProcessContext& context;
  ProgramEvents events;
  platform::Spawned child;
  Lifeline::Token owner;  // the ProcessProgram's
  bool running = false;   // started, not yet reaped
  bool finished = false;  // `exited` delivered
  bool out_done = false;  // its output reached its end (or failed)
  bool err_done = false;
  int killing = 0;         // kills of its tree under way on the TreeEnder: not reaped meanwhile
  bool exit_seen = false;  // its exit came during one
  std::optional<platform::ExitStatus> status;  // reaped, `exited` not yet delivered
  std::unique_ptr<asio::steady_timer> linger;  // bounds the wait for the pipes' ends
  std::unique_ptr<Descriptor> in, err, pidfd;
  std::unique_ptr<PipeReader> out;  // its answers' path: one read a message (pipe_reader.hpp)
  std::unique_ptr<asio::steady_timer> poll;
  proto::LineFramer framer;
  StderrLines stderr_lines;
  // Lines to write: `pending` gathers what comes while `in_flight` is being written, so that a
  // burst of lines leaves in one write instead of one system call a line. Bounded (what the
  // host holds for one plugin is): past kInputBacklog bytes not yet taken by the plugin, its
  // stdout is not read until half of that is (back-pressure, as a pipe does), and droppable
  // lines (facts) go, the oldest first (LineQueue).
  LineQueue pending{kInputBacklog};
  // What is being written: lines taken from `pending`, joined into the room the last write kept.
  // That room was a new buffer each write, the size of all that waited (megabytes, for a plugin
  // that reads slowly), given back after the write and its pages faulted in again for the next
  // (bench_host facts 10, pinned: 48,800 page faults; issue 32).
  std::string in_flight;
  // Of what waits to be written, the bytes write_first() gave: not counted in backlog().
  std::size_t uncounted = 0;
  bool writing = false;
  bool write_direct = false;  // its input is non-blocking: queue_line may write it at once
  // Its output is being handed on (the lines of a read, and all they set off): a request written
  // meanwhile does not read its answer at once (take_answer_now), so lines are never handed on
  // from within the handing on of others.
  bool delivering = false;
  int answer_misses = 0;       // reads at once of an answer that found none, in a row (at most 6)
  int answers_skipped = 0;     // requests left before the next read at once is tried
  bool output_paused = false;  // its stdout is not read while its input is full
  bool full = false;           // its input filled, and has not drained to half since
  // The host's requests written less the lines it has written since (each line taken for an
  // answer: what else it writes makes the count low, never high), at least 0. Past one, the
  // next request waits for the end of the handler's turn, with the others of that turn
  // (queue_line).
  std::size_t answers_awaited = 0;
  bool flush_posted = false;  // that end of the turn is posted

  std::size_t backlog() const noexcept { return pending.bytes() + in_flight.size() - uncounted; }
  // Bytes being written, less those of write_first() (which leave in the first write).
  std::size_t in_flight_counted() const noexcept {
    return in_flight.size() > uncounted ? in_flight.size() - uncounted : 0;
  }
  // Not zeroed: only what a read put there is used. Zeroing them cost each start an 80 KiB
  // memset (callgrind, bench_host cold: 82k of the 177k host instructions from the call to its
  // answer).
  std::array<char, 64 * 1024> out_buf;
  std::array<char, 16 * 1024> err_buf;

  State(asio::any_io_executor ex, ProgramSpec s, ProcessContext& c, Lifeline::Token o)
      : executor(std::move(ex)),
        spec(std::move(s)),
        context(c),
        owner(std::move(o)),
        framer(c.max_line_bytes) {}

  void output(std::string_view bytes) {
    framer.feed(
        bytes,
        [&](std::string_view line) {
          if (answers_awaited > 0) --answers_awaited;
          if (events.output_line) events.output_line(line);
        },
        [&](std::size_t limit) {
          if (events.output_too_long) events.output_too_long(limit);
        });
  }

  void error_text(std::string_view bytes, bool at_end) {
    stderr_lines.feed(
        bytes, at_end,
        [&](std::string_view line) {
          if (events.error_line) events.error_line(line);
        },
        [&](std::string_view piece) {
          if (events.error_piece) {
            events.error_piece(piece);
          } else if (events.error_line) {
            events.error_line(piece);
          }
        });
  }
};

namespace {

using StatePtr = std::shared_ptr<ProcessProgram::State>;

}  // namespace

// {"jsonrpc":"2.0","id":<n>,"method":... and nothing else.
bool is_request_line(std::string_view line) {
  constexpr std::string_view kHead = R"({"jsonrpc":"2.0","id":)";
  constexpr std::string_view kMethod = R"(,"method":)";
  if (!line.starts_with(kHead)) return false;
  std::size_t i = kHead.size();
  while (i < line.size() && line[i] >= '0' && line[i] <= '9')
    ++i;
  return i > kHead.size() && line.substr(i).starts_with(kMethod);
}

ProcessProgram::ProcessProgram(asio::any_io_executor executor, ProgramSpec spec,
                               ProcessContext& context)
    : state_(std::make_shared<State>(std::move(executor), std::move(spec), context,
                                     lifeline_.token())) {}

ProcessProgram::~ProcessProgram() {
  lifeline_.end();
  auto& s = *state_;
  if (s.running) {
    s.running = false;
    ProcessContext& ctx = s.context;
    const int pid = s.child.pid;
    const auto forget = [&ctx, pid] {
      ctx.known_children.erase(pid);
      if (ctx.reaper) (void)ctx.reaper->remove(pid);
    };
    if (ctx.ender) {
      // Known, and watched by the reaper, until it is reaped there.
      ctx.ender->end_and_reap(pid, forget);
    } else {
      platform::kill_tree(pid);
      platform::wait_exit(s.child);
      forget();
    }
  }
  for (auto* d : {s.in.get(), s.err.get(), s.pidfd.get()}) {
    if (d) {
      boost::system::error_code ignored;
      d->close(ignored);
    }
  }
  if (s.out) s.out->close();
  if (s.poll) s.poll->cancel();
}

std::optional<int> ProcessProgram::pid() const {
  if (!state_->running) return std::nullopt;
  return state_->child.pid;
}

std::string ProcessProgram::describe() const {
  std::string command;
  for (const auto& a : state_->spec.command)
    command += (command.empty() ? "" : " ") + a;
  if (!state_->running) return command;
  return "pid " + std::to_string(state_->child.pid) + ", " + command;
}

std::optional<std::uint64_t> ProcessProgram::memory_bytes() const {
  if (!state_->running) return std::nullopt;
  return platform::tree_resident_bytes(state_->child.pid);
}

namespace {

void try_finish(const StatePtr& s);

// Its input went past the bound: told once until it drains.
void note_full(const StatePtr& s) {
  if (s->full) return;
  s->full = true;
  if (s->events.input_full) s->events.input_full(s->backlog());
}

void read_output(const StatePtr& s) {
  s->out->async_read_some(asio::buffer(s->out_buf),
                          [s](boost::system::error_code ec, std::size_t n) {
                            if (!s->owner || s->finished) return;
                            if (n > 0) {
                              s->delivering = true;
                              s->output(std::string_view(s->out_buf.data(), n));
                              s->delivering = false;
                            }
                            if (!ec && s->backlog() > kInputBacklog) {
                              // It does not read what it is answered: it may ask nothing
                              // more until it has (back-pressure).
                              s->output_paused = true;
                              note_full(s);
                              return;
                            }
                            if (!ec) return read_output(s);
                            s->out_done = true;
                            try_finish(s);
                          });
}

void read_errors(const StatePtr& s) {
  s->err->async_read_some(asio::buffer(s->err_buf),
                          [s](boost::system::error_code ec, std::size_t n) {
                            if (!s->owner || s->finished) return;
                            if (n > 0) s->error_text(std::string_view(s->err_buf.data(), n), false);
                            if (!ec) return read_errors(s);
                            s->err_done = true;
                            try_finish(s);
                          });
}

void resume_if_drained(const StatePtr& s);

void write_in_flight(const StatePtr& s);

void write_next(const StatePtr& s) {
  if (s->writing || s->pending.empty() || !s->in) return;
  s->writing = true;
  // kKeptWriteRoom bytes at most. One line alone that does not fit the room is taken, not
  // copied: a sandbox helper's start record weighs megabytes.
  s->pending.take_joined(s->in_flight, kKeptWriteRoom);
  write_in_flight(s);
}

// `in_flight` written by an asynchronous write, then what waits behind it.
void write_in_flight(const StatePtr& s) {
  asio::async_write(*s->in, asio::buffer(s->in_flight),
                    [s](boost::system::error_code ec, std::size_t) {
                      if (!s->owner) return;
                      s->writing = false;
                      s->in_flight.clear();
                      // The room of a long line (a start record) is not kept for its life.
                      if (s->in_flight.capacity() > kKeptWriteRoom)
                        std::string().swap(s->in_flight);
                      s->uncounted = 0;  // it was at the front of the first write
                      if (ec) {
                        // It closed its input or ended: what was not written is lost with it.
                        s->pending.clear();
                        s->uncounted = 0;
                      }
                      resume_if_drained(s);
                      if (!ec) write_next(s);
                    });
}

void read_output(const StatePtr& s);

// Once its input holds half the bound or less: its stdout is read again, and the notifications
// dropped meanwhile are told.
void resume_if_drained(const StatePtr& s) {
  if (s->backlog() > kInputBacklog / 2) return;
  if (s->full) {
    s->full = false;
    const std::size_t dropped = s->pending.take_dropped();
    if (s->events.input_drained) s->events.input_drained(dropped);
  }
  if (s->output_paused && !s->out_done && !s->finished) {
    s->output_paused = false;
    read_output(s);
  }
}

// The RequestBurst objects alive on this thread.
thread_local int t_bursts = 0;
// The programs whose request waits for the end of the outermost burst, its line in `in_flight`
// (hold_for_burst), in the order they were asked.
thread_local std::vector<StatePtr> t_held;
// The writes of the last flush_burst, their room kept for the next.
thread_local std::vector<platform::BatchWrite> t_batch;

// A request that would be written at once, during a burst: kept as the line being written
// (`writing`, so that what comes after it waits behind it) until the burst ends and writes every
// held line in one go (flush_burst).
void hold_for_burst(const StatePtr& s, std::string line) {
  s->writing = true;
  if (line.size() <= kKeptWriteRoom) {
    s->in_flight.assign(line);  // its room kept, as write_next keeps it
  } else {
    s->in_flight = std::move(line);
  }
  t_held.push_back(s);
}

// The end of the outermost burst: the held lines written together (platform::write_batch: on
// Linux one system call, so that the plugins they wake take the core once the host has written
// to all of them, not each between two writes). A line a pipe did not take whole goes on by the
// asynchronous write, as a direct write's rest does; a program gone meanwhile loses its line, as
// it loses whatever waits for it.
void flush_burst() {
  // Taken off the thread before anything runs: what the results set off may make a burst of
  // its own. Their rooms are given back at the end, when no such burst kept them.
  std::vector<StatePtr> held;
  held.swap(t_held);
  std::vector<platform::BatchWrite> writes;
  writes.swap(t_batch);
  writes.clear();
  for (auto& s : held) {
    if (s->owner && s->in && s->in->is_open()) {
      writes.push_back(platform::BatchWrite{s->in->native_handle(), s->in_flight.data(),
                                            s->in_flight.size(), 0});
    } else {
      s->writing = false;
      s->in_flight.clear();
      s.reset();
    }
  }
  platform::write_batch(writes);
  std::size_t next = 0;
  for (const auto& s : held) {
    if (!s) continue;
    const ssize_t n = writes[next++].result;
    if (n == static_cast<ssize_t>(s->in_flight.size())) {
      s->writing = false;
      s->in_flight.clear();
      resume_if_drained(s);
      write_next(s);
      continue;
    }
    if (!s->owner || !s->in || !s->in->is_open()) {
      // Ended by what an earlier result set off: the rest of its line is lost with it.
      s->writing = false;
      s->in_flight.clear();
      continue;
    }
    // Part of it, none (its pipe full), or an error the asynchronous write meets again and
    // reports as a direct write's does.
    if (n > 0) s->in_flight.erase(0, static_cast<std::size_t>(n));
    write_in_flight(s);
  }
  held.clear();
  if (t_held.empty()) t_held.swap(held);
  if (t_batch.empty()) t_batch.swap(writes);
}

// Right after a request went out whole: its answer, when it is already in the pipe, is read and
// handed on now, instead of after a return to the loop, its epoll_wait and its read. When the
// host and the plugin share one core, the write gave the plugin the core, and it answered before
// the host went on (a test/echo of 400 bytes, nine times in ten); on two cores it has not yet:
// a read that finds nothing is not tried again for 1, 3, 7... up to 63 requests while they keep
// finding nothing, so that it costs a read in 64 at most. Not while the output is handed on
// (its lines' handlers are on the stack), nor while a read's bytes are on their way, which come
// first; the reader's read still waiting meets what comes next, or the empty pipe, as before.
void take_answer_now(const StatePtr& s) {
  if (t_bursts > 0 || s->delivering || s->finished || s->out_done || s->output_paused || !s->out ||
      !s->out->waiting())
    return;
  if (s->answers_skipped > 0) {
    --s->answers_skipped;
    return;
  }
  ssize_t n;
  do {
    n = ::read(s->out->native_handle(), s->out_buf.data(), s->out_buf.size());
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {  // nothing yet, or its end, which the reader's read meets too
    s->answer_misses = std::min(s->answer_misses + 1, 6);
    s->answers_skipped = (1 << s->answer_misses) - 1;
    return;
  }
  s->answer_misses = 0;
  s->delivering = true;
  s->output(std::string_view(s->out_buf.data(), static_cast<std::size_t>(n)));
  s->delivering = false;
}

// `line` (its own text, or one shared with other programs) behind what waits, then the next write.
// Its input full: droppable lines go, the oldest first (LineQueue), and that is told once.
template <class Text>
void enqueue(const StatePtr& s, Text line, proto::Delivery delivery) {
  const std::size_t dropped = s->pending.dropped();
  s->pending.push(std::move(line), delivery, s->in_flight_counted());
  if (s->pending.dropped() != dropped) note_full(s);
  write_next(s);
}

// `request`: the bytes end with a request of the host's that is_request_line cannot see (a sandbox
// helper's records, write_request).
void queue_line(const StatePtr& s, std::string line, proto::Delivery delivery,
                bool request = false) {
  const bool kept = delivery == proto::Delivery::kept;
  request = request || is_request_line(line);
  if (request && ++s->answers_awaited > 1 && s->in) {
    // Calls in flight (a client with many outstanding, an app's batch): this request leaves at
    // the end of the handler's turn with the others the turn makes, in one write. Written one by
    // one, each woke a plugin on the other core that had emptied the pipe, and each looked for
    // its answer at once and found an older one: a line a batch both ways (256 calls in flight,
    // unpinned: 0.94 writes and 0.95 reads a call; docs/PERFORMANCE.md). A call alone is still
    // written at once.
    s->pending.push(std::move(line), delivery, s->in_flight_counted());
    if (!s->flush_posted) {
      s->flush_posted = true;
      asio::post(s->executor, [s] {
        s->flush_posted = false;
        if (s->owner) write_next(s);
      });
    }
    return;
  }
  if (kept && s->write_direct && !s->writing && s->pending.empty() && s->in) {
    if (t_bursts > 0) {
      hold_for_burst(s, std::move(line));
      return;
    }
    // A request or an answer with nothing ahead of it: written now, by the host's thread, with
    // no completion to run after it. The pipe almost always takes it whole; what it does not
    // take is written as before. Notifications keep the gathering below, where a burst of
    // facts leaves in one write (callgrind and strace, a call: one system call and one handler
    // fewer, docs/PERFORMANCE.md).
    const std::size_t n = write_now(s->in->native_handle(), line);
    if (n == line.size()) {
      if (request) take_answer_now(s);
      return;
    }
    line.erase(0, n);
  }
  enqueue(s, std::move(line), delivery);
}

int fd_of(const PipeReader* r) {
  return r && r->is_open() ? r->native_handle() : -1;
}
int fd_of(Descriptor* d) {
  return d && d->is_open() ? d->native_handle() : -1;
}

// Reads what is in a pipe without waiting, 1 MiB at most (something out of its tree that
// still holds the pipe may write on as fast as the host reads); whether it reached the pipe's
// end (or the pipe was closed). The descriptor is looked up before each read: what `deliver`
// does may close it (the program destroyed), and its number may then be another file's.
template <class Pipe, class F>
bool drain(Pipe* pipe, F&& deliver) {
  std::array<char, 64 * 1024> buf;
  for (int reads = 0; reads < 16; ++reads) {
    const int fd = fd_of(pipe);
    if (fd < 0) return true;
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n > 0) {
      deliver(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n == 0;  // the end, or nothing more now
  }
  return false;
}

// Delivers `exited` once the process is reaped and both pipes reached their end: every line it
// wrote comes first, in order.
void try_finish(const StatePtr& s) {
  if (s->finished || !s->status || !s->out_done || !s->err_done) return;
  if (s->linger) s->linger->cancel();
  s->error_text({}, true);
  if (std::string rest = s->framer.finish(); !rest.empty() && s->events.output_line) {
    s->events.output_line(rest);
  }
  s->finished = true;
  auto exited = s->events.exited;
  if (exited) exited(ProgramEnd::of_process(*s->status));
}

// What a plugin started and left behind came to the host (a subreaper): end it too, so that
// the pipes it may hold close and nothing of the plugin outlives it, whatever it did to its
// environment, session or group (platform::adopted_orphans).
void end_orphans(ProcessContext& ctx) {
  if (ctx.ender) {
    ctx.ender->end_orphans(ctx.known_children, nullptr);
    return;
  }
  for (int round = 0; round < 8; ++round) {
    auto orphans = platform::adopted_orphans(ctx.known_children);
    if (orphans.empty()) break;
    platform::kill_trees(orphans);
    platform::reap_adopted(ctx.known_children);
  }
  platform::reap_adopted(ctx.known_children);
}

void ended(const StatePtr& s, const platform::ExitStatus& status) {
  s->running = false;
  auto& ctx = s->context;
  ctx.known_children.erase(s->child.pid);
  if (ctx.reaper) (void)ctx.reaper->remove(s->child.pid);
  end_orphans(ctx);
  s->status = status;
  // Its stdout's reader counts on epoll to say when the pipe has more, and a hangup reported
  // with the last bytes it read is not reported again (pipe_reader.hpp). Now that the writer
  // may be gone, every read is tried at once, and what is there is read now unless a read's
  // bytes are on their way (they come first).
  if (s->out && !s->out_done) {
    s->out->read_eagerly();
    if (!s->output_paused && s->out->waiting() &&
        drain(s->out.get(), [&](std::string_view b) { s->output(b); })) {
      s->out_done = true;
      s->out->cancel();  // its handler sees out_done, or finished
    }
  }
  // Its pipes end once nothing holds them; something out of reach (a process that left its
  // tree and changed its environment) may hold them longer: after a bound, what was written
  // (1 MiB of each at most) is read without waiting and the end is delivered anyway.
  s->linger = std::make_unique<asio::steady_timer>(s->executor, ctx.linger);
  s->linger->async_wait([s](boost::system::error_code ec) {
    if (ec || !s->owner || s->finished) return;
    if (s->out) s->out->cancel();
    if (s->err) s->err->cancel();
    drain(s->out.get(), [&](std::string_view b) { s->output(b); });
    drain(s->err.get(), [&](std::string_view b) { s->error_text(b, false); });
    s->out_done = s->err_done = true;
    try_finish(s);
  });
  try_finish(s);
}

void watch_exit(const StatePtr& s) {
  if (s->pidfd) {
    s->pidfd->async_wait(Descriptor::wait_read, [s](boost::system::error_code ec) {
      if (!s->owner || ec) return;
      // Not reaped while a kill of its tree is under way: its pid must stay its own.
      if (s->killing > 0) {
        s->exit_seen = true;
        return;
      }
      auto status = platform::try_wait(s->child.pid);
      if (!status) {
        watch_exit(s);  // spurious wake-up
        return;
      }
      ended(s, *status);
    });
    return;
  }
  s->poll->expires_after(kExitPoll);
  s->poll->async_wait([s](boost::system::error_code ec) {
    if (!s->owner || ec) return;
    if (s->killing > 0) {
      s->exit_seen = true;
      return;
    }
    if (auto status = platform::try_wait(s->child.pid)) {
      ended(s, *status);
    } else {
      watch_exit(s);
    }
  });
}

}  // namespace

RequestBurst::RequestBurst() noexcept {
  ++t_bursts;
}

RequestBurst::~RequestBurst() {
  if (--t_bursts == 0 && !t_held.empty()) flush_burst();
}

Result<void> ProcessProgram::start(ProgramEvents events) {
  platform::ignore_default_sigpipe();  // a write to a plugin that just died: EPIPE
  auto& s = *state_;
  if (s.running || s.finished) return Error{proto::ErrorCode::internal, "a program starts once"};
  s.events = std::move(events);
  platform::SpawnRequest req;
  req.argv = s.spec.command;
  req.executable = s.spec.executable;
  req.cwd = s.spec.folder;
  req.env = s.spec.env;
  req.descriptors = s.spec.descriptors;
  auto spawned = platform::spawn(req);
  if (!spawned) return spawned.error();
  s.child = *spawned;
  s.running = true;
  s.context.known_children.insert(s.child.pid);
  if (s.context.reaper) {
    const int pipes[] = {s.child.stdin_fd, s.child.stdout_fd, s.child.stderr_fd};
    (void)s.context.reaper->add(s.child.pid, pipes);
  }
  s.in = std::make_unique<Descriptor>(s.executor, s.child.stdin_fd);
  // queue_line writes to it directly only if it cannot block the host's thread.
  boost::system::error_code nb;
  s.in->non_blocking(true, nb);
  s.write_direct = !nb;
  s.out = std::make_unique<PipeReader>(s.executor, s.child.stdout_fd);
  s.err = std::make_unique<Descriptor>(s.executor, s.child.stderr_fd);
  if (s.child.pidfd >= 0) {
    s.pidfd = std::make_unique<Descriptor>(s.executor, s.child.pidfd);
  } else {
    s.poll = std::make_unique<asio::steady_timer>(s.executor);
  }
  read_output(state_);
  read_errors(state_);
  watch_exit(state_);
  return {};
}

void ProcessProgram::write_first(std::string bytes) {
  auto& s = *state_;
  if (!s.running || s.writing || !s.pending.empty()) return;
  s.uncounted = bytes.size();
  // Kept, and counted against no bound: it is the helper's program, before any line.
  s.pending.push(std::move(bytes), proto::Delivery::kept, 0);
  write_next(state_);
}

void ProcessProgram::write(std::string line, proto::Delivery delivery) {
  if (!state_->running) return;
  queue_line(state_, std::move(line), delivery);
}

void ProcessProgram::write_shared(std::shared_ptr<const std::string> line,
                                  proto::Delivery delivery) {
  if (!state_->running) return;
  if (delivery != proto::Delivery::droppable) return write(std::string(*line), delivery);
  // A droppable notification: never written at once nor a request (queue_line), it joins
  // what waits.
  enqueue(state_, std::move(line), delivery);
}

void ProcessProgram::write_request(std::string bytes) {
  if (!state_->running) return;
  queue_line(state_, std::move(bytes), proto::Delivery::kept, true);
}

std::size_t ProcessProgram::input_backlog() const {
  return state_->backlog();
}

void ProcessProgram::stop() {
  auto& s = *state_;
  if (!s.running) return;
  // The whole tree, group and setsid'd descendants alike; the exit then comes by the pidfd.
  if (!s.context.ender) {
    platform::kill_tree(s.child.pid);
    return;
  }
  ++s.killing;
  s.context.ender->end(s.child.pid, [state = state_] {
    --state->killing;
    if (state->killing == 0 && state->exit_seen && state->owner) {
      state->exit_seen = false;
      watch_exit(state);  // what it saw meanwhile, seen again: the pidfd is still ready
    }
  });
}

}  // namespace escouade::runtime
