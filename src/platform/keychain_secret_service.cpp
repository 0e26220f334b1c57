// The Secret Service backend: libsecret's synchronous calls, one item per secret.
//
// An item is what the Rust `keyring` crate reads and writes: attributes service="escouade" and
// username=<name>, schema org.freedesktop.Secret.Generic (not matched by name), label
// "Escouade <name>", in the default collection. The value travels as text/plain.

#include <libsecret/secret.h>

#include <memory>
#include <mutex>
#include <string_view>

#include "base/utf8.hpp"
#include "platform/errors.hpp"
#include "platform/keychain.hpp"

namespace escouade::platform {
namespace {

// The keychain cannot be reached; what was given cannot be kept (platform/errors.hpp).
constexpr Errc kUnreachable = Errc::unreachable;
constexpr Errc kCannotKeep = Errc::invalid_argument;

constexpr const char* kService = "escouade";

// libsecret keeps process-wide state (one SecretService proxy, its encrypted session, libgcrypt)
// whose setup from several threads at once has raced in past releases (libsecret issue #48).
// Secrets are read rarely and each call is one or two D-Bus round trips, so every call of every
// instance goes through this one lock instead.
std::mutex& libsecret_lock() {
  static std::mutex lock;
  return lock;
}

const SecretSchema* escouade_schema() {
  static const SecretSchema schema = [] {
    SecretSchema s{};
    s.name = "org.freedesktop.Secret.Generic";
    s.flags = SECRET_SCHEMA_DONT_MATCH_NAME;
    s.attributes[0] = {"service", SECRET_SCHEMA_ATTRIBUTE_STRING};
    s.attributes[1] = {"username", SECRET_SCHEMA_ATTRIBUTE_STRING};
    s.attributes[2] = {nullptr, SECRET_SCHEMA_ATTRIBUTE_STRING};
    return s;
  }();
  return &schema;
}

struct ErrorFree {
  void operator()(GError* e) const { g_error_free(e); }
};
struct TableUnref {
  void operator()(GHashTable* t) const { g_hash_table_unref(t); }
};
struct ValueUnref {
  void operator()(SecretValue* v) const { secret_value_unref(v); }
};

using ErrorPtr = std::unique_ptr<GError, ErrorFree>;
using TablePtr = std::unique_ptr<GHashTable, TableUnref>;
using ValuePtr = std::unique_ptr<SecretValue, ValueUnref>;

// The attributes that find `name`; they point into `name`, which must outlive the table.
TablePtr attributes_of(const std::string& name) {
  TablePtr table{g_hash_table_new(g_str_hash, g_str_equal)};
  g_hash_table_insert(table.get(), const_cast<char*>("service"), const_cast<char*>(kService));
  g_hash_table_insert(table.get(), const_cast<char*>("username"), const_cast<char*>(name.c_str()));
  return table;
}

bool is_unreachable(const GError* e) {
  if (e->domain == G_IO_ERROR) return true;  // no socket, refused, closed
  if (e->domain != G_DBUS_ERROR) return false;
  switch (e->code) {
    case G_DBUS_ERROR_SERVICE_UNKNOWN:
    case G_DBUS_ERROR_NAME_HAS_NO_OWNER:
    case G_DBUS_ERROR_NO_SERVER:
    case G_DBUS_ERROR_NO_REPLY:
    case G_DBUS_ERROR_TIMEOUT:
    case G_DBUS_ERROR_TIMED_OUT:
    case G_DBUS_ERROR_DISCONNECTED:
    case G_DBUS_ERROR_FILE_NOT_FOUND:
      return true;
    default:
      return false;
  }
}

// A sentence for the journal. `doing` is what failed ("read the secret plugin:x:token").
// GLib's message names the bus or the D-Bus error, never a value.
Error error_from(const GError* e, std::string_view doing) {
  const std::string glib = e->message != nullptr ? e->message : "no reason given";
  if (e->domain == SECRET_ERROR && e->code == SECRET_ERROR_IS_LOCKED) {
    return make_error(kUnreachable, "the keychain is locked, so Escouade could not " +
                                        std::string(doing) + ": " + glib);
  }
  if (e->domain == G_DBUS_ERROR &&
      (e->code == G_DBUS_ERROR_SERVICE_UNKNOWN || e->code == G_DBUS_ERROR_NAME_HAS_NO_OWNER)) {
    return make_error(kUnreachable,
                      "no Secret Service runs on the session bus (gnome-keyring, KWallet...), "
                      "so Escouade could not " +
                          std::string(doing) + ": " + glib);
  }
  if (is_unreachable(e)) {
    return make_error(kUnreachable, "the Secret Service cannot be reached, so Escouade could not " +
                                        std::string(doing) + ": " + glib);
  }
  return make_error(kUnreachable,
                    "the Secret Service refused to " + std::string(doing) + ": " + glib);
}

struct ObjectUnref {
  void operator()(gpointer object) const { g_object_unref(object); }
};
struct VariantUnref {
  void operator()(GVariant* v) const { g_variant_unref(v); }
};
using BusPtr = std::unique_ptr<GDBusConnection, ObjectUnref>;
using VariantPtr = std::unique_ptr<GVariant, VariantUnref>;

// The session bus (GLib's shared connection, which libsecret uses too), or why it cannot be
// reached. GLib ends the process (SIGTERM) when that connection closes, by default: a keychain
// must not end the host, so that is turned off here; a bus that goes away shows as errors of the
// calls that follow.
Result<BusPtr> session_bus(std::string_view doing) {
  GError* raw = nullptr;
  BusPtr bus{g_bus_get_sync(G_BUS_TYPE_SESSION, nullptr, &raw)};
  if (!bus) {
    ErrorPtr e{raw};
    return make_error(kUnreachable, "the Secret Service cannot be reached, so Escouade could not " +
                                        std::string(doing) + ": " +
                                        (e && e->message ? e->message : "no session bus"));
  }
  g_dbus_connection_set_exit_on_close(bus.get(), FALSE);
  return bus;
}

Error locked(std::string_view doing) {
  return make_error(kUnreachable, "the keychain is locked, so Escouade could not " +
                                      std::string(doing) +
                                      ": unlock it (for example by logging in again)");
}

// Whether a locked item is kept under `name`, asked without unlocking anything. A lookup of a
// locked item answers "nothing" and a clear of one does nothing, both without an error, when no
// one unlocks the collection (no prompter on the session, a prompt dismissed): this tells that
// apart from a secret that is not kept. Through the Secret Service's own SearchItems, which
// gives object paths: libsecret's search makes an item proxy of each, and leaks a little for
// locked ones (seen under LeakSanitizer with libsecret 0.20.5).
Result<bool> locked_item_kept(GDBusConnection* bus, const std::string& name,
                              std::string_view doing) {
  GVariantBuilder query;
  g_variant_builder_init(&query, G_VARIANT_TYPE("a{ss}"));
  g_variant_builder_add(&query, "{ss}", "service", kService);
  g_variant_builder_add(&query, "{ss}", "username", name.c_str());
  GError* raw = nullptr;
  VariantPtr reply{g_dbus_connection_call_sync(
      bus, "org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service",
      "SearchItems", g_variant_new("(a{ss})", &query), G_VARIANT_TYPE("(aoao)"),
      G_DBUS_CALL_FLAGS_NONE, -1, nullptr, &raw)};
  if (!reply) {
    ErrorPtr e{raw};
    return error_from(e.get(), doing);
  }
  VariantPtr locked_paths{g_variant_get_child_value(reply.get(), 1)};
  return Result<bool>(boost::system::in_place_value, g_variant_n_children(locked_paths.get()) > 0);
}

// D-Bus carries attribute values as UTF-8 strings, and libsecret as C strings.
Result<void> check_name(const std::string& name) {
  if (name.empty()) return make_error(kCannotKeep, "a keychain name is never empty");
  if (!is_valid_utf8(name) || name.find('\0') != std::string::npos) {
    return make_error(kCannotKeep,
                      "the Secret Service keeps names of UTF-8 text without NUL; this one is not");
  }
  return {};
}

class SecretServiceKeychain final : public Keychain {
 public:
  Result<std::optional<std::string>> get(const std::string& name) override {
    if (auto ok = check_name(name); !ok) return ok.error();
    const std::string doing = "read the secret " + name;
    std::lock_guard hold(libsecret_lock());
    auto bus = session_bus(doing);
    if (!bus) return bus.error();
    const TablePtr attributes = attributes_of(name);
    GError* raw = nullptr;
    ValuePtr value{
        secret_password_lookupv_binary_sync(escouade_schema(), attributes.get(), nullptr, &raw)};
    if (raw != nullptr) {
      ErrorPtr e{raw};
      return error_from(e.get(), doing);
    }
    if (!value) {
      auto kept = locked_item_kept(bus->get(), name, doing);
      if (!kept) return kept.error();
      if (*kept) return locked(doing);
      return std::optional<std::string>{};
    }
    gsize length = 0;
    const gchar* bytes = secret_value_get(value.get(), &length);
    return std::optional<std::string>{std::string(bytes, length)};
  }

