#include "protocol/default_answers.hpp"

#include <boost/json/value_from.hpp>

#include "protocol/gen/methods.hpp"

namespace escouade::proto {

std::optional<boost::json::value> default_result(std::string_view method) {
  if (method == method::PermissionsDecide::kName) {
    Decision ask;
    ask.decision = DecisionDecision::ask;
    return boost::json::value_from(ask);
  }
  return std::nullopt;
}

}  // namespace escouade::proto
