#pragma once

// How a setting's value is typed, shared by the user's values (settings.cpp) and a project's
// .escouade.yml (project_file.cpp).

#include <boost/json/value.hpp>
#include <string_view>

#include "manifest/manifest.hpp"

namespace escouade::services {

// How a number answers: a whole number of magnitude at most 2^53 as an integer (3, not 3.0),
// any other as a double.
boost::json::value setting_number(double number);

// "string", "number", "boolean".
std::string_view setting_type_name(manifest::SettingType type) noexcept;

}  // namespace escouade::services
