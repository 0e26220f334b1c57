#pragma once

// The spellings that differ between SpiderMonkey 102 (Debian 12) and later ESRs, in one place.
// Included by js_instance.cpp only, after jsapi.h.

#include <js-config.h>
#include <js/Modules.h>

namespace escouade::sandbox::spidermonkey::compat {

#if MOZJS_MAJOR_VERSION >= 115
inline bool link_module(JSContext* cx, JS::HandleObject module) {
  return JS::ModuleLink(cx, module);
}
inline const char* file_of(const JSErrorReport* r) {
  return r->filename.c_str();
}
#else
inline bool link_module(JSContext* cx, JS::HandleObject module) {
  return JS::ModuleInstantiate(cx, module);
}
inline const char* file_of(const JSErrorReport* r) {
  return r->filename;
}
#endif

}  // namespace escouade::sandbox::spidermonkey::compat
