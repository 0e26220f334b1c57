#pragma once

// The wiring between a program and the JSON-RPC session that speaks with it, in one place for
// every side that runs one (the supervisor, the conformance bench's plugin link, the harness's
// link to escouade-host): what the session sends is written to the program's input, a
// notification whose method may be dropped as droppable (Program::write, protocol/delivery.hpp),
// every other line kept; what the program writes on its output is fed to the session line by
// line, and a line too long is told to it.
//
// Thread: the session's executor, as the program's events.

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <string_view>

#include "base/clock.hpp"
#include "rpc/session.hpp"
#include "runtime/program.hpp"

namespace escouade::runtime {

// A line on its way, as one who watches the exchange sees it (the conformance bench records
// what it sent). '\n' included.
using LineTap = std::function<void(std::string_view line)>;

// A session whose lines go to `program` (which outlives it; null: they go nowhere, for a side
// whose program could not be made), each seen first by `sent` when given.
std::unique_ptr<rpc::Session> session_for(Program* program, boost::asio::any_io_executor executor,
                                          rpc::Session::Report report,
                                          Clock& clock = steady_clock(), LineTap sent = {});

// Sets `events`' output_line and output_too_long to feed `session` (which outlives the
// program's events); the other events are the caller's.
void feed_session(ProgramEvents& events, rpc::Session& session);

}  // namespace escouade::runtime
