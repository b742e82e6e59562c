// Which GPUs a rank of a distributed CUDA run drives (docs/distributed.md): the ranks on one host
// share its GPUs, each taking its own `per_rank` of them in local-rank order. The choice goes into
// CUDA_VISIBLE_DEVICES before the process first calls CUDA, so that the rank's GPUs are its
// devices 0..per_rank-1 and the one-host run frame drives them unchanged.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "gpulb/errors.hpp"

namespace gpulb {

// The CUDA_VISIBLE_DEVICES value for the rank at `local_rank` among `ranks_here` ranks of its host.
// `visible`: the variable as the job set it (null or empty: every GPU, by index), whose entries
// (indices or UUIDs) are then shared out instead. ConfigError where the listed GPUs are too few
// for every rank of the host.
inline std::string rank_visible_devices(std::uint32_t local_rank, std::uint32_t ranks_here,
                                        std::uint32_t per_rank, const char* visible) {
  if (per_rank == 0) per_rank = 1;
  const std::uint64_t first = std::uint64_t{local_rank} * per_rank;
  std::vector<std::string> listed;
  if (visible != nullptr && *visible != '\0') {
    std::stringstream in(visible);
    for (std::string item; std::getline(in, item, ',');) listed.push_back(item);
    if (std::uint64_t{ranks_here} * per_rank > listed.size()) {
      throw ConfigError(std::to_string(ranks_here) + " ranks on this host with " +
                        std::to_string(per_rank) + " GPU(s) each need " +
                        std::to_string(std::uint64_t{ranks_here} * per_rank) +
                        " GPUs, and CUDA_VISIBLE_DEVICES lists " + std::to_string(listed.size()) +
                        " (" + visible + "); start fewer ranks a host or lower --gpus");
    }
  }
  std::string out;
  for (std::uint64_t g = first; g < first + per_rank; ++g) {
    if (!out.empty()) out += ',';
    out += listed.empty() ? std::to_string(g) : listed[g];
  }
  return out;
}

}  // namespace gpulb
