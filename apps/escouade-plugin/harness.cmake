# `escouade-plugin run` (the author's harness): apps/escouade-plugin/harness/, docs/harness.md.
add_library(escouade_harness STATIC
  harness/scenario.cpp
  harness/host_link.cpp
  harness/printer.cpp
  harness/journal_tail.cpp
  harness/line_source.cpp
  harness/runner.cpp
  harness/steps.cpp)
target_include_directories(escouade_harness PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(escouade_harness PUBLIC escouade_rpc escouade_runtime escouade_protocol escouade_event_loop)

target_sources(escouade-plugin PRIVATE harness/run_command.cpp)
target_link_libraries(escouade-plugin PRIVATE escouade_harness)
# The harness starts the escouade-host built beside it.
add_dependencies(escouade-plugin escouade-host)

if(ESCOUADE_BUILD_TESTS)
  escouade_add_unit_test(harness_test SOURCES harness/scenario_test.cpp LIBS escouade_harness)

  # The real escouade-plugin run, with real escouade-host and fixture plugin processes.
  escouade_add_unit_test(harness_run_test PROCESSES SOURCES harness/run_test.cpp LIBS Boost::json escouade_base)
  target_compile_definitions(harness_run_test PRIVATE
    ESCOUADE_PLUGIN_BINARY="$<TARGET_FILE:escouade-plugin>"
    ESCOUADE_HOST_BINARY="$<TARGET_FILE:escouade-host>"
    ESCOUADE_FIXTURE_PLUGIN="$<TARGET_FILE:fixture_plugin>"
    ESCOUADE_HARNESS_TESTDATA="${CMAKE_CURRENT_SOURCE_DIR}/harness/testdata"
    ESCOUADE_SANDBOX_FIXTURES="${PROJECT_SOURCE_DIR}/tests/fixtures/sandbox")
  add_dependencies(harness_run_test escouade-plugin escouade-host fixture_plugin)
endif()
