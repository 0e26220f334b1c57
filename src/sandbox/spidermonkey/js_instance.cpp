// A run.js instance on the engine, in its helper (the engine's start and the instance's context
// are context.cpp's, shared with run.wasm). Everything engine-specific about a run.js instance is
// here: its realm and job queue, its natives, the check of its bundle's imports and exports, its
// turns, and how each way of ending is told.

#include <js/Array.h>
#include <js/CharacterEncoding.h>
#include <js/CompilationAndEvaluation.h>
#include <js/ContextOptions.h>
#include <js/Conversions.h>
#include <js/ErrorReport.h>
#include <js/Exception.h>
#include <js/GCVector.h>
#include <js/Initialization.h>
#include <js/Interrupt.h>
#include <js/MemoryCallbacks.h>
#include <js/Modules.h>
#include <js/Promise.h>
#include <js/PropertyAndElement.h>
#include <js/RealmOptions.h>
#include <js/SourceText.h>
#include <js/Stack.h>
#include <js/String.h>
#include <js/experimental/TypedData.h>
#include <jsapi.h>
#include <jsfriendapi.h>
#include <pthread.h>

#include <cstring>
#include <list>
#include <map>
#include <optional>
#include <string>

#include "protocol/limits.hpp"
#include "sandbox/channel.hpp"
#include "sandbox/net_chunk.hpp"
#include "sandbox/prelude_marks.hpp"
#include "sandbox/spidermonkey/bundle_code.hpp"
#include "sandbox/spidermonkey/compat.hpp"
#include "sandbox/spidermonkey/context.hpp"
#include "sandbox/spidermonkey/engine.hpp"
#include "sandbox/spidermonkey/job_queue.hpp"
#include "sandbox/spidermonkey/native_guard.hpp"
#include "sandbox/spidermonkey/prelude.hpp"

namespace escouade::sandbox::spidermonkey {

namespace {

using runtime::ProgramEnd;

std::string utf8(JSContext* cx, JSString* s) {
  if (!s) return {};
  JS::RootedString str(cx, s);
  JS::UniqueChars chars = JS_EncodeStringToUTF8(cx, str);
  return chars ? std::string(chars.get()) : std::string();
}

// What the natives and the callbacks share, on the instance's thread.
struct JsInstance {
  JsInstance(JSContext* c, Channel& ch, const wire::Start& s)
      : cx(c), channel(ch), start(s), feed(c), chunk(c), readline(c), fs(c) {
    for (const auto& [name, text] : s.root_files)
      root_files.emplace(name, &text);
  }
  JSContext* cx;
  Channel& channel;
  const wire::Start& start;
  std::map<std::string, const std::string*, std::less<>> root_files;  // readFileSync's
  JS::PersistentRootedValue feed;       // the prelude's function of a line of input
  JS::PersistentRootedValue chunk;      // its function of a net/chunk's bytes (feed.chunk)
  std::string chunk_bytes;              // the bytes of the last net/chunk read (reused)
  std::string written;                  // the UTF-8 of the last text written that needed it
  JS::PersistentRootedObject readline;  // the synthetic modules, made at their first import
  JS::PersistentRootedObject fs;
  std::list<JS::PersistentRootedObject> unhandled;  // rejected promises with no handler yet
  JS::Stencil* prelude = nullptr;  // compiled before the start (Instance::prelude), or null
  bool want_input = false;
  std::optional<int> exit_code;
  bool out_of_memory = false;

