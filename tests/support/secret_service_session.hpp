#pragma once

// For tests: a real Secret Service that is not the user's. A private D-Bus session bus
// (dbus-daemon, with no service activation) and, on it, gnome-keyring-daemon with its "login"
// keyring created and unlocked, all living in a fresh folder under /tmp: the user's own bus and
// keyring are never touched.
//
// Thread: one owner. The daemons are children of this process, started without a shell.

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "platform/process.hpp"

namespace escouade::platform::testing {

class SecretServiceSession {
 public:
  // Whether gnome-keyring runs on the bus: kAbsent gives a bus where no Secret Service answers.
  enum class Keyring { kRunning, kAbsent };

  // The password the login keyring is created and unlocked with.
  static constexpr const char* kPassword = "test";

  // Starts the bus, then (kRunning) gnome-keyring, and returns once the bus answers and, with a
  // keyring, once org.freedesktop.secrets is owned and its "default" alias names an unlocked
  // collection: storing into the default collection then needs no prompt. `safety` bounds the
  // wait; it is a guard against a hang, not an expectation. On failure everything started is
  // stopped again, and the Error says which step failed (with the daemon's standard error).
  static Result<std::unique_ptr<SecretServiceSession>> start(
      Keyring keyring = Keyring::kRunning,
      std::chrono::milliseconds safety = std::chrono::seconds(10));

  // Stops both daemons (their whole process trees), reaps them and removes the folder.
  ~SecretServiceSession();
  SecretServiceSession(const SecretServiceSession&) = delete;
  SecretServiceSession& operator=(const SecretServiceSession&) = delete;

  // The private bus, as DBUS_SESSION_BUS_ADDRESS takes it ("unix:path=...").
  const std::string& bus_address() const { return bus_address_; }
  // The session's folder: home/, data/, config/ and runtime/ (0700) are in it.
  const std::filesystem::path& root() const { return root_; }

  // What a child program needs in its environment to use this Secret Service and nothing of
  // the user's: DBUS_SESSION_BUS_ADDRESS, HOME, XDG_DATA_HOME, XDG_CONFIG_HOME, XDG_RUNTIME_DIR,
  // each "K=V". Add PATH and the rest yourself.
  std::vector<std::string> child_env() const;

  // Locks the keyring's default collection, as a screen lock or a timeout would: what it keeps
  // can no longer be read or changed without a prompt, and the session has no prompter. Through
  // a connection of its own, so it works from any process. There is no unlock: use a session of
  // its own for such a test.
  Result<void> lock_default_collection() const;

  // Points this process's session bus at this one (setenv DBUS_SESSION_BUS_ADDRESS). GLib
  // connects once and keeps that bus for the life of the process: call it before the first
  // libsecret or GDBus call of the process, and use one session per process.
  void use_in_this_process() const;

 private:
  SecretServiceSession() = default;

  std::filesystem::path root_;
  std::string bus_address_;
  Spawned bus_;
  Spawned keyring_;
};

}  // namespace escouade::platform::testing
