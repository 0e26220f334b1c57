#include "harness/scenario.hpp"

#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <utility>

#include "protocol/gen/errors.hpp"

namespace escouade::harness {

namespace json = boost::json;

namespace {

constexpr auto kInvalid = proto::ErrorCode::invalid_params;
constexpr std::int64_t kDefaultJournalLines = 20;

struct Named {
  std::string_view name;
  StepKind kind;
};
constexpr std::array<Named, 14> kSteps{{
    {"fact", StepKind::fact},
    {"decide", StepKind::decide},
    {"call", StepKind::call},
    {"restart", StepKind::restart},
    {"status", StepKind::status},
    {"kill", StepKind::kill},
    {"wait", StepKind::wait},
    {"await", StepKind::await_state},
    {"journal", StepKind::journal},
    {"secret", StepKind::secret},
    {"settings", StepKind::settings},
    {"agent", StepKind::agent},
    {"comment", StepKind::comment},
    {"help", StepKind::help},
}};

Error bad(std::string message) {
  return Error{kInvalid, std::move(message)};
}

std::string list_ids(const std::vector<std::string>& plugins) {
  std::string out;
  for (const auto& p : plugins)
    out += (out.empty() ? "" : ", ") + p;
  return out;
}

// The id a step names, or the only plugin loaded when it names none.
Result<std::string> plugin_id(const json::value* given, std::string_view field,
                              const ParseContext& ctx) {
  if (given && given->is_string() && !given->get_string().empty()) {
    return std::string(given->get_string());
  }
  if (given && !given->is_null()) return bad(std::string(field) + ": expected a plugin's id");
  if (ctx.plugins.size() == 1) return ctx.plugins.front();
  if (ctx.plugins.empty()) return bad(std::string(field) + ": required (no plugin is loaded)");
  return bad(std::string(field) + ": required when several plugins are loaded (" +
             list_ids(ctx.plugins) + ")");
}

const json::value* member(const json::object& o, std::string_view name) {
  return o.if_contains(name);
}

Result<void> need_string(const json::object& o, std::string_view name, std::string_view where) {
  const json::value* v = member(o, name);
  if (!v || !v->is_string()) {
    return bad(std::string(where) + "." + std::string(name) + ": required, a string");
  }
  return {};
}

Result<void> check_expect_shape(StepKind kind, const json::value& e) {
  switch (kind) {
    case StepKind::decide: {
      auto decision_ok = [](const json::value& d) {
        return d.is_string() && (d == "allow" || d == "deny" || d == "ask");
      };
      if (decision_ok(e)) return {};
      if (const auto* o = e.if_object()) {
        const json::value* d = o->if_contains("decision");
        const json::value* m = o->if_contains("message");
        if ((!d || decision_ok(*d)) && (!m || m->is_string())) return {};
      }
      return bad("expect: allow, deny or ask, or {\"decision\"?, \"message\"?}");
    }
    case StepKind::call: {
      if (e == "ok" || e == "error") return {};
      if (const auto* o = e.if_object(); o && o->size() == 1) {
        if (o->contains("result")) return {};
        if (const json::value* c = o->if_contains("error"); c && c->is_int64()) return {};
      }
      return bad("expect: \"ok\", \"error\", {\"result\": VALUE} or {\"error\": CODE}");
    }
    case StepKind::fact: {
      if (const auto* a = e.if_array()) {
        if (std::all_of(a->begin(), a->end(), [](const json::value& v) { return v.is_string(); }))
          return {};
      }
      return bad("expect: the ids the fact must be delivered to, an array of strings");
    }
    default:
      return bad(std::string("expect: a ") + std::string(to_string(kind)) +
                 " step has no expectation (only fact, decide and call)");
  }
}

// Checks the member of a JSON step and fills what the step may leave out.
Result<json::value> normalize(StepKind kind, json::value arg, const ParseContext& ctx) {
  const std::string where(to_string(kind));
  switch (kind) {
    case StepKind::fact: {
      if (!arg.is_object()) return bad("fact: expected an object {name, data}");
      if (auto r = need_string(arg.get_object(), "name", where); !r) return r.error();
      return arg;
    }
    case StepKind::decide: {
      if (!arg.is_object()) return bad("decide: expected an object {kind, tool?, input?}");
      const auto& o = arg.get_object();
      if (!o.contains("request")) {
        if (auto r = need_string(o, "kind", where); !r) return r.error();
      }
      return arg;
    }
    case StepKind::call: {
      if (!arg.is_object()) return bad("call: expected an object {id, method, params?}");
      auto& o = arg.get_object();
      if (auto r = need_string(o, "method", where); !r) return r.error();
      auto id = plugin_id(member(o, "id"), "call.id", ctx);
      if (!id) return id.error();
      o["id"] = *id;
      if (const json::value* t = member(o, "timeoutMs");
          t && (!t->is_int64() || t->get_int64() <= 0)) {
        return bad("call.timeoutMs: a positive integer of milliseconds");
      }
      return arg;
    }
    case StepKind::restart:
    case StepKind::kill: {
      auto id = plugin_id(&arg, where, ctx);
      if (!id) return id.error();
      return json::value(*id);
    }
    case StepKind::status:
      if (!arg.is_null() && !arg.is_string()) return bad("status: null, or a plugin's id");
      return arg;
    case StepKind::wait:
      if (!arg.is_int64() || arg.get_int64() < 0) return bad("wait: milliseconds, an integer");
      return arg;
    case StepKind::await_state: {
      if (!arg.is_object()) return bad("await: expected an object {id, state}");
      auto& o = arg.get_object();
      if (auto r = need_string(o, "state", "await"); !r) return r.error();
      auto id = plugin_id(member(o, "id"), "await.id", ctx);
      if (!id) return id.error();
      o["id"] = *id;
      return arg;
    }
    case StepKind::journal: {
      if (arg.is_string() || arg.is_null()) arg = json::object{{"id", arg}};
      if (!arg.is_object()) return bad("journal: expected {id, lines?} or a plugin's id");
      auto& o = arg.get_object();
      auto id = plugin_id(member(o, "id"), "journal.id", ctx);
      if (!id) return id.error();
      o["id"] = *id;
      const json::value* n = member(o, "lines");
      if (n && (!n->is_int64() || n->get_int64() <= 0))
        return bad("journal.lines: a positive integer");
      if (!n) o["lines"] = kDefaultJournalLines;
      return arg;
    }
    case StepKind::secret: {
      if (!arg.is_object()) return bad("secret: expected an object {id, key, value}");
      auto& o = arg.get_object();
      if (auto r = need_string(o, "key", where); !r) return r.error();
      if (auto r = need_string(o, "value", where); !r) return r.error();
      auto id = plugin_id(member(o, "id"), "secret.id", ctx);
      if (!id) return id.error();
      o["id"] = *id;
      return arg;
    }
    case StepKind::settings: {
      if (!arg.is_object()) return bad("settings: expected an object {id, values}");
      auto& o = arg.get_object();
      const json::value* values = member(o, "values");
      if (!values || !values->is_object()) {
        return bad("settings.values: required, an object of setting name to value");
      }
      auto id = plugin_id(member(o, "id"), "settings.id", ctx);
      if (!id) return id.error();
      o["id"] = *id;
      return arg;
    }
    case StepKind::agent: {
      if (!arg.is_object()) return bad("agent: expected an object {key, project, roots, env?}");
      auto& o = arg.get_object();
      if (auto r = need_string(o, "key", where); !r) return r.error();
      if (auto r = need_string(o, "project", where); !r) return r.error();
      const json::value* roots = member(o, "roots");
      if (!roots || !roots->is_object())
        return bad("agent.roots: required, an object {agent?, agentRepo?, agentHome?} of paths");
      if (const json::value* env = member(o, "env"); env && !env->is_object())
        return bad("agent.env: an object of variable name to value");
      return arg;
    }
    case StepKind::comment:
      if (!arg.is_string()) return bad("comment: expected a string");
      return arg;
    case StepKind::help:
      return json::value(nullptr);
  }
  return arg;
}

Result<std::optional<Step>> parse_json_step(std::string_view line, const ParseContext& ctx) {
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec) return bad("not JSON: " + ec.message());
  if (!v.is_object()) return bad("a step is a JSON object, like {\"fact\": {...}}");
  auto& o = v.get_object();
  std::optional<StepKind> kind;
  json::value arg;
  std::optional<json::value> expect;
  for (auto& member : o) {
    const std::string_view key = member.key();
    json::value& value = member.value();
    if (key == "expect") {
      expect = value;
      continue;
    }
    auto it =
        std::find_if(kSteps.begin(), kSteps.end(), [key](const Named& n) { return n.name == key; });
    if (it == kSteps.end()) {
      std::string names;
      for (const auto& n : kSteps)
        names += (names.empty() ? "" : ", ") + std::string(n.name);
      return bad("unknown step \"" + std::string(key) + "\"; a step is one of " + names);
    }
    if (kind) return bad("one step a line: \"" + std::string(key) + "\" comes after another");
    kind = it->kind;
    arg = value;
  }
  if (!kind) return bad("no step in this line: {\"fact\": ...}, {\"decide\": ...}...");
  auto normalized = normalize(*kind, std::move(arg), ctx);
  if (!normalized) return normalized.error();
  if (expect) {
    if (auto r = check_expect_shape(*kind, *expect); !r) return r.error();
  }
  return std::optional<Step>(Step{*kind, std::move(*normalized), std::move(expect)});
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// The first word of `rest`, which loses it.
std::string_view word(std::string_view& rest) {
  rest = trim(rest);
  const std::size_t end = std::min(rest.find_first_of(" \t"), rest.size());
  std::string_view w = rest.substr(0, end);
  rest = trim(rest.substr(end));
  return w;
}

bool is_plugin(std::string_view w, const ParseContext& ctx) {
  return std::find(ctx.plugins.begin(), ctx.plugins.end(), w) != ctx.plugins.end();
}

// An optional plugin id first: taken when it is a loaded plugin's.
json::value leading_id(std::string_view& rest, const ParseContext& ctx) {
  std::string_view copy = rest;
  std::string_view w = word(copy);
  if (!w.empty() && is_plugin(w, ctx)) {
    rest = copy;
    return json::value(w);
  }
  return nullptr;
}

Result<json::value> json_rest(std::string_view rest, std::string_view what) {
  if (rest.empty()) return json::value(json::object());
  boost::system::error_code ec;
  json::value v = json::parse(rest, ec);
  if (ec || !v.is_object()) return bad(std::string(what) + ": expected a JSON object");
  return v;
}

Result<std::int64_t> integer(std::string_view w, std::string_view what) {
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), n);
  if (ec != std::errc() || end != w.data() + w.size() || n < 0) {
    return bad(std::string(what) + ": expected a number, got \"" + std::string(w) + "\"");
  }
  return Result<std::int64_t>(boost::system::in_place_value, n);
}

