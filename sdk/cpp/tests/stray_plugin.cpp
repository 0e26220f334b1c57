// A plugin whose own code writes on stdout: the SDK keeps its protocol stream clean all the same
// (stdio_test.cpp runs it). Built with -fno-exceptions, linked to Boost::json (a library built
// with exceptions: Boost 1.81's header-only boost/json/src.hpp needs them).

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "escouade/plugin.hpp"

#ifdef BOOST_NO_EXCEPTIONS
// What Boost asks of a program built without exceptions: where its errors end. Boost.JSON calls
// it only for what the SDK never does (at() on a missing key, a number out of range).
namespace boost {
void throw_exception(const std::exception& e) {
  std::fprintf(stderr, "fatal: %s\n", e.what());
  std::abort();
}
void throw_exception(const std::exception& e, const boost::source_location&) {
  throw_exception(e);
}
}  // namespace boost
#endif

int main() {
  escouade::Plugin p{"dev.test.stray"};
  p.on_start([](escouade::Context& c) {
    std::printf("stray printf at start\n");
    std::cout << "stray cout at start" << std::endl;
    c.log(escouade::Level::info, "started");
  });
  p.on("test/noisy",
       [](const boost::json::value& params,
          escouade::Context&) -> escouade::Result<boost::json::value> {
         std::puts("stray puts in a handler");
         std::fflush(stdout);
         // A program the plugin starts inherits fd 1, which is the standard error by now.
         const int rc = std::system("echo stray from a child process");
         return boost::json::object{{"params", params}, {"child", rc}};
       });
  return p.run();
}
