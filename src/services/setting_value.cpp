#include "services/setting_value.hpp"

#include <cmath>
#include <cstdint>

namespace escouade::services {

boost::json::value setting_number(double number) {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (std::isfinite(number) && std::trunc(number) == number && std::fabs(number) <= kExact) {
    return boost::json::value(static_cast<std::int64_t>(number));
  }
  return boost::json::value(number);
}

std::string_view setting_type_name(manifest::SettingType type) noexcept {
  switch (type) {
    case manifest::SettingType::string:
      return "string";
    case manifest::SettingType::number:
      return "number";
    case manifest::SettingType::boolean:
      return "boolean";
  }
  return "string";
}

}  // namespace escouade::services