Result<std::optional<Step>> parse_short_form(std::string_view line, const ParseContext& ctx) {
  std::string_view rest = line;
  const std::string verb(word(rest));
  auto step = [&](StepKind kind, json::value arg) -> Result<std::optional<Step>> {
    auto n = normalize(kind, std::move(arg), ctx);
    if (!n) return n.error();
    return std::optional<Step>(Step{kind, std::move(*n), std::nullopt});
  };
  if (verb == "help" || verb == "?") return step(StepKind::help, nullptr);
  if (verb == "comment") return step(StepKind::comment, json::value(rest));
  if (verb == "fact") {
    const std::string name(word(rest));
    if (name.empty()) return bad("fact: fact NAME [{data}]");
    auto data = json_rest(rest, "fact data");
    if (!data) return data.error();
    return step(StepKind::fact, json::object{{"name", name}, {"data", std::move(*data)}});
  }
  if (verb == "decide") {
    const std::string kind(word(rest));
    if (rest.empty()) return bad("decide: decide command TEXT, decide edit PATH, decide fetch URL");
    if (kind == "command") {
      return step(StepKind::decide, json::object{{"kind", "command"},
                                                 {"tool", "Bash"},
                                                 {"input", json::object{{"command", rest}}}});
    }
    if (kind == "edit") {
      return step(StepKind::decide, json::object{{"kind", "edit"},
                                                 {"tool", "Edit"},
                                                 {"input", json::object{{"file_path", rest}}}});
    }
    if (kind == "fetch") {
      return step(StepKind::decide, json::object{{"kind", "fetch"},
                                                 {"tool", "WebFetch"},
                                                 {"input", json::object{{"url", rest}}}});
    }
    return bad("decide: command, edit or fetch, not \"" + kind + "\"");
  }
  if (verb == "call") {
    json::value id = leading_id(rest, ctx);
    const std::string method(word(rest));
    if (method.empty()) return bad("call: call [ID] METHOD [{params}]");
    auto params = json_rest(rest, "call params");
    if (!params) return params.error();
    return step(StepKind::call,
                json::object{{"id", id}, {"method", method}, {"params", std::move(*params)}});
  }
  if (verb == "restart" || verb == "kill" || verb == "status") {
    json::value id = nullptr;
    if (!rest.empty()) id = json::value(word(rest));
    if (!rest.empty()) return bad(verb + ": " + verb + " [ID]");
    const StepKind k = verb == "restart" ? StepKind::restart
                       : verb == "kill"  ? StepKind::kill
                                         : StepKind::status;
    return step(k, std::move(id));
  }
  if (verb == "wait") {
    auto ms = integer(word(rest), "wait");
    if (!ms) return ms.error();
    return step(StepKind::wait, json::value(*ms));
  }
  if (verb == "await") {
    json::value id = leading_id(rest, ctx);
    const std::string state(word(rest));
    if (state.empty()) return bad("await: await [ID] STATE");
    return step(StepKind::await_state, json::object{{"id", id}, {"state", state}});
  }
  if (verb == "journal") {
    json::value id = leading_id(rest, ctx);
    json::object o{{"id", id}};
    if (!rest.empty()) {
      auto n = integer(word(rest), "journal lines");
      if (!n) return n.error();
      o["lines"] = *n;
    }
    return step(StepKind::journal, std::move(o));
  }
  if (verb == "secret" || verb == "setting") {
    auto a = parse_assignment(rest, ctx.plugins);
    if (!a) return a.error();
    if (verb == "secret") {
      return step(StepKind::secret,
                  json::object{{"id", a->id}, {"key", a->name}, {"value", a->value}});
    }
    return step(
        StepKind::settings,
        json::object{{"id", a->id}, {"values", json::object{{a->name, setting_value(a->value)}}}});
  }
  return bad("unknown step \"" + verb + "\"; type help for the list");
}

}  // namespace

