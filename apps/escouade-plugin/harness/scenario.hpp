#pragma once

// The steps of a harness scenario: one JSON object a line ({"fact": {...}}, {"decide": {...},
// "expect": "deny"}, ...), or, for typing, a short form (`fact agent.status {"status":"x"}`,
// `decide command rm -rf /`). docs/harness.md describes both. Parsing checks the shape of each
// step and names what is wrong; it does not talk to the host. No I/O.

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace escouade::harness {

enum class StepKind {
  fact,         // arg: the fact as given (name, data, ticket?, agent?, ...)
  decide,       // arg: the request as given (kind, tool?, input?, id?) or whole DecideParams
  call,         // arg: {id, method, params?, timeoutMs?}
  restart,      // arg: the plugin's id
  status,       // arg: null (every plugin) or a plugin's id
  kill,         // arg: the plugin's id
  wait,         // arg: milliseconds, an integer >= 0
  await_state,  // arg: {id, state}: waits for a host/statusChanged of that plugin in that state
  journal,      // arg: {id, lines}
  secret,       // arg: {id, key, value}
  settings,     // arg: {id, values}
  agent,        // arg: {key, project, roots, env?}: host/agents/set
  comment,      // arg: the text
  help,         // the short forms, for typing
};

// "fact", "decide"...: the member's name in a JSON step.
std::string_view to_string(StepKind kind) noexcept;

struct Step {
  StepKind kind = StepKind::comment;
  boost::json::value arg;
  // What the step must give; checked when it ran (see Expectation below).
  std::optional<boost::json::value> expect;
};

// What parsing needs to know: the plugins loaded, so that a step may leave out the id when
// there is only one, and a short form can tell an id from a method.
struct ParseContext {
  std::vector<std::string> plugins;
};

// One line. nullopt for a line with nothing to do (empty, or starting with '#'). A line that
// starts with '{' is a JSON step; any other is a short form. The error names the member or
// the word that does not hold and what was expected.
Result<std::optional<Step>> parse_step(std::string_view line, const ParseContext& context);

// `[ID:]NAME=VALUE`, as --secret, --setting and their short forms take it. ID may be left out
// when one plugin is loaded; a NAME may hold ':' (account:work) when ID is given.
struct Assignment {
  std::string id;
  std::string name;
  std::string value;
};
Result<Assignment> parse_assignment(std::string_view text, const std::vector<std::string>& plugins);

// A setting's value as typed: JSON when it reads as a JSON scalar (42, true, null, "x"),
// else the text itself as a string.
boost::json::value setting_value(std::string_view text);

// The short forms, one a line, as `help` prints them.
std::string short_forms_help();

// Checks a step's result against its "expect". Returns an empty string when it holds, else why
// not ("expected deny, got allow"). For decide: `result` is host/decide's answer. For call: an
// object {"result": ...} or {"error": {code, message}}. For fact: host/publish's answer.
std::string check_expectation(StepKind kind, const boost::json::value& expect,
                              const boost::json::value& result);

}  // namespace escouade::harness
