#include "harness/journal_tail.hpp"

#include <fstream>
#include <system_error>
#include <vector>

namespace escouade::harness {

namespace fs = std::filesystem;

namespace {

// The id of a journal file: "<id>.log"; anything else (a rotated .log.1) is not one.
bool journal_id(const fs::path& file, std::string& id) {
  if (file.extension() != ".log") return false;
  id = file.stem().string();
  return !id.empty();
}

}  // namespace

void JournalTail::skip_existing() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::string id;
    if (!journal_id(entry.path(), id)) continue;
    files_[id].offset = fs::file_size(entry.path(), ec);
    if (ec) files_[id].offset = 0;
  }
}

void JournalTail::poll() {
  std::error_code ec;
  std::vector<std::pair<std::string, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::string id;
    if (journal_id(entry.path(), id)) found.emplace_back(id, entry.path());
  }
  for (const auto& [id, path] : found) {
    Followed& f = files_[id];
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) continue;
    if (size < f.offset) {
      // Rotated: the end of the old file went to <id>.log.1; then the new one from its start.
      fs::path old = path;
      old += ".1";
      if (fs::file_size(old, ec) >= f.offset && !ec) read_from(old, id, f);
      f.offset = 0;
    }
    if (size > f.offset) read_from(path, id, f);
  }
}

void JournalTail::read_from(const fs::path& file, const std::string& id, Followed& f) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return;
  in.seekg(static_cast<std::streamoff>(f.offset));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  f.offset += bytes.size();
  f.partial += bytes;
  std::size_t start = 0;
  for (std::size_t nl; (nl = f.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(f.partial.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) sink_(id, line);
  }
  f.partial.erase(0, start);
}

}  // namespace escouade::harness