std::string_view to_string(StepKind kind) noexcept {
  for (const auto& n : kSteps) {
    if (n.kind == kind) return n.name;
  }
  return "?";
}

Result<std::optional<Step>> parse_step(std::string_view line, const ParseContext& context) {
  line = trim(line);
  if (line.empty() || line.front() == '#') return std::optional<Step>();
  if (line.front() == '{') return parse_json_step(line, context);
  return parse_short_form(line, context);
}

Result<Assignment> parse_assignment(std::string_view text,
                                    const std::vector<std::string>& plugins) {
  text = trim(text);
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return bad("\"" + std::string(text) + "\": expected [ID:]NAME=VALUE");
  }
  std::string_view left = text.substr(0, eq);
  Assignment a;
  a.value = std::string(text.substr(eq + 1));
  const std::size_t colon = left.find(':');
  if (colon != std::string_view::npos &&
      std::find(plugins.begin(), plugins.end(), left.substr(0, colon)) != plugins.end()) {
    a.id = std::string(left.substr(0, colon));
    a.name = std::string(left.substr(colon + 1));
  } else if (plugins.size() == 1) {
    a.id = plugins.front();
    a.name = std::string(left);
  } else if (colon != std::string_view::npos) {
    return bad("\"" + std::string(left.substr(0, colon)) + "\" is not a loaded plugin (" +
               list_ids(plugins) + ")");
  } else {
    return bad("\"" + std::string(text) + "\": say which plugin, ID:NAME=VALUE (" +
               list_ids(plugins) + ")");
  }
  if (a.name.empty()) return bad("\"" + std::string(text) + "\": the name is empty");
  return a;
}

