#include "sandbox/bundle.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <system_error>
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

RootFiles read_root_files(const std::filesystem::path& folder) {
  RootFiles out;
  std::error_code ec;
  std::vector<std::filesystem::path> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    std::error_code ec2;
    if (!entry.is_regular_file(ec2) || entry.path().extension() != ".json") continue;
    if (entry.path().filename() == "escouade-plugin.json") continue;  // never the manifest
    names.push_back(entry.path());
  }
  std::sort(names.begin(), names.end());
  std::size_t total = 0;
  for (const auto& path : names) {
    const std::string name = path.filename().string();
    std::error_code ec2;
    const auto size = std::filesystem::file_size(path, ec2);
    if (ec2) {
      out.left_out[name] = "it cannot be read";
      continue;
    }
    if (size > RootFiles::kEachBytes) {
      out.left_out[name] = "it is larger than 256 KB";
      continue;
    }
    if (total + size > RootFiles::kTotalBytes) {
      out.left_out[name] = "the JSON files given pass 1 MB in all";
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in.good() && !in.eof()) {
      out.left_out[name] = "it cannot be read";
      continue;
    }
    std::string content = std::move(text).str();
    if (content.size() > RootFiles::kEachBytes || total + content.size() > RootFiles::kTotalBytes) {
      out.left_out[name] = "it grew past the limits while it was read";
      continue;
    }
    total += content.size();
    out.files.emplace(name, std::move(content));
  }
  return out;
}

}  // namespace escouade::sandbox
