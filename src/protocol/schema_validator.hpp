#pragma once

// The protocol's schema interpreted by valijson (its Boost.JSON adapter): the reference the
// generated checks are held to, and the checker for results the conformance bench reads.
// The schema is parsed once, at construction; each check walks valijson's compiled
// constraints. Thread-compatible: const methods may run on several threads at once.

#include <boost/json/value.hpp>
#include <memory>
#include <string_view>

#include "base/result.hpp"

namespace escouade::proto {

class SchemaValidator {
 public:
  // Uses the schema the build generated from (schema_text()).
  SchemaValidator();
  explicit SchemaValidator(std::string_view schema_json);
  ~SchemaValidator();
  SchemaValidator(const SchemaValidator&) = delete;
  SchemaValidator& operator=(const SchemaValidator&) = delete;

  // invalidParams (-32602) with the deepest failing field and valijson's reason;
  // methodNotFound (-32601) for a method the schema does not have.
  Result<void> check_params(std::string_view method, const boost::json::value* params) const;
  Result<void> check_result(std::string_view method, const boost::json::value& result) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The schema's text as the build embedded it.
std::string_view schema_text() noexcept;

}  // namespace escouade::proto
