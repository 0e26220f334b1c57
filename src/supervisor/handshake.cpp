#include "supervisor/handshake.hpp"

#include <boost/json/value_from.hpp>

#include "base/quote.hpp"
#include "protocol/gen/methods.hpp"
#include "protocol/json_read.hpp"

namespace escouade::supervisor {

namespace json = boost::json;
using rpc::CallOutcome;

namespace {

constexpr std::size_t kQuotedChars = 200;  // of a plugin's error message, in a stop reason

std::string delay_text(std::chrono::milliseconds delay) {
  if (delay.count() % 1000 == 0) return std::to_string(delay.count() / 1000) + " s";
  return std::to_string(delay.count()) + " ms";
}

}  // namespace

proto::EscouadeCapabilities host_capabilities() {
  proto::EscouadeCapabilities c;
  c.batch = true;
  c.secrets = true;
  c.log = true;
  c.attach = true;
  return c;
}

json::value initialize_params(const HandshakeParties& parties) {
  proto::InitializeParams p;
  p.protocol_version = proto::kProtocolVersion;
  p.escouade.version = parties.escouade_version;
  p.plugin.id = parties.plugin_id;
  p.plugin.version = parties.plugin_version;
  p.lang = parties.lang;
  p.capabilities = host_capabilities();
  json::value params = json::value_from(p);
  params.as_object()["capabilities"].as_object()[kSettingsCapability] = true;
  return params;
}

HandshakeVerdict judge_initialize(const CallOutcome& o, std::chrono::milliseconds delay) {
  const std::string this_speaks =
      "this Escouade speaks version " + std::to_string(proto::kProtocolVersion);
  HandshakeVerdict v;
  switch (o.kind) {
    case CallOutcome::Kind::closed:
      return v;
    case CallOutcome::Kind::timeout:
      v.stop = "it did not answer initialize within " + delay_text(delay);
      return v;
    case CallOutcome::Kind::error:
      v.stop = "it answered initialize with the error " + std::to_string(o.error.code) + ": " +
               quote_for_journal(o.error.message, kQuotedChars);
      return v;
    case CallOutcome::Kind::result:
      break;
  }
  // The version first: without it nothing else counts.
  proto::ReadContext ctx;
  const json::object* answer = o.result.if_object();
  const json::value* version = answer ? answer->if_contains("protocolVersion") : nullptr;
  std::int64_t speaks = 0;
  if (!version || !proto::read_value(*version, speaks, ctx)) {
    v.stop = "its answer to initialize gives no protocol version; " + this_speaks;
    return v;
  }
  if (speaks != proto::kProtocolVersion) {
    v.stop = "it speaks version " + std::to_string(speaks) + " of the protocol; " + this_speaks;
    return v;
  }
  // With the version read, the one field left that can fail is capabilities.
  proto::InitializeResult result;
  if (!proto::read_value(o.result, result, ctx)) {
    v.fault = "its answer to initialize has no capabilities object";
    result = proto::InitializeResult{};
    result.protocol_version = speaks;
  }
  v.result = std::move(result);
  return v;
}

}  // namespace escouade::supervisor
