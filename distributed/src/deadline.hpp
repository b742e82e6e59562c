// A watchdog for waits that cannot be interrupted: a collective (the gather at the end) waits for
// every rank, and a rank that died or stopped leaves it waiting forever. A Deadline ends the
// process (exit 1, naming what it waited for) when the wait outlives its limit; mpirun then ends
// the other ranks. Waits the balancer controls itself time out in its loop instead.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace gpulb::distributed::detail {

class Deadline {
 public:
  Deadline(std::string what, std::chrono::milliseconds limit);
  ~Deadline();  // the wait is over: disarm
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace gpulb::distributed::detail
