#include "sandbox/spidermonkey/bundle_code.hpp"

#include <js/CompilationAndEvaluation.h>
#include <js/SourceText.h>
#include <js/Transcoding.h>
#include <js/experimental/JSStencil.h>
#include <mozilla/RefPtr.h>

#include "sandbox/channel.hpp"
#include "sandbox/spidermonkey/context.hpp"
#include "sandbox/spidermonkey/prelude.hpp"

namespace escouade::sandbox::spidermonkey {

namespace {

constexpr const char* kPreludeName = "(escouade prelude)";

// Why a compile that returned nothing failed: the stop that ended it (its CPU budget, a
// refusal; its memory, which no compile of this bundle would fit in either), or the engine's
// words for the error (a SyntaxError: nothing of the bundle has run, so telling it runs none of
// its code).
runtime::ProgramEnd compile_failed(JSContext* cx, Channel& channel) {
  if (auto why = channel.stop_reason()) {
    JS_ClearPendingException(cx);
    return refusal(std::move(*why));
  }
  return refusal("its bundle does not compile: " + describe_pending(cx, true));
}

RefPtr<JS::Stencil> compiled(JSContext* cx, const JS::CompileOptions& options,
                             const wire::Start& start, Channel& channel) {
  JS::SourceText<mozilla::Utf8Unit> text;
  if (!text.init(cx, start.source.data(), start.source.size(), JS::SourceOwnership::Borrowed))
    return nullptr;
  channel.turn_begins(/*compile=*/true);
  RefPtr<JS::Stencil> stencil = JS::CompileModuleScriptToStencil(cx, options, text);
  channel.turn_ends();
  // Stopped while it compiled (its memory passed, though the engine finished): it did not compile
  // within its limits, whatever the engine made.
  if (channel.stop_cause() != StopCause::none) return nullptr;
  return stencil;
}

RefPtr<JS::Stencil> decoded(JSContext* cx, const JS::CompileOptions& options,
                            std::string_view encoded) {
  JS::DecodeOptions decode(options);
  // The stencil's bytes stay where they were read (Start::held, kept until the process ends):
  // the engine uses them in place rather than copying megabytes into pages touched for the
  // first time (a 968 KB bundle's 5.1 MB stencil decoded in 26 ms rather than 41).
  decode.borrowBuffer = true;
  decode.usePinnedBytecode = true;
  JS::TranscodeRange range(reinterpret_cast<const std::uint8_t*>(encoded.data()), encoded.size());
  JS::Stencil* raw = nullptr;
  if (JS::DecodeStencil(cx, decode, range, &raw) != JS::TranscodeResult::Ok || !raw) {
    JS_ClearPendingException(cx);
    return nullptr;
  }
  return already_AddRefed<JS::Stencil>(raw);
}

}  // namespace

JSObject* bundle_module(JSContext* cx, const wire::Start& start, Channel& channel,
                        std::optional<runtime::ProgramEnd>& end) {
  JS::CompileOptions options(cx);
  options.setFileAndLine(start.name.c_str(), 1);
  RefPtr<JS::Stencil> stencil;
  if (!start.stencil.empty()) {
    stencil = decoded(cx, options, start.stencil);
    // Another build's, or damaged: the host drops it, and the bundle is compiled here.
    if (!stencil) channel.send(wire::ToHost::stale_stencil, {});
  }
  if (!stencil) stencil = compiled(cx, options, start, channel);
  if (!stencil) {
    end = compile_failed(cx, channel);
    return nullptr;
  }
  JS::InstantiateOptions instantiate(options);
  JSObject* module = JS::InstantiateModuleStencil(cx, instantiate, stencil.get());
  if (!module) end = crash("its instance could not start: " + describe_pending(cx, true));
  return module;
}

JSObject* encoded_bundle(JSContext* cx, const wire::Start& start, Channel& channel,
                         std::string& encoded, std::optional<runtime::ProgramEnd>& end) {
  JS::CompileOptions options(cx);
  options.setFileAndLine(start.name.c_str(), 1);
  RefPtr<JS::Stencil> stencil = compiled(cx, options, start, channel);
  if (!stencil) {
    end = compile_failed(cx, channel);
    return nullptr;
  }
  JS::TranscodeBuffer buffer;
  if (JS::EncodeStencil(cx, stencil.get(), buffer) != JS::TranscodeResult::Ok) {
    JS_ClearPendingException(cx);
    end = crash("its bundle compiled, but could not be encoded");
    return nullptr;
  }
  encoded.assign(reinterpret_cast<const char*>(buffer.begin()), buffer.length());
  JS::InstantiateOptions instantiate(options);
  JSObject* module = JS::InstantiateModuleStencil(cx, instantiate, stencil.get());
  if (!module)
    end = crash("its compile could not instantiate its module: " + describe_pending(cx, true));
  return module;
}

JSScript* compile_script(JSContext* cx, std::string_view source, const char* name) {
  JS::CompileOptions options(cx);
  options.setFileAndLine(name, 1);
  JS::SourceText<mozilla::Utf8Unit> text;
  if (!text.init(cx, source.data(), source.size(), JS::SourceOwnership::Borrowed)) return nullptr;
  return JS::Compile(cx, options, text);
}

JS::Stencil* compile_prelude(JSContext* cx) {
  JS::CompileOptions options(cx);
  options.setFileAndLine(kPreludeName, 1);
  JS::SourceText<mozilla::Utf8Unit> text;
  if (!text.init(cx, kPrelude.data(), kPrelude.size(), JS::SourceOwnership::Borrowed)) {
    JS_ClearPendingException(cx);
    return nullptr;
  }
  RefPtr<JS::Stencil> stencil = JS::CompileGlobalScriptToStencil(cx, options, text);
  JS_ClearPendingException(cx);
  return stencil.forget().take();
}

JSScript* prelude_script(JSContext* cx, JS::Stencil* stencil) {
  if (!stencil) return compile_script(cx, kPrelude, kPreludeName);
  JS::CompileOptions options(cx);
  options.setFileAndLine(kPreludeName, 1);
  JS::InstantiateOptions instantiate(options);
  return JS::InstantiateGlobalStencil(cx, instantiate, stencil);
}

}  // namespace escouade::sandbox::spidermonkey
