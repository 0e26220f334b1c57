#include "protocol/message.hpp"

#include <utility>

#include "protocol/gen/errors.hpp"

namespace escouade::proto {

Message Message::request(boost::json::value id, std::string method,
                         std::optional<boost::json::value> params) {
  Message m;
  m.kind = MessageKind::request;
  adopt(m.id, std::move(id));
  m.method = std::move(method);
  m.params = std::move(params);
  return m;
}

Message Message::notification(std::string method, std::optional<boost::json::value> params) {
  Message m;
  m.kind = MessageKind::notification;
  m.method = std::move(method);
  m.params = std::move(params);
  return m;
}

Message Message::response(boost::json::value id, boost::json::value result) {
  Message m;
  m.kind = MessageKind::response;
  adopt(m.id, std::move(id));
  adopt(m.result, std::move(result));
  return m;
}

Message Message::response_text(boost::json::value id, std::string result) {
  Message m;
  m.kind = MessageKind::response;
  adopt(m.id, std::move(id));
  m.result_text = std::move(result);
  return m;
}

Message Message::error_response(boost::json::value id, int code, std::string message,
                                std::optional<boost::json::value> data) {
  Message m;
  m.kind = MessageKind::error_response;
  adopt(m.id, std::move(id));
  m.error = ErrorObject{code, std::move(message), std::move(data)};
  return m;
}

Message error_reply(const Invalid& invalid) {
  // The message says what JSON-RPC calls the error; the reason says what exactly was wrong.
  std::string text =
      invalid.code == static_cast<int>(ErrorCode::parse) ? "Parse error: " : "Invalid Request: ";
  text += invalid.reason;
  return Message::error_response(invalid.id, invalid.code, std::move(text));
}

}  // namespace escouade::proto
