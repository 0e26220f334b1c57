#pragma once

// What a program of this build says to --version: its name and Escouade's version, the protocols
// it speaks, and the engine its sandbox runs run.js and run.wasm plugins on.

#include <string>
#include <string_view>

namespace escouade::sandbox {

// Three lines, each ended by '\n':
//   escouade-host 0.1.0
//   plugin protocol 1, host protocol 1
//   engine SpiderMonkey 102.15.1 (mozjs), for run.js and run.wasm plugins
std::string version_text(std::string_view program);

}  // namespace escouade::sandbox
