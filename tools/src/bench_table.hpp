// What the `gpulb bench` measurements share: a table (Markdown and JSON rows), number formatting,
// the median, progress lines on stderr.
#pragma once

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench.hpp"

namespace gpulb::tools {

struct Table {
  std::string title;
  std::string note;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  nlohmann::json json = nlohmann::json::array();
};

inline std::string fixed(double v, int digits = 2) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(digits);
  o << v;
  return o.str();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

inline void progress(const std::string& what) { std::cerr << "bench: " << what << "\n"; }

inline std::string markdown(const Table& t) {
  std::ostringstream o;
  o << "### " << t.title << "\n\n" << t.note << "\n\n|";
  for (const auto& h : t.header) o << " " << h << " |";
  o << "\n|";
  for (std::size_t i = 0; i < t.header.size(); ++i) o << "---|";
  o << "\n";
  for (const auto& r : t.rows) {
    o << "|";
    for (const auto& c : r) o << " " << c << " |";
    o << "\n";
  }
  return o.str() + "\n";
}

// bench_spawning.cpp: the spawning scenarios, every spawning policy, GPU next to the CPU backend.
std::vector<Table> bench_uts(const BenchArgs& a, bool cpu, bool gpu);
Table bench_nqueens(const BenchArgs& a, bool cpu, bool gpu);
// bench_gcharm.cpp: G-Charm's figures on nbody (combining strategies, transfer modes).
std::vector<Table> bench_combining(const BenchArgs& a, bool cpu, bool gpu);
std::vector<Table> bench_hybrid(const BenchArgs& a, bool cpu, bool gpu);
// bench_md.cpp: Chen et al. section 6.3, Figures 5, 8, 9, 10 and the warp efficiency.
std::vector<Table> bench_md(const BenchArgs& a, bool cpu, bool gpu, std::uint32_t gpus_present);
// bench_scale.cpp: each dynamic policy on 1, 2, 4, ... GPUs of this host.
Table bench_scale(const BenchArgs& a, std::uint32_t gpus_present);

}  // namespace gpulb::tools
