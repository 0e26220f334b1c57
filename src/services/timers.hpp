#pragma once

// timer/set, timer/cancel and timer/fired (spec: "The limits": "10 ms at least, 64 at once"; the
// schema's timer/set: "It goes with the instance"), served to sandboxed plugins only: a plugin
// run as a command has its own clock and is answered methodNotFound, as the schema's net/fetch
// says of timer/*. The timers of a run are held by its RunScope: a crash, a stop or a restart
// ends them, and the next instance starts with none.

#include <chrono>
#include <cstddef>
#include <memory>

#include "base/clock.hpp"
#include "protocol/limits.hpp"
#include "rpc/session.hpp"
#include "services/context.hpp"
#include "services/run_scope.hpp"

namespace escouade::services {

// The spec's numbers, which the run.js prelude is handed too (protocol/limits.hpp): less than
// kTimerMinDelay is that; past kTimersAtOnce active in a run, timer/set is refused; past
// kTimerMaxMs it is invalidParams (the time point would otherwise be absurd or overflow).
using proto::kTimerMaxMs;
using proto::kTimerMinDelay;
using proto::kTimersAtOnce;

// Binds timer/set and timer/cancel to `session`; the timers go to `run`, their timer/fired to
// that run's plugin alone. Call on the host's thread, for a sandboxed plugin's session only.
void serve_timers(rpc::Session& session, RunScope& run, const TimersContext& ctx,
                  std::shared_ptr<ServedPlugin> plugin);

}  // namespace escouade::services
