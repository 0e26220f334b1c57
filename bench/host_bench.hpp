#pragma once

// What bench_host's two files share: the plugin folders it makes, the params of its calls, its
// percentiles, and the app's side (host_bench_app.cpp: escouade-host driven over its pipes).

#include <boost/json/value.hpp>
#include <filesystem>
#include <string>
#include <vector>

namespace host_bench {

// The run's scratch folder (plugins, data dirs), made by main and removed at the end.
extern std::filesystem::path g_root;

// A plugin folder under g_root: `program` copied as ./plugin, its mode in ./mode, a manifest
// that activates on agent.status and decides.
std::filesystem::path make_plugin(const std::string& id,
                                  const std::filesystem::path& program = ESCOUADE_FIXTURE_PLUGIN,
                                  const std::string& mode = "good");

// About 400 bytes on the wire, like a typical fact: the params of every timed test/echo.
boost::json::value payload();

// The sample at rank p * (n - 1) of the sorted samples.
double pct(std::vector<double> v, double p);

// One host/call at a time from an app through escouade-host: p50/p99, calls/s.
void bench_app(int iterations);

// `calls` host/call requests through escouade-host, `in_flight` of them outstanding: calls/s.
void bench_app_pipelined(int calls, int in_flight);

}  // namespace host_bench
