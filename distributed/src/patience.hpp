// How long this rank has waited for another, counting only the time this process ran. A rank
// that was itself stopped (SIGSTOP, a suspended VM) finds on its return that the wall clock moved
// on by the length of its stop; counted, that time would blame a rank that answered at once. Waits
// poll every few ms, so a gap between two looks far longer than that means this process did not
// run: such a gap counts as one look.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>

namespace gpulb::distributed::detail {

class Patience {
 public:
  using Clock = std::chrono::steady_clock;
  // Longer than any poll interval or scheduling delay of a running process (an oversubscribed
  // 2-core machine delays a ready thread by tens of ms), far shorter than any rank timeout.
  static constexpr std::chrono::milliseconds kLongestLook{250};

  explicit Patience(std::chrono::milliseconds limit) : limit_(limit), last_(Clock::now()) {}

  // Call between looks: true once the waits since the start (or restart) add up to the limit.
  bool run_out() {
    const Clock::time_point now = Clock::now();
    waited_ += std::min<Clock::duration>(now - last_, kLongestLook);
    last_ = now;
    return waited_ >= limit_;
  }
  void restart() {
    waited_ = Clock::duration::zero();
    last_ = Clock::now();
  }
  std::chrono::milliseconds limit() const { return limit_; }
  std::string limit_text() const { return std::to_string(limit_.count()) + " ms"; }

 private:
  std::chrono::milliseconds limit_;
  Clock::time_point last_;
  Clock::duration waited_{};
};

}  // namespace gpulb::distributed::detail
