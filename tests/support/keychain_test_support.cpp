#include "support/keychain_test_support.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <memory>

namespace escouade::platform::testing {
namespace {

std::unique_ptr<SecretServiceSession>& session_slot() {
  static std::unique_ptr<SecretServiceSession> session;
  return session;
}

// Stops the session once every test has run, while the process still has all it needs.
class SessionEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { session_slot().reset(); }
};

[[maybe_unused]] const ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new SessionEnvironment);

}  // namespace

SecretServiceSession* shared_secret_service(std::string& why) {
  static std::string failure;
  std::unique_ptr<SecretServiceSession>& slot = session_slot();
  if (!slot && failure.empty()) {
    auto started = SecretServiceSession::start();
    if (started) {
      slot = std::move(*started);
      slot->use_in_this_process();
    } else {
      failure = started.error().message;
    }
  }
  why = failure;
  return slot.get();
}

std::string test_name(const std::string& key) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info != nullptr ? info->name() : "none";
  for (char& c : test) {
    if (c == '/') c = '.';
  }
  return "plugin:dev.test." + test + ":" + key;
}

}  // namespace escouade::platform::testing
