#include "manifest/manifest.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json/stream_parser.hpp>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <system_error>

#include "base/os_message.hpp"
#include "base/unique_fd.hpp"
#include "base/utf8.hpp"
#include "manifest/fields.hpp"
#include "manifest/rules.hpp"
#include "manifest/schema_check.hpp"
#include "protocol/json_read.hpp"

namespace escouade::manifest {

namespace fs = std::filesystem;
namespace json = boost::json;

using detail::FieldPath;
using detail::PathPart;
using detail::refusal;

namespace {

std::string root_message(std::string_view why) {
  return std::string(detail::kRootName) + ": " + std::string(why);
}

// "syntax error (line 3, column 7)": where the parser stopped, counted from 1.
std::string at_position(std::string_view text, std::size_t offset, std::string what) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const std::size_t line =
      1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t line_start = before.rfind('\n');
  const std::size_t column =
      line_start == std::string_view::npos ? offset + 1 : offset - line_start;
  return what + " (line " + std::to_string(line) + ", column " + std::to_string(column) + ")";
}

Result<json::value> parse_json(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";  // some editors write one; JSON has none
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  if (!is_valid_utf8(text)) return refusal(root_message("not UTF-8 text"));
  json::stream_parser parser;
  boost::system::error_code ec;
  const std::size_t used = parser.write_some(text.data(), text.size(), ec);
  if (ec) return refusal(root_message("not JSON: " + at_position(text, used, ec.message())));
  const std::string_view rest = text.substr(used);
  if (rest.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    return refusal(root_message("not JSON: " + at_position(text, used, "more after the value")));
  }
  parser.finish(ec);
  if (ec) return refusal(root_message("not JSON: " + at_position(text, text.size(), ec.message())));
  return parser.release();
}

// The folder as the checks compare paths: absolute, normal, links resolved when it exists.
fs::path normal_folder(const fs::path& folder) {
  std::error_code ec;
  fs::path p = fs::canonical(folder, ec);
  if (ec) p = fs::absolute(folder, ec).lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

// True when `p` lies strictly under `folder`; both absolute and normal.
bool is_inside(const fs::path& p, const fs::path& folder) {
  auto f = folder.begin();
  auto q = p.begin();
  for (; f != folder.end(); ++f, ++q) {
    if (q == p.end() || *f != *q) return false;
  }
  return q != p.end() && !q->empty();
}

// Why `relative`, as written in the manifest, is not a path inside `folder`; else sets *lexical
// to where it points before links are followed.
std::optional<std::string> folder_path_problem(const fs::path& folder, std::string_view relative,
                                               fs::path* lexical) {
  if (auto why = manifest::relative_path_problem(relative)) return why;
  // Refused even when it comes back in (../plugin/guard): it would depend on the folder's name.
  int depth = 0;
  for (const auto& part : fs::path(std::string(relative))) {
    if (part == "..") {
      if (--depth < 0) return "leads out of the plugin's folder";
    } else if (part != "." && !part.empty()) {
      ++depth;
    }
  }
  fs::path p = (folder / fs::path(std::string(relative))).lexically_normal();
  if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();
  if (p == folder) return "the plugin's folder itself, not a file";
  if (!is_inside(p, folder)) return "leads out of the plugin's folder";
  *lexical = p;
  return std::nullopt;
}

bool is_executable(const fs::file_status& status) {
  constexpr auto kExec = fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
  return (status.permissions() & kExec) != fs::perms::none;
}

// "8 MiB" for a size in whole MiB, else "1.5 MiB": tenths rounded up, so that a size past a
// limit never reads as the limit.
std::string mib(std::uintmax_t bytes) {
  const std::uintmax_t tenths = (bytes * 10 + (1u << 20) - 1) >> 20;
  return std::to_string(tenths / 10) + (tenths % 10 ? "." + std::to_string(tenths % 10) : "") +
         " MiB";
}

// Why `relative` is not a file of `folder` (executable if asked, `max_bytes` at most when not 0);
// else sets *resolved to it, links resolved.
std::optional<std::string> folder_file_problem(const fs::path& folder, std::string_view relative,
                                               bool executable, fs::path* resolved,
                                               std::uintmax_t max_bytes = 0) {
  fs::path lexical;
  if (auto why = folder_path_problem(folder, relative, &lexical)) return why;
  std::error_code ec;
  const fs::file_status status = fs::status(lexical, ec);
  if (ec || !fs::exists(status)) return "no such file in the plugin's folder";
  const fs::path real = fs::canonical(lexical, ec);
  if (ec) return "no such file in the plugin's folder";
  if (!is_inside(real, folder)) return "a link that leads out of the plugin's folder";
  if (fs::is_directory(status)) return "a folder, not a file";
  if (!fs::is_regular_file(status)) return "not a regular file";
  if (executable && !is_executable(status)) return "not executable";
  if (max_bytes > 0) {
    const std::uintmax_t size = fs::file_size(real, ec);
    if (!ec && size > max_bytes) {
      return mib(size) + ", past the " + mib(max_bytes) + " a sandboxed plugin's module may have";
    }
  }
  *resolved = real;
  return std::nullopt;
}

// Why the bare program name `name` is not on `search_path`; else sets *resolved to where it is.
std::optional<std::string> program_on_path_problem(std::string_view name,
                                                   std::string_view search_path,
                                                   fs::path* resolved) {
  if (name != "." && name != "..") {
    std::size_t start = 0;
    while (start <= search_path.size()) {
      std::size_t end = search_path.find(':', start);
      if (end == std::string_view::npos) end = search_path.size();
      const fs::path dir(std::string(search_path.substr(start, end - start)));
      start = end + 1;
      // A relative entry would depend on the folder the host runs in.
      if (dir.empty() || dir.is_relative()) continue;
      const fs::path candidate = dir / fs::path(std::string(name));
      std::error_code ec;
      const fs::file_status status = fs::status(candidate, ec);
      if (!ec && fs::is_regular_file(status) && is_executable(status)) {
        *resolved = candidate.lexically_normal();
        return std::nullopt;
      }
    }
  }
  return "not found on PATH";
}

std::string message_at(const FieldPath& path, const json::value& value, std::string_view why) {
  return detail::path_string(path) + ": " + detail::shown(value) + ": " + std::string(why);
}

std::string str(const json::value& v) {
  return std::string(v.get_string());
}

// The rules on run that read the folder; fills `run`.
std::optional<std::string> check_run(const json::object& run_object, const fs::path& folder,
                                     const CheckEnvironment& environment, Run& run) {
  const FieldPath base{PathPart{"run", 0, false}};
  if (const json::value* command = run_object.if_contains("command")) {
    run.kind = RunKind::command;
    for (const auto& word : command->get_array())
      run.command.push_back(str(word));
    const std::string& program = run.command.front();
    const FieldPath path = detail::child(detail::child(base, "command"), std::size_t{0});
    if (program.front() == '/') {
      return message_at(path, command->get_array()[0],
                        "an absolute path; name a program on PATH (node) or a file of the "
                        "plugin's folder (./guard)");
    }
    const bool in_folder = program.find_first_of("/\\") != std::string::npos;
    auto why = in_folder ? folder_file_problem(folder, program, true, &run.resolved)
                         : program_on_path_problem(program, environment.search_path, &run.resolved);
    if (why) return message_at(path, command->get_array()[0], *why);
    return std::nullopt;
  }
  if (const json::value* js = run_object.if_contains("js")) {
    run.kind = RunKind::js;
    run.path = str(*js);
    if (auto why = folder_file_problem(folder, run.path, false, &run.resolved, kMaxBundleBytes)) {
      return message_at(detail::child(base, "js"), *js, *why);
    }
    return std::nullopt;
  }
  if (const json::value* wasm = run_object.if_contains("wasm")) {
    run.kind = RunKind::wasm;
    run.path = str(*wasm);
    const FieldPath path = detail::child(base, "wasm");
    fs::path build_file;
    if (auto why = folder_path_problem(folder, run.path, &build_file)) {
      return message_at(path, *wasm, *why);
    }
    // The build file is the store's to build from; what runs here is the module beside it.
    if (auto why =
            folder_file_problem(folder, "plugin.wasm", false, &run.resolved, kMaxModuleBytes)) {
      if (*why == "no such file in the plugin's folder") {
        return message_at(path, *wasm, "no plugin.wasm beside the manifest");
      }
      return message_at(path, *wasm, "plugin.wasm: " + *why);
    }
  }
  return std::nullopt;
}

EventSelector event_of(std::string_view text) {
  return EventSelector{std::string(text), !text.empty() && text.back() == '*'};
}

std::optional<FsRoot> fs_root_of(std::string_view name) {
  for (FsRoot root :
       {FsRoot::plugin, FsRoot::agent, FsRoot::agent_repo, FsRoot::agent_home, FsRoot::temp}) {
    if (to_string(root) == name) return root;
  }
  return std::nullopt;
}

// The typed manifest from a document that passed both checks.
void read_fields(const json::object& top, Manifest& m) {
  m.id = str(top.at("id"));
  m.version = str(top.at("version"));
  m.name = str(top.at("name"));
  if (const json::value* v = top.if_contains("description")) m.description = str(*v);
  if (const json::value* v = top.if_contains("activation")) {
    for (const auto& entry : v->get_array()) {
      m.activation.push_back(event_of(std::string_view(entry.get_string()).substr(6)));
    }
  }
  if (const json::value* v = top.if_contains("permissions")) {
    const json::object& p = v->get_object();
    Permissions& out = m.permissions;
    if (const json::value* events = p.if_contains("events")) {
      for (const auto& e : events->get_array())
        out.events.push_back(event_of(e.get_string()));
    }
    if (const json::value* decide = p.if_contains("decide")) out.decide = decide->get_bool();
    if (const json::value* secrets = p.if_contains("secrets")) {
      for (const auto& s : secrets->get_array())
        out.secrets.push_back(str(s));
    }
    if (const json::value* network = p.if_contains("network")) {
      for (const auto& n : network->get_array()) {
        const std::string_view host = n.get_string();
        if (host == "{account}") {
          out.network.account = true;
        } else if (host == "local:shared") {
          out.network.local_shared = true;
        } else {
          out.network.hosts.emplace_back(host);
        }
      }
    }
    if (const json::value* files = p.if_contains("files")) {
      for (const auto& f : files->get_object()) {
        if (auto root = fs_root_of(f.key())) {
          out.files[*root] =
              f.value().get_string() == "write" ? FileAccess::write : FileAccess::read;
        }
      }
    }
    if (const json::value* commands = p.if_contains("commands")) {
      for (const auto& c : commands->get_array())
        out.commands.push_back(command_of(c.get_string()));
    }
  }
  const json::value* contributes = top.if_contains("contributes");
  const json::value* settings =
      contributes ? contributes->get_object().if_contains("settings") : nullptr;
  if (settings) {
    for (const auto& s : settings->get_object()) {
      const json::object& o = s.value().get_object();
      Setting setting;
      const std::string_view type = o.at("type").get_string();
      const json::value& def = o.at("default");
      if (type == "number") {
        setting.type = SettingType::number;
        setting.default_value = def.is_double()  ? def.get_double()
                                : def.is_int64() ? static_cast<double>(def.get_int64())
                                                 : static_cast<double>(def.get_uint64());
      } else if (type == "boolean") {
        setting.type = SettingType::boolean;
        setting.default_value = def.get_bool();
      } else {
        setting.default_value = str(def);
      }
      if (const json::value* d = o.if_contains("description")) setting.description = str(*d);
      m.settings.emplace(std::string(s.key()), std::move(setting));
    }
  }
  if (const json::value* v = top.if_contains("limits")) {
    const json::object& l = v->get_object();
    if (const json::value* n = l.if_contains("fileBytes")) m.limits.file_bytes = n->get_int64();
    if (const json::value* n = l.if_contains("netTimeoutMs"))
      m.limits.net_timeout_ms = n->get_int64();
    if (const json::value* n = l.if_contains("netBytes")) m.limits.net_bytes = n->get_int64();
  }
}

}  // namespace

bool EventSelector::matches(std::string_view fact_name) const noexcept {
  return event_matches(text, fact_name);
}

std::string_view to_string(FsRoot root) noexcept {
  switch (root) {
    case FsRoot::plugin:
      return "plugin";
    case FsRoot::agent:
      return "agent";
    case FsRoot::agent_repo:
      return "agentRepo";
    case FsRoot::agent_home:
      return "agentHome";
    case FsRoot::temp:
      return "temp";
  }
  return {};
}

CheckEnvironment process_environment() {
  const char* path = std::getenv("PATH");
  return CheckEnvironment{path ? std::string(path) : std::string()};
}

Result<Manifest> parse_manifest(std::string_view json_text, const fs::path& folder,
                                const CheckEnvironment& environment) {
  auto doc = parse_json(json_text);
  if (!doc) return doc.error();
  if (!doc->is_object()) {
    return refusal(
        root_message("expected an object, got " + std::string(proto::json_kind_name(*doc))));
  }
  if (auto problem = detail::check_strings(*doc)) return refusal(std::move(*problem));
  if (auto checked = detail::check_schema(*doc); !checked) return checked.error();
  if (auto problem = detail::check_rules(*doc)) return refusal(std::move(*problem));

  Manifest m;
  m.folder = normal_folder(folder);
  const json::object& top = doc->get_object();
  if (const json::value* run = top.if_contains("run")) {
    if (auto problem = check_run(run->get_object(), m.folder, environment, m.run)) {
      return refusal(std::move(*problem));
    }
  }
  read_fields(top, m);
  return m;
}

Result<Manifest> parse_manifest(std::string_view json_text, const fs::path& folder) {
  return parse_manifest(json_text, folder, process_environment());
}

Result<Manifest> load_manifest(const fs::path& folder, const CheckEnvironment& environment) {
  const fs::path file = folder / fs::path(std::string(kManifestFileName));
  // Opened without blocking and judged on what was opened: a FIFO swapped in for the manifest
  // neither hangs the load nor gets read, and no check can be raced between a stat and an open.
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return refusal(root_message("no such file in " + folder.string()));
    }
    return refusal(root_message("cannot be read: " + os_message(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return refusal(root_message("cannot be read"));
  if (!S_ISREG(st.st_mode)) return refusal(root_message("not a regular file"));
  const auto too_big = [](std::uintmax_t size) {
    return refusal(root_message(std::to_string(size) + " bytes; a manifest is at most " +
                                std::to_string(kMaxManifestBytes) + " (256 KiB)"));
  };
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxManifestBytes) {
    return too_big(static_cast<std::uintmax_t>(st.st_size));
  }
  // Never more than the limit and one byte, even if the file grew since its size was read. Read
  // by chunks of a buffer left as it is (a string of the limit, zeroed, cost each load a 256 KiB
  // memset: callgrind, 861k -> 584k instructions a load).
  constexpr std::size_t kMostRead = kMaxManifestBytes + 1;
  std::string text;
  text.reserve(std::min(static_cast<std::size_t>(st.st_size) + 1, kMostRead));
  char chunk[16 * 1024];
  while (text.size() < kMostRead) {
    const ssize_t n = ::read(fd.get(), chunk, std::min(sizeof chunk, kMostRead - text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return refusal(root_message("cannot be read: " + os_message(errno)));
    if (n == 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
  }
  if (text.size() > kMaxManifestBytes) return too_big(text.size());
  return parse_manifest(text, folder, environment);
}

Result<Manifest> load_manifest(const fs::path& folder) {
  return load_manifest(folder, process_environment());
}

CommandGrant command_of(std::string_view text) {
  CommandGrant grant;
  grant.text = std::string(text);
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    grant.words.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (grant.words.size() > 1 && grant.words.back() == "*") {
    grant.words.pop_back();
    grant.any_arguments = true;
  }
  return grant;
}

}  // namespace escouade::manifest
