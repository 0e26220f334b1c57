#pragma once

// A JSON-RPC 2.0 session over lines, without I/O: lines are fed in as they are read, and lines
// to write go out through a callback. It dispatches calls to bound handlers (each answered
// exactly once, through a Reply), pairs answers with the calls it made (each with a deadline),
// answers a batch with one batch, and reports every problem as a sentence for the journal.
//
// Thread: everything runs on the executor given at construction (the host's single thread);
// no method may be called from another thread.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.hpp"
#include "base/lifeline.hpp"
#include "protocol/decode.hpp"
#include "protocol/encode.hpp"
#include "protocol/gen/methods.hpp"
#include "protocol/json_read.hpp"
#include "rpc/outgoing.hpp"
#include "rpc/reply.hpp"

namespace escouade::rpc {

namespace detail {
struct SessionCore;
}
class LineSink;

// How a call this side made ended.
struct CallOutcome {
  enum class Kind {
    result,   // the peer answered with a result
    error,    // the peer answered with an error
    timeout,  // no answer within the delay: the caller's default answer applies
    closed,   // the session closed first (the peer crashed or was stopped)
  };
  Kind kind = Kind::closed;
  boost::json::value result;
  proto::ErrorObject error;
  std::chrono::steady_clock::duration elapsed{};
  // A call made with ResultForm::text: its result's JSON text (`result` is then null); one
  // value, valid UTF-8, nested no deeper than a line may be, with no raw line break.
  std::string result_text;

  bool ok() const noexcept { return kind == Kind::result; }
};

using CallDone = std::function<void(CallOutcome)>;

class Session {
 public:
  using SendLine = std::function<void(std::string line)>;
  // A sentence for the journal: an invalid line, an unknown method, a late answer...
  using Report = std::function<void(std::string_view sentence)>;
  // `params` (null when left out) points into the message being dispatched, which nothing
  // reads after its handler: serve() moves its free-form members out (ReadContext::take_values).
  using RequestHandler = std::function<void(const boost::json::value* params, Reply<> reply)>;
  using NotificationHandler = std::function<void(const boost::json::value* params)>;

  // Its deadlines are kept by `clock` (base/clock.hpp), which outlives the session.
  Session(boost::asio::any_io_executor executor, SendLine send, Report report,
          Clock& clock = steady_clock());
  // Completes every call in flight as closed, and drops answers still owed: a Reply that
  // outlives the session (on a worker, in a queue) answers nothing and reports nothing.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // One line as read, without its '\n'.
  void feed_line(std::string_view line);
  // A line too long to be read (the framer dropped it).
  void line_too_long(std::size_t limit);

  // Where the notifications that may be dropped go (Outgoing::delivery(): to a peer that may
  // not read, runtime::Program::write with Delivery::droppable); every other line, kept
  // notifications included, goes where the session sends. Unset: every line goes there.
  void set_droppable_sink(SendLine sink) { droppable_sink_ = std::move(sink); }
  // Where the droppable notifications go instead, their line shared with every other peer the
  // same message goes to (Outgoing::shared_line) rather than copied for each. Unset: as above.
  using SendShared = std::function<void(std::shared_ptr<const std::string> line)>;
  void set_shared_droppable_sink(SendShared sink) { shared_droppable_sink_ = std::move(sink); }

  // Rewrites what the peer sent before a report quotes (and cuts) it: the masking of secrets.
  void set_redactor(std::function<void(std::string&)> redact) { redact_ = std::move(redact); }
  // Where sentences go that tell what the peer did right but worth knowing (an error answer
  // with id null, which JSON-RPC asks for a line it could not read): the journal's info, not
  // the warnings of `report`. Unset: they go nowhere.
  void set_notice(Report notice) { notice_ = std::move(notice); }

  // Binds a method. Unbound requests are answered methodNotFound (-32601) and reported.
  void handle(std::string method, RequestHandler handler);
  void handle_notification(std::string method, NotificationHandler handler);

  // Binds a method of the protocol with its generated types: params that do not read into
  // M::Params are answered invalidParams naming the field, and the handler is not called.
  // Params left out (JSON-RPC allows it) read as an empty object: fine for a method whose
  // params are all optional (settings/get), a missing field for the others.
  // F: void(const typename M::Params&, Reply<M>)
  template <class M, class F>
  void serve(F f);
  // F: void(const typename M::Params&)
  template <class M, class F>
  void serve_notification(F f);

  // Sends a notification (`message` is one); one that may be dropped goes to the droppable
  // sink.
  void notify(Outgoing message);

  // Sends a request (`message` is one); `done` is called exactly once, on this executor: with
  // the answer (its result in the message's ResultForm), or with timeout once `timeout` has
  // passed (a later answer is then ignored and reported), or with closed when the session
  // closes first. Returns the request's id. An answer already there when the line is written
  // (a process program reads it at once: runtime/process_program.cpp) completes the call before
  // call() returns.
  // `named_delay`, when given, is the delay the journal names on a timeout (the call's whole
  // delay, when part of it was spent in a queue before).
  // A message passed by its last copy gives its line to the session (Outgoing::line_to_send).
  std::int64_t call(Outgoing message, std::chrono::milliseconds timeout, CallDone done,
                    std::optional<std::chrono::milliseconds> named_delay = std::nullopt);