  void reset_roots() {
    feed.reset();
    chunk.reset();
    readline.reset();
    fs.reset();
    unhandled.clear();
  }
};

JsInstance& instance_of(JSContext* cx) {
  return *static_cast<JsInstance*>(JS_GetContextPrivate(cx));
}

// --- natives of the prelude's host object

// host.write(fd, s): the text's UTF-8, every byte of it (a NUL too), to stdout or stderr. Text
// of ASCII alone is written from the engine's own characters, copied nowhere; anything else is
// encoded as TextEncoder does (a lone surrogate as U+FFFD) into a buffer kept for the next.
bool native_write(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  int32_t fd = 0;
  if (!JS::ToInt32(cx, args.get(0), &fd)) return false;
  JS::RootedString s(cx, JS::ToString(cx, args.get(1)));
  if (!s) return false;
  JSLinearString* text = JS_EnsureLinearString(cx, s);
  if (!text) return false;
  JsInstance& in = instance_of(cx);
  const auto put = [&](std::string_view bytes) {
    if (fd == 1)
      in.channel.write_out(bytes);
    else
      in.channel.write_err(bytes);
  };
  args.rval().setUndefined();
  {
    // Nothing below can collect (no allocation of the engine's): the characters stay put.
    JS::AutoCheckCannotGC nogc;
    if (JS::LinearStringHasLatin1Chars(text)) {
      const std::size_t n = JS::GetLinearStringLength(text);
      const auto* chars = reinterpret_cast<const char*>(JS::GetLatin1LinearStringChars(nogc, text));
      unsigned char high = 0;
      for (std::size_t i = 0; i < n; ++i)
        high |= static_cast<unsigned char>(chars[i]);
      if (high < 0x80) {
        put(std::string_view(chars, n));
        return true;
      }
    }
    in.written.resize(JS::GetDeflatedUTF8StringLength(text));
    JS::DeflateStringToUTF8Buffer(text, mozilla::Span<char>(in.written.data(), in.written.size()));
  }
  put(in.written);
  // Its capacity is kept for the next text, unless a large one made it large.
  if (in.written.capacity() > 1024 * 1024) std::string().swap(in.written);
  return true;
}

bool native_want_input(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  instance_of(cx).want_input = JS::ToBoolean(args.get(0));
  args.rval().setUndefined();
  return true;
}

// process.exit(): the instance ends at once; returning false with no exception pending unwinds
// every frame, as an exit does, and no handler of the bundle can catch it.
bool native_exit(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  int32_t code = 0;
  if (!JS::ToInt32(cx, args.get(0), &code)) return false;
  instance_of(cx).exit_code = code;
  return false;
}

bool native_read_file(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  JS::RootedString s(cx, JS::ToString(cx, args.get(0)));
  if (!s) return false;
  const std::string name = utf8(cx, s);
  const auto& files = instance_of(cx).root_files;
  const auto it = files.find(name);
  if (it == files.end()) {
    args.rval().setNull();
    return true;
  }
  JSString* text = JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(it->second->data(), it->second->size()));
  if (!text) return false;
  args.rval().setString(text);
  return true;
}

// host.utf8(s): the bytes of `s` in UTF-8 (a lone surrogate as U+FFFD, as TextEncoder does),
// in a Uint8Array; the prelude's TextEncoder and fetch's bodies use it (encoding 64 KiB in
// JavaScript took 2.3 ms, docs/PERFORMANCE.md). host.utf8Length(s): their count, without making
// them.
bool native_utf8(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  JS::RootedString s(cx, JS::ToString(cx, args.get(0)));
  if (!s) return false;
  if (!JS_EnsureLinearString(cx, s)) return false;
  const std::size_t size = JS::GetDeflatedUTF8StringLength(JS_ASSERT_STRING_IS_LINEAR(s));
  // Making the array may collect, and a compacting collection moves the string: it is read
  // again from its root afterwards, with no collection possible while it is copied.
  JS::RootedObject bytes(cx, JS_NewUint8Array(cx, size));
  if (!bytes) return false;
  {
    JS::AutoCheckCannotGC nogc;
    bool shared = false;
    std::uint8_t* data = JS_GetUint8ArrayData(bytes, &shared, nogc);
    JS::DeflateStringToUTF8Buffer(JS_ASSERT_STRING_IS_LINEAR(s),
                                  mozilla::Span<char>(reinterpret_cast<char*>(data), size));
  }
  args.rval().setObject(*bytes);
  return true;
}

bool native_utf8_length(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  JS::RootedString s(cx, JS::ToString(cx, args.get(0)));
  if (!s) return false;
  JSLinearString* text = JS_EnsureLinearString(cx, s);
  if (!text) return false;
  args.rval().setNumber(static_cast<double>(JS::GetDeflatedUTF8StringLength(text)));
  return true;
}

// host.utf8Text(bytes): the text of bytes that are UTF-8 (a net/chunk's "data", read by the
// helper as bytes), as a string; a TypeError when they are not.
bool native_utf8_text(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  std::size_t length = 0;
  bool shared = false;
  std::uint8_t* data = nullptr;
  if (!args.get(0).isObject() ||
      !JS_GetObjectAsUint8Array(&args.get(0).toObject(), &length, &shared, &data)) {
    JS_ReportErrorASCII(cx, "host.utf8Text takes a Uint8Array");
    return false;
  }
  // Making the string may collect, and a collection may move the array's bytes: copied first,
  // before anything can collect.
  const std::string bytes(reinterpret_cast<const char*>(data), data ? length : 0);
  JSString* text = JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(bytes.data(), bytes.size()));
  if (!text) return false;
  args.rval().setString(text);
  return true;
}

