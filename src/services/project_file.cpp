#include "services/project_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <exception>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>

#include "base/os_message.hpp"
#include "base/quote.hpp"
#include "base/unique_fd.hpp"
#include "base/utf8.hpp"
#include "protocol/gen/errors.hpp"
#include "services/setting_value.hpp"

namespace escouade::services {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

constexpr auto kInvalidParams = proto::ErrorCode::invalid_params;
constexpr std::size_t kShownBytes = 64;

// Closes the descriptor it holds when it goes out of scope.
std::string_view kind_of_file(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a named pipe";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

std::string too_big(std::uintmax_t size) {
  return std::to_string(size) + " bytes; Escouade reads at most " +
         std::to_string(kMaxProjectFileBytes) + " (1 MiB)";
}

struct FileText {
  std::string text;
  bool missing = false;
  std::optional<std::string> problem;  // without the file's name
};

// The file's bytes, opened without following a last link and without blocking (a FIFO with no
// writer opens at once), judged by what was opened, so nothing can swap it in between.
FileText read_file(const fs::path& file) {
  FileText out;
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) {
      out.missing = true;
    } else if (error == ELOOP) {
      out.problem = "a symbolic link; Escouade reads " + std::string(kProjectFileName) +
                    " only as a regular file";
    } else {
      out.problem = "cannot be read: " + os_message(error);
    }
    return out;
  }
  const UniqueFd closer(fd);
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    out.problem = "cannot be read: " + os_message(errno);
    return out;
  }
  if (!S_ISREG(status.st_mode)) {
    out.problem = std::string(kind_of_file(status.st_mode)) + "; Escouade reads " +
                  std::string(kProjectFileName) + " only as a regular file";
    return out;
  }
  if (static_cast<std::uintmax_t>(status.st_size) > kMaxProjectFileBytes) {
    out.problem = too_big(static_cast<std::uintmax_t>(status.st_size));
    return out;
  }
  // Never more than the limit and one byte, even if the file grew since fstat.
  out.text.resize(kMaxProjectFileBytes + 1);
  std::size_t got = 0;
  while (got < out.text.size()) {
    const ssize_t n = ::read(fd, out.text.data() + got, out.text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.problem = "cannot be read: " + os_message(errno);
      out.text.clear();
      return out;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.text.resize(got);
  if (got > kMaxProjectFileBytes) {
    out.problem = too_big(got);
    out.text.clear();
  }
  return out;
}

std::string at(const fs::path& file, int line, int column) {
  return file.string() + ": line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::string at(const fs::path& file, const YAML::Mark& mark) {
  return at(file, mark.line + 1, mark.column + 1);
}

bool indented_with_tab(std::string_view text, int line) {
  std::size_t start = 0;
  for (int i = 0; i < line && start != std::string_view::npos; ++i) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos) return false;
  for (std::size_t i = start; i < text.size() && (text[i] == ' ' || text[i] == '\t'); ++i) {
    if (text[i] == '\t') return true;
  }
  return false;
}

// Remembers where the last scalar of the stream starts. yaml-cpp 0.7 ends a quoted scalar left
// open at the end of the file without an error ("a: "x" reads as x), and such a scalar is
// always the stream's last: scalar_left_open checks it.
class LastScalar : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    last = mark;
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  std::optional<YAML::Mark> last;
};

// True when the scalar at `mark` (its properties, &anchor or !tag, first) opens a quote that the
// text never closes. Marks count bytes of `text`, which is UTF-8 without a BOM.
bool scalar_left_open(std::string_view text, const YAML::Mark& mark) {
  std::size_t i = static_cast<std::size_t>(mark.pos);
  const auto skip_blanks = [&] {
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
      ++i;
    }
  };
  while (i < text.size() && (text[i] == '&' || text[i] == '!')) {
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n')
      ++i;
    skip_blanks();
  }
  if (i >= text.size() || (text[i] != '"' && text[i] != '\'')) return false;
  const char quote = text[i++];
  while (i < text.size()) {
    if (quote == '"' && text[i] == '\\') {
      i += 2;
    } else if (text[i] == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        i += 2;  // '' is a quote inside single quotes
      } else {
        return false;
      }
    } else {
      ++i;
    }
  }
  return true;
}

// The documents of `text`, or the sentence saying where and why it is not YAML.
struct Parsed {
  std::vector<YAML::Node> documents;
  std::optional<std::string> problem;
};

