# The TypeScript side of the build: Node, and the packages `npm ci` installs at the repository's
# root from package-lock.json (the SDK's esbuild, TypeScript, Node's types). scripts/install-deps.sh
# runs npm ci; a configure without them stops with what to run when the tests are built (they
# build and run TypeScript plugins), and builds no TypeScript plugin otherwise.
#
# escouade_ts_plugin(<target> SOURCE <folder> OUTPUT <folder> [ENTRY <file>] [FILES <file>...]
#                    [DEPENDS <file>...])
#   Bundles the plugin in SOURCE (its entry, src/main.ts by default) with the SDK's
#   escouade-plugin-build into OUTPUT/dist/plugin.mjs, and copies its escouade-plugin.json and
#   FILES beside it: a folder host/load takes as it is. It makes OUTPUT-process too: the same
#   bundle with the manifest's run set to {"command": ["node", "dist/plugin.mjs"]}, the plugin
#   as a process under Node. The two run the same bundle. DEPENDS names what the bundle takes
#   from outside SOURCE/src (it is bundled again when one changes).

find_program(ESCOUADE_NODE node)
set(ESCOUADE_NODE_MODULES ${PROJECT_SOURCE_DIR}/node_modules)
set(ESCOUADE_TS_BUILD ${PROJECT_SOURCE_DIR}/sdk/typescript/bin/escouade-plugin-build.mjs)
set(ESCOUADE_TSC ${ESCOUADE_NODE_MODULES}/typescript/bin/tsc)

if(ESCOUADE_NODE AND EXISTS ${ESCOUADE_NODE_MODULES}/esbuild/package.json AND EXISTS ${ESCOUADE_TSC})
  set(ESCOUADE_TYPESCRIPT ON)
else()
  set(ESCOUADE_TYPESCRIPT OFF)
  if(ESCOUADE_BUILD_TESTS)
    message(FATAL_ERROR "The tests build TypeScript plugins: they need Node.js and the packages of "
                        "package-lock.json (run scripts/install-deps.sh, or apt-get install nodejs "
                        "npm, then npm ci at the repository's root)")
  endif()
  message(STATUS "No Node.js or no node_modules: the TypeScript examples are not built")
endif()

file(GLOB_RECURSE ESCOUADE_TS_SDK_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/sdk/typescript/src/*.ts)

function(escouade_ts_plugin target)
  cmake_parse_arguments(TS "" "SOURCE;OUTPUT;ENTRY" "FILES;DEPENDS" ${ARGN})
  if(NOT TS_ENTRY)
    set(TS_ENTRY src/main.ts)
  endif()
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${TS_SOURCE}/src/*.ts)
  set(bundle ${TS_OUTPUT}/dist/plugin.mjs)
  set(process_bundle ${TS_OUTPUT}-process/dist/plugin.mjs)
  add_custom_command(
    OUTPUT ${bundle}
    COMMAND ${ESCOUADE_NODE} ${ESCOUADE_TS_BUILD} --entry ${TS_ENTRY} --outfile ${bundle}
    WORKING_DIRECTORY ${TS_SOURCE}
    DEPENDS ${sources} ${TS_DEPENDS} ${ESCOUADE_TS_SDK_SOURCES} ${ESCOUADE_TS_BUILD}
    COMMENT "Bundling the TypeScript plugin ${target}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${process_bundle}
    COMMAND ${CMAKE_COMMAND} -E copy ${bundle} ${process_bundle}
    DEPENDS ${bundle}
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${bundle} ${process_bundle})

  # The manifests, at configure time (a changed manifest configures again).
  set(manifest ${TS_SOURCE}/escouade-plugin.json)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${manifest})
  file(READ ${manifest} text)
  string(JSON run_js ERROR_VARIABLE no_js GET "${text}" run js)
  if(no_js OR NOT run_js STREQUAL "dist/plugin.mjs")
    message(FATAL_ERROR "${manifest}: its run must be {\"js\": \"dist/plugin.mjs\"}")
  endif()
  file(WRITE ${TS_OUTPUT}/escouade-plugin.json "${text}")
  string(JSON process_text SET "${text}" run "{\"command\": [\"node\", \"dist/plugin.mjs\"]}")
  file(WRITE ${TS_OUTPUT}-process/escouade-plugin.json "${process_text}\n")
  foreach(f IN LISTS TS_FILES)
    configure_file(${TS_SOURCE}/${f} ${TS_OUTPUT}/${f} COPYONLY)
    configure_file(${TS_SOURCE}/${f} ${TS_OUTPUT}-process/${f} COPYONLY)
  endforeach()
endfunction()