// --- callbacks

bool on_interrupt(JSContext* cx) {
  // The engine calls it for its own reasons too: only the channel's stop ends the instance.
  auto* in = static_cast<JsInstance*>(JS_GetContextPrivate(cx));
  return !in || in->channel.stop_cause() == StopCause::none;
}

void on_out_of_memory(JSContext* cx, void*) {
  auto* in = static_cast<JsInstance*>(JS_GetContextPrivate(cx));
  if (!in) return;
  in->out_of_memory = true;
  // The bundle may catch the error: its next interrupt check ends it all the same.
  in->channel.stop(StopCause::out_of_memory);
}

// After each collection: the GC heap's size counts with the account's blocks.
void on_gc(JSContext* cx, JSGCStatus status, JS::GCReason, void*) {
  auto* in = static_cast<JsInstance*>(JS_GetContextPrivate(cx));
  if (in && status == JSGC_END) in->channel.gc_bytes(JS_GetGCParameter(cx, JSGC_BYTES));
}

void on_rejection(JSContext* cx, bool, JS::HandleObject promise,
                  JS::PromiseRejectionHandlingState state, void*) {
  auto* in = static_cast<JsInstance*>(JS_GetContextPrivate(cx));
  if (!in) return;
  if (state == JS::PromiseRejectionHandlingState::Unhandled) {
    in->unhandled.emplace_back(cx, promise);
    return;
  }
  for (auto it = in->unhandled.begin(); it != in->unhandled.end(); ++it)
    if (it->get() == promise) {
      in->unhandled.erase(it);
      return;
    }
}

// Telling a thrown value may run the bundle's code (its toString): it runs in a turn of its own,
// under the same budget and the same memory as any other (issue 26: a spinning toString ran 15 s
// outside any turn). A stop meanwhile is what ends the instance, with its own sentence.
template <class Tell>
std::string told_in_a_turn(JsInstance& in, Tell tell) {
  in.channel.turn_begins();
  std::string told = tell();
  in.channel.turn_ends();
  return told;
}

std::string describe_value(JsInstance& in, JS::HandleValue v) {
  return told_in_a_turn(in, [&] {
    JS::RootedObject none(in.cx);
    JS::ExceptionStack stack(in.cx, v, none);
    return describe(in.cx, stack, true);
  });
}

JSObject* compile_module(JSContext* cx, std::string_view source, const char* name) {
  JS::CompileOptions options(cx);
  options.setFileAndLine(name, 1);
  JS::SourceText<mozilla::Utf8Unit> text;
  if (!text.init(cx, source.data(), source.size(), JS::SourceOwnership::Borrowed)) return nullptr;
  return JS::CompileModule(cx, options, text);
}

// The resolve hook hands out node:fs and node:readline, made once an instance; nothing else
// reaches it (the imports were checked before linking); import() is dynamic_import's refusal.
JSObject* resolve(JSContext* cx, JS::HandleValue, JS::HandleObject request) {
  JsInstance& in = instance_of(cx);
  const std::string specifier = utf8(cx, JS::GetModuleRequestSpecifier(cx, request));
  JS::PersistentRootedObject* slot = specifier == "node:readline" ? &in.readline
                                     : specifier == "node:fs"     ? &in.fs
                                                                  : nullptr;
  if (!slot) {
    JS_ReportErrorUTF8(cx, "a sandboxed plugin may not import \"%s\"", specifier.c_str());
    return nullptr;
  }
  if (!slot->get()) {
    const std::string_view source = slot == &in.readline ? kReadlineModule : kFsModule;
    JS::RootedObject m(cx, compile_module(cx, source, specifier.c_str()));
    if (!m) return nullptr;
    slot->set(m);
  }
  return slot->get();
}

