#include "services/files.hpp"

#include "base/quote.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::services {

namespace {

// How much of a path an error quotes; past it, the sentence says how long the path was.
constexpr std::size_t kQuotedPathBytes = 200;

std::string_view verdict(const boost::system::error_code& code) {
  if (code == proto::ErrorCode::invalid_params) return "invalid params";
  if (code == proto::ErrorCode::refused) return "refused";
  if (code == proto::ErrorCode::not_found) return "not found";
  return "failed";
}

}  // namespace

Result<std::string> read_own_file(const OwnFolder& folder, std::string_view path,
                                  platform::BeneathResolver resolver) {
  auto text = folder.read(path, kMaxOwnFileBytes, resolver);
  if (text) return text;
  return Error{text.error().code, "files/read " + quote_name(path, kQuotedPathBytes) + ": " +
                                      std::string(verdict(text.error().code)) + ": " +
                                      text.error().message};
}

}  // namespace escouade::services
