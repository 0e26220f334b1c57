// The app's side of what the host serves plugins: their secrets and their settings.

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include "host/host.hpp"
#include "platform/keychain.hpp"
#include "policy/secret_keys.hpp"
#include "protocol/gen/errors.hpp"
#include "services/secrets.hpp"

namespace escouade::host {

namespace asio = boost::asio;
namespace json = boost::json;
using proto::ErrorCode;

void Host::keychain_work(std::string_view id, const std::string& key, std::string what,
                         std::function<Result<void>(platform::Keychain&, const std::string&)> work,
                         Done done) {
  auto fail = [this, &done](int code, std::string message) {
    asio::post(executor_,
               [done = std::move(done), e = Error{code, std::move(message)}] { done(e); });
  };
  Plugin* p = find(id);
  if (!p)
    return fail(static_cast<int>(ErrorCode::invalid_params),
                "no plugin " + std::string(id) + " is loaded");
  if (auto refusal = policy::secret_key_refusal(p->manifest.permissions.secrets, key)) {
    return fail(
        static_cast<int>(ErrorCode::invalid_params),
        "key " + json::serialize(json::string(key)) + " of " + p->manifest.id + ": " + *refusal);
  }
  if (!config_.keychain) {
    return fail(static_cast<int>(ErrorCode::keychain), "no keychain is configured");
  }
  services::on_worker(
      services_,
      [keychain = config_.keychain, name = services::keychain_name(p->manifest.id, key),
       work = std::move(work)] { return work(*keychain, name); },
      [journal = p->journal, what = std::move(what) + " " + json::serialize(json::string(key)),
       done = std::move(done)](Result<void> r) {
        if (!r) {
          journal->error(what + ": " + r.error().message);
          done(Error{static_cast<int>(ErrorCode::keychain), r.error().message});
          return;
        }
        journal->info(what + " by the app");
        done(Result<void>{});
      });
}

void Host::set_secret(std::string_view id, const std::string& key, std::string value, Done done) {
  keychain_work(
      id, key, "secret set",
      [value = std::move(value)](platform::Keychain& k, const std::string& name) {
        return k.set(name, value);
      },
      std::move(done));
}

void Host::delete_secret(std::string_view id, const std::string& key, Done done) {
  keychain_work(
      id, key, "secret deleted",
      [](platform::Keychain& k, const std::string& name) { return k.remove(name); },
      std::move(done));
}

Result<void> Host::set_settings(std::string_view id, const json::object& values) {
  Plugin* p = find(id);
  if (!p) {
    return Error{static_cast<int>(ErrorCode::invalid_params),
                 "no plugin " + std::string(id) + " is loaded"};
  }
  auto r = settings_.set(p->manifest, values);
  if (!r) return r;
  std::string names;
  for (const auto& kv : values)
    names += (names.empty() ? "" : ", ") + std::string(kv.key());
  p->journal->info("settings set by the app: " + names);
  return {};
}

}  // namespace escouade::host
