#pragma once

// The one way the project quotes a text in a sentence for a person (the journal, an error's
// message): quoted() for a name, a key or a path, as JSON writes a string; quote_for_journal()
// for a whole line a plugin wrote, cut and escaped so that a journal line stays one line.

#include <cstddef>
#include <string>
#include <string_view>

namespace escouade {

// `s` between double quotes, as JSON writes a string: `"`, `\` and control characters escaped
// (\n, \t, \u0001...), a byte that is not UTF-8 as U+FFFD, everything else as it is:
// "data/words.txt", "account:*". The result is valid UTF-8 on one line, fit for a journal and
// for a message to a peer. Past `max_bytes` of `s` it is cut at a character and followed by how
// long `s` was: "aaa…" (70000 bytes).
std::string quote_name(std::string_view s, std::size_t max_bytes = std::string_view::npos);

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
