#include "scaffold/scaffold.hpp"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "manifest/manifest.hpp"
#include "protocol/gen/errors.hpp"
#include "scaffold/embedded.hpp"

namespace escouade::scaffold {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr std::string_view kManifestTemplate = "escouade-plugin.json";
// Kept without its dot in the source tree, so that git does not read it there.
constexpr std::string_view kGitignoreTemplate = "gitignore";

Error refusal(std::string message) {
  return Error{proto::ErrorCode::invalid_params, std::move(message)};
}

Error failure(std::string message) {
  return Error{proto::ErrorCode::internal, std::move(message)};
}

std::string_view template_text(std::string_view path) {
  for (const auto& f : template_files()) {
    if (f.path == path) return f.bytes;
  }
  return {};
}

std::string json_string_inside(std::string_view text) {
  std::string quoted = json::serialize(json::string(text));
  return quoted.substr(1, quoted.size() - 2);
}

std::string last_label(std::string_view id) {
  const auto dot = id.rfind('.');
  return std::string(dot == std::string_view::npos ? id : id.substr(dot + 1));
}

bool ends_with(std::string_view text, std::string_view end) {
  return text.size() >= end.size() && text.substr(text.size() - end.size()) == end;
}

// The manifest the plugin will have, without its run: the program it names is not built yet.
std::string manifest_without_run(const Identity& who) {
  std::string text = fill(template_text(kManifestTemplate), who, true);
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return text;
  v.as_object().erase("run");
  return json::serialize(v);
}

Result<void> write_file(const fs::path& path, std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return failure(path.parent_path().string() + ": cannot make it: " + ec.message());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (out) out.close();
  if (!out) return failure(path.string() + ": cannot write it: " + std::strerror(errno));
  return {};
}

}  // namespace

std::string folder_name(const fs::path& folder) {
  std::error_code ec;
  fs::path absolute = fs::absolute(folder, ec).lexically_normal();
  if (ec) absolute = folder.lexically_normal();
  if (absolute.filename().empty()) absolute = absolute.parent_path();
  return absolute.filename().string();
}

std::optional<std::string> id_from_folder_name(std::string_view name) {
  std::string label;
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') label += c;
  }
  const auto first = label.find_first_not_of('-');
  if (first == std::string::npos) return std::nullopt;
  label = label.substr(first, label.find_last_not_of('-') - first + 1);
  return "dev.example." + label;
}

std::string fill(std::string_view text, const Identity& who, bool json) {
  const std::string name = json ? json_string_inside(who.name) : who.name;
  const std::pair<std::string_view, const std::string*> placeholders[] = {
      {"@ID@", &who.id}, {"@NAME@", &name}, {"@TARGET@", &who.target}};
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    bool replaced = false;
    if (text[i] == '@') {
      for (const auto& [placeholder, value] : placeholders) {
        if (text.substr(i, placeholder.size()) == placeholder) {
          out += *value;
          i += placeholder.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

Result<Identity> settle_identity(const Request& request) {
  const std::string from_folder = folder_name(request.folder);
  Identity who;
  if (request.id) {
    who.id = *request.id;
  } else if (auto derived = id_from_folder_name(from_folder)) {
    who.id = *derived;
  } else {
    return refusal("no id can be made from the folder's name \"" + from_folder +
                   "\" (it needs a letter or a digit); give one with --id, like "
                   "--id dev.example.my-plugin");
  }
  who.name = request.name ? *request.name : from_folder;
  who.target = last_label(who.id);
  auto checked = manifest::parse_manifest(manifest_without_run(who), request.folder);
  if (!checked) return checked.error();
  return who;
}

std::vector<PlannedFile> plan_cpp(const Identity& who) {
  std::vector<PlannedFile> files;
  for (const auto& f : template_files()) {
    std::string path = f.path == kGitignoreTemplate ? ".gitignore" : std::string(f.path);
    files.push_back({std::move(path), fill(f.bytes, who, ends_with(f.path, ".json"))});
  }
  std::stable_partition(files.begin(), files.end(),
                        [](const PlannedFile& f) { return f.path == kManifestTemplate; });
  for (const auto& h : sdk_headers()) {
    files.push_back({std::string(kSdkFolder) + "/" + std::string(h.path), std::string(h.bytes)});
  }
  return files;
}

std::vector<PlannedFile> plan_wasm(const Identity& who) {
  std::vector<PlannedFile> files = plan_cpp(who);
  for (const auto& w : wasm_files()) {
    const std::string path = w.path == kGitignoreTemplate ? ".gitignore" : std::string(w.path);
    PlannedFile planned{path, fill(w.bytes, who, ends_with(w.path, ".json"))};
    auto same = std::find_if(files.begin(), files.end(),
                             [&](const PlannedFile& f) { return f.path == path; });
    if (same != files.end())
      *same = std::move(planned);
    else
      files.push_back(std::move(planned));
  }
  return files;
}

Result<Scaffolded> scaffold_with(const Request& request,
                                 std::vector<PlannedFile> (*plan)(const Identity&)) {
  if (request.folder.empty()) return refusal("no folder given; name a new or an empty one");
  auto who = settle_identity(request);
  if (!who) return who.error();

  std::error_code ec;
  Scaffolded done{*who, fs::absolute(request.folder, ec).lexically_normal(), {}};
  if (ec) return failure(request.folder.string() + ": " + ec.message());
  const auto status = fs::status(done.folder, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) {
      return refusal(request.folder.string() + ": not a folder; give a new or an empty folder");
    }
    if (!fs::is_empty(done.folder, ec) || ec) {
      return refusal(request.folder.string() + ": " +
                     (ec ? ec.message() : "not empty; give a new or an empty folder"));
    }
  } else if (!fs::create_directories(done.folder, ec) && ec) {
    return failure(request.folder.string() + ": cannot make it: " + ec.message());
  }
  done.folder = fs::canonical(done.folder, ec);
  if (ec) return failure(request.folder.string() + ": " + ec.message());

  for (const auto& f : plan(*who)) {
    if (auto written = write_file(done.folder / f.path, f.bytes); !written) {
      return written.error();
    }
    done.files.push_back(f.path);
  }
  return done;
}

Result<Scaffolded> scaffold_cpp(const Request& request) {
  return scaffold_with(request, plan_cpp);
}

Result<Scaffolded> scaffold_wasm(const Request& request) {
  return scaffold_with(request, plan_wasm);
}

}  // namespace escouade::scaffold
