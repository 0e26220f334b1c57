#include "runtime/program_session.hpp"

namespace escouade::runtime {

std::unique_ptr<rpc::Session> session_for(Program* program, boost::asio::any_io_executor executor,
                                          rpc::Session::Report report, Clock& clock, LineTap sent) {
  auto writer = [program, sent](proto::Delivery delivery) {
    return [program, sent, delivery](std::string line) {
      if (sent) sent(line);
      if (program) program->write(std::move(line), delivery);
    };
  };
  auto session = std::make_unique<rpc::Session>(std::move(executor), writer(proto::Delivery::kept),
                                                std::move(report), clock);
  session->set_droppable_sink(writer(proto::Delivery::droppable));
  session->set_shared_droppable_sink([program, sent](std::shared_ptr<const std::string> line) {
    if (sent) sent(*line);
    if (program) program->write_shared(std::move(line), proto::Delivery::droppable);
  });
  return session;
}

void feed_session(ProgramEvents& events, rpc::Session& session) {
  events.output_line = [&session](std::string_view line) { session.feed_line(line); };
  events.output_too_long = [&session](std::size_t limit) { session.line_too_long(limit); };
}

}  // namespace escouade::runtime
