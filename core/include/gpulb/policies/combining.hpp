// `combining`: G-Charm's adaptive kernel combining (Rengasamy & Vadhiyar 2016, sections 3.1 and 3.2).
// Mechanism: gpulb/gcharm/ (the launch decision, the work group list, the device cache, the
// combined request), the loop in gpulb/gcharm/combining_loop.hpp.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "gpulb/policy.hpp"

namespace gpulb::policies {

// The options combining and hybrid share: how data reaches the device. Their options structs
// derive from it, so that the request loop and the device that both run read it alike.
struct RequestTransferOptions {
  RequestTransfer transfer = RequestTransfer::Reuse;  // reuse: fastest on an H100
  std::uint32_t cache_items = 1u << 21;               // data items the device cache holds
  std::uint32_t in_flight = 2;                        // combined requests running at once
  std::uint32_t assembly_threads = 1;  // threads that assemble a large combined request
};

struct CombiningOptions : RequestTransferOptions {
  RequestStrategy strategy = RequestStrategy::Adaptive;  // adaptive|static|eager
  std::uint32_t static_k = 100;                          // static: arrivals per launch (K)
  std::uint32_t max_size = 0;  // adaptive: requests a launch; 0 = resident blocks
};

// `options` (a policy's own, T deriving from RequestTransferOptions), then the shared ones.
template <class T>
std::vector<Option<T>> with_request_transfer_options(std::vector<Option<T>> options) {
  std::vector<Option<RequestTransferOptions>> shared = {
      choice_option("transfer",
                    "combining, hybrid: copy every request's items (redundant), only the items the "
                    "device cache lacks (reuse), "
                    "or that with each request's slots sorted (reuse-sorted)",
                    &RequestTransferOptions::transfer),
      number_option("cache_items", "combining, hybrid: data items the device cache holds (reuse)",
                    &RequestTransferOptions::cache_items, 1024, 1 << 28),
      number_option("in_flight",
                    "combining, hybrid: combined requests running at once (copies of one overlap "
                    "the kernel of another)",
                    &RequestTransferOptions::in_flight, 1, 8),
      number_option("assembly_threads",
                    "combining, hybrid: host threads that assemble a combined request of 131,072 "
                    "items or more (reuse modes); more than 1 "
                    "competes with the producers for the host's cores",
                    &RequestTransferOptions::assembly_threads, 1, 64)};
  for (Option<RequestTransferOptions>& o : shared) options.emplace_back(std::move(o));
  return options;
}

inline const PolicyDescriptor& combining() {
  static const PolicyDescriptor d{
      "combining",
      "Rengasamy & Vadhiyar 2016 (G-Charm), sections 3.1-3.2",
      "the host combines arriving work requests into launches of a block per request; "
      "adaptive launches when the resident blocks are filled or arrivals pause",
      {.host_fed = true, .runs_requests = true},
      options_for<CombiningOptions>(with_request_transfer_options<CombiningOptions>(
          {choice_option("strategy",
                         "combining: launch when the GPU is filled or arrivals pause (adaptive), "
                         "every static_k arrivals "
                         "(static), or each request alone (eager)",
                         &CombiningOptions::strategy),
           number_option("static_k", "combining static: arrivals per launch (the paper's K)",
                         &CombiningOptions::static_k, 1, 1 << 20),
           number_option("max_size",
                         "combining adaptive: requests in a full launch; 0 = the kernel's resident "
                         "blocks (occupancy API)",
                         &CombiningOptions::max_size, 0, 1 << 20)}))};
  return d;
}

}  // namespace gpulb::policies