Parsed parse_yaml(const fs::path& file, std::string_view text) {
  Parsed out;
  const auto where_and_why = [&](const YAML::Mark& mark, const std::string& why) {
    std::string sentence = at(file, mark) + ": " + why;
    if (indented_with_tab(text, mark.line)) {
      sentence += " (the line is indented with a tab; YAML indents with spaces only)";
    }
    return sentence;
  };
  try {
    std::istringstream events_in{std::string(text)};
    YAML::Parser parser(events_in);
    LastScalar last;
    while (parser.HandleNextDocument(last)) {
    }
    if (last.last && scalar_left_open(text, *last.last)) {
      out.problem = where_and_why(*last.last, "a quoted value is never closed");
      return out;
    }
    out.documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    out.documents.clear();
    out.problem = where_and_why(e.mark, e.msg);
  } catch (const std::exception& e) {
    out.documents.clear();
    out.problem = file.string() + ": cannot be read: " + e.what();
  }
  return out;
}

std::string_view kind_of_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return "a single value";
    default:
      return "nothing";
  }
}

// The value of the last entry of `map` whose key is the scalar `key`; a repeated key is a
// problem (`path` names the map). An undefined node when there is none.
YAML::Node find_last(const YAML::Node& map, std::string_view key, const fs::path& file,
                     std::string_view path, std::vector<std::string>& problems) {
  YAML::Node found;
  bool seen = false;
  for (const auto& entry : map) {
    if (!entry.first.IsScalar() || entry.first.Scalar() != key) continue;
    if (seen) {
      const std::string name =
          path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
      problems.push_back(at(file, entry.first.Mark()) + ": " + name +
                         " is given twice; the last one is read");
    }
    seen = true;
    found.reset(entry.second);
  }
  return found;
}

bool is_null(const YAML::Node& node) {
  return !node.IsDefined() || node.IsNull();
}

void read_section(const YAML::Node& section, const fs::path& file, const std::string& path,
                  ProjectSettings& out) {
  for (const auto& entry : section) {
    if (!entry.first.IsScalar()) {
      out.problems.push_back(at(file, entry.first.Mark()) + ": " + path + ": a key that is " +
                             std::string(kind_of_node(entry.first)) +
                             ", not a setting's name, is skipped");
      continue;
    }
    const std::string& name = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    const std::string where = at(file, value.Mark()) + ": " + path + "." + name;
    if (is_null(value)) continue;
    if (!value.IsScalar()) {
      out.problems.push_back(where + ": " + std::string(kind_of_node(value)) +
                             " is skipped; a setting's value is a string, a number, true or "
                             "false");
      continue;
    }
    const std::string& tag = value.Tag();
    const bool plain = tag == "?";
    if (!plain && tag != "!" && tag != "tag:yaml.org,2002:str") {
      out.problems.push_back(where + ": the tag " + tag +
                             " is not read; write the value without a tag");
      continue;
    }
    std::erase_if(out.values, [&](const ProjectValue& v) {
      if (v.name != name) return false;
      out.problems.push_back(where + ": given twice; the last one is read");
      return true;
    });
    out.values.push_back(ProjectValue{name, value.Scalar(), plain, value.Mark().line + 1,
                                      value.Mark().column + 1, where});
  }
}

void read_document(const YAML::Node& root, const fs::path& file, std::string_view plugin_id,
                   ProjectSettings& out) {
  if (is_null(root)) return;
  if (!root.IsMap()) {
    out.problems.push_back(at(file, root.Mark()) + ": the file is " +
                           std::string(kind_of_node(root)) +
                           "; it should be a mapping (plugins: ...)");
    return;
  }
  const YAML::Node plugins = find_last(root, "plugins", file, "", out.problems);
  if (is_null(plugins)) return;
  if (!plugins.IsMap()) {
    out.problems.push_back(at(file, plugins.Mark()) + ": plugins is " +
                           std::string(kind_of_node(plugins)) +
                           "; it should be a mapping of plugin ids to their settings");
    return;
  }
  const YAML::Node section = find_last(plugins, plugin_id, file, "plugins", out.problems);
  if (is_null(section)) return;
  const std::string path = "plugins." + std::string(plugin_id);
  if (!section.IsMap()) {
    out.problems.push_back(at(file, section.Mark()) + ": " + path + " is " +
                           std::string(kind_of_node(section)) +
                           "; it should be a mapping of setting names to values");
    return;
  }
  read_section(section, file, path, out);
}

std::string shown(std::string_view text) {
  return quote_name(text, kShownBytes);
}