// import.meta of the bundle: its url, the same file:// URL as globalThis._importMeta_.url, so
// new URL('../rules.json', import.meta.url) names what readFileSync reads. Without this hook the
// engine throws its own words ("Module metadata hook not set") at the first import.meta.
bool module_metadata(JSContext* cx, JS::HandleValue, JS::HandleObject meta) {
  const std::string& url = instance_of(cx).start.url;
  JS::RootedString s(cx, JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(url.data(), url.size())));
  return s && JS_DefineProperty(cx, meta, "url", s, JSPROP_ENUMERATE);
}

// import() at run time: refused in the sandbox's words, not the engine's ("Dynamic module import
// is disabled..."). The promise import() returned is rejected with this error.
bool dynamic_import(JSContext* cx, JS::HandleValue, JS::HandleObject request, JS::HandleObject) {
  const std::string specifier = utf8(cx, JS::GetModuleRequestSpecifier(cx, request));
  JS_ReportErrorUTF8(cx,
                     "a sandboxed plugin may not import at run time (import(\"%s\")): its "
                     "bundle holds all its code, with only node:fs and node:readline imported",
                     specifier.c_str());
  return false;
}

// Why the bundle may not run: an import other than node:fs and node:readline.
std::optional<ProgramEnd> check_imports(JSContext* cx, JS::HandleObject module,
                                        const std::string& name) {
  JS::RootedObject requests(cx, JS::GetRequestedModules(cx, module));
  uint32_t count = 0;
  if (!requests || !JS::GetArrayLength(cx, requests, &count))
    return crash("its instance crashed: " + describe_pending(cx, true));
  JS::RootedValue request(cx);
  for (uint32_t i = 0; i < count; ++i) {
    if (!JS_GetElement(cx, requests, i, &request))
      return crash("its instance crashed: " + describe_pending(cx, true));
    const std::string specifier = utf8(cx, JS::GetRequestedModuleSpecifier(cx, request));
    if (specifier == "node:fs" || specifier == "node:readline") continue;
    uint32_t line = 0;
    uint32_t column = 0;
    JS::GetRequestedModuleSourcePos(cx, request, &line, &column);
    return refusal("its bundle imports \"" + specifier + "\" (" + name + ":" +
                   std::to_string(line) +
                   "), which a sandboxed plugin may not: only node:fs and node:readline");
  }
  return std::nullopt;
}

// Why the bundle may not run: an export. Checked once linked, before anything runs.
std::optional<ProgramEnd> check_exports(JSContext* cx, JS::HandleObject module) {
  JS::RootedObject ns(cx, JS::GetModuleNamespace(cx, module));
  JS::RootedIdVector ids(cx);
  if (!ns || !js::GetPropertyKeys(cx, ns, JSITER_OWNONLY | JSITER_HIDDEN, &ids))
    return crash("its instance crashed: " + describe_pending(cx, true));
  if (ids.empty()) return std::nullopt;
  JS::RootedValue key(cx);
  std::string first;
  if (JS_IdToValue(cx, ids[0], &key) && key.isString()) first = utf8(cx, key.toString());
  return refusal("its bundle exports \"" + first + "\"" +
                 (ids.length() > 1 ? " and " + std::to_string(ids.length() - 1) + " more" : "") +
                 ", which a sandboxed plugin may not: its bundle has no exports");
}

// How a call into the bundle that returned false ends the instance.
ProgramEnd failed(JsInstance& in) {
  JSContext* cx = in.cx;
  if (auto why = in.channel.stop_reason()) {
    JS_ClearPendingException(cx);
    return crash(std::move(*why));
  }
  if (in.exit_code) {
    JS_ClearPendingException(cx);
    return crash("its instance exited with code " + std::to_string(*in.exit_code));
  }
  if (!JS_IsExceptionPending(cx)) return crash("its instance crashed: an uncatchable error");
  std::string told = told_in_a_turn(in, [&] { return describe_pending(cx, true); });
  if (auto why = in.channel.stop_reason()) return crash(std::move(*why));
  return crash("its instance crashed: " + told);
}

