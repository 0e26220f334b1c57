#include "rpc/reply.hpp"

#include <utility>

#include "protocol/gen/errors.hpp"
#include "protocol/wire_error.hpp"

namespace escouade::rpc {

Reply<>::Reply(std::shared_ptr<ReplySink> sink, boost::json::value id, std::string method)
    : sink_(std::move(sink)), id_(std::move(id)), method_(std::move(method)) {}

Reply<>& Reply<>::operator=(Reply<>&& other) noexcept {
  if (this != &other) {
    if (sink_) {
      sink_->dropped(method_);
      send(proto::Message::error_response(id_, static_cast<int>(proto::ErrorCode::internal),
                                          method_ + ": the handler gave no answer"));
    }
    sink_ = std::move(other.sink_);
    id_ = std::move(other.id_);
    method_ = std::move(other.method_);
  }
  return *this;
}

Reply<>::~Reply() {
  if (!sink_) return;
  sink_->dropped(method_);
  send(proto::Message::error_response(id_, static_cast<int>(proto::ErrorCode::internal),
                                      method_ + ": the handler gave no answer"));
}

void Reply<>::result(boost::json::value value) {
  send(proto::Message::response(id_, std::move(value)));
}

void Reply<>::result_text(std::string json) {
  send(proto::Message::response_text(id_, std::move(json)));
}

void Reply<>::error(proto::ErrorCode code, std::string message) {
  send(proto::Message::error_response(id_, proto::wire_code(code), std::move(message)));
}

void Reply<>::error(const Error& e) {
  send(proto::Message::error_response(id_, proto::wire_code(e.code), e.message));
}

void Reply<>::send(proto::Message answer) {
  if (!sink_) return;  // already answered: the first answer stands
  auto sink = std::move(sink_);
  sink_.reset();
  sink->deliver(std::move(answer));
}

}  // namespace escouade::rpc
