// `escouade-plugin new js <dir>`: a plain ES module over node:readline that Escouade runs in
// its sandbox (scaffold.hpp). Its files are scaffold/template-js/, embedded by the build as the
// other templates are (embedded.hpp).

#include <algorithm>
#include <string>
#include <utility>

#include "protocol/gen/errors.hpp"
#include "scaffold/embedded.hpp"
#include "scaffold/scaffold.hpp"

namespace escouade::scaffold {

namespace {

constexpr std::string_view kManifestFile = "escouade-plugin.json";

// `text` with the JSON-RPC error codes written in, from the protocol's generated ones.
std::string with_codes(std::string_view bytes) {
  std::string text(bytes);
  const std::pair<std::string_view, proto::ErrorCode> codes[] = {
      {"@PARSE@", proto::ErrorCode::parse},
      {"@INVALID_REQUEST@", proto::ErrorCode::invalid_request},
      {"@METHOD_NOT_FOUND@", proto::ErrorCode::method_not_found}};
  for (const auto& [placeholder, code] : codes) {
    for (auto at = text.find(placeholder); at != std::string::npos;
         at = text.find(placeholder, at)) {
      text.replace(at, placeholder.size(), std::to_string(static_cast<int>(code)));
    }
  }
  return text;
}

}  // namespace

std::vector<PlannedFile> plan_js(const Identity& who) {
  std::vector<PlannedFile> files;
  for (const auto& f : js_files()) {
    const bool json = f.path.size() > 5 && f.path.substr(f.path.size() - 5) == ".json";
    files.push_back({std::string(f.path), fill(with_codes(f.bytes), who, json)});
  }
  // The manifest first, as `new cpp` writes it.
  std::stable_partition(files.begin(), files.end(),
                        [](const PlannedFile& f) { return f.path == kManifestFile; });
  return files;
}

Result<Scaffolded> scaffold_js(const Request& request) {
  return scaffold_with(request, plan_js);
}

}  // namespace escouade::scaffold