// After each turn: a stop asked meanwhile, or a rejection no handler took, ends it.
std::optional<ProgramEnd> after_turn(JsInstance& in, JS::HandleObject module_promise) {
  JSContext* cx = in.cx;
  in.channel.gc_bytes(JS_GetGCParameter(cx, JSGC_BYTES));
  in.channel.check_memory();
  if (in.channel.stop_cause() != StopCause::none || in.exit_code) return failed(in);
  for (auto it = in.unhandled.begin(); it != in.unhandled.end(); ++it) {
    JS::RootedObject promise(cx, it->get());
    if (promise == module_promise) continue;  // told below, with the module's own words
    JS::RootedValue reason(cx, JS::GetPromiseResult(promise));
    std::string told = describe_value(in, reason);
    if (auto why = in.channel.stop_reason()) return crash(std::move(*why));
    return crash("its instance crashed: an unhandled rejection: " + told);
  }
  if (module_promise && JS::GetPromiseState(module_promise) == JS::PromiseState::Rejected) {
    JS::RootedValue reason(cx, JS::GetPromiseResult(module_promise));
    std::string told = describe_value(in, reason);
    if (auto why = in.channel.stop_reason()) return crash(std::move(*why));
    return crash("its instance crashed: " + told);
  }
  return std::nullopt;
}

// The prelude did not run: stopped while it ran (a stop() during the start interrupts it: that
// is the stop's end, not a fault of the prelude), or a fault of ours.
ProgramEnd prelude_failed(JsInstance& in) {
  if (in.channel.stop_cause() != StopCause::none) return failed(in);
  return crash("its instance could not start: the prelude failed: " +
               describe_pending(in.cx, true));
}

// feed(line, mayBeOwn): `line` a string, or null at the end of its input.
bool call_feed(JsInstance& in, JS::HandleValue arg, bool may_be_own) {
  JSContext* cx = in.cx;
  JS::RootedValue f(cx, in.feed);
  JS::RootedValue ignored(cx);
  JS::RootedValueArray<2> args(cx);
  args[0].set(arg);
  args[1].setBoolean(may_be_own);
  return JS::Call(cx, JS::UndefinedHandleValue, f, args, &ignored);
}

// A line of input that is a net/chunk of the host's (sandbox/net_chunk.hpp), given to the
// prelude's feed.chunk(stream, bytes, text) as its bytes: true when the prelude took it (a piece
// of a stream of its own), false when the line must go the common way (not such a line, or a
// stream the prelude does not know: the bundle's, which reads the line as it came); nullopt
// when the call failed (an exception, a stop), which ends the instance as a failed feed does.
std::optional<bool> feed_chunk(JsInstance& in, std::string_view line) {
  if (!in.chunk.isObject()) return false;
  NetChunkLine chunk;
  if (!read_net_chunk(line, chunk, in.chunk_bytes)) return false;
  JSContext* cx = in.cx;
  JS::RootedObject bytes(cx, JS_NewUint8Array(cx, in.chunk_bytes.size()));
  if (!bytes) return std::nullopt;
  {
    JS::AutoCheckCannotGC nogc;
    bool shared = false;
    std::uint8_t* data = JS_GetUint8ArrayData(bytes, &shared, nogc);
    if (!in.chunk_bytes.empty()) std::memcpy(data, in.chunk_bytes.data(), in.chunk_bytes.size());
  }
  // Its capacity is kept for the next piece, unless a large one made it large.
  if (in.chunk_bytes.capacity() > 1024 * 1024) std::string().swap(in.chunk_bytes);
  JS::RootedValue f(cx, in.chunk);
  JS::RootedValueArray<3> args(cx);
  args[0].setNumber(static_cast<double>(chunk.stream));
  args[1].setObject(*bytes);
  args[2].setBoolean(chunk.text);
  JS::RootedValue taken(cx);
  if (!JS::Call(cx, JS::UndefinedHandleValue, f, args, &taken)) return std::nullopt;
  return taken.isBoolean() && taken.toBoolean();
}

