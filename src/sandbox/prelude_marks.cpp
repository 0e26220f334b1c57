#include "sandbox/prelude_marks.hpp"

#include <cstring>

namespace escouade::sandbox {

namespace {

constexpr std::string_view kIdStart = "escouade-";
// The marks with a slash: what comes before it (a quote and a word), and after it.
struct SlashMark {
  std::string_view before;
  std::string_view after;
};
constexpr SlashMark kSlashMarks[] = {
    {"\"net", ""}, {"\"ws", ""}, {"\"proc", ""}, {"\"timer", "fired\""}};

// Each position of `c` in `line`, from `from` on, to `f` until it returns true.
template <class F>
bool any_at(std::string_view line, char c, std::size_t from, F f) {
  const char* const begin = line.data();
  const char* const end = begin + line.size();
  const char* at = begin + from;
  while (at < end) {
    const void* found = std::memchr(at, c, static_cast<std::size_t>(end - at));
    if (!found) return false;
    at = static_cast<const char*>(found);
    if (f(static_cast<std::size_t>(at - begin))) return true;
    ++at;
  }
  return false;
}

}  // namespace

bool may_be_the_preludes(std::string_view line) {
  // Each mark is found by its dash or its slash, rarer in a line than its letters or quotes.
  const std::size_t dash = kIdStart.size() - 1;
  if (line.size() >= kIdStart.size() && any_at(line, '-', dash, [&](std::size_t at) {
        return line.compare(at - dash, dash, kIdStart.substr(0, dash)) == 0;
      }))
    return true;
  return any_at(line, '/', 0, [&](std::size_t at) {
    const std::string_view before = line.substr(0, at);
    const std::string_view after = line.substr(at + 1);
    for (const SlashMark& mark : kSlashMarks)
      if (before.ends_with(mark.before) && after.starts_with(mark.after)) return true;
    return false;
  });
}

}  // namespace escouade::sandbox
