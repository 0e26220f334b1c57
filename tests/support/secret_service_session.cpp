#include "support/secret_service_session.hpp"

#include <gio/gio.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>

#include "platform/process_tree.hpp"

namespace escouade::platform::testing {
namespace {

using Clock = std::chrono::steady_clock;

// How often the readiness of the bus and the keyring is asked again.
constexpr std::chrono::milliseconds kPollEvery{20};

Error failed(const std::string& why) {
  return make_error(kOsError, "the test Secret Service did not start: " + why);
}

// What a daemon wrote on a descriptor so far (non-blocking), for an error message.
std::string drain(int fd) {
  std::string out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return out;
  }
}

// The first line a daemon writes on `fd`, without its '\n'; nullopt at its end or at `deadline`.
std::optional<std::string> first_line(int fd, Clock::time_point deadline) {
  std::string buffer;
  for (;;) {
    const std::size_t nl = buffer.find('\n');
    if (nl != std::string::npos) return buffer.substr(0, nl);
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    char chunk[512];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n == 0) return std::nullopt;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return std::nullopt;
    }
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

// A bus that listens in `root` only, lets every client talk to every other, and activates
// nothing: a Secret Service is on it only when the session starts one.
std::string bus_config(const std::filesystem::path& root) {
  return "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
         " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
         "<busconfig>\n"
         "  <type>session</type>\n"
         "  <listen>unix:dir=" +
         root.string() +
         "</listen>\n"
         "  <auth>EXTERNAL</auth>\n"
         "  <policy context=\"default\">\n"
         "    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
         "    <allow eavesdrop=\"true\"/>\n"
         "    <allow own=\"*\"/>\n"
         "  </policy>\n"
         "</busconfig>\n";
}

struct ConnectionUnref {
  void operator()(GDBusConnection* c) const {
    g_dbus_connection_close_sync(c, nullptr, nullptr);
    g_object_unref(c);
  }
};
using ConnectionPtr = std::unique_ptr<GDBusConnection, ConnectionUnref>;

struct VariantUnref {
  void operator()(GVariant* v) const { g_variant_unref(v); }
};
using VariantPtr = std::unique_ptr<GVariant, VariantUnref>;

// A connection of its own to `address` (not GLib's shared session bus, which this process may
// not have pointed there yet); nullptr while the bus does not answer.
ConnectionPtr connect_to(const std::string& address, std::string& why) {
  GError* error = nullptr;
  GDBusConnection* c = g_dbus_connection_new_for_address_sync(
      address.c_str(),
      static_cast<GDBusConnectionFlags>(G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                        G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION),
      nullptr, nullptr, &error);
  if (c == nullptr) {
    why = error != nullptr ? error->message : "no reason given";
    g_clear_error(&error);
  }
  return ConnectionPtr{c};
}

// One synchronous call; nullptr (with `why`) when it fails. Takes `args`' floating reference.
VariantPtr call(GDBusConnection* c, const char* destination, const char* path,
                const char* interface, const char* method, GVariant* args, const char* reply_type,
                std::string& why) {
  GError* error = nullptr;
  GVariant* reply = g_dbus_connection_call_sync(c, destination, path, interface, method, args,
                                                G_VARIANT_TYPE(reply_type), G_DBUS_CALL_FLAGS_NONE,
                                                2000, nullptr, &error);
  if (reply == nullptr) {
    why = error != nullptr ? error->message : "no reason given";
    g_clear_error(&error);
  }
  return VariantPtr{reply};
}

// True once gnome-keyring owns its name and its "default" alias is an unlocked collection;
// `why` says what is still missing.
bool keyring_ready(GDBusConnection* c, std::string& why) {
  VariantPtr owned =
      call(c, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
           "NameHasOwner", g_variant_new("(s)", "org.freedesktop.secrets"), "(b)", why);
  if (!owned) return false;
  gboolean has_owner = FALSE;
  g_variant_get(owned.get(), "(b)", &has_owner);
  if (!has_owner) {
    why = "org.freedesktop.secrets is not on the bus";
    return false;
  }
  VariantPtr alias = call(c, "org.freedesktop.secrets", "/org/freedesktop/secrets",
                          "org.freedesktop.Secret.Service", "ReadAlias",
                          g_variant_new("(s)", "default"), "(o)", why);
  if (!alias) return false;
  const gchar* collection = nullptr;
  g_variant_get(alias.get(), "(&o)", &collection);
  if (std::strcmp(collection, "/") == 0) {
    why = "the keyring has no default collection";
    return false;
  }
  VariantPtr locked =
      call(c, "org.freedesktop.secrets", collection, "org.freedesktop.DBus.Properties", "Get",
           g_variant_new("(ss)", "org.freedesktop.Secret.Collection", "Locked"), "(v)", why);
  if (!locked) return false;
  VariantPtr value{g_variant_get_child_value(locked.get(), 0)};
  VariantPtr inner{g_variant_get_variant(value.get())};
  if (!g_variant_is_of_type(inner.get(), G_VARIANT_TYPE_BOOLEAN) ||
      g_variant_get_boolean(inner.get())) {
    why = std::string("the default collection ") + collection + " is locked";
    return false;
  }
  return true;
}

// Ends a daemon's tree and reaps it; a pid of -1 means it was reaped already.
void stop(Spawned& daemon) {
  if (daemon.pid > 0) {
    kill_tree(daemon.pid);
    wait_exit(daemon);
    daemon.pid = -1;
  }
  close_fds(daemon);
}

}  // namespace

