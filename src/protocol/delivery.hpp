#pragma once

// Whether a message the host sends may be lost on the way when its peer does not read.
//
// The rule (docs/codegen.md, "Delivery"): what the host sends is kept (its requests, its answers,
// its notifications), but for the notifications the generator is told may be dropped: a fact
// (events/fact) to a plugin, a status change (host/statusChanged) to the app. Such a message is
// news that a later one makes old, and what the host holds for a peer that does not read is
// bounded: past the bound the oldest droppable message goes first, and the journal says so. A
// kept one waits however full the input is, and the peer's own output is no longer read until
// it takes half, so a peer slows itself down and loses nothing it must have: a timer/fired lost
// would leave a callback pending for good, a net/chunk lost would corrupt a stream, a proc/exit
// lost would leave a program that never ends.

#include <cstdint>
#include <string_view>

namespace escouade::proto {

enum class Delivery : std::uint8_t { kept, droppable };

constexpr std::string_view to_string(Delivery d) noexcept {
  return d == Delivery::kept ? "kept" : "droppable";
}

}  // namespace escouade::proto
