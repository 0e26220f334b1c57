// The cost of masking a plugin's secrets per journal line: lines of about 120 bytes and 2 KB,
// with 0, 10 and 1,000 secrets of 20 to 40 random bytes, holding none of them or one. Each
// iteration copies the line into a buffer (as Journal::write does) and masks it. A plain search
// of each secret with std::string::find is measured beside it, for scale, and so is building the
// matcher. docs/masking.md keeps the numbers.

#include <benchmark/benchmark.h>
#include <malloc.h>

#include <random>
#include <string>
#include <vector>

#include "journal/masker.hpp"

namespace {

// Secrets as tokens look: letters, digits, `-` and `_`.
std::vector<std::string> random_secrets(std::size_t count) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::mt19937 random(7);
  std::vector<std::string> secrets;
  for (std::size_t k = 0; k < count; ++k) {
    std::string secret(20 + random() % 21, ' ');
    for (char& c : secret)
      c = kAlphabet[random() % kAlphabet.size()];
    secrets.push_back(std::move(secret));
  }
  return secrets;
}

// A plugin's stderr as it usually reads: English words, numbers, an id. `json` writes it as a
// JSON log record with escaped quotes and a path, which makes the masker decode escapes too.
std::string journal_line(std::size_t bytes, bool json, const std::string* secret) {
  const std::string sentence =
      json
          ? R"({"level":"info","msg":"fetched 42 messages from \"#dev\" in 183 ms","file":"C:\\data\\cache.db"} )"
          : "fetched 42 messages from #dev in 183 ms (cursor dXNlcjpVMDYxTkZUVDI, retry 0) ";
  std::string line;
  while (line.size() + sentence.size() <= bytes)
    line += sentence;
  line.resize(bytes, '.');
  if (secret != nullptr) line.replace(line.size() / 2, secret->size(), *secret);
  return line;
}

// Arguments: line bytes, secrets known, whether the line holds one of them, whether it is JSON.
void BM_Mask(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const auto secrets = random_secrets(static_cast<std::size_t>(state.range(1)));
  const bool holds_one = state.range(2) != 0 && !secrets.empty();
  const bool json = state.range(3) != 0;

  escouade::Masker masker;
  for (const auto& secret : secrets)
    masker.add(secret);
  const std::string line =
      journal_line(bytes, json, holds_one ? &secrets[secrets.size() / 2] : nullptr);
  std::string text;
  text.reserve(2 * bytes);
  masker.mask(text.assign(line));  // builds the matcher outside the loop
  if (holds_one && text.find(escouade::Masker::kMask) == std::string::npos)
    state.SkipWithError("the secret was not masked");

  for (auto _ : state) {
    text.assign(line);
    masker.mask(text);
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * line.size()));
  state.SetLabel(std::to_string(line.size()) + " B, " + std::to_string(secrets.size()) +
                 " secrets" + (holds_one ? ", one inside" : "") + (json ? ", JSON" : ""));
}

void mask_arguments(benchmark::internal::Benchmark* b) {
  for (const int json : {0, 1})
    for (const int bytes : {120, 2048})
      for (const int secrets : {0, 10, 1000})
        for (const int holds_one : {0, 1}) {
          if (secrets == 0 && holds_one) continue;
          b->Args({bytes, secrets, holds_one, json});
        }
}
BENCHMARK(BM_Mask)->Apply(mask_arguments);

// For scale: std::string::find of each secret, raw form only, nothing rewritten.
void BM_PlainFind(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const auto secrets = random_secrets(static_cast<std::size_t>(state.range(1)));
  const std::string line = journal_line(bytes, false, nullptr);
  for (auto _ : state) {
    std::size_t found = 0;
    for (const auto& secret : secrets)
      found += line.find(secret) != std::string::npos;
    benchmark::DoNotOptimize(found);
  }
}
BENCHMARK(BM_PlainFind)->Args({120, 10})->Args({120, 1000})->Args({2048, 10})->Args({2048, 1000});

// add() of every secret and the first mask(), which builds the matcher; the heap it keeps.
void BM_Build(benchmark::State& state) {
  const auto secrets = random_secrets(static_cast<std::size_t>(state.range(0)));
  std::size_t heap = 0;
  for (auto _ : state) {
    const std::size_t before = mallinfo2().uordblks;
    escouade::Masker masker;
    for (const auto& secret : secrets)
      masker.add(secret);
    std::string text = "x";
    masker.mask(text);
    heap = mallinfo2().uordblks - before;
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["heap_bytes"] = static_cast<double>(heap);
}
BENCHMARK(BM_Build)->Arg(10)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
