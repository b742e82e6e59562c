// `gpulb bench`: measured tables (Markdown and JSON), each figure next to a reference measured in
// the same run.
#pragma once

#include <cstdint>
#include <string>

namespace gpulb::tools {

struct BenchArgs {
  std::string what = "all";  // dispatch, queue, patterns, trace-overhead, all
  std::string backend;       // empty: both where present
  std::uint64_t tasks = 1'000'000;
  std::uint32_t repeats = 5;
  std::string output;        // .md; a .json is written beside it
  std::string command_line;
};

int cmd_bench(const BenchArgs& args);

}  // namespace gpulb::tools
