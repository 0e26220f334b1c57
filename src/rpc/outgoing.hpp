#pragma once

// One message the host sends to a peer, whatever its shape: made once from its method's
// generated types (or, for a method the protocol does not name, from the text or the values the
// app handed through host/call), then handed down unchanged by every layer (Host, Supervisor and
// its queue, PluginChannel, Session) until the session writes its line.
//
// It carries what each layer needs to know of it, so that none has an overload per shape and
// none reads its text again:
// - its method's name, once for all the peers it goes to;
// - its params written once by the generated writer (a fact for every plugin that hears it, a
//   decision asked of every voter), with the line of a notification written whole;
// - the method's default delay (its timeoutMs in the schema, else x-defaultTimeoutMs);
// - how a call's result comes back (values, or the JSON text as it came: ResultForm);
// - its delivery (protocol/delivery.hpp): whether it may be dropped when the peer does not
//   read, taken from the method's generated constant, never from the text.
//
// Copying one is a shared count: the same message to 20 plugins is encoded once.
// Thread: any, one at a time for each copy; what it says never changes once made (the last copy
// may give its line away to the session that sends it: line_to_send).

#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "base/result.hpp"
#include "protocol/delivery.hpp"
#include "protocol/json_write.hpp"

namespace escouade::rpc {

// How a call's result is handed back: built into values (the default), or as its JSON text,
// checked but not built: escouade-host gives a plugin's result to the app as it came, where
// building it and writing it out again cost more than the rest of the call.
enum class ResultForm : std::uint8_t { value, text };

class Outgoing {
 public:
  // A request of a method of a protocol (proto::method::X, proto::host::method::X), its params
  // written from the generated struct.
  template <class M>
  static Result<Outgoing> request(const typename M::Params& params,
                                  ResultForm form = ResultForm::value) {
    static_assert(!M::kNotification, "a notification is made with Outgoing::request");
    return make(true, M::kName, true, &write_params<M>, &params, form, M::kDelivery, M::kTimeoutMs);
  }
  // A notification of a method of a protocol, its line written once.
  template <class M>
  static Result<Outgoing> notification(const typename M::Params& params) {
    static_assert(M::kNotification, "a request is made with Outgoing::request");
    return make(false, M::kName, true, &write_params<M>, &params, ResultForm::value, M::kDelivery,
                M::kTimeoutMs);
  }
  // A call by name with its params as JSON text (one object or array, or "" for none): what the
  // app hands through host/call, given to the plugin as it came. Checked as a line is (valid
  // UTF-8, no raw line break). Its delivery and delay are the method's when the plugin protocol
  // names it, else kept and x-defaultTimeoutMs.
  static Result<Outgoing> request_text(std::string_view method, std::string_view params,
                                       ResultForm form = ResultForm::text);
  // The same with params as values, written as they are (never copied first): a method a plugin
  // defines itself, called by the benches and the tests, or a probe of the conformance bench.
  static Result<Outgoing> request_value(std::string_view method, const boost::json::value& params,
                                        ResultForm form = ResultForm::value);
  // The same with no params at all (no "params" member).
  static Result<Outgoing> request_value(std::string_view method, std::nullopt_t,
                                        ResultForm form = ResultForm::value);
  // A notification by name with its params as values: the conformance bench's probes (a fact of
  // its own making, a method no plugin knows). Its delivery is the method's, as above.
  static Result<Outgoing> notification_value(std::string_view method,
                                             const boost::json::value& params);
  static Result<Outgoing> notification_value(std::string_view method, std::nullopt_t);

  bool is_request() const noexcept { return body_->request; }
  std::string_view method() const noexcept { return body_->method; }
  std::chrono::milliseconds default_delay() const noexcept { return body_->delay; }
  ResultForm form() const noexcept { return body_->form; }
  proto::Delivery delivery() const noexcept { return body_->delivery; }
  // Its params as JSON text; empty when it has none, or once its line was given away.
  std::string_view params_text() const noexcept;
  // A notification's line, '\n' included: the same bytes for every peer.
  std::string notification_line() const { return body_->line; }
  // A request's line with its id, '\n' included.
  std::string request_line(std::int64_t id) const;
  // The line to send (with `id` for a request), '\n' included: what the session writes. The
  // last copy of a message gives its own line away instead of copying it (a call made once, a
  // timer's firing: its params are not copied again); while other copies exist (a fact for many
  // plugins, a decision for many voters, an attachment remembered), each gets a copy.
  std::string line_to_send(std::int64_t id = 0);
  // A notification's line, '\n' included, shared with every peer it goes to instead of copied
  // for each (a fact for ten plugins): the message's own text, which is never changed while
  // shared (line_to_send gives it away only from a copy that nothing shares). Empty once given
  // away, as line_to_send's: asked for while is_shared().
  std::shared_ptr<const std::string> shared_line() const;
  // Whether other copies of this message exist (or lines shared from it): its line then goes
  // shared; the last copy alone gives its line away instead (line_to_send).
  bool is_shared() const noexcept { return body_.use_count() > 1 && !body_->given; }
  // Whether `other` is this very message (a copy of it), not one with the same text.
  bool same_as(const Outgoing& other) const noexcept { return body_ == other.body_; }

 private:
  struct Body {
    std::string_view method;  // the generated type's name, or own_method
    std::string own_method;   // a method given by name
    // The whole line, '\n' included; a request's without its id, which goes at id_at. Given
    // away by the last copy (line_to_send): empty from then on.
    mutable std::string line;
    mutable bool given = false;
    std::size_t id_at = 0;
    std::size_t params_at = 0;  // where the params start in `line`
    std::size_t params_size = 0;
    bool request = false;
    ResultForm form = ResultForm::value;
    proto::Delivery delivery = proto::Delivery::kept;
    std::chrono::milliseconds delay{};
  };
  explicit Outgoing(std::shared_ptr<const Body> body) : body_(std::move(body)) {}

  // Appends `params` (a pointer to the message's params) as JSON text to `out`; nothing for a
  // message that has none.
  using WriteParams = void (*)(std::string& out, const void* params);
  template <class M>
  static void write_params(std::string& out, const void* params) {
    if constexpr (!std::is_same_v<typename M::Params, std::nullptr_t>) {
      using proto::write_json;  // and, by ADL, that of M's own namespace
      write_json(out, *static_cast<const typename M::Params*>(params));
    }
  }
  // Writes the message (its params by `write`), checks it as a line is checked, and keeps it.
  // `static_name`: `method` lives as long as the program (a generated type's name).
  static Result<Outgoing> make(bool request, std::string_view method, bool static_name,
                               WriteParams write, const void* params, ResultForm form,
                               proto::Delivery delivery, std::uint32_t delay_ms);

  std::shared_ptr<const Body> body_;
};

}  // namespace escouade::rpc
