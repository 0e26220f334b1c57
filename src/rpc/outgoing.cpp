#include "rpc/outgoing.hpp"

#include "protocol/encode.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"

namespace escouade::rpc {

namespace json = boost::json;

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

void write_value(std::string& out, const void* params) {
  proto::write_json(out, *static_cast<const json::value*>(params));
}

void write_none(std::string&, const void*) {}

void write_text(std::string& out, const void* params) {
  out += *static_cast<const std::string_view*>(params);
}

constexpr std::size_t kIdRoom = 20;  // the digits of any int64 id

}  // namespace

Result<Outgoing> Outgoing::make(bool request, std::string_view method, bool static_name,
                                WriteParams write, const void* params, ResultForm form,
                                proto::Delivery delivery, std::uint32_t delay_ms) {
  // Written in a buffer of this thread's, then copied out at its size (and room for an id): one
  // allocation for the line however it grew, as protocol/encode.cpp's lines.
  thread_local std::string scratch;
  scratch.clear();
  scratch += R"({"jsonrpc":"2.0")";
  std::size_t id_at = 0;
  if (request) {
    scratch += R"(,"id":)";
    id_at = scratch.size();
  }
  scratch += R"(,"method":)";
  proto::write_json(scratch, method);  // escaped: a method's name cannot break the line
  const std::size_t before_params = scratch.size();
  scratch += R"(,"params":)";
  const std::size_t params_at = scratch.size();
  write(scratch, params);
  const std::size_t params_size = scratch.size() - params_at;
  if (params_size == 0) scratch.resize(before_params);  // none: no member at all
  scratch += '}';
  // Checked once, whatever the number of peers it goes to: text handed on as it came, or a
  // string of the host's own, may hold what no line may.
  if (auto problem = proto::line_problem(scratch)) {
    if (scratch.capacity() > 64 * 1024) std::string().swap(scratch);
    return Error{problem->code, std::string(method) + ": " + problem->message};
  }
  auto body = std::make_shared<Body>();
  body->line.reserve(scratch.size() + 1 + (request ? kIdRoom : 0));
  body->line.append(scratch).push_back('\n');
  if (scratch.capacity() > 64 * 1024) std::string().swap(scratch);
  if (static_name) {
    body->method = method;
  } else {
    body->own_method.assign(method);
    body->method = body->own_method;  // the Body is not moved: made in place, shared from here
  }
  body->id_at = id_at;
  body->params_at = params_size ? params_at : 0;
  body->params_size = params_size;
  body->request = request;
  body->form = form;
  body->delivery = delivery;
  body->delay = std::chrono::milliseconds(delay_ms);
  return Outgoing(std::move(body));
}

Result<Outgoing> Outgoing::request_text(std::string_view method, std::string_view params,
                                        ResultForm form) {
  const Known k = known(method);
  return make(true, method, false, &write_text, &params, form, proto::Delivery::kept, k.delay_ms);
}

Result<Outgoing> Outgoing::request_value(std::string_view method, const json::value& params,
                                         ResultForm form) {
  const Known k = known(method);
  return make(true, method, false, &write_value, &params, form, proto::Delivery::kept, k.delay_ms);
}

Result<Outgoing> Outgoing::request_value(std::string_view method, std::nullopt_t, ResultForm form) {
  const Known k = known(method);
  return make(true, method, false, &write_none, nullptr, form, proto::Delivery::kept, k.delay_ms);
}

Result<Outgoing> Outgoing::notification_value(std::string_view method, const json::value& params) {
  const Known k = known(method);
  return make(false, method, false, &write_value, &params, ResultForm::value, k.delivery,
              k.delay_ms);
}

Result<Outgoing> Outgoing::notification_value(std::string_view method, std::nullopt_t) {
  const Known k = known(method);
  return make(false, method, false, &write_none, nullptr, ResultForm::value, k.delivery,
              k.delay_ms);
}

std::string_view Outgoing::params_text() const noexcept {
  if (body_->given || body_->params_size == 0) return {};
  return std::string_view(body_->line).substr(body_->params_at, body_->params_size);
}

std::string Outgoing::request_line(std::int64_t id) const {
  const std::string& line = body_->line;
  std::string out;
  out.reserve(line.size() + kIdRoom);
  out.append(line, 0, body_->id_at).append(std::to_string(id)).append(line, body_->id_at);
  return out;
}

std::shared_ptr<const std::string> Outgoing::shared_line() const {
  // Owned with the message itself: its line lives while any queue holds it.
  return std::shared_ptr<const std::string>(body_, &body_->line);
}

std::string Outgoing::line_to_send(std::int64_t id) {
  if (body_.use_count() != 1 || body_->given) {
    return body_->request ? request_line(id) : body_->line;
  }
  // The last copy: its line is given away, the id written into the room kept for it.
  body_->given = true;
  std::string line = std::move(body_->line);
  body_->line.clear();
  if (body_->request) line.insert(body_->id_at, std::to_string(id));
  return line;
}

}  // namespace escouade::rpc
