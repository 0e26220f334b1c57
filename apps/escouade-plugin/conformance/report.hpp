#pragma once

// What the conformance bench found, and the three forms it is shown in: text for a person (one
// line per check), JSON for tools, JUnit XML for CI. Pure values and pure functions: no I/O
// beyond the stream given, thread-compatible.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace escouade::conformance {

enum class Verdict { pass, fail, skip };

std::string_view to_string(Verdict v) noexcept;

// One named check and its verdict. `reason` is a sentence a person understands (why it failed,
// why it was skipped, or what passed); `message` quotes what the plugin sent that is at fault,
// cut to kQuotedChars.
struct CheckResult {
  std::string name;
  Verdict verdict = Verdict::skip;
  std::string reason;
  std::optional<std::string> message;
};

// One call the plugin made to Escouade during the run, and how the bench answered it.
struct CallRecord {
  std::string method;
  std::string id;        // as JSON; empty for a notification
  std::string params;    // as JSON, quoted (cut)
  std::string outcome;   // "result ...", "error -32001: ...", "notification", "no answer"
  bool refused = false;  // it had no permission for it, or Escouade does not serve it
};

struct BenchReport {
  std::string folder;
  std::string plugin_id;  // empty when the manifest could not be read
  std::string plugin_version;
  std::vector<CheckResult> checks;
  std::vector<CallRecord> calls;
  // The plugin's journal as the bench kept it (its standard error, masked; the session's
  // sentences), oldest first.
  std::vector<std::string> journal;

  std::size_t count(Verdict v) const noexcept;
  // Exit status of `escouade-plugin test`: 0 only when no check failed.
  int exit_code() const noexcept { return count(Verdict::fail) == 0 ? 0 : 1; }
};

// What the plugin sent, as quoted in a report: at most this many characters.
inline constexpr std::size_t kQuotedChars = 200;

// `text` cut to kQuotedChars characters (never inside a UTF-8 character, "…" added when cut),
// with invalid UTF-8 and control characters replaced, so every report form can carry it.
std::string quote(std::string_view text);

struct TextOptions {
  bool color = false;    // ANSI colours (only when the output is a terminal)
  bool verbose = false;  // the calls it made and its journal, after the checks
};

void write_text(std::ostream& out, const BenchReport& report, const TextOptions& options);
// {plugin:{id, version, folder}, checks:[{name, verdict, reason, message?}], passed, failed,
// skipped, calls:[{method, id?, params, outcome, refused}], journal:[...]}
void write_json(std::ostream& out, const BenchReport& report);
// One <testsuite>, one <testcase> per check; <failure message=reason> with the quoted message as
// its text, <skipped message=reason/> for a skip.
void write_junit(std::ostream& out, const BenchReport& report);

}  // namespace escouade::conformance
