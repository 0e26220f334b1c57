#include "protocol/params_check.hpp"

#include <string>

namespace escouade::proto {

namespace {
constexpr auto kInvalidParams = ErrorCode::invalid_params;
}

Result<void> check_params(const MethodInfo& method, const boost::json::value* params) {
  ReadContext ctx;
  if (method.check_params(params, ctx)) return {};
  if (!params && ctx.path() == "params") {
    return Error{kInvalidParams, std::string(method.name) + " needs params: " + ctx.what()};
  }
  return Error{kInvalidParams, ctx.message("params")};
}

Result<void> check_params(std::string_view method, const boost::json::value* params) {
  const MethodInfo* m = find_method(method);
  if (!m) {
    return Error{ErrorCode::method_not_found, "the protocol has no method " + std::string(method)};
  }
  return check_params(*m, params);
}

Result<void> check_result(const MethodInfo& method, const boost::json::value& result) {
  if (!method.check_result) {
    return Error{kInvalidParams, std::string(method.name) + " is a notification: no result"};
  }
  ReadContext ctx;
  if (method.check_result(result, ctx)) return {};
  return Error{kInvalidParams, ctx.message("result")};
}

}  // namespace escouade::proto
