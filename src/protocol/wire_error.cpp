#include "protocol/wire_error.hpp"

namespace escouade::proto {

namespace {

class PeerCategory final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "escouade.peer"; }
  std::string message(int ev) const override {
    if (auto known = error_code_from_int(ev)) return protocol_category().message(ev);
    return "the peer's error " + std::to_string(ev);
  }
};

}  // namespace

const boost::system::error_category& peer_category() noexcept {
  static const PeerCategory category;
  return category;
}

boost::system::error_code peer_error(int code) noexcept {
  return {code, peer_category()};
}

int wire_code(const boost::system::error_code& code) noexcept {
  if (code.category() == protocol_category() || code.category() == peer_category()) {
    return code.value();
  }
  return static_cast<int>(ErrorCode::internal);
}

std::string code_text(ErrorCode code) {
  return std::to_string(static_cast<int>(code));
}

}  // namespace escouade::proto
