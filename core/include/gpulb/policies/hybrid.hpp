// `hybrid`: G-Charm's dynamic CPU+GPU scheduling (Rengasamy & Vadhiyar 2016, section 3.3).
// Mechanism: gpulb/gcharm/hybrid_split.hpp (the split), the loop in gpulb/gcharm/request_loop.hpp.
#pragma once

#include <cstdint>

#include "gpulb/policies/combining.hpp"
#include "gpulb/policy.hpp"

namespace gpulb::policies {

struct HybridOptions : RequestTransferOptions {
  RequestStrategy strategy = RequestStrategy::Adaptive;  // adaptive|static
  double cpu_share = 0.5;      // static: the CPU's fraction of each batch's data items
  std::uint32_t max_size = 0;  // requests a batch; 0 = CPU workers plus GPU resident blocks
};

inline const PolicyDescriptor& hybrid() {
  static const PolicyDescriptor d{
      "hybrid",
      "Rengasamy & Vadhiyar 2016 (G-Charm), section 3.3",
      "each batch of work requests is split between CPU threads and the GPU by the data items "
      "they read, at the "
      "ratio of the measured time per item on each (adaptive) or at a fixed share (static)",
      {.host_fed = true, .runs_requests = true},
      options_for<HybridOptions>(with_request_transfer_options<HybridOptions>(
          {choice_option(
               "strategy",
               "hybrid: split at the measured speed ratio (adaptive) or at cpu_share (static)",
               &HybridOptions::strategy, {RequestStrategy::Adaptive, RequestStrategy::Static}),
           decimal_option("cpu_share",
                          "hybrid static: the CPU's fraction of each batch's data items",
                          &HybridOptions::cpu_share, 0, 1),
           number_option("max_size",
                         "hybrid: requests in a full batch; 0 = the CPU side's workers plus the "
                         "GPU's resident blocks",
                         &HybridOptions::max_size, 0, 1 << 20)}))};
  return d;
}

}  // namespace gpulb::policies
