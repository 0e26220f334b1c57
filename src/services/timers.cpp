#include "services/timers.hpp"

#include <algorithm>
#include <boost/json/value_from.hpp>
#include <cmath>
#include <map>
#include <string>

#include "base/lifeline.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "services/timer_pacer.hpp"

namespace escouade::services {

namespace json = boost::json;
namespace method = proto::method;

namespace {

// The timers of one run. Held by its RunScope: when the run ends, every timer is destroyed (its
// wait cancelled) and the lifeline ends, so that no handler still queued sends anything.
// Thread: the host's.
class RunTimers {
 public:
  RunTimers(const TimersContext& ctx, PluginChannel channel, std::shared_ptr<Journal> journal)
      : ctx_(ctx), channel_(std::move(channel)), journal_(std::move(journal)) {}
  ~RunTimers() {
    lifeline_.end();
    if (ctx_.pacer) ctx_.pacer->forget(this);
  }
  RunTimers(const RunTimers&) = delete;
  RunTimers& operator=(const RunTimers&) = delete;

  void set(const proto::TimerSetParams& p, rpc::Reply<method::TimerSet> reply) {
    if (!std::isfinite(p.ms) || p.ms > kTimerMaxMs) {
      reply.error(proto::ErrorCode::invalid_params,
                  "params.ms: a delay of at most 2147483647 ms (24.8 days)");
      return;
    }
    if (active_.size() >= kTimersAtOnce) {
      const std::string sentence = "timer/set: refused: " + std::to_string(kTimersAtOnce) +
                                   " timers are already active, the most a sandboxed plugin may "
                                   "have at once; one must fire or be cancelled first";
      // Once per stretch over the limit: a plugin that insists does not flood its journal.
      if (!told_full_) journal_->warn(sentence);
      told_full_ = true;
      reply.error(proto::ErrorCode::refused, sentence);
      return;
    }
    const auto delay = std::max<std::chrono::milliseconds>(
        kTimerMinDelay, std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(p.ms))));
    const std::int64_t id = next_id_++;
    auto timer = ctx_.clock->make_timer(ctx_.host);
    Timer& t = *timer;
    active_.emplace(id, std::move(timer));
    t.wait_until(ctx_.clock->now() + delay, lifeline_.guard([this, id](bool fired) {
      if (fired) this->fired(id);
    }));
    reply.result(proto::TimerSetResult{id});
  }

  void cancel(const proto::TimerParams& p) {
    // An unknown timer (fired already, cancelled twice, never set) is no fault: nothing to do.
    if (active_.erase(p.timer) > 0) under_limit();
  }

 private:
  void fired(std::int64_t id) {
    if (!ctx_.pacer) return deliver(id);
    // It stays active until its timer/fired goes out: at most 64 of a run wait for their turn.
    ctx_.pacer->deliver(this, lifeline_.guard([this, id] { deliver(id); }));
  }
  void deliver(std::int64_t id) {
    // Cancelled meanwhile: its wait ended, or its turn came, before the cancel reached it.
    if (active_.erase(id) == 0) return;
    under_limit();
    channel_.notify<method::TimerFired>(proto::TimerParams{id});
  }
  void under_limit() {
    if (active_.size() < kTimersAtOnce) told_full_ = false;
  }

  TimersContext ctx_;
  PluginChannel channel_;
  std::shared_ptr<Journal> journal_;
  std::map<std::int64_t, std::unique_ptr<Timer>> active_;
  std::int64_t next_id_ = 1;
  bool told_full_ = false;
  Lifeline lifeline_;
};

}  // namespace

void serve_timers(rpc::Session& session, RunScope& run, const TimersContext& ctx,
                  std::shared_ptr<ServedPlugin> plugin) {
  RunTimers& timers = run.hold(std::make_unique<RunTimers>(ctx, run.channel(), plugin->journal));
  // `timers` lives as long as `run`, which outlives every call its session dispatches.
  session.serve<method::TimerSet>(
      [t = &timers](const proto::TimerSetParams& p, rpc::Reply<method::TimerSet> r) {
        t->set(p, std::move(r));
      });
  session.serve_notification<method::TimerCancel>(
      [t = &timers](const proto::TimerParams& p) { t->cancel(p); });
}

}  // namespace escouade::services