  // The same, for coroutines: co_await session.async_call(message, delay, asio::use_awaitable).
  // Its handler never runs within the initiation, as Asio's asynchronous operations promise: an
  // answer that completes the call before call() returns is handed on through the executor.
  template <class Token>
  auto async_call(Outgoing message, std::chrono::milliseconds timeout, Token&& token) {
    return boost::asio::async_initiate<Token, void(CallOutcome)>(
        [this, m = std::move(message), timeout](auto handler) mutable {
          struct Waiting {
            decltype(handler) then;
            bool initiating = true;
          };
          auto shared = std::make_shared<Waiting>(Waiting{std::move(handler)});
          this->call(std::move(m), timeout, [shared, executor = executor_](CallOutcome outcome) {
            if (!shared->initiating) return shared->then(std::move(outcome));
            boost::asio::post(executor, [shared, o = std::move(outcome)]() mutable {
              shared->then(std::move(o));
            });
          });
          shared->initiating = false;
        },
        token);
  }

  // Completes every call in flight as closed (their default answers apply) and stops sending.
  // Answers owed to the peer are dropped: it is gone. Idempotent.
  void close();
  bool closed() const noexcept;

  std::size_t calls_in_flight() const noexcept { return pending_.size(); }

  // How many of the peer's calls may wait for their answers at once (what the host holds for
  // one plugin is bounded: each waits on a worker, then in the plugin's input). Past it, a call
  // is answered failed (-32004) at once, and the line's journal entry says how many were.
  void set_max_in_flight(std::size_t n) noexcept { max_in_flight_ = n; }
  // The peer's calls dispatched and not answered yet.
  std::size_t peer_calls_in_flight() const noexcept;

 private:
  struct Pending {
    std::optional<Outgoing> message;      // what was sent: its method's name, its ResultForm
    std::chrono::milliseconds timeout{};  // the delay the journal names
    std::chrono::steady_clock::time_point start;
    std::chrono::steady_clock::time_point deadline;
    CallDone done;
  };

  void dispatch(proto::Message&& m, const std::shared_ptr<LineSink>& batch);
  void answer_arrived(proto::Message&& m);
  // A line that is a plain answer with a result to a call of ResultForm::text, taken as text
  // without building its values: true when it was. Anything else is left to the decoder.
  bool take_text_answer(std::string_view line);
  void call_timed_out(std::int64_t id);
  // One timer for every call in flight, armed for the earliest deadline: a call answered in
  // time costs no timer system call (arming and cancelling one per call did).
  void arm_deadline(std::chrono::steady_clock::time_point at);
  void deadline_reached();
  void report(std::string_view sentence) const;
  // What the peer sent, redacted, then quoted for the journal in `max_chars` at most.
  std::string shown(std::string_view text, std::size_t max_chars) const;

  std::shared_ptr<detail::SessionCore> core_;
  boost::asio::any_io_executor executor_;
  proto::Decoder decoder_;
  std::unordered_map<std::string, RequestHandler> requests_;
  std::unordered_map<std::string, NotificationHandler> notifications_;
  using PendingCalls = std::map<std::int64_t, Pending>;
  PendingCalls pending_;
  std::size_t text_calls_ = 0;  // of pending_, those of ResultForm::text
  // The records of calls that ended, each taken again by the next call instead of a new node
  // (callgrind, bench_host decide 20: a decision's 20 records allocated and freed at once
  // overflowed glibc's per-thread cache). A few at most: what a peer has in flight at once.
  std::vector<PendingCalls::node_type> spare_;
  // Takes the record of a call that ended for reuse; returns its completion, to be called
  // after (it may make the next call, which takes the record).
  CallDone ended(PendingCalls::node_type node);
  // Calls that timed out lately, by id: a late answer is told apart from a stray one.
  std::map<std::int64_t, std::pair<std::string, std::chrono::steady_clock::time_point>> expired_;
  std::int64_t next_id_ = 1;
  Clock& clock_;
  std::unique_ptr<Timer> deadline_timer_;
  std::size_t max_in_flight_ = static_cast<std::size_t>(-1);
  std::size_t refused_ = 0;  // calls refused on the line being read
  // A peer over its limit is told once, when it goes over; the calls refused after that are
  // counted and told in one line when it is back under (or when the session closes).
  bool over_limit_ = false;
  std::size_t refused_untold_ = 0;
  void tell_refusals_if_back_under(bool closing);
  std::optional<std::chrono::steady_clock::time_point> armed_for_;
  std::function<void(std::string&)> redact_;
  Report notice_;
  SendLine droppable_sink_;
  SendShared shared_droppable_sink_;
  Lifeline lifeline_;
};

template <class M, class F>
void Session::serve(F f) {
  handle(std::string(M::kName),
         [f = std::move(f)](const boost::json::value* params, Reply<> reply) mutable {
           // Params left out: null for a method whose params are null (shutdown), else {}.
           static const boost::json::value kNone =
               std::is_same_v<typename M::Params, std::nullptr_t> ? boost::json::value(nullptr)
                                                                  : boost::json::object();
           using proto::read_value;  // and, by ADL, that of M's own namespace
           typename M::Params p{};
           proto::ReadContext ctx;
           // The params are the dispatched message's, read once: what is free-form in them
           // (host/call's payload) is moved, not copied (callgrind: 5k instructions a call).
           if (params) ctx.take_values();
           if (!read_value(params ? *params : kNone, p, ctx)) {
             reply.error(proto::ErrorCode::invalid_params, ctx.message("params"));
             return;
           }
           f(p, Reply<M>(std::move(reply)));
         });
}

template <class M, class F>
void Session::serve_notification(F f) {
  handle_notification(std::string(M::kName),
                      [this, f = std::move(f)](const boost::json::value* params) mutable {
                        static const boost::json::value kNone = boost::json::object();
                        using proto::read_value;
                        typename M::Params p{};
                        proto::ReadContext ctx;
                        if (params) ctx.take_values();  // as serve's
                        if (!read_value(params ? *params : kNone, p, ctx)) {
                          report(std::string(M::kName) + ": " + ctx.message("params") +
                                 "; the notification was ignored");
                          return;
                        }
                        f(p);
                      });
}

}  // namespace escouade::rpc
