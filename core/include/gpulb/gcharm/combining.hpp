// When to launch a combined kernel: G-Charm's kernel combining (Rengasamy & Vadhiyar, section 3.1).
//
// Work requests arrive at the host's *work group list* at irregular times; a *combined request* is
// one kernel launch with one block per request. Launching every request at once keeps the GPU busy
// but with tiny kernels (poor occupancy, a launch each); waiting for many keeps it idle. The
// adaptive strategy balances both:
//   - maxSize: the blocks of the kernel that can be resident at once (the occupancy API);
//   - maxInterval: a running maximum of the gaps between arrivals;
//   - launch maxSize requests as soon as that many wait ("full"); otherwise launch what waits once
//     the last arrival is more than 2 x maxInterval ago ("timeout").
// The paper's baseline, static, combines K requests at a time (K = 100 there); eager
// launches every request alone (the naive baseline).
//
// Pure logic with the clock passed in: the policy drivers call it with the host clock, the tests
// with a scripted one.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gpulb::gcharm {

enum class CombineStrategy : std::uint8_t { Adaptive, Static, Eager };

// Why a combined request was launched (recorded on the host track with its size).
enum class LaunchReason : std::uint8_t {
  None,     // no launch now
  Full,     // adaptive: maxSize requests waited
  Timeout,  // adaptive: no arrival for 2 x maxInterval
  Static,   // static: K arrivals since the last launch
  Eager,    // eager: one request, launched alone
  Drain,    // arrivals have ended: what waits is launched (not in the paper, which never ends)
};

const char* to_string(LaunchReason reason);

struct LaunchDecision {
  std::uint64_t count = 0;  // requests to take from the front of the work group list
  LaunchReason reason = LaunchReason::None;
};

class CombiningController {
 public:
  // max_size: resident blocks of the kernel (>= 1); static_k: static's K (>= 1).
  CombiningController(CombineStrategy strategy, std::uint64_t max_size, std::uint64_t static_k)
      : strategy_(strategy),
        max_size_(std::max<std::uint64_t>(1, max_size)),
        static_k_(std::max<std::uint64_t>(1, static_k)) {}

  // A request arrived at `now_ns` (host clock; arrivals come in time order).
  void on_arrival(std::uint64_t now_ns) {
    if (arrivals_ > 0) max_interval_ns_ = std::max(max_interval_ns_, now_ns - last_arrival_ns_);
    last_arrival_ns_ = now_ns;
    ++arrivals_;
  }

  // The periodic check of the work group list, which holds `waiting` requests; `arrivals_ended`:
  // no request will arrive any more. The caller launches the decision's count at once and calls
  // again (a decision covers one launch; several may be due).
  LaunchDecision next_launch(std::uint64_t now_ns, std::uint64_t waiting, bool arrivals_ended) {
    if (waiting == 0) return {};
    switch (strategy_) {
      case CombineStrategy::Eager: return {1, LaunchReason::Eager};
      case CombineStrategy::Static:
        // K requests a launch, as soon as K wait (the requests are combined K at a time even
        // when more arrived while the previous launch ran).
        if (waiting >= static_k_) return {static_k_, LaunchReason::Static};
        break;
      case CombineStrategy::Adaptive:
        if (waiting >= max_size_) return {max_size_, LaunchReason::Full};
        // With fewer than two arrivals maxInterval is 0: any wait at all times out, as the rule
        // reads (the paper does not single this case out).
        if (now_ns > last_arrival_ns_ && now_ns - last_arrival_ns_ > 2 * max_interval_ns_) {
          return {waiting, LaunchReason::Timeout};
        }
        break;
    }
    if (arrivals_ended)
      return {strategy_ == CombineStrategy::Adaptive ? std::min(waiting, max_size_) : waiting,
              LaunchReason::Drain};
    return {};
  }

  std::uint64_t max_size() const { return max_size_; }
  std::uint64_t max_interval_ns() const { return max_interval_ns_; }
  std::uint64_t arrivals() const { return arrivals_; }

 private:
  CombineStrategy strategy_;
  std::uint64_t max_size_;
  std::uint64_t static_k_;
  std::uint64_t max_interval_ns_ = 0;
  std::uint64_t last_arrival_ns_ = 0;
  std::uint64_t arrivals_ = 0;
};

inline const char* to_string(LaunchReason reason) {
  switch (reason) {
    case LaunchReason::Full: return "full";
    case LaunchReason::Timeout: return "timeout";
    case LaunchReason::Static: return "static";
    case LaunchReason::Eager: return "eager";
    case LaunchReason::Drain: return "drain";
    default: return "none";
  }
}

}  // namespace gpulb::gcharm
