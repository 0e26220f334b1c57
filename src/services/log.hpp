#pragma once

// The log notification: a line of the plugin's journal, at the level it gives.

#include <memory>

#include "journal/journal.hpp"
#include "rpc/session.hpp"

namespace escouade::services {

// Journals each log notification as `log: <message>` at its level (masked like every line).
// The session holds `journal` for as long as it lives.
void serve_log(rpc::Session& session, std::shared_ptr<Journal> journal);

}  // namespace escouade::services
