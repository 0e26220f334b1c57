# Compiler settings shared by every target: warnings, sanitizers, ccache.

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()

add_compile_options(-Wall -Wextra -Wpedantic -Wshadow)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 reports std::string copies inlined at -O2/-O3 as overlapping memcpy (-Wrestrict):
  # a false positive fixed in GCC 13 (bug 105329), raised here from valijson's headers too.
  add_compile_options(-Wno-restrict)
endif()
if(ESCOUADE_WERROR)
  add_compile_options(-Werror)
endif()

# clang-14's UBSan check of calls through function pointers (-fsanitize=function, part of
# `undefined`) cannot compile C++20 coroutines ("Cannot represent a difference across
# sections", at every -O): it is left out with clang. GCC has no such check.
set(ESCOUADE_NO_SANITIZE "")
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(ESCOUADE_NO_SANITIZE -fno-sanitize=function)
endif()

# Links with LLVM's lld where the compiler takes it (Debian: lld): an AddressSanitizer test binary
# links in about 1.6 s against GNU ld's 7 s, and each build of the suite links 59 programs (README).
option(ESCOUADE_LLD "Link with lld when the compiler can" ON)
if(ESCOUADE_LLD)
  include(CheckLinkerFlag)
  check_linker_flag(CXX -fuse-ld=lld ESCOUADE_HAVE_LLD)
  if(ESCOUADE_HAVE_LLD)
    add_link_options(-fuse-ld=lld)
  endif()
endif()

if(ESCOUADE_SANITIZE)
  add_compile_options(-fsanitize=${ESCOUADE_SANITIZE} ${ESCOUADE_NO_SANITIZE}
                      -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${ESCOUADE_SANITIZE} ${ESCOUADE_NO_SANITIZE})
endif()

# escouade_add_unit_test(<name> SOURCES ... LIBS ... [PROCESSES]): a GoogleTest binary
# registered with ctest. PROCESSES marks a binary whose tests start real processes (plugins,
# escouade-host, escouade-plugin): they carry the ctest label `processes`, which
# scripts/stress.sh runs again and again beside busy loops (docs/lifetimes.md).
function(escouade_add_unit_test name)
  cmake_parse_arguments(ARG "PROCESSES;LAB" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  # Its sources compiled as one: each test file parses GoogleTest, Boost.JSON and the headers it
  # tests again, and instantiates the same templates, so a target of 13 files compiles in a
  # quarter of the time (README). Each file still compiles alone: a name a file keeps to itself
  # lives in a namespace of its own where another file of the target has the same one.
  set_target_properties(${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 16)
  # In an optimized build the tests' own code is compiled at -O1: the product's libraries they
  # link keep their -O3 (the suite checks them again optimized), and GCC's -O3 of the tests'
  # templates (GoogleTest, Boost.JSON, Asio) is compile time CI does not have (README).
  if(CMAKE_BUILD_TYPE STREQUAL "Release")
    target_compile_options(${name} PRIVATE -O1)
  endif()
  # LAB: the tests run in the network lab (tests/support/net_lab.hpp), whose main enters it.
  if(ARG_LAB)
    target_link_libraries(${name} PRIVATE ${ARG_LIBS} escouade_net_lab_main GTest::gtest
                          GTest::gmock)
  else()
    target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  endif()
  set(labels unit)
  if(ARG_PROCESSES)
    set(labels processes)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 120 LABELS ${labels})
endfunction()
