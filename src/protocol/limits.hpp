#pragma once

// Numbers of the spec that more than one side of the host keeps: the host's timer and network
// services (services/timers.hpp, services/net.hpp) and the run.js prelude, which a sandboxed
// instance is handed them in (its natives' `limits`: prelude/timers.js), so that both hold one
// number.

#include <chrono>
#include <cstddef>

namespace escouade::proto {

// A timer's delay: less than this is this (spec: "The limits": "10 ms at least"; the schema's
// TimerSetParams.ms).
inline constexpr std::chrono::milliseconds kTimerMinDelay{10};
// Timers active at once, per run (spec: "64 at once"): the 65th timer/set is refused until one
// fires or is cancelled.
inline constexpr std::size_t kTimersAtOnce = 64;
// The longest delay: what a JS engine's setTimeout takes (2^31 - 1 ms, 24.8 days).
inline constexpr double kTimerMaxMs = 2147483647.0;

// net/stream's streams open at once, per run (the schema's net/stream: "8 streams at once"):
// the host refuses the 9th; run.js's fetch makes the 9th wait for one to end.
inline constexpr std::size_t kStreamsAtOnce = 8;

}  // namespace escouade::proto
