# files/read (files.hpp): a file of the plugin's own folder.
target_sources(escouade_services PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/files.cpp)

if(ESCOUADE_BUILD_TESTS AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  escouade_add_unit_test(files_test
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/files_test.cpp
    LIBS escouade_services)
endif()
