// A fixed amount of codec work, for counting instructions with callgrind, which repeats
// exactly from run to run where wall time on a shared machine does not:
//   valgrind --tool=callgrind build/release/bench/bench_decode_loop 10000
//   valgrind --tool=callgrind build/release/bench/bench_decode_loop 0
// The difference of the two totals, divided by 10000, is the cost of one message.

#include <cstdio>
#include <cstdlib>
#include <string>

#include "protocol/decode.hpp"
#include "protocol/framing.hpp"
#include "protocol/params_check.hpp"

int main(int argc, char** argv) {
  using namespace escouade::proto;
  const long iterations = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 10000;
  const bool check = argc > 2 && std::string(argv[2]) == "--check";
  const std::string line =
      R"({"jsonrpc":"2.0","method":"events/fact","params":{"name":"ticket.column","version":1,"seq":41,)"
      R"("at":"2026-11-29T09:12:05.120Z","project":{"id":"p-7f3a","name":"billing","private":false},)"
      R"("ticket":{"id":"t-19","key":"ESC-12","title":"Retry failed invoices after a timeout"},)"
      R"("agent":{"id":"a-2","name":"Ada"},"data":{"from":"todo","to":"doing","by":"user","column":3}}})"
      "\n";
  LineFramer framer;
  Decoder decoder;
  std::size_t ok = 0;
  for (long i = 0; i < iterations; ++i) {
    framer.feed(
        line,
        [&](std::string_view l) {
          Parsed p = decoder.decode(l);
          const auto& m = std::get<Message>(p.entries.front());
          if (!check || check_params(*find_method(m.method), &*m.params)) ++ok;
        },
        [](std::size_t) {});
  }
  std::printf("%zu messages, %zu bytes each\n", ok, line.size());
  return ok == static_cast<std::size_t>(iterations) ? 0 : 1;
}
