#include "rpc/session.hpp"

#include <array>
#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>
#include <span>
#include <utility>
#include <vector>

#include "base/quote.hpp"
#include "protocol/encode.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/json_text.hpp"
#include "protocol/wire_error.hpp"

namespace escouade::rpc {

namespace asio = boost::asio;
namespace json = boost::json;
using proto::ErrorCode;
using proto::Message;
using proto::MessageKind;

namespace {

constexpr std::size_t kQuotedChars = 200;  // of a line that is not JSON-RPC, in the journal
constexpr std::size_t kReasonsTold = 3;    // of a batch's invalid elements, in its journal line
constexpr std::size_t kExpiredKept = 256;  // timed-out calls remembered to spot late answers

long long millis(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace

namespace detail {

// What answers need after the session is gone: where to send, and whether it still may. A
// Reply may outlive its session and the session's owner (it waits on a worker, or in a queue of
// the io_context that is destroyed last); `send` and `report` reach into that owner, so neither
// is called once the session is closed, and a session is closed before it is destroyed.
struct SessionCore {
  Session::SendLine send;
  Session::Report report;
  bool closed = false;
  std::size_t in_flight = 0;  // calls of the peer's dispatched and not yet answered

  void report_open(std::string_view sentence) const {
    if (!closed && report) report(sentence);
  }

  void send_answers(std::vector<Message>& answers, bool batch) {
    if (closed || answers.empty()) return;
    if (!batch && answers.size() == 1) {
      if (auto line = proto::take_long_answer_line(answers.front())) {
        send(std::move(*line));
        return;
      }
    }
    auto line = proto::encode_answer(batch, answers);
    if (!line) {
      // An answer holds text that is not UTF-8: each such answer becomes internal.
      for (auto& a : answers) {
        if (!proto::encode(a)) {
          report("an answer held text that is not valid UTF-8; sent " +
                 proto::code_text(ErrorCode::internal) + " instead");
          a = Message::error_response(a.id, static_cast<int>(ErrorCode::internal),
                                      "the answer could not be encoded: not valid UTF-8");
        }
      }
      line = proto::encode_answer(batch, answers);
    }
    if (line && *line) send(std::move(**line));
  }
};

}  // namespace detail

using detail::SessionCore;

// Where the answers of one line go: a single answer at once; a batch's answers held until the
// last one is given, then sent as one array.
class LineSink final : public ReplySink {
 public:
  LineSink(std::shared_ptr<SessionCore> core, bool batch, std::size_t owed)
      : core_(std::move(core)), batch_(batch), owed_(owed) {}
  // The answer of a call the session dispatched (through its Reply).
  void deliver(Message answer) override {
    if (core_->in_flight > 0) --core_->in_flight;
    add(std::move(answer));
  }
  // An answer the session gave itself, to an element that is not a call it dispatched.
  void add(Message answer) {
    answers_.push_back(std::move(answer));
    if (--owed_ == 0) core_->send_answers(answers_, batch_);
  }
  void dropped(const std::string& method) override {
    core_->report_open(method + ": the handler gave no answer; answered " +
                       proto::code_text(proto::ErrorCode::internal));
  }

 private:
  std::shared_ptr<SessionCore> core_;
  bool batch_;
  std::vector<Message> answers_;
  std::size_t owed_;
};

Session::Session(asio::any_io_executor executor, SendLine send, Report report, Clock& clock)
    : core_(std::make_shared<SessionCore>(SessionCore{std::move(send), std::move(report), false})),
      executor_(executor),
      clock_(clock),
      deadline_timer_(clock.make_timer(executor)) {}

Session::~Session() {
  close();
  lifeline_.end();
}

bool Session::closed() const noexcept {
  return core_->closed;
}

std::size_t Session::peer_calls_in_flight() const noexcept {
  return core_->in_flight;
}

std::string Session::shown(std::string_view text, std::size_t max_chars) const {
  if (!redact_) return quote_for_journal(text, max_chars);
  std::string copy(text);
  redact_(copy);
  return quote_for_journal(copy, max_chars);
}

void Session::report(std::string_view sentence) const {
  core_->report_open(sentence);
}

void Session::close() {
  if (!core_->closed) tell_refusals_if_back_under(true);
  core_->closed = true;
  // Complete each call in flight once, in the order they were made.
  auto pending = std::move(pending_);
  pending_.clear();
  text_calls_ = 0;
  deadline_timer_->cancel();
  armed_for_.reset();
  for (auto& [id, p] : pending) {
    CallOutcome outcome;
    outcome.kind = CallOutcome::Kind::closed;
    outcome.elapsed = clock_.now() - p.start;
    if (p.done) p.done(std::move(outcome));
  }
}

void Session::handle(std::string method, RequestHandler handler) {
  requests_[std::move(method)] = std::move(handler);
}

void Session::handle_notification(std::string method, NotificationHandler handler) {
  notifications_[std::move(method)] = std::move(handler);
}

void Session::line_too_long(std::size_t limit) {
  report("sent a line longer than " + std::to_string(limit) + " bytes; it was dropped");
}

void Session::feed_line(std::string_view line) {
  if (core_->closed) return;
  tell_refusals_if_back_under(false);
  if (text_calls_ > 0 && take_text_answer(line)) return;
  proto::Parsed parsed = decoder_.decode(line);

  std::size_t owed = 0;
  for (const auto& e : parsed.entries) {
    if (const auto* inv = std::get_if<proto::Invalid>(&e)) {
      owed += inv->answer_due ? 1 : 0;
    } else if (std::get<Message>(e).kind == MessageKind::request) {
      ++owed;
    }
  }
  std::shared_ptr<LineSink> batch;
  if (parsed.batch && owed > 0) batch = std::make_shared<LineSink>(core_, true, owed);

  // What is wrong with the line is told once, with the line quoted once: a batch of many bad
  // elements costs one journal line, not one (and one copy of the line) each.
  std::size_t invalid = 0;
  std::string first_reasons;
  refused_ = 0;
  for (auto& e : parsed.entries) {
    if (auto* inv = std::get_if<proto::Invalid>(&e)) {
      if (invalid++ < kReasonsTold) {
        first_reasons +=
            (first_reasons.empty() ? "" : "; ") +
            std::string(inv->code == static_cast<int>(ErrorCode::parse) ? "not JSON ("
                                                                        : "not JSON-RPC 2.0 (") +
            inv->reason + ")";
      }
      if (!inv->answer_due) continue;
      Message answer = proto::error_reply(*inv);
      if (batch) {
        batch->add(std::move(answer));
      } else {
        std::vector<Message> one;
        one.push_back(std::move(answer));
        core_->send_answers(one, false);
      }
      continue;
    }
    dispatch(std::move(std::get<Message>(e)), batch);
    if (core_->closed) return;  // a handler closed the session
  }
  if (invalid > 0) {
    if (!parsed.batch) {
      report("sent a line that is " + first_reasons + ": " + shown(line, kQuotedChars));
    } else {
      report("sent a batch of " + std::to_string(parsed.entries.size()) + " elements, " +
             std::to_string(invalid) + " of them not valid (" + first_reasons +
             (invalid > kReasonsTold ? "; ..." : "") + "): " + shown(line, kQuotedChars));
    }
  }
  if (refused_ > 0 && !over_limit_) {
    over_limit_ = true;
    report("sent more calls than the " + std::to_string(max_in_flight_) +
           " it may have in flight: " + std::to_string(refused_) + " answered " +
           proto::code_text(ErrorCode::failed) +
           " (those refused after these are counted until it is back under)");
  } else if (refused_ > 0) {
    refused_untold_ += refused_;
  }
}

void Session::tell_refusals_if_back_under(bool closing) {
  if (!over_limit_ || (!closing && core_->in_flight >= max_in_flight_)) return;
  if (refused_untold_ > 0) {
    report("refused " + std::to_string(refused_untold_) + " more of its calls while it had " +
           std::to_string(max_in_flight_) + " in flight");
  }
  over_limit_ = false;
  refused_untold_ = 0;
}

void Session::dispatch(Message&& m, const std::shared_ptr<LineSink>& batch) {
  if (m.is_answer()) {
    answer_arrived(std::move(m));
    return;
  }
  const json::value* params = m.params ? &*m.params : nullptr;
  if (m.kind == MessageKind::notification) {
    auto it = notifications_.find(m.method);
    if (it == notifications_.end()) {
      report("sent the notification " + shown(m.method, 80) +
             ", which is not served; it was ignored");
      return;
    }
    it->second(params);
    return;
  }
  std::shared_ptr<ReplySink> sink = batch;
  if (!sink) sink = std::make_shared<LineSink>(core_, false, 1);
  ++core_->in_flight;
  Reply<> reply(std::move(sink), std::move(m.id), m.method);
  if (core_->in_flight > max_in_flight_) {
    // What the host holds for one peer is bounded: its calls wait on workers, and their
    // answers in its input.
    ++refused_;
    reply.error(ErrorCode::failed, m.method + ": refused: more than " +
                                       std::to_string(max_in_flight_) + " calls in flight");
    return;
  }
  auto it = requests_.find(m.method);
  if (it == requests_.end()) {
    report("asked for " + shown(m.method, 80) + ", which is not served; answered " +
           proto::code_text(ErrorCode::method_not_found));
    reply.error(ErrorCode::method_not_found, "method not found: " + shown(m.method, 80));
    return;
  }
  it->second(params, std::move(reply));
}

void Session::notify(Outgoing message) {
  if (core_->closed) return;
  if (shared_droppable_sink_ && message.delivery() == proto::Delivery::droppable &&
      message.is_shared()) {
    shared_droppable_sink_(message.shared_line());
    return;
  }
  std::string line = message.line_to_send();
  if (droppable_sink_ && message.delivery() == proto::Delivery::droppable) {
    droppable_sink_(std::move(line));
  } else {
    core_->send(std::move(line));
  }
}

std::int64_t Session::call(Outgoing message, std::chrono::milliseconds timeout, CallDone done,
                           std::optional<std::chrono::milliseconds> named_delay) {
  const std::int64_t id = next_id_++;
  if (core_->closed) {
    CallOutcome refused;
    refused.kind = CallOutcome::Kind::closed;
    asio::post(executor_, [done = std::move(done), refused]() mutable { done(refused); });
    return id;
  }
  // A call in flight is one node of pending_, and its message is shared with the caller's:
  // counted with callgrind, two allocations a call fewer than a name and params of its own.
  const auto start = clock_.now();
  PendingCalls::iterator at;
  if (spare_.empty()) {
    at = pending_.emplace_hint(pending_.end(), id, Pending{});  // ids only grow
  } else {
    spare_.back().key() = id;
    at = pending_.insert(pending_.end(), std::move(spare_.back()));
    spare_.pop_back();
  }
  Pending& p = at->second;
  std::string line = message.line_to_send(id);
  const bool text = message.form() == ResultForm::text;
  p.message = std::move(message);
  p.timeout = named_delay.value_or(timeout);
  p.start = start;
  p.deadline = start + timeout;
  p.done = std::move(done);
  if (text) ++text_calls_;
  if (!armed_for_ || p.deadline < *armed_for_) arm_deadline(p.deadline);
  core_->send(std::move(line));
  return id;
}

void Session::arm_deadline(std::chrono::steady_clock::time_point at) {
  armed_for_ = at;
  // A wait already there ends as cancelled.
  deadline_timer_->wait_until(at, lifeline_.guard([this](bool fired) {
    if (!fired || core_->closed) return;  // cancelled: re-armed, or closed
    deadline_reached();
  }));
}

void Session::deadline_reached() {
  armed_for_.reset();
  const auto now = clock_.now();
  std::vector<std::int64_t> due;
  for (const auto& [id, p] : pending_) {
    if (p.deadline <= now) due.push_back(id);
  }
  // Each completes once; a `done` may make new calls, which arm the timer again themselves.
  for (auto id : due)
    call_timed_out(id);
  if (core_->closed) return;
  std::optional<std::chrono::steady_clock::time_point> next;
  for (const auto& [id, p] : pending_) {
    if (!next || p.deadline < *next) next = p.deadline;
  }
  if (next && (!armed_for_ || *next < *armed_for_)) arm_deadline(*next);
}

void Session::call_timed_out(std::int64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // answered meanwhile
  auto node = pending_.extract(it);
  Pending& p = node.mapped();
  if (p.message->form() == ResultForm::text) --text_calls_;
  const std::string method(p.message->method());
  report(method + ": no answer within " + std::to_string(p.timeout.count()) + " ms");
  expired_[id] = {method, p.start};
  while (expired_.size() > kExpiredKept)
    expired_.erase(expired_.begin());
  CallOutcome outcome;
  outcome.kind = CallOutcome::Kind::timeout;
  outcome.elapsed = clock_.now() - p.start;
  if (auto done = ended(std::move(node))) done(std::move(outcome));
}

void Session::answer_arrived(Message&& m) {
  const std::int64_t id = m.id.is_int64() ? m.id.get_int64() : 0;
  auto it = m.id.is_int64() ? pending_.find(id) : pending_.end();
  if (it == pending_.end()) {
    if (auto late = m.id.is_int64() ? expired_.find(id) : expired_.end(); late != expired_.end()) {
      report(late->second.first + ": an answer came " +
             std::to_string(millis(clock_.now() - late->second.second)) +
             " ms after the call, past its delay; it was ignored");
      expired_.erase(late);
    } else if (m.id.is_null() && m.kind == MessageKind::error_response) {
      // JSON-RPC's answer to a line whose id could not be read: no fault of the peer's.
      if (notice_ && !core_->closed)
        notice_("answered a line it could not read with the error " + std::to_string(m.error.code) +
                " (\"" + shown(m.error.message, kQuotedChars) + "\")");
    } else {
      report("sent an answer to no call in flight (id " + shown(json::serialize(m.id), 40) +
             "); it was ignored");
    }
    return;
  }
  // The shared deadline timer is left as it is: it finds nothing due.
  auto node = pending_.extract(it);
  Pending& p = node.mapped();
  CallOutcome outcome;
  outcome.elapsed = clock_.now() - p.start;
  const bool text = p.message->form() == ResultForm::text;
  if (text) --text_calls_;
  if (m.kind == MessageKind::response && text) {
    // An answer take_text_answer left (a key with an escape, "\r" between tokens...): its
    // result written again from its values.
    outcome.kind = CallOutcome::Kind::result;
    outcome.result_text = json::serialize(m.result);
  } else if (m.kind == MessageKind::response) {
    outcome.kind = CallOutcome::Kind::result;
    proto::adopt(outcome.result, std::move(m.result));
  } else {
    outcome.kind = CallOutcome::Kind::error;
    outcome.error = std::move(m.error);
  }
  if (auto done = ended(std::move(node))) done(std::move(outcome));
}

bool Session::take_text_answer(std::string_view line) {
  // Answers hold three members; a few more (unknown ones, ignored as the decoder ignores them)
  // still fit, and a line of more goes the decoder's way.
  // The line is checked as the decoder would check it (grammar, depth, UTF-8, numbers) in the
  // same pass that finds its members.
  std::array<proto::MemberText, 8> found;
  const auto n = proto::checked_object_members(line, proto::DecodeOptions{}.max_depth, found);
  if (!n) return false;
  // One look at each member (as proto::has_escaped_key and proto::member would take them, in one
  // pass instead of five): a key written with an escape ("m\u0065thod") is read by the decoder
  // only, which reads it as what it means; a call or an error answer is the decoder's too; a key
  // given twice is left to the decoder, which builds the values.
  std::optional<std::string_view> result, id_text, version;
  bool twice = false;
  const auto take = [&twice](std::optional<std::string_view>& slot, std::string_view value) {
    twice = twice || slot.has_value();
    slot = value;
  };
  for (const auto& m : std::span<const proto::MemberText>(found.data(), *n)) {
    if (m.key.find('\\') != std::string_view::npos) return false;
    if (m.key == "result") {
      take(result, m.value);
    } else if (m.key == "id") {
      take(id_text, m.value);
    } else if (m.key == "jsonrpc") {
      take(version, m.value);
    } else if (m.key == "method" || m.key == "error") {
      return false;  // however many times given
    }
  }
  if (twice || !result || !id_text || version != R"("2.0")") return false;
  // "\r" is whitespace to JSON but a line break to the line it would be written into.
  if (result->find('\r') != std::string_view::npos) return false;
  const auto id = proto::integer_text(*id_text);
  if (!id) return false;
  auto it = pending_.find(*id);
  if (it == pending_.end() || it->second.message->form() != ResultForm::text) return false;
  auto node = pending_.extract(it);
  Pending& p = node.mapped();
  --text_calls_;
  CallOutcome outcome;
  outcome.kind = CallOutcome::Kind::result;
  outcome.elapsed = clock_.now() - p.start;
  outcome.result_text.assign(result->data(), result->size());
  if (auto done = ended(std::move(node))) done(std::move(outcome));
  return true;
}

CallDone Session::ended(PendingCalls::node_type node) {
  constexpr std::size_t kSpareRecords = 16;
  CallDone done = std::move(node.mapped().done);
  node.mapped().done = nullptr;
  node.mapped().message.reset();  // its text goes now, not when the record is taken again
  if (spare_.size() < kSpareRecords) spare_.push_back(std::move(node));
  return done;
}

}  // namespace escouade::rpc
