// The app's side of what the host serves plugins: their secrets (services/secrets) and their
// settings (services/settings), for the plugin the app names.

#include <boost/asio/post.hpp>

#include "host/host.hpp"
#include "protocol/gen/errors.hpp"
#include "services/secrets.hpp"

namespace escouade::host {

namespace asio = boost::asio;
namespace json = boost::json;
using proto::ErrorCode;

void Host::set_secret(std::string_view id, const std::string& key, std::string value, Done done) {
  Plugin* p = find(id);
  if (!p) {
    asio::post(executor_, [done = std::move(done), e = no_such_plugin(id)] { done(e); });
    return;
  }
  services::set_secret(services_.secrets, p->served, key, std::move(value), std::move(done));
}

void Host::delete_secret(std::string_view id, const std::string& key, Done done) {
  Plugin* p = find(id);
  if (!p) {
    asio::post(executor_, [done = std::move(done), e = no_such_plugin(id)] { done(e); });
    return;
  }
  services::delete_secret(services_.secrets, p->served, key, std::move(done));
}

Result<void> Host::set_settings(std::string_view id, const json::object& values) {
  Plugin* p = find(id);
  if (!p) return no_such_plugin(id);
  auto r = settings_.set(p->manifest, values);
  if (!r) return r;
  std::string names;
  for (const auto& kv : values)
    names += (names.empty() ? "" : ", ") + std::string(kv.key());
  p->journal->info("settings set by the app: " + names);
  return {};
}

}  // namespace escouade::host
