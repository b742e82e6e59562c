// `combining`: G-Charm's adaptive kernel combining (Rengasamy & Vadhiyar 2016, sections 3.1 and 3.2).
// Mechanism: gpulb/gcharm/ (the launch decision, the work group list, the device cache, the
// combined request), the loop in gpulb/gcharm/combining_loop.hpp.
#pragma once

#include "gpulb/policy.hpp"

namespace gpulb::policies {

// The options combining and hybrid share: how data reaches the device.
inline std::vector<OptionSpec> request_transfer_options() {
  return {
      choice_option("transfer",
                    "combining, hybrid: copy every request's items (redundant), only the items the "
                    "device cache lacks (reuse), "
                    "or that with each request's slots sorted (reuse-sorted)",
                    &PolicyOptions::transfer),
      number_option("cache_items", "combining, hybrid: data items the device cache holds (reuse)",
                    &PolicyOptions::cache_items, 1024, 1 << 28),
      number_option("in_flight",
                    "combining, hybrid: combined requests running at once (copies of one overlap "
                    "the kernel of another)",
                    &PolicyOptions::in_flight, 1, 8),
      number_option("assembly_threads",
                    "combining, hybrid: host threads that assemble a combined request of 131,072 "
                    "items or more (reuse modes); more than 1 "
                    "competes with the producers for the host's cores",
                    &PolicyOptions::assembly_threads, 1, 64)};
}

inline const PolicyDescriptor& combining() {
  static const PolicyDescriptor d = [] {
    PolicyDescriptor p{
        "combining",
        "Rengasamy & Vadhiyar 2016 (G-Charm), sections 3.1-3.2",
        "the host combines arriving work requests into launches of a block per request; "
        "adaptive launches when the resident blocks are filled or arrivals pause",
        {.host_fed = true, .runs_requests = true},
        {choice_option("strategy",
                       "combining: launch when the GPU is filled or arrivals pause (adaptive), "
                       "every static_k arrivals "
                       "(static), or each request alone (eager)",
                       &PolicyOptions::strategy),
         number_option("static_k", "combining static: arrivals per launch (the paper's K)",
                       &PolicyOptions::static_k, 1, 1 << 20),
         number_option("max_size",
                       "combining adaptive: requests in a full launch; 0 = the kernel's resident "
                       "blocks (occupancy API)",
                       &PolicyOptions::max_size, 0, 1 << 20)}};
    for (OptionSpec& o : request_transfer_options()) p.options.push_back(std::move(o));
    return p;
  }();
  return d;
}

}  // namespace gpulb::policies