// The instance in its realm: the prelude, the checks, the module, then a turn for each line of
// input until nothing is left to do.
ProgramEnd run_in_realm(JsInstance& in, JobQueue& jobs) {
  JSContext* cx = in.cx;
  const wire::Start& start = in.start;
  JS::RootedObject global(cx, JS::CurrentGlobalOrNull(cx));

  // Nothing of the bundle has run yet: a refusal here leaves nothing behind.
  std::optional<ProgramEnd> not_compiled;
  JS::RootedObject module(cx, bundle_module(cx, start, in.channel, not_compiled));
  if (!module) return not_compiled.value_or(crash("its instance could not start"));
  if (auto refused = check_imports(cx, module, start.name)) return *refused;
  // Compiled or decoded: a stencil the host gave did not crash the instance.
  in.channel.ready();

  // The prelude, with its natives.
  JS::RootedObject host(cx, JS_NewPlainObject(cx));
  if (!host || !JS_DefineFunction(cx, host, "write", guarded<native_write>, 2, 0) ||
      !JS_DefineFunction(cx, host, "wantInput", guarded<native_want_input>, 1, 0) ||
      !JS_DefineFunction(cx, host, "exit", guarded<native_exit>, 1, 0) ||
      !JS_DefineFunction(cx, host, "readFile", guarded<native_read_file>, 1, 0) ||
      !JS_DefineFunction(cx, host, "utf8", guarded<native_utf8>, 1, 0) ||
      !JS_DefineFunction(cx, host, "utf8Length", guarded<native_utf8_length>, 1, 0) ||
      !JS_DefineFunction(cx, host, "utf8Text", guarded<native_utf8_text>, 1, 0))
    return failed(in);
  JS::RootedValue url(cx);
  JS::RootedValue folder(cx);
  if (JSString* s = JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(start.url.data(), start.url.size())))
    url.setString(s);
  if (JSString* s =
          JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(start.folder.data(), start.folder.size())))
    folder.setString(s);
  // The spec's numbers the prelude keeps too, from the host's one copy (protocol/limits.hpp).
  JS::RootedObject limits(cx, JS_NewPlainObject(cx));
  if (!limits ||
      !JS_DefineProperty(cx, limits, "timersAtOnce", static_cast<double>(proto::kTimersAtOnce),
                         JSPROP_READONLY) ||
      !JS_DefineProperty(cx, limits, "timerMaxMs", proto::kTimerMaxMs, JSPROP_READONLY) ||
      !JS_DefineProperty(cx, limits, "timerMinMs",
                         static_cast<double>(proto::kTimerMinDelay.count()), JSPROP_READONLY) ||
      !JS_DefineProperty(cx, limits, "streamsAtOnce", static_cast<double>(proto::kStreamsAtOnce),
                         JSPROP_READONLY) ||
      !JS_DefineProperty(cx, limits, "netBytes", static_cast<double>(start.net_bytes),
                         JSPROP_READONLY))
    return failed(in);
  if (!JS_DefineProperty(cx, host, "url", url, 0) ||
      !JS_DefineProperty(cx, host, "folder", folder, 0) ||
      !JS_DefineProperty(cx, host, "limits", limits, 0))
    return failed(in);
  {
    JS::RootedScript prelude(cx, prelude_script(cx, in.prelude));
    JS::RootedValue maker(cx);
    if (!prelude || !JS_ExecuteScript(cx, prelude, &maker)) return prelude_failed(in);
    JS::RootedValueArray<1> args(cx);
    args[0].setObject(*host);
    JS::RootedValue feed(cx);
    if (!JS::Call(cx, JS::UndefinedHandleValue, maker, args, &feed)) return prelude_failed(in);
    in.feed = feed;
    JS::RootedValue chunk(cx);
    if (feed.isObject()) {
      JS::RootedObject f(cx, &feed.toObject());
      if (!JS_GetProperty(cx, f, "chunk", &chunk)) return prelude_failed(in);
    }
    in.chunk = chunk;
  }

  if (!compat::link_module(cx, module)) {
    if (in.channel.stop_cause() != StopCause::none) return failed(in);
    return refusal("its bundle cannot be linked: " + describe_pending(cx, true));
  }
  if (auto refused = check_exports(cx, module)) return *refused;

  // The first turn: the module's body and the jobs it queued.
  in.channel.turn_begins();
  JS::RootedValue evaluated(cx);
  if (!JS::ModuleEvaluate(cx, module, &evaluated)) {
    in.channel.turn_ends();
    return failed(in);
  }
  JS::RootedObject module_promise(cx, evaluated.isObject() ? &evaluated.toObject() : nullptr);
  if (!jobs.drain(cx)) {
    in.channel.turn_ends();
    return failed(in);
  }
  in.channel.turn_ends();
  // The modules' helper is the modules' alone.
  if (!JS_DeleteProperty(cx, global, "__escouadeModules")) return failed(in);
  if (auto end = after_turn(in, module_promise)) return *end;

  JS::RootedValue line_value(cx);
  for (;;) {
    if (!in.want_input) {
      if (module_promise && JS::GetPromiseState(module_promise) == JS::PromiseState::Pending)
        return crash("its instance ended with its top-level await never settled");
      return crash("its instance ended: it has nothing left to do and reads no more input");
    }
    std::optional<std::string> line = in.channel.next_input();
    if (in.channel.stop_cause() != StopCause::none) return failed(in);
    in.channel.turn_begins(false, line ? std::string_view(*line) : std::string_view());
    // A piece of one of the prelude's streams goes to it as bytes, its line never made a string.
    const std::optional<bool> taken = line ? feed_chunk(in, *line) : false;
    bool ok = taken.has_value();
    if (ok && !*taken) {
      if (line) {
        JSString* s = JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(line->data(), line->size()));
        if (!s) {
          in.channel.turn_ends();
          return failed(in);
        }
        line_value.setString(s);
      } else {
        line_value.setNull();  // the end of its input
      }
      ok = call_feed(in, line_value, !line || may_be_the_preludes(*line));
    }
    ok = ok && jobs.drain(cx);
    in.channel.turn_ends();
    if (!ok) return failed(in);
    if (auto end = after_turn(in, module_promise)) return *end;
  }
}

}  // namespace

