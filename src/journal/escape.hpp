#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace escouade {

// How a text becomes part of one journal line, so that a line never splits in two and the journal
// stays valid UTF-8 whatever a plugin wrote:
//   - `\n` and `\r` become the two characters `\n` and `\r`; a tab stays;
//   - other C0 control characters and DEL become `\xNN`;
//   - an invalid UTF-8 byte becomes `\xNN` (each such byte counts as one character);
//   - C1 control characters (U+0080..U+009F, NEL among them) and the line and paragraph
//     separators U+2028 and U+2029 become `\uNNNN`: some readers break lines on them;
//   - everything else, a backslash included, is kept as it is: the journal is read by people,
//     and `C:\new` stays readable at the price of looking like an escaped newline.

// Appends the escape of the longest prefix of `s` that holds at most `max_chars` characters and
// whose escape fits in `max_bytes` bytes; never cuts inside a character or an escape. Returns the
// number of bytes of `s` taken.
std::size_t append_escaped_for_journal(std::string& out, std::string_view s, std::size_t max_chars,
                                       std::size_t max_bytes);

// The first `max_chars` characters of `s` (UTF-8 characters, not bytes), escaped as above, with
// `…` after them when `s` is longer: how the host quotes a line that is not JSON-RPC.
std::string quote_for_journal(std::string_view s, std::size_t max_chars);

}  // namespace escouade
