# settings/get: the user's values (SettingsStore, JSON files in the host's data dir) and a
# project's .escouade.yml over them. yaml-cpp is private to project_file.cpp.
find_package(yaml-cpp REQUIRED)
# Debian 12's yaml-cpp 0.7 names its target yaml-cpp; 0.8 adds yaml-cpp::yaml-cpp.
if(TARGET yaml-cpp::yaml-cpp)
  set(ESCOUADE_YAML_CPP yaml-cpp::yaml-cpp)
else()
  set(ESCOUADE_YAML_CPP yaml-cpp)
endif()

target_sources(escouade_services PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/settings.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/project_file.cpp)
target_link_libraries(escouade_services PUBLIC Boost::json PRIVATE ${ESCOUADE_YAML_CPP})

if(ESCOUADE_BUILD_TESTS)
  escouade_add_unit_test(settings_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/settings_test.cpp
                         LIBS escouade_services)
endif()