json::value setting_value(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (!ec && !v.is_object() && !v.is_array()) return v;
  return json::value(text);
}

std::string short_forms_help() {
  return "fact NAME [{data}]             publish a fact (version, seq, at, project filled in)\n"
         "decide command TEXT            a permission request to run TEXT (tool Bash)\n"
         "decide edit PATH               a request to edit PATH (tool Edit)\n"
         "decide fetch URL               a request to fetch URL (tool WebFetch)\n"
         "call [ID] METHOD [{params}]    call a method of a plugin\n"
         "status [ID]                    the state of every plugin, or of one\n"
         "restart [ID]                   start a plugin again, its crashes forgotten\n"
         "kill [ID]                      SIGKILL to a plugin's process: a crash\n"
         "await [ID] STATE               wait until a plugin reaches STATE (running...)\n"
         "wait MS                        wait MS milliseconds\n"
         "journal [ID] [LINES]           the last lines of a plugin's journal\n"
         "secret [ID:]KEY=VALUE          keep a secret for a plugin\n"
         "setting [ID:]NAME=VALUE        set a plugin's setting (VALUE as JSON, or text)\n"
         "comment TEXT                   print TEXT as a heading\n"
         "{\"fact\": {...}} ...             any JSON step of a scenario file\n"
         "ID may be left out when one plugin is loaded. Ctrl-D ends.\n";
}

