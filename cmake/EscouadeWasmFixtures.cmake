# The run.wasm test modules, built with the build (tests/fixtures/sandbox/wasm/): C sources with
# clang-14 --target=wasm32-wasi (Debian: wasi-libc, libclang-rt-14-dev-wasm32, lld-14), the
# hostile shapes from .wat with wat2wasm (Debian: wabt). scripts/install-deps.sh installs them.
# Without them the configure fails: the sandbox's wasm tests are never skipped quietly.

set(ESCOUADE_WASM_FIXTURE_DIR "${PROJECT_BINARY_DIR}/wasm_fixtures")

find_program(ESCOUADE_WASM_CC NAMES clang-14)
find_program(ESCOUADE_WAT2WASM NAMES wat2wasm)
if(NOT ESCOUADE_WASM_CC)
  message(FATAL_ERROR "The sandbox's wasm tests need clang-14 (scripts/install-deps.sh)")
endif()
if(NOT ESCOUADE_WAT2WASM)
  message(FATAL_ERROR "The sandbox's wasm tests need wat2wasm: install the Debian package wabt "
                      "(scripts/install-deps.sh)")
endif()

# Does clang-14 build and link for wasm32-wasi here?
set(_probe "${PROJECT_BINARY_DIR}/wasm_probe")
file(MAKE_DIRECTORY "${_probe}")
file(WRITE "${_probe}/probe.c" "#include <stdio.h>\nint main(void) { puts(\"ok\"); return 0; }\n")
execute_process(
  COMMAND "${ESCOUADE_WASM_CC}" --target=wasm32-wasi -O2 "${_probe}/probe.c" -o
          "${_probe}/probe.wasm"
  RESULT_VARIABLE _probe_result ERROR_VARIABLE _probe_error OUTPUT_QUIET)
if(NOT _probe_result EQUAL 0)
  message(FATAL_ERROR
    "clang-14 cannot build for --target=wasm32-wasi, which the sandbox's wasm tests need: "
    "install wasi-libc libclang-rt-14-dev-wasm32 lld-14 (scripts/install-deps.sh).\n"
    "${_probe_error}")
endif()

# escouade_wasm_fixtures(<target>): a target that builds every module of the folder into
# ESCOUADE_WASM_FIXTURE_DIR (<name>.wasm).
function(escouade_wasm_fixtures target)
  set(src "${PROJECT_SOURCE_DIR}/tests/fixtures/sandbox/wasm")
  file(GLOB c_sources CONFIGURE_DEPENDS "${src}/*.c")
  file(GLOB wat_sources CONFIGURE_DEPENDS "${src}/*.wat")
  set(outputs)
  foreach(c IN LISTS c_sources)
    get_filename_component(name "${c}" NAME_WE)
    set(out "${ESCOUADE_WASM_FIXTURE_DIR}/${name}.wasm")
    add_custom_command(
      OUTPUT "${out}"
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${ESCOUADE_WASM_FIXTURE_DIR}"
      COMMAND "${ESCOUADE_WASM_CC}" --target=wasm32-wasi -O2 -Wall -Wextra -Werror "${c}" -o
              "${out}"
      DEPENDS "${c}"
      COMMENT "wasm32-wasi: ${name}.wasm")
    list(APPEND outputs "${out}")
  endforeach()
  foreach(wat IN LISTS wat_sources)
    get_filename_component(name "${wat}" NAME_WE)
    set(out "${ESCOUADE_WASM_FIXTURE_DIR}/${name}.wasm")
    add_custom_command(
      OUTPUT "${out}"
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${ESCOUADE_WASM_FIXTURE_DIR}"
      COMMAND "${ESCOUADE_WAT2WASM}" --enable-threads --enable-memory64 "${wat}" -o "${out}"
      DEPENDS "${wat}"
      COMMENT "wat2wasm: ${name}.wasm")
    list(APPEND outputs "${out}")
  endforeach()
  add_custom_target(${target} DEPENDS ${outputs})
endfunction()
