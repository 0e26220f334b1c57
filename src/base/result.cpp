#include "base/result.hpp"

#include <boost/throw_exception.hpp>
#include <stdexcept>

namespace escouade {

void throw_exception_from_error(const Error& e, const boost::source_location& loc) {
  boost::throw_exception(std::runtime_error(std::string(e.code.category().name()) + " " +
                                            std::to_string(e.code.value()) + ": " + e.message),
                         loc);
}

}  // namespace escouade
