#include "sandbox/spidermonkey/wasm_guest.hpp"

#include <js/ArrayBuffer.h>
#include <js/PropertyAndElement.h>

namespace escouade::sandbox::spidermonkey {

WasmGuest& guest_of(JSContext* cx) {
  return *static_cast<WasmGuest*>(JS_GetContextPrivate(cx));
}

GuestMemory WasmGuest::memory_now() {
  if (!memory) return {};
  // A grow detaches the buffer it replaces (a detached one has no bytes): then it is fetched
  // again. A buffer that is not detached keeps its bytes where they are.
  if (!buffer || JS::IsDetachedArrayBufferObject(buffer)) {
    buffer = nullptr;  // not reset(), which would take it off the roots
    JS::RootedValue value(cx);
    if (!JS_GetProperty(cx, memory, "buffer", &value) || !value.isObject()) {
      JS_ClearPendingException(cx);
      return {};
    }
    if (!JS::IsArrayBufferObject(&value.toObject())) return {};
    buffer = &value.toObject();
  }
  JSObject* object = buffer;
  GuestMemory out;
  std::size_t length = 0;
  bool shared = false;
  JS::GetArrayBufferLengthAndData(object, &length, &shared, &out.data);
  out.size = out.data ? length : 0;
  return out;
}

void WasmGuest::turn_pauses() {
  channel.gc_bytes(JS_GetGCParameter(cx, JSGC_BYTES));
  channel.wasm_memory_bytes(memory_now().size);
  channel.turn_ends();
  // Past its limit it stops here: the wait that follows returns at once and the guest unwinds.
  channel.check_memory();
}

void WasmGuest::turn_resumes() {
  channel.turn_begins();
}

std::optional<std::string> WasmGuest::next_line(bool& stopped) {
  stopped = false;
  if (input_ended) return std::nullopt;
  turn_pauses();
  std::optional<std::string> line = channel.next_input();
  channel.turn_begins(false, line ? std::string_view(*line) : std::string_view());
  if (channel.stop_cause() != StopCause::none) {
    stopped = true;
    return std::nullopt;
  }
  if (!line) input_ended = true;
  return line;
}

}  // namespace escouade::sandbox::spidermonkey
