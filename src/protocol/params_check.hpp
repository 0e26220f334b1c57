#pragma once

// The schema-driven check of a call's params (and of an answer's result), on the hot path.
// It runs the checks generated from the schema at build time: reading the value into the
// method's generated type. SchemaValidator (schema_validator.hpp) interprets the same schema
// with valijson; the two must agree, which the tests and the fuzzer hold them to.

#include <boost/json/value.hpp>
#include <string_view>

#include "base/result.hpp"
#include "protocol/gen/methods.hpp"

namespace escouade::proto {

// invalidParams (-32602) naming the field and what was wrong, e.g.
// "params.request.kind: expected a string, got an integer". `params` is nullptr when the
// message had none.
Result<void> check_params(const MethodInfo& method, const boost::json::value* params);

// The same for a method looked up by name; methodNotFound (-32601) for a name the protocol
// does not have.
Result<void> check_params(std::string_view method, const boost::json::value* params);

// Whether `result` holds to the method's result schema; invalidParams-style message under
// "result". A notification has no result: checking one fails.
Result<void> check_result(const MethodInfo& method, const boost::json::value& result);

}  // namespace escouade::proto
