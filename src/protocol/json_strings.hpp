#pragma once

// Rewriting every string of a value in place: how a plugin's result is masked before the app
// sees it (a secret the plugin was given and sends back reaches the app's screens as ••••, as
// it reaches its journal).

#include <boost/json/value.hpp>
#include <functional>
#include <string>

namespace escouade::proto {

// Calls `rewrite` on each string of `v`, keys of objects included, and keeps what it made of
// it. A key rewritten into one the object already has keeps the later member. The decoder
// bounds the depth of what it reads, so the walk's is bounded too.
void rewrite_strings(boost::json::value& v, const std::function<void(std::string&)>& rewrite);

}  // namespace escouade::proto
