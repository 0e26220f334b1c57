#pragma once

// agent/attach, the harness's attachment of an agent (spec: "What each agent had attached to it
// ... is given again to the new process before any other message"): the host remembers the last
// one of each agent, so it must know which agent one is about.

#include <string>
#include <string_view>

namespace escouade::proto {

// The agent an attachment is about, read from its params' JSON text: their "agent" (a string,
// or an object's "id"), else their "key". Empty when they name none or are not JSON.
std::string attached_agent(std::string_view params_json);

}  // namespace escouade::proto
