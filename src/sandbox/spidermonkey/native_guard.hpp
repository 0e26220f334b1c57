#pragma once

// The C++ of a native may throw: an allocation the memory account refuses is a std::bad_alloc.
// An exception must never cross the engine's frames (libmozjs is built without them: the process
// would end on std::terminate), so every native the sandbox defines is wrapped: an allocation
// refused becomes the engine's out-of-memory error, anything else an internal error.
// Engine-internal: included by this folder's files only, after jsapi.h.

#include <jsapi.h>

#include <new>

namespace escouade::sandbox::spidermonkey {

template <JSNative F>
bool guarded(JSContext* cx, unsigned argc, JS::Value* vp) noexcept {
  try {
    return F(cx, argc, vp);
  } catch (const std::bad_alloc&) {
    JS_ReportOutOfMemory(cx);
  } catch (...) {
    JS_ReportErrorASCII(cx, "an internal error of the sandbox");
  }
  return false;
}

}  // namespace escouade::sandbox::spidermonkey
