#pragma once

// The answers that apply when a plugin gives none to a call of Escouade's within its delay, or
// cannot (it crashed, it is stopped, it does not run): spec, "The delays". The method table
// (gen/methods.hpp) gives each call its delay; this gives the few that have a default answer.

#include <boost/json/value.hpp>
#include <optional>
#include <string_view>

namespace escouade::proto {

// permissions/decide: {"decision":"ask"}, the user is asked as without a plugin. Any other
// method has none: its caller fails it with the reason.
std::optional<boost::json::value> default_result(std::string_view method);

}  // namespace escouade::proto
