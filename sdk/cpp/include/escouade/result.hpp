#pragma once

// Errors as values for the C++ SDK: what a call to Escouade gives back, and what a handler
// answers when it cannot serve. Nothing here throws, so a plugin may build with -fno-exceptions.

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "escouade/protocol.hpp"

namespace escouade {

// A JSON-RPC error: one of the protocol's codes (ErrorCode) or the plugin's own, and a sentence
// a person reads. An error Escouade answered arrives as it came.
struct Error {
  int code = static_cast<int>(ErrorCode::internal);
  std::string message;

  Error() = default;
  Error(int c, std::string m) : code(c), message(std::move(m)) {}
  Error(ErrorCode c, std::string m) : code(static_cast<int>(c)), message(std::move(m)) {}

  friend bool operator==(const Error&, const Error&) = default;
};

// A value or an Error. Check ok() first: value() of an error, or error() of a value, is
// undefined behaviour.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit
  // Any value T can be made from (a string literal for Result<std::string>...).
  template <class U, class = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                              !std::is_same_v<std::decay_t<U>, T> &&
                                              !std::is_same_v<std::decay_t<U>, Error> &&
                                              !std::is_same_v<std::decay_t<U>, Result>>>
  Result(U&& value) : v_(std::in_place_index<0>, T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return *std::get_if<0>(&v_); }
  const T& value() const& { return *std::get_if<0>(&v_); }
  T&& value() && { return std::move(*std::get_if<0>(&v_)); }
  T* operator->() { return std::get_if<0>(&v_); }
  const T* operator->() const { return std::get_if<0>(&v_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return *std::get_if<1>(&v_); }

  // The value, or `fallback` for an error.
  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Error> v_;
};

// Success with nothing to give, or an Error.
template <>
class Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT: implicit

  bool ok() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return ok(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool failed_ = false;
};

}  // namespace escouade
