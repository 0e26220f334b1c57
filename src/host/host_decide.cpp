// Host::decide: one permission request, asked of every deciding plugin at once.

#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>

#include "base/quote.hpp"
#include "host/after_its_end.hpp"
#include "host/host.hpp"
#include "policy/audience.hpp"
#include "protocol/decision_text.hpp"
#include "protocol/decode.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "protocol/json_read.hpp"
#include "protocol/json_text.hpp"

namespace escouade::host {

namespace asio = boost::asio;
namespace json = boost::json;
using policy::Vote;

namespace {

// The decision under way: one slot per plugin asked, filled by its answer or by the delay.
struct Pending {
  Pending(std::unique_ptr<Timer> t, Host::DecideDone d) : timer(std::move(t)), done(std::move(d)) {}
  std::vector<Vote> votes;
  std::vector<bool> filled;
  std::size_t left = 0;
  bool finished = false;
  std::unique_ptr<Timer> timer;
  Host::DecideDone done;
  // Each vote's journal line is made here in turn (the journal copies it): one buffer a
  // decision, not one a plugin.
  std::string line;
  // What each plugin's journal line says of the request, made once.
  std::string what;
  // Where an answer closed by its program's end goes first (VoteDone), and what takes each
  // answer in (made by Host::decide, which reaches the host's own state): held once a
  // decision, so that each plugin's completion is small (callgrind, bench_host decide 100: its
  // 144 bytes were a block from glibc's small bins a plugin, past the thread cache's 7).
  asio::any_io_executor executor;
  std::function<void(std::size_t, rpc::CallOutcome&, Journal&)> take;

  void finish() {
    if (finished) return;
    finished = true;
    timer->cancel();
    for (std::size_t i = 0; i < votes.size(); ++i) {
      if (!filled[i]) votes[i].kind = Vote::Kind::timeout;
    }
    auto d = std::move(done);
    d(policy::combine(std::move(votes)));
  }
};

// One plugin's completion in a decision: its slot and its journal. A call closed by its
// program's end is taken in once the supervisor has taken that end in (after_its_end.hpp, with
// the decision's executor rather than one of its own), so that its vote says the state the
// plugin ended in.
struct VoteDone {
  std::shared_ptr<Pending> pending;
  std::size_t i;
  std::shared_ptr<Journal> journal;
  bool deferred = false;