bool all_of(std::string_view s, std::string_view allowed) {
  return !s.empty() && s.find_first_not_of(allowed) == std::string_view::npos;
}

constexpr std::string_view kDigits = "0123456789";

// YAML 1.2 core schema: [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool is_core_float(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  const std::size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos) {
    std::string_view exponent = s.substr(e + 1);
    if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) exponent.remove_prefix(1);
    if (!all_of(exponent, kDigits)) return false;
  }
  const std::size_t dot = mantissa.find('.');
  if (dot == std::string_view::npos) return all_of(mantissa, kDigits);
  const std::string_view whole = mantissa.substr(0, dot);
  const std::string_view fraction = mantissa.substr(dot + 1);
  if (whole.empty()) return all_of(fraction, kDigits);
  return all_of(whole, kDigits) && (fraction.empty() || all_of(fraction, kDigits));
}

std::optional<double> core_number(std::string_view s) {
  const auto integer = [](std::string_view digits, int base) -> std::optional<double> {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n, base);
    if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    return static_cast<double>(n);
  };
  if (s.starts_with("0x") && all_of(s.substr(2), "0123456789abcdefABCDEF")) {
    return integer(s.substr(2), 16);
  }
  if (s.starts_with("0o") && all_of(s.substr(2), "01234567")) return integer(s.substr(2), 8);
  if (!is_core_float(s)) return std::nullopt;
  if (s[0] == '+') s.remove_prefix(1);
  double d = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec == std::errc::result_out_of_range) return HUGE_VAL;
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return d;
}

bool is_core_special_float(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  for (std::string_view form : {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"}) {
    if (s == form) return true;
  }
  return false;
}

Error refusal(std::string why) {
  return Error{kInvalidParams, std::move(why)};
}

}  // namespace

ProjectSettings read_project_settings(const fs::path& project_folder, std::string_view plugin_id) {
  ProjectSettings out;
  out.file = project_folder / std::string(kProjectFileName);
  FileText read = read_file(out.file);
  if (read.missing) return out;
  if (read.problem) {
    out.problems.push_back(out.file.string() + ": " + *read.problem);
    return out;
  }
  std::string_view text = read.text;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  if (text.find('\0') != std::string_view::npos || !is_valid_utf8(text)) {
    out.problems.push_back(out.file.string() + ": not UTF-8 text");
    return out;
  }
  Parsed parsed = parse_yaml(out.file, text);
  if (parsed.problem) {
    out.problems.push_back(std::move(*parsed.problem));
    return out;
  }
  if (parsed.documents.empty()) return out;
  if (parsed.documents.size() > 1) {
    out.problems.push_back(out.file.string() + ": holds " +
                           std::to_string(parsed.documents.size()) +
                           " documents (---); only the first is read");
  }
  try {
    read_document(parsed.documents.front(), out.file, plugin_id, out);
  } catch (const std::exception& e) {
    out.values.clear();
    out.problems.push_back(out.file.string() + ": cannot be read: " + e.what());
  }
  return out;
}

Result<json::value> project_value_as(const ProjectValue& value, manifest::SettingType type) {
  const std::string_view text = value.text;
  switch (type) {
    case manifest::SettingType::string:
      return json::value(json::string(text));
    case manifest::SettingType::boolean:
      if (value.plain) {
        if (text == "true" || text == "True" || text == "TRUE") return json::value(true);
        if (text == "false" || text == "False" || text == "FALSE") return json::value(false);
        for (std::string_view yaml11 : {"yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON",
                                        "off", "Off", "OFF", "y", "Y", "n", "N"}) {
          if (text == yaml11) {
            return refusal("expected true or false, got " + std::string(text) +
                           " (text in YAML 1.2, which Escouade follows)");
          }
        }
        return refusal("expected true or false, got " + shown(text));
      }
      return refusal("expected true or false, got the quoted text " + shown(text));
    case manifest::SettingType::number:
      if (!value.plain) return refusal("expected a number, got the quoted text " + shown(text));
      if (is_core_special_float(text)) {
        return refusal("expected a finite number, got " + std::string(text));
      }
      if (const std::optional<double> number = core_number(text)) {
        if (!std::isfinite(*number)) {
          return refusal("expected a number, got " + shown(text) + ", out of range");
        }
        return setting_number(*number);
      }
      return refusal("expected a number, got " + shown(text));
  }
  return refusal("unknown setting type");
}

}  // namespace escouade::services
