#pragma once

// Folders of the host's own data (its data folder, the journals, the settings, the compiled
// bundles) are its user's alone: each one the host makes is made 0700, whatever the umask.

#include <filesystem>
#include <system_error>

namespace escouade {

// Makes `dir` and each missing folder above it with mode 0700; folders that exist are left as
// they are (their owner chose their mode). The error of the first one that could not be made.
std::error_code create_private_directories(const std::filesystem::path& dir);

}  // namespace escouade
