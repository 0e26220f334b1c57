# `escouade-plugin new cpp|js|wasm|ts <dir>`: a new C++ plugin folder (a process, or a run.wasm
# module), a JavaScript one or a TypeScript one (apps/escouade-plugin/scaffold/: template/,
# template-wasm/, template-js/, template-ts/).
# The template files, the C++ SDK's headers and the TypeScript SDK's package are embedded in the
# binary at build time: changing, adding or removing one rebuilds it.
set(SCAFFOLD_DIR ${CMAKE_CURRENT_SOURCE_DIR}/scaffold)
set(SCAFFOLD_TEMPLATE_DIR ${SCAFFOLD_DIR}/template)
set(SCAFFOLD_SDK_DIR ${PROJECT_SOURCE_DIR}/sdk/cpp/include/escouade)
set(SCAFFOLD_WASM_TEMPLATE_DIR ${SCAFFOLD_DIR}/template-wasm)
set(SCAFFOLD_WASM_SUPPORT ${PROJECT_SOURCE_DIR}/sdk/cpp/wasm/support.cpp)
set(SCAFFOLD_JS_TEMPLATE_DIR ${SCAFFOLD_DIR}/template-js)
set(SCAFFOLD_TS_TEMPLATE_DIR ${SCAFFOLD_DIR}/template-ts)
# What npm would publish of @escouade-dev/plugin (its package.json's "files"), vendored by new ts.
set(SCAFFOLD_TS_SDK_DIR ${PROJECT_SOURCE_DIR}/sdk/typescript)
file(GLOB_RECURSE SCAFFOLD_TEMPLATE_FILES CONFIGURE_DEPENDS ${SCAFFOLD_TEMPLATE_DIR}/*
                                                            ${SCAFFOLD_WASM_TEMPLATE_DIR}/*
                                                            ${SCAFFOLD_JS_TEMPLATE_DIR}/*
                                                            ${SCAFFOLD_TS_TEMPLATE_DIR}/*)
file(GLOB SCAFFOLD_SDK_HEADERS CONFIGURE_DEPENDS ${SCAFFOLD_SDK_DIR}/*.hpp)
file(GLOB_RECURSE SCAFFOLD_TS_SDK_FILES CONFIGURE_DEPENDS ${SCAFFOLD_TS_SDK_DIR}/src/*
                                                          ${SCAFFOLD_TS_SDK_DIR}/bin/*)
list(APPEND SCAFFOLD_TS_SDK_FILES ${SCAFFOLD_TS_SDK_DIR}/package.json
                                  ${SCAFFOLD_TS_SDK_DIR}/README.md)

set(SCAFFOLD_FILES_CPP ${CMAKE_BINARY_DIR}/generated/scaffold/scaffold_files.cpp)
add_custom_command(
  OUTPUT ${SCAFFOLD_FILES_CPP}
  COMMAND ${CMAKE_COMMAND} -DTEMPLATE_DIR=${SCAFFOLD_TEMPLATE_DIR} -DSDK_DIR=${SCAFFOLD_SDK_DIR}
          -DWASM_TEMPLATE_DIR=${SCAFFOLD_WASM_TEMPLATE_DIR} -DWASM_SUPPORT=${SCAFFOLD_WASM_SUPPORT}
          -DJS_TEMPLATE_DIR=${SCAFFOLD_JS_TEMPLATE_DIR} -DTS_TEMPLATE_DIR=${SCAFFOLD_TS_TEMPLATE_DIR}
          -DTS_SDK_DIR=${SCAFFOLD_TS_SDK_DIR} -DOUTPUT=${SCAFFOLD_FILES_CPP}
          -P ${SCAFFOLD_DIR}/embed_files.cmake
  DEPENDS ${SCAFFOLD_TEMPLATE_FILES} ${SCAFFOLD_SDK_HEADERS} ${SCAFFOLD_WASM_SUPPORT}
          ${SCAFFOLD_TS_SDK_FILES} ${SCAFFOLD_DIR}/embed_files.cmake
          ${PROJECT_SOURCE_DIR}/cmake/EscouadeEmbed.cmake
  COMMENT "Embedding the plugin templates and the SDKs for escouade-plugin new"
  VERBATIM)

add_library(escouade_scaffold STATIC scaffold/scaffold.cpp scaffold/scaffold_js.cpp
                                     scaffold/scaffold_ts.cpp ${SCAFFOLD_FILES_CPP})
target_include_directories(escouade_scaffold PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
# The SDK's generated header is one literal of more than 64 KiB: the compilers read it whole;
# -Wpedantic only notes that the standard does not oblige them to.
set_source_files_properties(${SCAFFOLD_FILES_CPP} PROPERTIES COMPILE_OPTIONS -Wno-overlength-strings)
target_link_libraries(escouade_scaffold
  PUBLIC escouade_base
  PRIVATE escouade_manifest escouade_protocol Boost::json)

target_sources(escouade-plugin PRIVATE scaffold/new_command.cpp)
target_link_libraries(escouade-plugin PRIVATE escouade_scaffold)

if(ESCOUADE_BUILD_TESTS)
  # The embedded files against the source tree, the id and the placeholders.
  escouade_add_unit_test(scaffold_test SOURCES scaffold/scaffold_test.cpp
                         LIBS escouade_scaffold Boost::json)
  target_compile_definitions(scaffold_test PRIVATE
    ESCOUADE_SCAFFOLD_TEMPLATE="${SCAFFOLD_TEMPLATE_DIR}"
    ESCOUADE_SCAFFOLD_JS_TEMPLATE="${SCAFFOLD_JS_TEMPLATE_DIR}"
    ESCOUADE_SCAFFOLD_TS_TEMPLATE="${SCAFFOLD_TS_TEMPLATE_DIR}"
    ESCOUADE_TS_SDK="${SCAFFOLD_TS_SDK_DIR}"
    ESCOUADE_SDK_HEADERS="${SCAFFOLD_SDK_DIR}")

  # The real escouade-plugin new, then the generated project built with cmake and a real
  # compiler (new ts: npm ci and npm run build, from the npm cache the root's npm ci filled),
  # then escouade-plugin check and test on it. Building takes a while: the tests get more time
  # than escouade_add_unit_test's 120 s.
  add_executable(scaffold_new_test scaffold/new_command_test.cpp)
  target_link_libraries(scaffold_new_test PRIVATE
    escouade_manifest escouade_base Boost::json GTest::gtest GTest::gtest_main)
  target_compile_definitions(scaffold_new_test PRIVATE
    ESCOUADE_PLUGIN_BINARY="$<TARGET_FILE:escouade-plugin>"
    ESCOUADE_CMAKE="${CMAKE_COMMAND}"
    ESCOUADE_SDK_HEADERS="${SCAFFOLD_SDK_DIR}"
    ESCOUADE_TS_SDK="${SCAFFOLD_TS_SDK_DIR}")
  add_dependencies(scaffold_new_test escouade-plugin)
  gtest_discover_tests(scaffold_new_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 900 LABELS build)
endif()
