#pragma once

// Internal to src/platform: where execvp would look for a program, computed before fork so that
// the child only tries the paths (POSIX; no shell is ever involved).

#include <string>
#include <string_view>
#include <vector>

namespace escouade::platform {

// The PATH used to find a program: the first "PATH=" entry of `env`, else the host's PATH, else
// the system's default (confstr _CS_PATH).
std::string search_path(const std::vector<std::string>& env);

// The paths to try, in order, for `program` (argv[0]). With a '/' in it: itself only (relative
// to the child's working folder). Without: each folder of `path` joined with it; an empty
// folder is the working folder ("./program"). Empty program: none.
std::vector<std::string> exec_candidates(std::string_view program, std::string_view path);

}  // namespace escouade::platform
