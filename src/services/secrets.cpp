#include "services/secrets.hpp"

#include <boost/asio/post.hpp>
#include <boost/json/string.hpp>

#include "base/quote.hpp"
#include "platform/errors.hpp"
#include "platform/keychain.hpp"
#include "policy/secret_keys.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "rpc/session.hpp"

namespace escouade::services {

namespace json = boost::json;
using proto::ErrorCode;

namespace {

// The one place a keychain's error becomes a protocol code: what was given cannot be kept
// (an empty name, a value that is not UTF-8) is the caller's fault; anything else is the
// keychain out of reach.
Error keychain_error(const Error& e, const std::string& what) {
  const bool invalid = e.code == platform::Errc::invalid_argument;
  return Error{invalid ? ErrorCode::invalid_params : ErrorCode::keychain, what + ": " + e.message};
}

// The app's change to a secret: the key judged, the keychain's work on a worker, the outcome
// journaled (the key, never the value) and given to `done`.
void change_secret(const SecretsContext& ctx, const std::shared_ptr<ServedPlugin>& plugin,
                   const std::string& key, std::string what,
                   std::function<Result<void>(platform::Keychain&, const std::string&)> work,
                   SecretDone done) {
  what += " " + quote_name(key);
  const auto fail = [&](ErrorCode code, std::string message) {
    boost::asio::post(ctx.host,
                      [done = std::move(done), e = Error{code, std::move(message)}] { done(e); });
  };
  if (auto problem = policy::secret_key_form_problem(key)) {
    return fail(ErrorCode::invalid_params, "key " + quote_name(key) + ": " + *problem);
  }
  if (auto refusal = plugin->grants.secret_refusal(key)) {
    return fail(ErrorCode::invalid_params,
                "key " + quote_name(key) + " of " + plugin->manifest.id + ": " + *refusal);
  }
  if (!ctx.keychain) return fail(ErrorCode::keychain, "no keychain is configured");
  ctx.workers->run(
      plugin->manifest.id,
      [keychain = ctx.keychain, name = keychain_name(plugin->manifest.id, key),
       work = std::move(work)] { return work(*keychain, name); },
      [plugin, what = std::move(what), done = std::move(done)](Result<void> r) {
        if (!r) {
          const Error e = keychain_error(r.error(), what);
          plugin->journal->error(e.message);
          done(e);
          return;
        }
        plugin->journal->info(what + " by the app");
        done(Result<void>{});
      });
}

}  // namespace

std::string keychain_name(std::string_view plugin_id, std::string_view key) {
  std::string name = "plugin:";
  name += plugin_id;
  name += ':';
  name += key;
  return name;
}

void get_secret(const SecretsContext& ctx, const std::shared_ptr<ServedPlugin>& plugin,
                const std::string& key, rpc::Reply<proto::method::SecretsGet> reply) {
  const std::string what = "secrets/get " + quote_name(key);
  // The permission first: a key that is not one of its secrets is refused -32001 whatever its
  // characters (the spec's answer for any key not its own); only a key its permissions.secrets
  // would take in (a pattern's tail) and that cannot be a key at all does not hold (-32602).
  if (auto refusal = plugin->grants.secret_refusal(key)) {
    const std::string sentence = what + ": refused: " + *refusal;
    plugin->journal->warn(sentence);
    reply.error(ErrorCode::not_yours, sentence);
    return;
  }
  if (auto problem = policy::secret_key_form_problem(key)) {
    const std::string sentence = what + ": invalid params: " + *problem;
    plugin->journal->warn(sentence);
    reply.error(ErrorCode::invalid_params, sentence);
    return;
  }
  if (!ctx.keychain) {
    const std::string sentence = what + ": no keychain is configured";
    plugin->journal->error(sentence);
    reply.error(ErrorCode::keychain, sentence);
    return;
  }
  ctx.workers->run(
      plugin->manifest.id,
      [keychain = ctx.keychain, name = keychain_name(plugin->manifest.id, key)] {
        return keychain->get(name);
      },
      [plugin, what, reply = std::move(reply)](Result<std::optional<std::string>> got) mutable {
        if (!got) {
          const Error e = keychain_error(got.error(), what);
          plugin->journal->error(e.message);
          reply.error(e);
          return;
        }
        if (!*got) {
          plugin->journal->info(what + ": none is kept");
          reply.result(std::nullopt);
          return;
        }
        // Masked from now on, before anything the plugin does with it can reach the journal.
        plugin->masker->add(**got);
        plugin->journal->info(what + ": given");
        reply.result(**got);
      });
}

void set_secret(const SecretsContext& ctx, const std::shared_ptr<ServedPlugin>& plugin,
                const std::string& key, std::string value, SecretDone done) {
  change_secret(
      ctx, plugin, key, "secret set",
      [value = std::move(value)](platform::Keychain& k, const std::string& name) {
        return k.set(name, value);
      },
      std::move(done));
}

void delete_secret(const SecretsContext& ctx, const std::shared_ptr<ServedPlugin>& plugin,
                   const std::string& key, SecretDone done) {
  change_secret(
      ctx, plugin, key, "secret deleted",
      [](platform::Keychain& k, const std::string& name) { return k.remove(name); },
      std::move(done));
}

void serve_secrets(rpc::Session& session, RunScope& run, const SecretsContext& ctx,
                   const std::shared_ptr<ServedPlugin>& plugin) {
  // `run` outlives every call its session dispatches: the session is closed before it goes.
  session.serve<proto::method::SecretsGet>([ctx, plugin, run = &run](
                                               const proto::SecretsGetParams& p,
                                               rpc::Reply<proto::method::SecretsGet> r) {
    if (!run->ready()) {
      const std::string sentence =
          "secrets/get " + quote_name(p.key) + ": refused: asked before initialize was answered";
      plugin->journal->warn(sentence);
      r.error(proto::ErrorCode::refused, sentence);
      return;
    }
    get_secret(ctx, plugin, p.key, std::move(r));
  });
}

}  // namespace escouade::services
