#include "platform/errors.hpp"

#include <string>

namespace escouade::platform {

namespace {

class Category final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "escouade.platform"; }
  std::string message(int ev) const override {
    switch (static_cast<Errc>(ev)) {
      case Errc::os_failure:
        return "a system call failed";
      case Errc::unreachable:
        return "the keychain cannot be reached";
      case Errc::invalid_argument:
        return "what was given cannot be used";
      case Errc::exhausted:
        return "the system has no room for it now";
    }
    return "platform error " + std::to_string(ev);
  }
};

}  // namespace

const char* to_string(Errc e) noexcept {
  switch (e) {
    case Errc::os_failure:
      return "os_failure";
    case Errc::unreachable:
      return "unreachable";
    case Errc::invalid_argument:
      return "invalid_argument";
    case Errc::exhausted:
      return "exhausted";
  }
  return "unknown";
}

const boost::system::error_category& platform_category() noexcept {
  static const Category category;
  return category;
}

}  // namespace escouade::platform