Result<std::unique_ptr<SecretServiceSession>> SecretServiceSession::start(
    Keyring keyring, std::chrono::milliseconds safety) {
  const auto deadline = Clock::now() + safety;
  std::unique_ptr<SecretServiceSession> session{new SecretServiceSession()};

  // Under /tmp rather than $TMPDIR: the bus and the keyring listen on unix sockets in it, whose
  // paths may not pass 107 bytes.
  std::string root = "/tmp/escouade-keyring-XXXXXX";
  if (::mkdtemp(root.data()) == nullptr) return failed("mkdtemp: " + std::string(strerror(errno)));
  session->root_ = root;
  for (const char* sub : {"home", "data", "config", "runtime"}) {
    std::error_code ec;
    std::filesystem::create_directory(session->root_ / sub, ec);
    if (ec) return failed("cannot create " + (session->root_ / sub).string() + ": " + ec.message());
    std::filesystem::permissions(session->root_ / sub, std::filesystem::perms::owner_all, ec);
  }
  const std::filesystem::path config = session->root_ / "bus.conf";
  {
    std::ofstream out(config);
    out << bus_config(session->root_);
    if (!out) return failed("cannot write " + config.string());
  }

  const char* path = ::getenv("PATH");
  std::vector<std::string> env = {
      std::string("PATH=") + (path != nullptr ? path : "/usr/bin:/bin"),
      "HOME=" + (session->root_ / "home").string(),
      "XDG_DATA_HOME=" + (session->root_ / "data").string(),
      "XDG_CONFIG_HOME=" + (session->root_ / "config").string(),
      "XDG_RUNTIME_DIR=" + (session->root_ / "runtime").string(),
  };

  auto bus = spawn(SpawnRequest{
      .argv = {"dbus-daemon", "--config-file=" + config.string(), "--nofork", "--print-address=1"},
      .cwd = session->root_,
      .env = env});
  if (!bus) return failed(bus.error().message);
  session->bus_ = *bus;
  const auto address = first_line(session->bus_.stdout_fd, deadline);
  if (!address || address->empty()) {
    return failed("dbus-daemon gave no address: " + drain(session->bus_.stderr_fd));
  }
  session->bus_address_ = *address;

  std::string why;
  ConnectionPtr connection;
  while (!(connection = connect_to(session->bus_address_, why))) {
    if (Clock::now() >= deadline) return failed("the bus does not answer: " + why);
    std::this_thread::sleep_for(kPollEvery);
  }
  if (keyring == Keyring::kAbsent) return session;

  env.push_back("DBUS_SESSION_BUS_ADDRESS=" + session->bus_address_);
  auto daemon = spawn(SpawnRequest{
      .argv = {"gnome-keyring-daemon", "--foreground", "--components=secrets", "--unlock"},
      .cwd = session->root_,
      .env = env});
  if (!daemon) return failed(daemon.error().message);
  session->keyring_ = *daemon;
  // --unlock reads the password up to the end of its standard input.
  const std::size_t length = std::strlen(kPassword);
  if (::write(session->keyring_.stdin_fd, kPassword, length) != static_cast<ssize_t>(length)) {
    return failed("cannot give gnome-keyring its password: " + std::string(strerror(errno)));
  }
  ::close(session->keyring_.stdin_fd);
  session->keyring_.stdin_fd = -1;

  while (!keyring_ready(connection.get(), why)) {
    if (try_wait(session->keyring_.pid)) {
      session->keyring_.pid = -1;
      return failed("gnome-keyring-daemon ended: " + drain(session->keyring_.stderr_fd));
    }
    if (Clock::now() >= deadline) {
      return failed("gnome-keyring is not ready (" + why +
                    "); its standard error: " + drain(session->keyring_.stderr_fd));
    }
    std::this_thread::sleep_for(kPollEvery);
  }
  return session;
}

SecretServiceSession::~SecretServiceSession() {
  stop(keyring_);
  stop(bus_);
  if (!root_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
}

std::vector<std::string> SecretServiceSession::child_env() const {
  return {
      "DBUS_SESSION_BUS_ADDRESS=" + bus_address_,
      "HOME=" + (root_ / "home").string(),
      "XDG_DATA_HOME=" + (root_ / "data").string(),
      "XDG_CONFIG_HOME=" + (root_ / "config").string(),
      "XDG_RUNTIME_DIR=" + (root_ / "runtime").string(),
  };
}

Result<void> SecretServiceSession::lock_default_collection() const {
  std::string why;
  ConnectionPtr connection = connect_to(bus_address_, why);
  if (!connection) return make_error(kOsError, "cannot reach the test bus: " + why);
  VariantPtr alias = call(connection.get(), "org.freedesktop.secrets", "/org/freedesktop/secrets",
                          "org.freedesktop.Secret.Service", "ReadAlias",
                          g_variant_new("(s)", "default"), "(o)", why);
  if (!alias) return make_error(kOsError, "cannot find the default collection: " + why);
  const gchar* collection = nullptr;
  g_variant_get(alias.get(), "(&o)", &collection);
  const gchar* paths[] = {collection};
  VariantPtr locked = call(connection.get(), "org.freedesktop.secrets", "/org/freedesktop/secrets",
                           "org.freedesktop.Secret.Service", "Lock",
                           g_variant_new("(@ao)", g_variant_new_objv(paths, 1)), "(aoo)", why);
  if (!locked) return make_error(kOsError, "cannot lock the default collection: " + why);
  return {};
}

void SecretServiceSession::use_in_this_process() const {
  ::setenv("DBUS_SESSION_BUS_ADDRESS", bus_address_.c_str(), 1);
}

}  // namespace escouade::platform::testing
