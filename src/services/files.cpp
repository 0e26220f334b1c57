#include "services/files.hpp"

#include <boost/json/string.hpp>

#include "base/quote.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "rpc/session.hpp"
#include "services/context.hpp"

namespace escouade::services {

namespace json = boost::json;

namespace {

// How much of a path an error quotes; past it, the sentence says how long the path was.
constexpr std::size_t kQuotedPathBytes = 200;

}  // namespace

std::string_view verdict(const boost::system::error_code& code) {
  if (code == proto::ErrorCode::invalid_params) return "invalid params";
  if (code == proto::ErrorCode::refused) return "refused";
  if (code == proto::ErrorCode::not_found) return "not found";
  return "failed";
}

Result<std::string> read_own_file(const OwnFolder& folder, std::string_view path,
                                  platform::BeneathResolver resolver) {
  auto text = folder.read(path, kMaxOwnFileBytes, resolver);
  if (text) return text;
  return Error{text.error().code, "files/read " + quote_name(path, kQuotedPathBytes) + ": " +
                                      std::string(verdict(text.error().code)) + ": " +
                                      text.error().message};
}

void serve_files(rpc::Session& session, const FilesContext& ctx,
                 const std::shared_ptr<ServedPlugin>& plugin) {
  session.serve<proto::method::FilesRead>(
      [ctx, plugin](const proto::FilesReadParams& p, rpc::Reply<proto::method::FilesRead> r) {
        ctx.workers->run(
            plugin->manifest.id,
            [folder = plugin->folder, path = p.path] { return read_own_file(*folder, path); },
            [plugin, path = p.path, reply = std::move(r)](Result<std::string> text) mutable {
              if (!text) {
                plugin->journal->warn(text.error().message);
                reply.error(text.error());
                return;
              }
              plugin->journal->debug("files/read " + quote_name(path) + ": " +
                                     std::to_string(text->size()) + " bytes");
              reply.result(*text, rpc::room_for_text(text->size()));
            });
      });
}

}  // namespace escouade::services