std::string check_expectation(StepKind kind, const json::value& expect, const json::value& result) {
  const json::object* r = result.if_object();
  auto text = [](const json::value* v) { return v ? json::serialize(*v) : std::string("nothing"); };
  switch (kind) {
    case StepKind::decide: {
      const json::value* got = r ? r->if_contains("decision") : nullptr;
      const json::value* want =
          expect.is_string() ? &expect : expect.as_object().if_contains("decision");
      if (want && (!got || *got != *want)) {
        return "expected " + std::string(want->get_string()) + ", got " +
               (got && got->is_string() ? std::string(got->get_string()) : text(got));
      }
      if (const auto* o = expect.if_object()) {
        if (const json::value* m = o->if_contains("message")) {
          const json::value* gm = r ? r->if_contains("message") : nullptr;
          if (!gm || *gm != *m) return "expected the message " + text(m) + ", got " + text(gm);
        }
      }
      return {};
    }
    case StepKind::call: {
      const json::value* res = r ? r->if_contains("result") : nullptr;
      const json::value* err = r ? r->if_contains("error") : nullptr;
      if (expect == "ok") return res ? "" : "expected a result, got the error " + text(err);
      if (expect == "error") return err ? "" : "expected an error, got the result " + text(res);
      const auto& o = expect.as_object();
      if (const json::value* want = o.if_contains("result")) {
        if (!res) return "expected the result " + text(want) + ", got the error " + text(err);
        if (*res != *want) return "expected the result " + text(want) + ", got " + text(res);
        return {};
      }
      const json::value* code = o.if_contains("error");
      if (!err) return "expected the error " + text(code) + ", got the result " + text(res);
      const json::value* got = err->is_object() ? err->as_object().if_contains("code") : nullptr;
      if (!got || *got != *code) return "expected the error " + text(code) + ", got " + text(err);
      return {};
    }
    case StepKind::fact: {
      std::vector<std::string> want, got;
      for (const auto& v : expect.as_array())
        want.emplace_back(v.as_string());
      const json::value* d = r ? r->if_contains("delivered") : nullptr;
      if (d && d->is_array()) {
        for (const auto& v : d->as_array()) {
          if (v.is_string()) got.emplace_back(v.get_string());
        }
      }
      std::sort(want.begin(), want.end());
      std::sort(got.begin(), got.end());
      if (want != got) {
        return "expected delivery to [" + list_ids(want) + "], got [" + list_ids(got) + "]";
      }
      return {};
    }
    default:
      return {};
  }
}

}  // namespace escouade::harness