  void operator()(rpc::CallOutcome o) {
    if (posted_after_its_end(*this, deferred, o, pending->executor)) return;
    if (pending->finished) return;  // too late: counted as a timeout already
    pending->take(i, o, *journal);
  }
};

// One plugin's answer as its vote `v` (whose id is set); what does not hold is an error, and its
// journal says why. `unanswered` says why a plugin that could not answer did not
// (Host::unanswered_because).
template <class Unanswered>
void vote_of(Vote& v, rpc::CallOutcome& o, Journal& journal, const Unanswered& unanswered) {
  switch (o.kind) {
    case rpc::CallOutcome::Kind::result: {
      if (auto d = o.result_text.empty() ? std::nullopt : proto::decision_of_text(o.result_text)) {
        v.kind = policy::vote_kind(d->decision);
        v.message = std::move(d->message);
        return;
      }
      // The answer came as checked text (ResultForm::text): its few values are built here, on
      // this stack, instead of in a heap arena by the decoder with its whole line's.
      alignas(std::max_align_t) unsigned char scratch[1024];
      json::monotonic_resource arena(scratch, sizeof scratch);
      // Made in place: assigning it would copy it out of the arena.
      const json::value built =
          o.result_text.empty() ? json::value()
                                : proto::parse_checked(o.result_text, json::storage_ptr(&arena));
      const json::value* result = o.result_text.empty() ? &o.result : &built;
      proto::Decision d;
      proto::ReadContext ctx;
      if (!proto::read_value(*result, d, ctx)) {
        v.kind = Vote::Kind::error;
        v.reason = "its answer does not hold: " + ctx.message("result");
        journal.warn("permissions/decide: " + v.reason + ": " + json::serialize(*result));
        return;
      }
      v.kind = policy::vote_kind(d.decision);
      v.message = std::move(d.message);
      return;
    }
    case rpc::CallOutcome::Kind::error:
      v.kind = Vote::Kind::error;
      v.reason = "it answered the error " + std::to_string(o.error.code) + ": " + o.error.message;
      return;
    case rpc::CallOutcome::Kind::timeout:
      v.kind = Vote::Kind::timeout;
      return;
    case rpc::CallOutcome::Kind::closed:
      break;
  }
  v.kind = Vote::Kind::error;
  v.reason = "it " + unanswered();
}

// The journal line of one vote: `what` the request is, and the vote with its words.
void vote_line(std::string& line, std::string_view what, const Vote& v) {
  line.clear();
  line.append(what).append(": ").append(to_string(v.kind));
  if (v.message) {
    line.append(": ").append(*v.message);
  } else if (!v.reason.empty()) {
    line.append(": ").append(v.reason);
  }
}

// What a journal line says of a request: its id and its kind.
std::string what_is_asked(std::string_view id, std::string_view kind) {
  return "permissions/decide " + quote_name(id) + " (" + std::string(kind) + ")";
}

}  // namespace

std::string Host::decision_asked(std::string_view params) {
  // The request's id and kind, found in the app's text as written, nothing built (a host/call
  // costs the same as before for it): a string without escapes is taken as it is; anything
  // else leaves the line naming the method alone.
  std::array<proto::MemberText, 8> outer;
  std::array<proto::MemberText, 16> inner;
  const auto found = proto::checked_object_members(params, proto::DecodeOptions{}.max_depth, outer,
                                                   "request", inner);
  if (!found || !found->inner) return "permissions/decide";
  const std::span<const proto::MemberText> request(inner.data(), *found->inner);
  const auto plain = [](std::optional<std::string_view> v) -> std::optional<std::string_view> {
    if (!v || v->size() < 2 || v->front() != '"' || v->back() != '"' ||
        v->find('\\') != std::string_view::npos)
      return std::nullopt;
    return v->substr(1, v->size() - 2);
  };
  const auto id = plain(proto::member(request, "id"));
  const auto kind = plain(proto::member(request, "kind"));
  if (!id || !kind) return "permissions/decide";
  return what_is_asked(*id, *kind);
}

void Host::journal_vote(const Plugin& p, const std::string& what, rpc::CallOutcome& o,
                        bool host_alive) const {
  Vote v;
  v.id = p.manifest.id;
  vote_of(v, o, *p.journal, [&]() -> std::string {
    return host_alive ? unanswered_because(v.id) : "is closing with the host";
  });
  if (v.kind == Vote::Kind::timeout) return;  // journaled by the session
  if (v.message) p.journal->mask(*v.message);
  p.journal->mask(v.reason);
  std::string line;
  vote_line(line, what, v);
  p.journal->info(line);
}

void Host::decide(const proto::DecideParams& request, DecideDone done) {
  // Encoded once for every plugin asked: each line differs only by its id. Written as text
  // straight from the request, without making its value first (callgrind, bench_host decide 5:
  // the value and its serialisation cost 10k instructions a decision, writing the text 3.2k).
  // The answers come back as text: a decision is read from it without building its values.
  auto message =
      rpc::Outgoing::request<proto::method::PermissionsDecide>(request, rpc::ResultForm::text);
  auto pending = std::make_shared<Pending>(clock_.make_timer(executor_), std::move(done));
  pending->what = what_is_asked(request.request.id, request.request.kind);
  std::vector<Plugin*> asked;
  asked.reserve(load_order_.size());
  for (Plugin* p : load_order_) {
    if (p->served->grants.asked_to_decide(p->projects.count(request.project.id) > 0)) {
      asked.push_back(p);
    }
  }
  pending->votes.resize(asked.size());
  pending->filled.assign(asked.size(), false);
  pending->left = asked.size();
  if (asked.empty()) {
    asio::post(executor_, [pending] { pending->finish(); });
    return;
  }
  if (!message) {
    // Text the decoder let through could not be written again (not UTF-8): no plugin is asked,
    // and each one's vote says why.
    for (std::size_t i = 0; i < asked.size(); ++i) {
      pending->votes[i].id = asked[i]->manifest.id;
      pending->votes[i].kind = Vote::Kind::error;
      pending->votes[i].reason = "the request could not be sent: " + message.error().message;
      asked[i]->journal->warn(pending->what + ": not sent: " + message.error().message);
      pending->filled[i] = true;
    }
    asio::post(executor_, [pending] { pending->finish(); });
    return;
  }
  const auto delay = message->default_delay();
  // The whole decision ends with the delay, whatever each plugin does.
  pending->timer->wait_until(clock_.now() + delay, [pending](bool fired) {
    if (fired) pending->finish();
  });
  // Each answer taken in: the host's state is reached only while the host lives. The decision
  // is held by a plain pointer (it holds this function; each VoteDone holds it while it may
  // call it), not by a reference that would keep it alive from within.
  Pending* const state = pending.get();
  pending->executor = executor_;
  pending->take = [state, this, host = lifeline_.token()](std::size_t i, rpc::CallOutcome& o,
                                                          Journal& journal) {
    Vote& v = state->votes[i];
    vote_of(v, o, journal, [&]() -> std::string {
      return host ? unanswered_because(v.id) : "is closing with the host";
    });
    // The plugin's words go to the app, and to the agent with a refusal: masked.
    if (v.message) journal.mask(*v.message);
    journal.mask(v.reason);
    if (v.kind != Vote::Kind::timeout) {  // a timeout is journaled by the session
      vote_line(state->line, state->what, v);
      journal.info(state->line);
    }
    state->filled[i] = true;
    if (--state->left == 0) state->finish();
  };
  // Every plugin asked before any answer is handed on: with two cores, the plugins decide while
  // the host writes to the next ones (answers read between the writes made a decision of 5
  // about 4 % slower unpinned, bench_host decide).
  const runtime::RequestBurst burst;
  for (std::size_t i = 0; i < asked.size(); ++i) {
    Plugin& p = *asked[i];
    // The plugin's id is its vote's, set here: the completion copies no string.
    pending->votes[i].id = p.manifest.id;
    p.supervisor->call(*message, delay, VoteDone{pending, i, p.journal});
  }
}

}  // namespace escouade::host
