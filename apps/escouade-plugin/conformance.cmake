# `escouade-plugin test` (the conformance bench) and `escouade-plugin check`: their library,
# linked into escouade-plugin, and their tests (docs/conformance.md).
add_library(escouade_conformance STATIC
  conformance/bench.cpp
  conformance/bench_run.cpp
  conformance/checks_events.cpp
  conformance/checks_messages.cpp
  conformance/leftovers.cpp
  conformance/plugin_link.cpp
  conformance/report.cpp
  conformance/test_command.cpp
  conformance/check_command.cpp)
target_include_directories(escouade_conformance PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(escouade_conformance PUBLIC
  escouade_supervisor escouade_services escouade_runtime escouade_sandbox escouade_keychain escouade_rpc
  escouade_protocol escouade_manifest escouade_journal escouade_platform escouade_event_loop
  escouade_base
  Boost::json fmt::fmt CLI11::CLI11)

target_link_libraries(escouade-plugin PRIVATE escouade_conformance)

if(ESCOUADE_BUILD_TESTS)
  include(${PROJECT_SOURCE_DIR}/tests/fixtures/conformance/fixtures.cmake)

  escouade_add_unit_test(conformance_report_test
    SOURCES conformance/report_test.cpp
    LIBS escouade_conformance)

  # The real escouade-plugin binary against fixture plugins in temporary folders.
  escouade_add_unit_test(conformance_bench_test PROCESSES
    SOURCES conformance/bench_test.cpp
    LIBS Boost::json escouade_base)
  target_compile_definitions(conformance_bench_test PRIVATE
    ESCOUADE_PLUGIN_BINARY="$<TARGET_FILE:escouade-plugin>"
    ESCOUADE_HOST_BINARY="$<TARGET_FILE:escouade-host>"
    ESCOUADE_CONFORMANCE_FIXTURE="$<TARGET_FILE:conformance_fixture>"
    ESCOUADE_SANDBOX_FIXTURES="${PROJECT_SOURCE_DIR}/tests/fixtures/sandbox"
    ESCOUADE_EXAMPLES_SOURCE="${PROJECT_SOURCE_DIR}/examples"
    ESCOUADE_WASM_FIXTURES="${PROJECT_BINARY_DIR}/wasm_fixtures")
  add_dependencies(conformance_bench_test escouade-plugin escouade-host conformance_fixture
                   sandbox_wasm_fixtures)
endif()
