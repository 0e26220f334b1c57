# Writes OUTPUT, a C++ file whose escouade::manifest::manifest_schema_text() returns the bytes of
# INPUT (schema/manifest-1.json), so that the library carries the schema it checks against.
# Run by the build: cmake -DINPUT=<schema> -DOUTPUT=<file.cpp> -P embed_schema.cmake
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# CMake's regular expressions have no {n}: sixteen bytes a line, spelled out.
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)
string(REGEX REPLACE "(${line})" "\\1\n    " bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from schema/manifest-1.json by src/manifest/embed_schema.cmake. Do not edit.\n"
  "#include \"manifest/manifest.hpp\"\n\n"
  "namespace escouade::manifest {\n\n"
  "namespace {\n"
  "constexpr unsigned char kText[] = {\n    ${bytes}0};\n"
  "}  // namespace\n\n"
  "std::string_view manifest_schema_text() noexcept {\n"
  "  return {reinterpret_cast<const char*>(kText), sizeof(kText) - 1};\n"
  "}\n\n"
  "}  // namespace escouade::manifest\n")
# Only a changed schema rebuilds what depends on it.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
