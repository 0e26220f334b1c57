#pragma once

// A permissions/decide answer read from the checked text of its result (ResultForm::text), for
// the host's decisions: one of the protocol's text readers, beside json_text.hpp's, so that no
// layer above reads JSON by hand.

#include <optional>
#include <string_view>

#include "protocol/gen/types.hpp"

namespace escouade::proto {

// A plugin's answer read from its text without building its values, for the usual answer: an
// object whose "decision" is one of the three words and whose "message", when there is one, is
// a string, each given once and written without an escape, and no key written with one (other
// members are ignored, as the values path ignores them). nullopt for anything else, which is
// to be read from its values (read_value), which explains what does not hold. `text` is JSON
// that was checked (json_text.hpp); what it returns is what read_value gives for the same text.
std::optional<Decision> decision_of_text(std::string_view text);

}  // namespace escouade::proto
