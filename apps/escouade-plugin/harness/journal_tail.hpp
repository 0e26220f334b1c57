#pragma once

// Follows the journals of every plugin of a data dir (<dir>/plugin-logs/<id>.log) and hands
// over each new complete line with the plugin's id, as the host writes them. Lines written
// before skip_existing() are not shown. A journal rotated to <id>.log.1 is followed across.
//
// Thread: one, the caller's; poll() reads the files without waiting.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace escouade::harness {

class JournalTail {
 public:
  using Sink = std::function<void(std::string_view id, std::string_view line)>;

  JournalTail(std::filesystem::path logs_dir, Sink sink)
      : dir_(std::move(logs_dir)), sink_(std::move(sink)) {}

  // What the journals hold now is taken as read.
  void skip_existing();
  // Hands over the lines written since the last poll.
  void poll();

 private:
  struct Followed {
    std::uintmax_t offset = 0;
    std::string partial;  // the start of a line whose '\n' has not come yet
  };
  void read_from(const std::filesystem::path& file, const std::string& id, Followed& f);

  std::filesystem::path dir_;
  Sink sink_;
  std::map<std::string, Followed> files_;
};

}  // namespace escouade::harness
