#pragma once

// How TypeScript text is spelled and laid out, for the --ts output (ts_types.cpp): string and
// template escapes, paths as the checkers' sentences write them, JSDoc and long strings wrapped
// to the width, and the statements of a checker with the guards that fit on one line.

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <cctype>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace escouade::codegen::ts {

// Generated lines end by column 100 where they can; a wrapped description by column 96.
inline constexpr std::size_t kLineWidth = 100;
inline constexpr std::size_t kCommentWidth = 96;

// The columns `s` takes: one per code point (the descriptions hold «, » and ›).
inline std::size_t columns(std::string_view s) {
  std::size_t n = 0;
  for (char c : s)
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

inline bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
  });
}

inline bool has(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

inline std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& p : parts)
    out += (out.empty() ? "" : std::string(separator)) + p;
  return out;
}

// `s` with a backslash before each character of `specials` and before \, control characters
// escaped; UTF-8 beyond ASCII kept as it is.
inline std::string escaped(std::string_view s, std::string_view specials) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || specials.find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// `s` as a single-quoted TypeScript string.
inline std::string ts_string(std::string_view s) {
  return "'" + escaped(s, "'") + "'";
}

// `s` as text inside a template literal, where ` and ${ mean something.
inline std::string template_text(std::string_view s) {
  return escaped(s, "`$");
}

// `s` as JSON writes it: "allow".
inline std::string json_quote(std::string_view s) {
  return boost::json::serialize(boost::json::value(boost::json::string(s)));
}

// A property's name in a type or an object literal: quoted when it is no identifier.
inline std::string ts_key(std::string_view name) {
  return is_identifier(name) ? std::string(name) : ts_string(name);
}

// The step from an object's path to its member's, as template text: .name or ["na-me"].
inline std::string path_step(std::string_view name) {
  return is_identifier(name) ? "." + template_text(name)
                             : "[" + template_text(json_quote(name)) + "]";
}

// A checker's path (template text such as "${at}.request") as an expression: `at` itself when
// it is one variable.
inline std::string path_expr(const std::string& at) {
  if (at.size() > 3 && at.rfind("${", 0) == 0 && at.back() == '}' &&
      is_identifier(std::string_view(at).substr(2, at.size() - 3))) {
    return at.substr(2, at.size() - 3);
  }
  return "`" + at + "`";
}

// A checker's sentence: `${at}.name: is required`.
inline std::string sentence(const std::string& at, const std::string& what) {
  return "`" + at + ": " + what + "`";
}

