#pragma once

// Inside a sandbox helper: a net/chunk line read without the engine's JSON.parse (issue 32). The
// host writes each piece of a stream as one line of exactly one shape
//
//   {"jsonrpc":"2.0","method":"net/chunk","params":{"stream":N,"data":"..."}}
//   {"jsonrpc":"2.0","method":"net/chunk","params":{"stream":N,"dataBase64":"..."}}
//
// and the helper turns such a line straight into the piece's bytes, which the prelude hands to
// the bundle's reader as they are: no string of the whole line, no parse of it, no string of the
// piece re-encoded. Anything else (another order of members, a space, a lone surrogate escaped,
// text that is not UTF-8, base64 that is not canonical) is no such line: it goes the common way,
// through the prelude's reading of a line, which then decides as it always did.

#include <cstdint>
#include <string>
#include <string_view>

namespace escouade::sandbox {

struct NetChunkLine {
  std::int64_t stream = 0;
  bool text = false;  // it came as "data" (UTF-8 text), not "dataBase64"
};

// Whether `line` ('\n' at its end or not) is a net/chunk of that shape; if so its stream, its
// form, and its bytes decoded into `bytes` (replaced; its capacity is reused). `bytes` holds
// nothing meaningful when it is not.
bool read_net_chunk(std::string_view line, NetChunkLine& chunk, std::string& bytes);

}  // namespace escouade::sandbox