ProgramEnd run_js(Instance& instance, const wire::Start& start, Channel& channel) {
  JSContext* cx = instance.cx;
  JS::ContextOptionsRef(cx).setWasm(false).setWasmBaseline(false).setWasmIon(false);

  ProgramEnd end;
  JobQueue jobs(cx);
  JsInstance in(cx, channel, start);
  in.prelude = instance.prelude;
  JS_SetContextPrivate(cx, &in);
  JS::SetJobQueue(cx, &jobs);
  JS_AddInterruptCallback(cx, on_interrupt);
  JS::SetOutOfMemoryCallback(cx, on_out_of_memory, nullptr);
  JS_SetGCCallback(cx, on_gc, nullptr);
  JS::SetPromiseRejectionTrackerCallback(cx, on_rejection, nullptr);
  JS::SetModuleResolveHook(JS_GetRuntime(cx), resolve);
  JS::SetModuleMetadataHook(JS_GetRuntime(cx), module_metadata);
  JS::SetModuleDynamicImportHook(JS_GetRuntime(cx), dynamic_import);
  channel.set_interrupter([cx] { JS_RequestInterruptCallback(cx); });

  JS::RootedObject global(cx, new_sandbox_global(cx));
  if (!global) {
    end = in.channel.stop_cause() != StopCause::none
              ? failed(in)
              : crash("its instance could not start: no room for its global");
  } else {
    JSAutoRealm realm(cx, global);
    end = run_in_realm(in, jobs);
    JS_ClearPendingException(cx);
  }
  // The process ends with the instance: nothing is torn down, only the interrupts stop.
  channel.set_interrupter(nullptr);
  return end;
}

std::optional<ProgramEnd> compile_js(Instance& instance, const wire::Start& start,
                                     Channel& channel) {
  JSContext* cx = instance.cx;
  JsInstance in(cx, channel, start);
  JS_SetContextPrivate(cx, &in);
  JS::SetModuleResolveHook(JS_GetRuntime(cx), resolve);
  JS::RootedObject global(cx, new_sandbox_global(cx));
  if (!global) return crash("its compile could not start: no room for its global");
  JSAutoRealm realm(cx, global);
  channel.set_interrupter([cx] { JS_RequestInterruptCallback(cx); });
  const auto checked = [&]() -> std::optional<ProgramEnd> {
    std::optional<ProgramEnd> end;
    std::string encoded;
    JS::RootedObject module(cx, encoded_bundle(cx, start, channel, encoded, end));
    if (!module) return end.value_or(crash("its compile could not instantiate its module"));
    // Its imports and exports, as its start checks them, on what was compiled: a bundle that
    // may not run is refused at its load (and by escouade-plugin check), never kept.
    if (auto refused = check_imports(cx, module, start.name)) return refused;
    if (!compat::link_module(cx, module))
      return refusal("its bundle cannot be linked: " + describe_pending(cx, true));
    if (auto refused = check_exports(cx, module)) return refused;
    channel.send(wire::ToHost::stencil, encoded);
    return std::nullopt;
  };
  std::optional<ProgramEnd> end = checked();
  channel.set_interrupter(nullptr);
  in.reset_roots();
  return end;
}

}  // namespace escouade::sandbox::spidermonkey
