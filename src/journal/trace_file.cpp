#include "journal/trace_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "journal/journal.hpp"

namespace escouade {

std::string trace_time(std::chrono::system_clock::time_point time) {
  std::string out;
  append_utc_time(out, time);
  return out;
}

Result<std::shared_ptr<TraceFile>> TraceFile::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    const int e = errno;
    return make_error(
        boost::system::error_code(e, boost::system::generic_category()),
        "cannot write the trace " + path.string() + ": " + std::generic_category().message(e));
  }
  std::FILE* file = ::fdopen(fd, "w");
  if (!file) {
    ::close(fd);
    return make_error(boost::system::error_code(errno, boost::system::generic_category()),
                      "cannot write the trace " + path.string());
  }
  return std::shared_ptr<TraceFile>(new TraceFile(file));
}

TraceFile::~TraceFile() {
  std::fclose(file_);
}

void TraceFile::write(std::string_view plugin, Direction direction, std::string_view line,
                      const std::function<void(std::string&)>& mask) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  scratch_.assign(line);
  if (mask) mask(scratch_);
  const std::string head = trace_time(std::chrono::system_clock::now()) + " " +
                           (plugin.empty() ? std::string() : std::string(plugin) + " ") +
                           (direction == Direction::to_plugin ? "--> " : "<-- ");
  const bool ok = std::fwrite(head.data(), 1, head.size(), file_) == head.size() &&
                  std::fwrite(scratch_.data(), 1, scratch_.size(), file_) == scratch_.size() &&
                  std::fputc('\n', file_) != EOF && std::fflush(file_) == 0;
  if (!ok) ++failures_;
}

}  // namespace escouade
