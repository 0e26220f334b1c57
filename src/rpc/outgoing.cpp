#include "rpc/outgoing.hpp"

#include <cstring>

#include "base/utf8.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"

namespace escouade::rpc {

namespace json = boost::json;

std::chrono::milliseconds default_timeout(std::string_view method) noexcept {
  const proto::MethodInfo* m = proto::find_method(method);
  return std::chrono::milliseconds(m ? m->timeout_ms : proto::kDefaultTimeoutMs);
}

namespace {

// What the plugin protocol says of `method`, or what it says of a method it does not name.
struct Known {
  proto::Delivery delivery = proto::Delivery::kept;
  std::uint32_t delay_ms = proto::kDefaultTimeoutMs;
};
Known known(std::string_view method) {
  const proto::MethodInfo* m = proto::find_method(method);
  if (!m) return {};
  return {m->delivery, m->timeout_ms};
}

std::string params_of_values(const std::optional<json::value>& params) {
  std::string json;
  if (params) proto::write_json(json, *params);
  return json;
}

}  // namespace

Result<Outgoing> Outgoing::make(bool request, std::string_view method, std::string params,
                                ResultForm form, proto::Delivery delivery, std::uint32_t delay_ms) {
  auto body = std::make_shared<Body>();
  body->method.assign(method);
  std::string& t = body->tail;
  t.reserve(params.size() + method.size() + 48);
  if (!request) t += R"({"jsonrpc":"2.0")";
  t += R"(,"method":)";
  proto::write_json(t, method);  // escaped: a method's name cannot break the line
  if (!params.empty()) {
    t += R"(,"params":)";
    body->params_at = t.size();
    body->params_size = params.size();
    t += params;
  }
  t += '}';
  // Checked once, whatever the number of peers it goes to: text handed on as it came, or a
  // string of the host's own, may hold what no line may.
  if (std::memchr(t.data(), '\n', t.size()) || std::memchr(t.data(), '\r', t.size())) {
    return Error{proto::ErrorCode::internal,
                 std::string(method) + ": a message would hold a raw line break; it was not sent"};
  }
  if (!is_valid_utf8(t)) {
    return Error{
        proto::ErrorCode::internal,
        std::string(method) + ": a message holds text that is not valid UTF-8; it was not sent"};
  }
  t += '\n';
  body->request = request;
  body->form = form;
  body->delivery = delivery;
  body->delay = std::chrono::milliseconds(delay_ms);
  return Outgoing(std::move(body));
}

Result<Outgoing> Outgoing::request_text(std::string_view method, std::string params,
                                        ResultForm form) {
  const Known k = known(method);
  return make(true, method, std::move(params), form, proto::Delivery::kept, k.delay_ms);
}

Result<Outgoing> Outgoing::request_value(std::string_view method,
                                         const std::optional<json::value>& params,
                                         ResultForm form) {
  return request_text(method, params_of_values(params), form);
}

Result<Outgoing> Outgoing::notification_value(std::string_view method,
                                              const std::optional<json::value>& params) {
  const Known k = known(method);
  return make(false, method, params_of_values(params), ResultForm::value, k.delivery, k.delay_ms);
}

std::string_view Outgoing::params_text() const noexcept {
  return std::string_view(body_->tail).substr(body_->params_at, body_->params_size);
}

std::string Outgoing::request_line(std::int64_t id) const {
  std::string line;
  line.reserve(body_->tail.size() + 40);
  line += R"({"jsonrpc":"2.0","id":)";
  line += std::to_string(id);
  line += body_->tail;
  return line;
}

}  // namespace escouade::rpc
