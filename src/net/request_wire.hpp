#pragma once

// An HTTP/1.x request whose body is held whole, as the bytes sent: its start line, its fields in
// their order, an empty line and its body, in one buffer. The exchanges write it with one write
// of the stream (one SSL_write), where Beast's serializer went through its buffer sequences and
// its TLS stream's flattening of them: 25,000 of the 63,000 instructions a pooled GET took in
// the host's client (callgrind, bench_net --only client), against 8,000 for SSL_write itself.
// Included by src/net's .cpp files alone: it brings Beast.

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <optional>
#include <string>

namespace escouade::net::detail {

// The request's bytes, as Beast's serializer writes them; nullopt for a chunked one (the
// serializer's business), or one that is not HTTP/1.0 or 1.1.
std::optional<std::string> request_wire(
    const boost::beast::http::request<boost::beast::http::string_body>& request);

}  // namespace escouade::net::detail
