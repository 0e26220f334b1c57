#pragma once

// The --ts output of escouade-codegen: sdk/typescript/src/protocol.ts, the types of the
// TypeScript SDK (@escouade-dev/plugin). It holds one interface or union per definition of the
// schema, one checker per definition (`checkFact(value, at)`: null when the value holds, else one
// sentence naming the first problem), the error codes and the method table (docs/codegen.md).
//
// It walks the schema's JSON itself rather than schema_model.hpp's Generator, whose model is
// shaped for C++ (inline enums and objects get C++ names; TypeScript writes them in place).

#include <boost/json/object.hpp>
#include <string>

namespace escouade::codegen {

// The text of protocol.ts for `schema`. Throws std::runtime_error naming the JSON path of a
// construct it cannot express (schema_model.hpp's fail).
std::string typescript_protocol(const boost::json::object& schema);

}  // namespace escouade::codegen
