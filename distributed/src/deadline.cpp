#include "deadline.hpp"

#include <cstdio>
#include <cstdlib>

#include "patience.hpp"

namespace gpulb::distributed::detail {

Deadline::Deadline(std::string what, std::string why, std::chrono::milliseconds limit,
                   int exit_code) {
  std::string message = "gpulb: error: " + what + " did not finish within " +
                        std::to_string(limit.count()) + " ms: " + why + "\n";
  thread_ = std::thread(
      [this, message = std::move(message), limit, exit_code] { watch(message, limit, exit_code); });
}

void Deadline::watch(const std::string& message, std::chrono::milliseconds limit, int exit_code) {
  Patience patience(limit);
  std::unique_lock<std::mutex> lock(mutex_);
  // Short looks, so that a stop of this process itself does not count (Patience).
  while (!cv_.wait_for(lock, std::chrono::milliseconds(20), [this] { return done_; })) {
    if (!patience.run_out()) continue;
    // Another thread is inside MPI (FUNNELED: this one may not call MPI_Abort). _Exit: no
    // destructor may wait for the stuck call; mpirun sees the exit and ends the job.
    std::fputs(message.c_str(), stderr);
    std::fflush(stderr);
    std::_Exit(exit_code);
  }
}

Deadline::~Deadline() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace gpulb::distributed::detail