  Result<void> set(const std::string& name, const std::string& value) override {
    if (auto ok = check_name(name); !ok) return ok.error();
    if (!is_valid_utf8(value)) {
      return make_error(kCannotKeep,
                        "the secret " + name + " is not UTF-8 text, which a keychain keeps");
    }
    const std::string doing = "keep the secret " + name;
    const std::string label = "Escouade " + name;
    std::lock_guard hold(libsecret_lock());
    auto bus = session_bus(doing);
    if (!bus) return bus.error();
    const TablePtr attributes = attributes_of(name);
    const ValuePtr secret{
        secret_value_new(value.data(), static_cast<gssize>(value.size()), "text/plain")};
    GError* raw = nullptr;
    secret_password_storev_binary_sync(escouade_schema(), attributes.get(),
                                       SECRET_COLLECTION_DEFAULT, label.c_str(), secret.get(),
                                       nullptr, &raw);
    if (raw != nullptr) {
      ErrorPtr e{raw};
      return error_from(e.get(), doing);
    }
    return {};
  }

  Result<void> remove(const std::string& name) override {
    if (auto ok = check_name(name); !ok) return ok.error();
    const std::string doing = "forget the secret " + name;
    std::lock_guard hold(libsecret_lock());
    auto bus = session_bus(doing);
    if (!bus) return bus.error();
    const TablePtr attributes = attributes_of(name);
    GError* raw = nullptr;
    // FALSE without an error: nothing was cleared, because nothing was kept (fine) or because
    // what is kept is locked (not fine).
    const gboolean cleared =
        secret_password_clearv_sync(escouade_schema(), attributes.get(), nullptr, &raw);
    if (raw != nullptr) {
      ErrorPtr e{raw};
      return error_from(e.get(), doing);
    }
    if (cleared) return {};
    auto kept = locked_item_kept(bus->get(), name, doing);
    if (!kept) return kept.error();
    if (*kept) return locked(doing);
    return {};
  }

  std::string describe() const override { return "the Secret Service"; }
};

}  // namespace

std::unique_ptr<Keychain> make_secret_service_keychain() {
  return std::make_unique<SecretServiceKeychain>();
}

}  // namespace escouade::platform
