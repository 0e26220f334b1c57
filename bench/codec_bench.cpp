// The codec's cost per message: framing, parsing and classifying (JSON-RPC 2.0 checks), the
// schema check of params (generated, and valijson for comparison), and encoding. Compare with
// the raw pipe round trip that bench_pipe_floor measures in the same run (bench/run.sh).

#include <benchmark/benchmark.h>

#include <boost/json/parse.hpp>
#include <string>
#include <vector>

#include "protocol/decode.hpp"
#include "protocol/encode.hpp"
#include "protocol/framing.hpp"
#include "protocol/params_check.hpp"
#include "protocol/schema_validator.hpp"

namespace {

using namespace escouade::proto;
namespace json = boost::json;

// A typical fact, about 400 bytes on the wire.
std::string fact_line(int seq) {
  return R"({"jsonrpc":"2.0","method":"events/fact","params":{"name":"ticket.column","version":1,"seq":)" +
         std::to_string(seq) +
         R"(,"at":"2026-11-29T09:12:05.120Z","project":{"id":"p-7f3a","name":"billing","private":false},)"
         R"("ticket":{"id":"t-19","key":"ESC-12","title":"Retry failed invoices after a timeout"},)"
         R"("agent":{"id":"a-2","name":"Ada"},"data":{"from":"todo","to":"doing","by":"user","column":3}}})";
}

std::string decide_line() {
  return R"({"jsonrpc":"2.0","id":42,"method":"permissions/decide","params":{"request":{"id":"r-88",)"
         R"("kind":"command","tool":"Bash","input":{"command":"npm test -- --watch=false"}},)"
         R"("project":{"id":"p-7f3a","name":"billing","private":false},"agent":{"id":"a-2","name":"Ada"}}})";
}

std::string proc_out_line() {
  std::string text;
  while (text.size() < 64 * 1024)
    text += "PASS src/invoice.test.ts (1.2 s)\\n  retries a failed invoice\\n";
  text.resize(64 * 1024);
  if (text.back() == '\\') text.back() = 'x';
  return R"({"jsonrpc":"2.0","method":"proc/out","params":{"proc":3,"stream":"stdout","data":")" +
         text + R"("}})";
}

std::string batch_line() {
  std::string line = "[";
  for (int i = 0; i < 10; ++i) {
    std::string f = fact_line(i);
    line += (i ? "," : "") + f;
  }
  return line + "]";
}

std::string with_newline(std::string s) {
  return s + "\n";
}

// Frame + parse + classify one message, as the host does for each line it reads.
void frame_and_decode(benchmark::State& state, const std::string& line, int messages) {
  const std::string wire = with_newline(line);
  LineFramer framer;
  Decoder decoder;
  std::size_t entries = 0;
  for (auto _ : state) {
    framer.feed(
        wire,
        [&](std::string_view l) {
          Parsed p = decoder.decode(l);
          entries += p.entries.size();
          benchmark::DoNotOptimize(p);
        },
        [](std::size_t) {});
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * messages);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * wire.size()));
  state.counters["entries"] =
      static_cast<double>(entries) / static_cast<double>(state.iterations());
}

// The same, plus the schema check of each call's params with the generated checks.
void frame_decode_check(benchmark::State& state, const std::string& line, int messages) {
  const std::string wire = with_newline(line);
  LineFramer framer;
  Decoder decoder;
  for (auto _ : state) {
    framer.feed(
        wire,
        [&](std::string_view l) {
          Parsed p = decoder.decode(l);
          for (auto& e : p.entries) {
            const auto& m = std::get<Message>(e);
            const MethodInfo* info = find_method(m.method);
            auto ok = check_params(*info, m.params ? &*m.params : nullptr);
            if (!ok) state.SkipWithError("params do not hold");
          }
          benchmark::DoNotOptimize(p);
        },
        [](std::size_t) {});
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * messages);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * wire.size()));
}

// The params check alone, on an already parsed message: generated checks.
void params_check_compiled(benchmark::State& state, const std::string& line) {
  Decoder decoder;
  Parsed p = decoder.decode(line);
  const auto& m = std::get<Message>(p.entries.at(0));
  const MethodInfo* info = find_method(m.method);
  for (auto _ : state) {
    auto ok = check_params(*info, &*m.params);
    benchmark::DoNotOptimize(ok);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

// The params check alone, interpreted by valijson.
void params_check_valijson(benchmark::State& state, const std::string& line) {
  static const SchemaValidator validator;
  Decoder decoder;
  Parsed p = decoder.decode(line);
  const auto& m = std::get<Message>(p.entries.at(0));
  for (auto _ : state) {
    auto ok = validator.check_params(m.method, &*m.params);
    benchmark::DoNotOptimize(ok);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void encode_message(benchmark::State& state, const std::string& line) {
  Decoder decoder;
  Parsed p = decoder.decode(line);
  const auto& m = std::get<Message>(p.entries.at(0));
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto out = encode(m);
    bytes += out->size();
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

const std::string kFact = fact_line(41);
const std::string kDecide = decide_line();
const std::string kProcOut = proc_out_line();
const std::string kBatch = batch_line();

BENCHMARK_CAPTURE(frame_and_decode, fact_400B, kFact, 1);
BENCHMARK_CAPTURE(frame_and_decode, decide, kDecide, 1);
BENCHMARK_CAPTURE(frame_and_decode, proc_out_64KiB, kProcOut, 1);
BENCHMARK_CAPTURE(frame_and_decode, batch_of_10_facts, kBatch, 10);

BENCHMARK_CAPTURE(frame_decode_check, fact_400B, kFact, 1);
BENCHMARK_CAPTURE(frame_decode_check, decide, kDecide, 1);
BENCHMARK_CAPTURE(frame_decode_check, proc_out_64KiB, kProcOut, 1);
BENCHMARK_CAPTURE(frame_decode_check, batch_of_10_facts, kBatch, 10);

BENCHMARK_CAPTURE(params_check_compiled, fact_400B, kFact);
BENCHMARK_CAPTURE(params_check_compiled, decide, kDecide);
BENCHMARK_CAPTURE(params_check_compiled, proc_out_64KiB, kProcOut);
BENCHMARK_CAPTURE(params_check_valijson, fact_400B, kFact);
BENCHMARK_CAPTURE(params_check_valijson, decide, kDecide);
BENCHMARK_CAPTURE(params_check_valijson, proc_out_64KiB, kProcOut);

BENCHMARK_CAPTURE(encode_message, fact_400B, kFact);
BENCHMARK_CAPTURE(encode_message, decide, kDecide);
BENCHMARK_CAPTURE(encode_message, proc_out_64KiB, kProcOut);

}  // namespace

BENCHMARK_MAIN();
