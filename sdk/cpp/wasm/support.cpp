// What a plugin built with the SDK for wasm32-wasi needs beside its own sources (one translation
// unit, compiled with the plugin; see sdk/cpp/wasm/README.md):
// - Boost.JSON's implementation, header-only: no Boost library is built for wasm32-wasi;
// - boost::throw_exception, which Boost calls instead of throwing under -fno-exceptions: a
//   plugin in the sandbox ends there, as an uncaught exception would end a process (the host
//   journals "its instance crashed: RuntimeError: unreachable executed" and restarts it).

#include <boost/json/src.hpp>
#include <boost/throw_exception.hpp>
#include <cstdio>
#include <cstdlib>

namespace boost {

void throw_exception(const std::exception& e) {
  std::fprintf(stderr, "boost::throw_exception: %s\n", e.what());
  std::abort();
}

void throw_exception(const std::exception& e, const boost::source_location& where) {
  std::fprintf(stderr, "boost::throw_exception: %s (%s:%u)\n", e.what(), where.file_name(),
               static_cast<unsigned>(where.line()));
  std::abort();
}

}  // namespace boost
