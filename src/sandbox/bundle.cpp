#include "sandbox/bundle.hpp"

#include <algorithm>
#include <charconv>
#include <vector>

namespace escouade::sandbox {

namespace {

constexpr std::string_view kMark = "// @escouade-dev/plugin ";

// "0.2.7" -> {0, 2}; nullopt when it does not start with two numbers.
std::optional<std::pair<int, int>> major_minor(std::string_view v) {
  int major = 0;
  int minor = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), major);
  if (ec != std::errc{} || p == v.data() + v.size() || *p != '.') return std::nullopt;
  ++p;
  auto [q, ec2] = std::from_chars(p, v.data() + v.size(), minor);
  if (ec2 != std::errc{} || q == p) return std::nullopt;
  return std::pair{major, minor};
}

}  // namespace

std::optional<std::string> refuse_old_sdk(std::string_view source) {
  const std::string_view first = source.substr(0, source.find('\n'));
  if (first.substr(0, kMark.size()) != kMark) return std::nullopt;
  std::string_view version = first.substr(kMark.size());
  while (!version.empty() && (version.back() == '\r' || version.back() == ' '))
    version.remove_suffix(1);
  const auto mm = major_minor(version);
  if (mm && (mm->first > 0 || mm->second >= 3)) return std::nullopt;
  // An unreadable version is no version the sandbox knows: the author rebuilds it.
  return "its bundle was made with @escouade-dev/plugin " + std::string(version) +
         ", which does not run in the sandbox: rebuild it with @escouade-dev/plugin 0.3 or later";
}

RootFiles read_root_files(const runtime::OwnFolder& folder) {
  RootFiles out;
  std::vector<std::string> names = folder.root_names(RootFiles::kMaxNames);
  std::erase_if(names, [](const std::string& name) {
    return name.size() <= 5 || !name.ends_with(".json") || name == "escouade-plugin.json";
  });
  std::sort(names.begin(), names.end());
  std::size_t total = 0;
  for (const auto& name : names) {
    auto text = folder.read(name, RootFiles::kEachBytes);
    if (!text) {
      // A folder named x.json, a link out, the manifest under another name: files/read's own
      // reasons. A file that is simply too large keeps this page's words.
      out.left_out[name] = text.error().message;
      continue;
    }
    if (total + text->size() > RootFiles::kTotalBytes) {
      out.left_out[name] = "the JSON files given pass 1 MB in all";
      continue;
    }
    total += text->size();
    out.files.emplace(name, *std::move(text));
  }
  return out;
}

}  // namespace escouade::sandbox
