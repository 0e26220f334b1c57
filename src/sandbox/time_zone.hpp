#pragma once

// The time zone a helper is given (SandboxOptions::time_zone), by its IANA name, checked the same
// way by the host that gives it and by the helper that sets it. No I/O.

#include <optional>
#include <string>
#include <string_view>

namespace escouade::sandbox {

// Whether `name` is one a helper takes as its time zone: parts of letters, digits, '_', '-' and
// '+' joined by '/', none empty nor starting with '.' or '-', 64 bytes at most ("Europe/Paris",
// "Etc/GMT+5", "UTC"). Anything else is no zone: a helper then keeps "UTC".
bool valid_time_zone(std::string_view name);

// The IANA name a path under a zoneinfo folder names ("/usr/share/zoneinfo/posix/Asia/Kolkata"
// gives "Asia/Kolkata"; the "posix/" and "right/" trees hold the same zones), or nothing when it
// is under no such folder or names no valid zone.
std::optional<std::string> time_zone_of(std::string_view zoneinfo_path);

}  // namespace escouade::sandbox
