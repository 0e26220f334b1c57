#include "net/request_wire.hpp"

namespace escouade::net::detail {

namespace http = boost::beast::http;

std::optional<std::string> request_wire(const http::request<http::string_body>& request) {
  if (request.chunked() || (request.version() != 11 && request.version() != 10))
    return std::nullopt;
  std::string out;
  std::size_t size =
      request.method_string().size() + request.target().size() + 16 + request.body().size();
  for (const auto& field : request)
    size += field.name_string().size() + field.value().size() + 4;
  out.reserve(size);
  out += request.method_string();
  out += ' ';
  out += request.target();
  out += request.version() == 11 ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n";
  for (const auto& field : request) {
    out += field.name_string();
    out += ": ";
    out += field.value();
    out += "\r\n";
  }
  out += "\r\n";
  out += request.body();
  return out;
}

}  // namespace escouade::net::detail
