#pragma once

// The --sdk output of escouade-codegen: one self-contained header for the C++ SDK
// (sdk/cpp/include/escouade/protocol.hpp) with the types a plugin needs, their JSON conversions
// and the traits of the methods it serves or calls. It needs only the standard library and
// Boost.JSON, and never throws, so a plugin may build with -fno-exceptions.

#include <string>

#include "schema_model.hpp"

namespace escouade::codegen {

// The definitions the SDK starts from; the ones they refer to come along.
inline const std::vector<std::string>& sdk_definitions() {
  static const std::vector<std::string> kRoots = {"Fact",
                                                  "Project",
                                                  "Ticket",
                                                  "Agent",
                                                  "DecideParams",
                                                  "PermissionRequest",
                                                  "Decision",
                                                  "InitializeParams",
                                                  "InitializeResult",
                                                  "SecretsGetParams",
                                                  "SettingsGetParams",
                                                  "FilesReadParams",
                                                  "LogParams",
                                                  "NetFetchParams",
                                                  "NetFetchResult",
                                                  "FsPath",
                                                  "FsReadResult",
                                                  "FsWriteParams",
                                                  "FsWriteResult",
                                                  "FsStatResult",
                                                  "FsListResult",
                                                  "FsCanonResult",
                                                  "ProcSpawnParams",
                                                  "ProcSpawnResult",
                                                  "ProcRef",
                                                  "ProcWriteParams",
                                                  "ProcOutParams",
                                                  "ProcExitParams"};
  return kRoots;
}

// The header's text. A method is in it when its params and result use only those definitions
// (and plain JSON types): of the methods of sandboxed plugins, net/fetch (Context::fetch), fs/*
// and proc/* (Context::read_file, spawn...); the others (net/stream, ws/*, timer/*) are not.
std::string sdk_header(const Generator& g);

}  // namespace escouade::codegen
