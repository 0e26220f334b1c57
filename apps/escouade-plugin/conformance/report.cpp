#include "conformance/report.hpp"

#include <fmt/format.h>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "base/utf8.hpp"

namespace escouade::conformance {

namespace json = boost::json;

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the UTF-8 character starting `s`, or 0 when it is not a valid one.
std::size_t char_length(std::string_view s) {
  const auto lead = static_cast<unsigned char>(s[0]);
  const std::size_t n = lead < 0x80   ? 1
                        : lead < 0xC2 ? 0
                        : lead < 0xE0 ? 2
                        : lead < 0xF0 ? 3
                        : lead < 0xF5 ? 4
                                      : 0;
  if (n == 0 || n > s.size()) return 0;
  return is_valid_utf8(s.substr(0, n)) ? n : 0;
}

std::string xml_escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\n':
        out += "&#10;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// `text` with invalid UTF-8 and control characters replaced, cut after `max_chars` characters.
std::string cleaned(std::string_view text, std::size_t max_chars) {
  std::string out;
  std::size_t chars = 0;
  while (!text.empty()) {
    if (chars == max_chars) {
      out += "\xE2\x80\xA6";  // …
      break;
    }
    const std::size_t n = char_length(text);
    if (n == 0) {
      out += kReplacement;
      text.remove_prefix(1);
    } else if (n == 1 && (static_cast<unsigned char>(text[0]) < 0x20 || text[0] == 0x7F)) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[0]));
      text.remove_prefix(1);
    } else {
      out.append(text.substr(0, n));
      text.remove_prefix(n);
    }
    ++chars;
  }
  return out;
}

std::string quote_all(std::string_view text) {
  return cleaned(text, std::string_view::npos);
}

struct Mark {
  std::string_view symbol;
  std::string_view color;
};

Mark mark_of(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return {"\xE2\x9C\x93", "\x1b[32m"};  // ✓ green
    case Verdict::fail:
      return {"\xE2\x9C\x97", "\x1b[31m"};  // ✗ red
    case Verdict::skip:
      return {"\xE2\x80\x93", "\x1b[33m"};  // – yellow
  }
  return {"?", ""};
}

}  // namespace

std::string_view to_string(Verdict v) noexcept {
  switch (v) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::skip:
      return "skip";
  }
  return "skip";
}

std::size_t BenchReport::count(Verdict v) const noexcept {
  std::size_t n = 0;
  for (const auto& c : checks)
    n += c.verdict == v ? 1 : 0;
  return n;
}

std::string quote(std::string_view text) {
  return cleaned(text, kQuotedChars);
}

void write_text(std::ostream& out, const BenchReport& report, const TextOptions& options) {
  const std::string_view reset = options.color ? "\x1b[0m" : "";
  const std::string_view bold = options.color ? "\x1b[1m" : "";
  const std::string_view dim = options.color ? "\x1b[2m" : "";
  if (report.plugin_id.empty()) {
    out << bold << "escouade-plugin test " << report.folder << reset << "\n";
  } else {
    out << bold << report.plugin_id << " " << report.plugin_version << reset << dim << "  ("
        << report.folder << ")" << reset << "\n";
  }
  std::size_t width = 0;
  for (const auto& c : report.checks)
    width = std::max(width, c.name.size());
  for (const auto& c : report.checks) {
    const Mark m = mark_of(c.verdict);
    out << "  " << (options.color ? m.color : "") << m.symbol << reset << " " << c.name
        << std::string(width - c.name.size() + 2, ' ');
    if (c.verdict == Verdict::pass) out << dim;
    out << c.reason << reset << "\n";
    if (c.message) out << std::string(width + 6, ' ') << dim << "> " << reset << *c.message << "\n";
  }
  if (options.verbose) {
    out << "\n" << bold << "calls it made (" << report.calls.size() << ")" << reset << "\n";
    for (const auto& call : report.calls) {
      out << "  " << (call.refused && options.color ? mark_of(Verdict::fail).color : "")
          << call.method << reset;
      if (!call.id.empty()) out << " (id " << call.id << ")";
      out << " " << call.params << " -> " << call.outcome << "\n";
    }
    out << "\n" << bold << "journal (" << report.journal.size() << " lines)" << reset << "\n";
    for (const auto& line : report.journal)
      out << "  " << line << "\n";
  }
  out << "\n"
      << report.count(Verdict::pass) << " passed, " << report.count(Verdict::fail) << " failed, "
      << report.count(Verdict::skip) << " skipped\n";
}

void write_json(std::ostream& out, const BenchReport& report) {
  json::object plugin{{"folder", report.folder}};
  if (!report.plugin_id.empty()) {
    plugin["id"] = report.plugin_id;
    plugin["version"] = report.plugin_version;
  }
  json::array checks;
  for (const auto& c : report.checks) {
    json::object o{{"name", c.name}, {"verdict", to_string(c.verdict)}, {"reason", c.reason}};
    if (c.message) o["message"] = *c.message;
    checks.push_back(std::move(o));
  }
  json::array calls;
  for (const auto& c : report.calls) {
    json::object o{
        {"method", c.method}, {"params", c.params}, {"outcome", c.outcome}, {"refused", c.refused}};
    if (!c.id.empty()) o["id"] = c.id;
    calls.push_back(std::move(o));
  }
  json::array journal;
  for (const auto& line : report.journal)
    journal.push_back(json::string(quote_all(line)));
  json::object whole{{"plugin", std::move(plugin)},
                     {"checks", std::move(checks)},
                     {"passed", report.count(Verdict::pass)},
                     {"failed", report.count(Verdict::fail)},
                     {"skipped", report.count(Verdict::skip)},
                     {"calls", std::move(calls)},
                     {"journal", std::move(journal)}};
  out << json::serialize(whole) << "\n";
}

void write_junit(std::ostream& out, const BenchReport& report) {
  const std::string suite =
      report.plugin_id.empty() ? report.folder : report.plugin_id + " " + report.plugin_version;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites>\n";
  out << "  <testsuite name=\"" << xml_escaped(quote_all(suite)) << "\" tests=\""
      << report.checks.size() << "\" failures=\"" << report.count(Verdict::fail)
      << "\" errors=\"0\" skipped=\"" << report.count(Verdict::skip) << "\">\n";
  const std::string classname =
      "conformance." + (report.plugin_id.empty() ? std::string("plugin") : report.plugin_id);
  for (const auto& c : report.checks) {
    out << "    <testcase classname=\"" << xml_escaped(classname) << "\" name=\""
        << xml_escaped(c.name) << "\"";
    switch (c.verdict) {
      case Verdict::pass:
        out << "/>\n";
        break;
      case Verdict::fail:
        out << ">\n      <failure message=\"" << xml_escaped(quote_all(c.reason)) << "\">"
            << xml_escaped(quote_all(c.message.value_or(c.reason))) << "</failure>\n"
            << "    </testcase>\n";
        break;
      case Verdict::skip:
        out << ">\n      <skipped message=\"" << xml_escaped(quote_all(c.reason))
            << "\"/>\n    </testcase>\n";
        break;
    }
  }
  out << "  </testsuite>\n</testsuites>\n";
}

}  // namespace escouade::conformance
