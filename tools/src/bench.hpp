// `gpulb bench`: measured tables (Markdown and JSON), each figure next to a reference measured in
// the same run.
#pragma once

#include <cstdint>
#include <string>

namespace gpulb::tools {

struct BenchArgs {
  // dispatch, queue, patterns, trace-overhead, uts, nqueens, combining, hybrid, all; md, scale (not in all)
  std::string what = "all";
  std::string backend;  // empty: both where present
  std::uint64_t tasks = 1'000'000;
  std::uint32_t repeats = 5;
  std::string output;  // .md; a .json is written beside it
  std::string
      tree;  // uts, scale: one sample tree (empty: uts T1 then T1L; scale T1L, T2L, T3L, T1XL)
  std::string uts_leaves = "task";  // uts: the scenario's `leaves` (task: a task per node; inline)
  std::uint32_t queens = 14;        // nqueens: board size
  std::uint32_t cutoff = 5;         // nqueens: rows placed by tasks
  // combining, hybrid: nbody/md2d particles (0: 200000 on a GPU, 20000 on the CPU)
  std::uint32_t particles = 0;
  std::string
      peer_uts;  // uts: the official UTS's run script (empty: $GPULB_PEER_UTS, else ../shared/peers/run-uts-peer.sh)
  std::string md_sizes;  // md: atoms for Figures 5 and 8, comma-separated (empty: by backend)
  std::uint32_t md_atoms = 524288;  // md: atoms for Figures 9 and 10 (the paper's 512K)
  std::string md_pairs = "cells";   // md: the scenario's pair search (cells, all)
  std::string command_line;
};

int cmd_bench(const BenchArgs& args);

}  // namespace gpulb::tools
