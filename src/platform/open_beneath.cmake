# Opening a file beneath a folder without races (open_beneath.hpp): openat2 on Linux 5.6 and
# later, a walk by hand elsewhere. POSIX systems only.
if(NOT WIN32)
  target_sources(escouade_platform PRIVATE open_beneath.cpp)
endif()

if(ESCOUADE_BUILD_TESTS AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  escouade_add_unit_test(open_beneath_test SOURCES open_beneath_test.cpp LIBS escouade_platform)
endif()
