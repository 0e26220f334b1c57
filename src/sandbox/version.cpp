#include "sandbox/version.hpp"

#include "protocol/gen/host_methods.hpp"
#include "protocol/gen/methods.hpp"

namespace escouade::sandbox {

std::string version_text(std::string_view program) {
  return std::string(program) + " " + ESCOUADE_HOST_VERSION + "\n" + "plugin protocol " +
         std::to_string(proto::kProtocolVersion) + ", host protocol " +
         std::to_string(proto::host::kProtocolVersion) + "\n" + "engine SpiderMonkey " +
         ESCOUADE_ENGINE_VERSION + " (mozjs), for run.js and run.wasm plugins\n";
}

}  // namespace escouade::sandbox