// Splits `text` at spaces into lines of at most `width` columns; a newline starts a line.
inline std::vector<std::string> wrap(std::string_view text, std::size_t width) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::istringstream words{std::string(text.substr(start, end - start))};
    std::string line, word;
    while (words >> word) {
      if (!line.empty() && columns(line) + 1 + columns(word) > width) {
        lines.push_back(line);
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

// `text` as a JSDoc comment `indent` columns in: on one line when it fits, else wrapped.
// Nothing for an empty text.
inline void jsdoc(std::ostream& o, std::string_view text, std::size_t indent) {
  if (text.empty()) return;
  std::string safe(text);
  for (std::size_t at = safe.find("*/"); at != std::string::npos; at = safe.find("*/", at))
    safe.replace(at, 2, "*\\/");
  const std::string pad(indent, ' ');
  if (safe.find('\n') == std::string::npos && indent + columns(safe) + 7 <= kCommentWidth) {
    o << pad << "/** " << safe << " */\n";
    return;
  }
  o << pad << "/**\n";
  for (const auto& line : wrap(safe, kCommentWidth - indent - 3))
    o << pad << (line.empty() ? " *" : " * " + line) << "\n";
  o << pad << " */\n";
}

// `key: 'text',` `indent` columns in; a string too long for the line is cut at spaces into
// pieces joined with +, one a line.
inline void string_member(std::ostream& o, std::size_t indent, const std::string& key,
                          std::string_view text) {
  const std::string pad(indent, ' ');
  const std::string literal = ts_string(text);
  if (indent + key.size() + 3 + columns(literal) <= kLineWidth) {
    o << pad << key << ": " << literal << ",\n";
    return;
  }
  o << pad << key << ":\n";
  const std::size_t width = kLineWidth - indent - 4;  // the piece's indent and " +"
  std::vector<std::string> pieces(1);
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find(' ', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    const std::string_view word = text.substr(start, end - start);
    if (!pieces.back().empty() && columns(ts_string(pieces.back() + std::string(word))) > width)
      pieces.emplace_back();
    pieces.back() += word;
    start = end;
  }
  for (std::size_t i = 0; i < pieces.size(); ++i)
    o << pad << "  " << ts_string(pieces[i]) << (i + 1 < pieces.size() ? " +\n" : ",\n");
}

// `export type name = a | b;`, one member a line when that does not fit.
inline void union_alias(std::ostream& o, const std::string& name,
                        const std::vector<std::string>& items) {
  const std::string head = "export type " + name + " =";
  const std::string all = items.empty() ? "never" : join(items, " | ");
  if (columns(head) + 1 + columns(all) + 1 <= kLineWidth) {
    o << head << " " << all << ";\n";
    return;
  }
  o << head;
  for (const auto& item : items)
    o << "\n  | " << item;
  o << ";\n";
}

// The members of a TypeScript union, split at its top level: "string | { a: number | null }"
// gives "string" and "{ a: number | null }". A type that is no union is its one member.
inline std::vector<std::string> union_members(std::string_view type) {
  std::vector<std::string> members;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < type.size(); ++i) {
    const char c = type[i];
    if (c == '\'') {
      // A string literal: skipped to its closing quote, past its escapes.
      for (++i; i < type.size() && type[i] != '\''; ++i)
        i += type[i] == '\\';
      continue;
    }
    if (c == '{' || c == '(' || c == '[') ++depth;
    if (c == '}' || c == ')' || c == ']') --depth;
    if (depth == 0 && type.substr(i, 3) == " | ") {
      members.emplace_back(type.substr(start, i - start));
      start = i + 3;
    }
  }
  members.emplace_back(type.substr(start));
  return members;
}

inline bool is_union(std::string_view type) {
  return union_members(type).size() > 1;
}

// A line of a checker's body, or a guard: `if (cond) return result;`.
struct Stmt {
  int depth = 0;  // steps of two spaces, relative to the body
  std::string text;
  std::string cond;  // set for a guard
  std::string result;
  // For the guard of an optional member: the member, whose absence (undefined) passes.
  std::string unless_absent;
};
using Body = std::vector<Stmt>;

inline Stmt line(int depth, std::string text) {
  return {depth, std::move(text), {}, {}, {}};
}
inline Stmt guard(std::string cond, std::string result) {
  return {0, {}, std::move(cond), std::move(result), {}};
}

inline void append(Body& to, Body from, int depth) {
  for (auto& s : from) {
    s.depth += depth;
    to.push_back(std::move(s));
  }
}

// `return result;` at `pad`; a sentence too long for the line is cut after its commas (none
// inside a ${...}) into templates joined with +.
inline void write_return(std::ostream& o, const std::string& pad, const std::string& result) {
  if (pad.size() + columns(result) + 8 <= kLineWidth || result.front() != '`') {
    o << pad << "return " << result << ";\n";
    return;
  }
  const std::size_t width = kLineWidth - pad.size() - 2 - 4;  // the piece's indent and " +"
  const std::string text = result.substr(1, result.size() - 2);
  std::vector<std::string> pieces(1);
  std::size_t start = 0;
  int depth = 0;  // inside how many ${
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const bool end = i == text.size();
    if (!end && text[i] == '\\') {
      ++i;  // an escape: \$ is no substitution
      continue;
    }
    if (!end && text.compare(i, 2, "${") == 0) ++depth;
    if (!end && text[i] == '}' && depth > 0) --depth;
    if (!end && (depth > 0 || text.compare(i, 2, ", ") != 0)) continue;
    const std::string part = text.substr(start, end ? std::string::npos : i + 2 - start);
    if (!pieces.back().empty() && columns(pieces.back() + part) + 2 > width) pieces.emplace_back();
    pieces.back() += part;
    start = i + 2;
    ++i;
  }
  o << pad << "return (\n";
  for (std::size_t i = 0; i < pieces.size(); ++i)
    o << pad << "  `" << pieces[i] << (i + 1 < pieces.size() ? "` +\n" : "`\n");
  o << pad << ");\n";
}

// Writes `body` `indent` columns in. A guard is one line when it fits, else its return goes on
// a line of its own; an optional member's guard tests the member's presence first, in the same
// condition when that fits.
inline void write_body(std::ostream& o, const Body& body, std::size_t indent) {
  for (const auto& s : body) {
    const std::string pad(indent + 2 * static_cast<std::size_t>(s.depth), ' ');
    if (s.cond.empty()) {
      o << pad << s.text << "\n";
      continue;
    }
    const std::string cond =
        s.unless_absent.empty() ? s.cond : s.unless_absent + " !== undefined && " + s.cond;
    const std::string one = "if (" + cond + ") return " + s.result + ";";
    if (pad.size() + columns(one) <= kLineWidth) {
      o << pad << one << "\n";
    } else if (pad.size() + columns(cond) + 7 <= kLineWidth || s.unless_absent.empty()) {
      o << pad << "if (" << cond << ") {\n";
      write_return(o, pad + "  ", s.result);
      o << pad << "}\n";
    } else {
      Stmt inner = s;
      inner.unless_absent.clear();
      ++inner.depth;
      o << pad << "if (" << s.unless_absent << " !== undefined) {\n";
      write_body(o, {inner}, indent);
      o << pad << "}\n";
    }
  }
}

}  // namespace escouade::codegen::ts
