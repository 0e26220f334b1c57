// `escouade-plugin new ts <dir>`: a TypeScript plugin project with @escouade-dev/plugin vendored
// (scaffold.hpp). Its files are scaffold/template-ts/ and the SDK's package, embedded by the
// build as the other templates are (embedded.hpp).
//
// template-ts/package-lock.json is a real lockfile, with @TARGET@ for the package's name: npm
// install made it once in a copy of the template with the SDK vendored
// (scripts/regen-ts-template-lock.sh makes it again). It holds what sdk/typescript/package.json
// says of the SDK (its version, its dependencies: esbuild and esbuild's own packages), so
// scaffold_test fails when the two part (ScaffoldEmbedded.TheTsLockfileHoldsTheSdkOfTheSourceTree)
// and says to run the script.

#include <algorithm>
#include <string>
#include <system_error>

#include "protocol/gen/errors.hpp"
#include "scaffold/embedded.hpp"
#include "scaffold/scaffold.hpp"

namespace escouade::scaffold {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kManifestFile = "escouade-plugin.json";
// Kept without its dot in the source tree, as template/'s, so that git does not read it there.
constexpr std::string_view kGitignoreTemplate = "gitignore";

bool is_json(std::string_view path) {
  constexpr std::string_view kJson = ".json";
  return path.size() >= kJson.size() && path.substr(path.size() - kJson.size()) == kJson;
}

// `path` executable by whoever may read it.
std::error_code make_executable(const fs::path& path) {
  std::error_code ec;
  const fs::perms now = fs::status(path, ec).permissions();
  if (ec) return ec;
  fs::perms exec = fs::perms::none;
  if ((now & fs::perms::owner_read) != fs::perms::none) exec |= fs::perms::owner_exec;
  if ((now & fs::perms::group_read) != fs::perms::none) exec |= fs::perms::group_exec;
  if ((now & fs::perms::others_read) != fs::perms::none) exec |= fs::perms::others_exec;
  fs::permissions(path, exec, fs::perm_options::add, ec);
  return ec;
}

}  // namespace

std::vector<PlannedFile> plan_ts(const Identity& who) {
  std::vector<PlannedFile> files;
  for (const auto& f : ts_files()) {
    std::string path = f.path == kGitignoreTemplate ? ".gitignore" : std::string(f.path);
    files.push_back({std::move(path), fill(f.bytes, who, is_json(f.path))});
  }
  std::stable_partition(files.begin(), files.end(),
                        [](const PlannedFile& f) { return f.path == kManifestFile; });
  // The SDK as it is: no placeholder of the template's is filled in it.
  for (const auto& f : ts_sdk_files()) {
    files.push_back({std::string(kTsSdkFolder) + "/" + std::string(f.path), std::string(f.bytes)});
  }
  return files;
}

Result<Scaffolded> scaffold_ts(const Request& request) {
  auto done = scaffold_with(request, plan_ts);
  if (!done) return done;
  const std::string commands = std::string(kTsSdkFolder) + "/bin/";
  for (const auto& f : done->files) {
    if (f.rfind(commands, 0) != 0) continue;
    if (const auto ec = make_executable(done->folder / f)) {
      return Error{proto::ErrorCode::internal,
                   (done->folder / f).string() + ": cannot make it executable: " + ec.message()};
    }
  }
  return done;
}

}  // namespace escouade::scaffold
