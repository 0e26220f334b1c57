#pragma once

// A member of a request's params taken as the text it came as: how escouade-host hands the
// payload of host/call ({"id":..., "method":..., "params": <payload>}) to the plugin without
// building it into values and writing it out again (docs/PERFORMANCE.md).

#include <optional>
#include <string_view>

namespace escouade::proto {

// Where `line` holds its params' member `member` (an object or an array), when the line is
// exactly one request of `method` that the decoder would take; a view into `line`. Anything
// else (a batch, a notification, a key written with an escape, a member given twice, a "\r"
// between tokens, which would be a line break in the line it goes into) is nullopt: the caller
// then gives the line to the decoder, which reads it however it is written.
std::optional<std::string_view> params_member_text(std::string_view line, std::string_view method,
                                                   std::string_view member);

}  // namespace escouade::proto
