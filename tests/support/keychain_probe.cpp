// For keychain_test: runs calls of the Secret Service backend on one name, in a process of its
// own whose DBUS_SESSION_BUS_ADDRESS the test chose. Its arguments are the calls, in order:
// get, set (of a fixed value) or remove. It prints one line each: "<call> ok" (get adds "kept"
// or "none") or "<call> error <kind> <message>" (platform/errors.hpp), never a value, and exits 0
// when every call failed, 1 otherwise, 2 on an unknown argument.

#include <iostream>
#include <string>

#include "platform/errors.hpp"
#include "platform/keychain.hpp"

int main(int argc, char** argv) {
  const std::string name = "plugin:dev.example.probe:token";
  auto keychain = escouade::platform::make_secret_service_keychain();
  int failures = 0;
  auto report = [&](const std::string& call, const auto& result, const std::string& ok) {
    if (result) {
      std::cout << call << " ok" << ok << '\n';
      return;
    }
    ++failures;
    const auto& code = result.error().code;
    std::cout << call << " error "
              << (code.category() == escouade::platform::platform_category()
                      ? escouade::platform::to_string(
                            static_cast<escouade::platform::Errc>(code.value()))
                      : code.to_string())
              << ' ' << result.error().message << '\n';
  };
  for (int i = 1; i < argc; ++i) {
    const std::string call = argv[i];
    if (call == "get") {
      auto got = keychain->get(name);
      report(call, got, got && got->has_value() ? " kept" : " none");
    } else if (call == "set") {
      report(call, keychain->set(name, "probe value"), "");
    } else if (call == "remove") {
      report(call, keychain->remove(name), "");
    } else {
      std::cerr << "keychain_probe: unknown call " << call << '\n';
      return 2;
    }
  }
  std::cout.flush();
  return failures == argc - 1 ? 0 : 1;
}
