#pragma once

// Shared by keychain_test.cpp and keychain_file_test.cpp: the one Secret Service session of
// the test process, and a temporary folder that removes itself.

#include <filesystem>
#include <string>

#include "base/temp_dir.hpp"
#include "support/secret_service_session.hpp"

namespace escouade::platform::testing {

// The process's Secret Service session, started by the first test that asks for it (with
// DBUS_SESSION_BUS_ADDRESS set before any libsecret call) and stopped after the last test.
// nullptr, with the reason in `why`, when it could not start.
SecretServiceSession* shared_secret_service(std::string& why);

// A folder of its own for one test (base/temp_dir.hpp).
struct TempDir : escouade::TempDir {
  TempDir() : escouade::TempDir("escouade-keychain") {}
};

// A name of its own for each test, so tests sharing one keyring never see each other's
// secrets: plugin:dev.test.<test>:<key>.
std::string test_name(const std::string& key);

}  // namespace escouade::platform::testing
