#include "protocol/attachment.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace escouade::proto {

namespace json = boost::json;

std::string attached_agent(std::string_view params_json) {
  boost::system::error_code ec;
  const json::value params = json::parse(params_json, ec);
  const json::object* o = ec ? nullptr : params.if_object();
  if (!o) return {};
  if (const json::value* a = o->if_contains("agent")) {
    if (a->is_string()) return std::string(a->get_string());
    if (const json::object* ao = a->if_object()) {
      if (const json::value* id = ao->if_contains("id"); id && id->is_string()) {
        return std::string(id->get_string());
      }
    }
  }
  if (const json::value* k = o->if_contains("key"); k && k->is_string()) {
    return std::string(k->get_string());
  }
  return {};
}

}  // namespace escouade::proto
