#include "protocol/json_strings.hpp"

namespace escouade::proto {

namespace json = boost::json;

void rewrite_strings(json::value& v, const std::function<void(std::string&)>& rewrite) {
  if (json::string* s = v.if_string()) {
    std::string text(s->data(), s->size());
    rewrite(text);
    if (text != std::string_view(*s)) *s = text;
  } else if (json::array* a = v.if_array()) {
    for (json::value& e : *a)
      rewrite_strings(e, rewrite);
  } else if (json::object* o = v.if_object()) {
    bool keys_change = false;
    for (auto& kv : *o) {
      std::string key(kv.key());
      rewrite(key);
      keys_change = keys_change || key != kv.key();
      rewrite_strings(kv.value(), rewrite);
    }
    if (!keys_change) return;
    json::object rebuilt;  // rare: a key that changes (one that quotes a secret)
    for (auto& kv : *o) {
      std::string key(kv.key());
      rewrite(key);
      rebuilt[key] = std::move(kv.value());
    }
    *o = std::move(rebuilt);
  }
}

}  // namespace escouade::proto
