# The keychain backends (keychain.hpp): the file store everywhere POSIX is, the Secret Service
# through libsecret on Linux. libsecret and GLib are PRIVATE: users of keychain.hpp see neither.
set(KEYCHAIN_SOURCES keychain_file.cpp)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(LIBSECRET REQUIRED IMPORTED_TARGET libsecret-1)
  list(APPEND KEYCHAIN_SOURCES keychain_secret_service.cpp)
endif()

add_library(escouade_keychain STATIC ${KEYCHAIN_SOURCES})
target_link_libraries(escouade_keychain PUBLIC escouade_platform)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  target_link_libraries(escouade_keychain PRIVATE PkgConfig::LIBSECRET)
endif()

if(ESCOUADE_BUILD_TESTS AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  # A private D-Bus session with gnome-keyring on it, for the tests of this folder and the
  # integration tests (secret_service_session.hpp).
  add_library(escouade_secret_service_session STATIC secret_service_session.cpp)
  target_link_libraries(escouade_secret_service_session
    PUBLIC escouade_platform
    PRIVATE PkgConfig::LIBSECRET)

  # A program that runs the Secret Service backend in a fresh process, so that a test can give
  # it a bus of its own choosing: GLib keeps the first session bus a process connects to.
  add_executable(keychain_probe keychain_probe.cpp)
  target_link_libraries(keychain_probe PRIVATE escouade_keychain)

  escouade_add_unit_test(keychain_test
    SOURCES
      keychain_test.cpp
      keychain_file_test.cpp
      keychain_test_support.cpp
    LIBS escouade_keychain escouade_secret_service_session PkgConfig::LIBSECRET)
  target_compile_definitions(keychain_test PRIVATE
    ESCOUADE_KEYCHAIN_PROBE="$<TARGET_FILE:keychain_probe>")
  add_dependencies(keychain_test keychain_probe)
endif()
