#include "deadline.hpp"

#include <cstdio>
#include <cstdlib>

namespace gpulb::distributed::detail {

Deadline::Deadline(std::string what, std::chrono::milliseconds limit) {
  thread_ = std::thread([this, what = std::move(what), limit] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
    // Another thread is inside MPI (FUNNELED: this one may not call MPI_Abort). _Exit: no
    // destructor may wait for the stuck call; mpirun sees the exit and ends the job.
    std::fprintf(stderr, "gpulb: error: %s did not finish within %lld ms: a rank has died or stopped answering\n", what.c_str(),
                 static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::_Exit(1);
  });
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
