#include "sandbox/spidermonkey/prelude.hpp"

#include <string>

#include "sandbox/spidermonkey/prelude_parts.hpp"

namespace escouade::sandbox::spidermonkey {

namespace {

const std::string kWhole = std::string(kPreludeBeginning) + std::string(kTimersPart) +
                           std::string(kTextPart) + std::string(kUrlPart) + std::string(kNetPart) +
                           std::string(kEscouadePart) + std::string(kPreludeEnd);

}  // namespace

const std::string_view kPrelude = kWhole;

}  // namespace escouade::sandbox::spidermonkey
