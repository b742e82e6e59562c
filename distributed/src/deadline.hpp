// A watchdog for waits that cannot be interrupted: MPI's start and end (MPI_Init_thread,
// MPI_Finalize) wait for every rank inside the library, and a rank that died, stopped or never
// started MPI leaves them waiting forever. A Deadline ends the process (naming what it waited for)
// when the wait outlives its limit; mpirun then ends the other ranks. The limit counts only the
// time this process ran (patience.hpp). Waits gpulb controls itself poll with a Patience instead,
// which names the rank that did not answer.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace gpulb::distributed::detail {

class Deadline {
 public:
  // The message: "<what> did not finish within <limit>: <why>", e.g. what "rank 0 of 4: ending MPI
  // (which waits for every rank)", why what that wait means and which ranks it may be.
  Deadline(std::string what, std::string why, std::chrono::milliseconds limit, int exit_code = 1);
  ~Deadline();  // the wait is over: disarm
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

 private:
  void watch(const std::string& message, std::chrono::milliseconds limit, int exit_code);

  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace gpulb::distributed::detail
