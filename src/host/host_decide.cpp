// Host::decide: one permission request, asked of every deciding plugin at once.

#include <boost/asio/steady_timer.hpp>
#include <boost/json/serialize.hpp>
#include <memory>

#include "host/host.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "protocol/json_read.hpp"

namespace escouade::host {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// The decision under way: one slot per plugin asked, filled by its answer or by the delay.
struct Pending {
  Pending(asio::any_io_executor ex, Host::DecideDone d)
      : timer(std::move(ex)), done(std::move(d)) {}
  std::vector<Vote> votes;
  std::vector<bool> filled;
  std::size_t left = 0;
  bool finished = false;
  asio::steady_timer timer;
  Host::DecideDone done;

  void finish() {
    if (finished) return;
    finished = true;
    timer.cancel();
    for (std::size_t i = 0; i < votes.size(); ++i) {
      if (!filled[i]) votes[i].kind = Vote::Kind::timeout;
    }
    auto d = std::move(done);
    d(combine(std::move(votes)));
  }
};

Vote::Kind kind_of(proto::DecisionDecision d) {
  switch (d) {
    case proto::DecisionDecision::allow:
      return Vote::Kind::allow;
    case proto::DecisionDecision::deny:
      return Vote::Kind::deny;
    case proto::DecisionDecision::ask:
      break;
  }
  return Vote::Kind::ask;
}

// One plugin's answer as a vote; what does not hold is an error, and its journal says why.
// `unanswered` says why a plugin that could not answer did not (Host::unanswered_because).
Vote vote_of(const std::string& id, rpc::CallOutcome& o, Journal& journal,
             const std::function<std::string()>& unanswered) {
  Vote v;
  v.id = id;
  switch (o.kind) {
    case rpc::CallOutcome::Kind::result: {
      proto::Decision d;
      proto::ReadContext ctx;
      if (!proto::read_value(o.result, d, ctx)) {
        v.kind = Vote::Kind::error;
        v.reason = "its answer does not hold: " + ctx.message("result");
        journal.warn("permissions/decide: " + v.reason + ": " + json::serialize(o.result));
        return v;
      }
      v.kind = kind_of(d.decision);
      v.message = std::move(d.message);
      return v;
    }
    case rpc::CallOutcome::Kind::error:
      v.kind = Vote::Kind::error;
      v.reason = "it answered the error " + std::to_string(o.error.code) + ": " + o.error.message;
      return v;
    case rpc::CallOutcome::Kind::timeout:
      v.kind = Vote::Kind::timeout;
      return v;
    case rpc::CallOutcome::Kind::closed:
      break;
  }
  v.kind = Vote::Kind::error;
  v.reason = "it " + unanswered();
  return v;
}

}  // namespace

void Host::decide(const json::value& params, DecideDone done) {
  proto::DecideParams request;
  proto::ReadContext ctx;
  if (!proto::read_value(params, request, ctx)) {
    asio::post(executor_, [done = std::move(done), e = ctx.message("params")] {
      done(Error{static_cast<int>(proto::ErrorCode::invalid_params), e});
    });
    return;
  }
  const auto delay = std::chrono::milliseconds(proto::method::PermissionsDecide::kTimeoutMs);
  auto pending = std::make_shared<Pending>(executor_, std::move(done));
  std::vector<Plugin*> asked;
  for (const auto& id : load_order_) {
    Plugin& p = *plugins_.at(id);
    // Only plugins on for the request's project hear of it: a private project's requests
    // reach no other.
    if (p.manifest.permissions.decide && p.projects.count(request.project.id)) asked.push_back(&p);
  }
  pending->votes.resize(asked.size());
  pending->filled.assign(asked.size(), false);
  pending->left = asked.size();
  if (asked.empty()) {
    asio::post(executor_, [pending] { pending->finish(); });
    return;
  }
  // The whole decision ends with the delay, whatever each plugin does.
  pending->timer.expires_after(delay);
  pending->timer.async_wait([pending](const boost::system::error_code& ec) {
    if (!ec) pending->finish();
  });
  for (std::size_t i = 0; i < asked.size(); ++i) {
    Plugin& p = *asked[i];
    pending->votes[i].id = p.manifest.id;
    p.supervisor->call(
        "permissions/decide", params, delay,
        [pending, i, id = p.manifest.id, journal = p.journal, this, host = lifeline_.token(),
         what = "permissions/decide " + json::serialize(json::string(request.request.id)) + " (" +
                request.request.kind + ")"](rpc::CallOutcome o) {
          if (pending->finished) return;  // too late: counted as a timeout already
          pending->votes[i] = vote_of(id, o, *journal, [&]() -> std::string {
            return host ? unanswered_because(id) : "is closing with the host";
          });
          const Vote& v = pending->votes[i];
          if (v.kind != Vote::Kind::timeout) {  // a timeout is journaled by the session
            journal->info(what + ": " + std::string(to_string(v.kind)) +
                          (v.message          ? ": " + *v.message
                           : v.reason.empty() ? ""
                                              : ": " + v.reason));
          }
          pending->filled[i] = true;
          if (--pending->left == 0) pending->finish();
        });
  }
}

}  // namespace escouade::host
