#pragma once

// Internal to src/manifest: the first of the two checks, schema/manifest-1.json interpreted by
// valijson (its Boost.JSON adapter). The schema is the one the build embedded, compiled once on
// first use; checks may then run on several threads at once.

#include <boost/json/value.hpp>

#include "base/result.hpp"

namespace escouade::manifest::detail {

// invalidParams (-32602) naming the deepest failing field and why: the field's own rule when it
// has one (explain_field), else valijson's reason in plainer words. internalError (-32603) only
// if the embedded schema itself does not load, which a test rules out.
Result<void> check_schema(const boost::json::value& doc);

}  // namespace escouade::manifest::detail
