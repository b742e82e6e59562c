#include "gpulb/kernels/detail/gpu_run.cuh"

#include "gpulb/clock.hpp"
#include "gpulb/cuda/device_health.hpp"
#include "gpulb/gpu_request.hpp"

namespace gpulb::kernels::detail {

int present_gpus(const ExecPlan& plan) {
  int count = 0;
  GPULB_CUDA_TRY(cudaGetDeviceCount(&count));
  if (count == 0) throw ConfigError("no CUDA GPU is present; use --backend cpu");
  check_gpu_request(plan.gpus, static_cast<std::uint64_t>(count));
  return count;
}

GpuRun::GpuRun(const ExecPlan& plan, Across)
    : plan_(plan), progress_(plan.progress), present_(present_gpus(plan)) {
  gpus_ = plan.gpus ? plan.gpus : static_cast<std::uint32_t>(present_);
  plan_.gpus = gpus_;
  plan_.progress = nullptr;
}

GpuRun::GpuRun(const ExecPlan& plan, OnOne)
    : plan_(plan), progress_(plan.progress), present_(present_gpus(plan)) {}

void GpuRun::check_usable() const {
  for (std::uint32_t g = 0; g < gpus_; ++g) cuda::check_usable(static_cast<int>(g));
}

// One session a GPU, in GPU order, on one origin of the host clock.
void GpuRun::open_sessions() {
  errors_.assign(gpus_, nullptr);
  worker_tracks_.assign(gpus_, {0, 0});
  shares_.assign(gpus_, GpuShare{});
  const std::uint64_t origin = host_now_ns();
  origin_ns_ = origin;
  for (std::uint32_t g = 0; g < gpus_; ++g) {
    on_gpu(g, [&] {
      sessions_.push_back(std::make_unique<GpuSession>(static_cast<int>(g), g, origin));
    });
  }
}

void GpuRun::record_failure(std::uint32_t g, std::exception_ptr e) {
  if (g < errors_.size()) errors_[g] = e;
  int none = -1;
  first_failure_.compare_exchange_strong(none, static_cast<int>(g));
  abort_all_.store(true);
}

void GpuRun::rethrow_first_failure() const {
  const int g = first_failure_.load();
  if (g >= 0) std::rethrow_exception(errors_[static_cast<std::size_t>(g)]);
}

// GPU g's share of the output: its device, its workers, its block tracks and its control thread's.
void GpuRun::merge_gpu(std::uint32_t g, const GpuShare& share, TrackLayout layout,
                       ExecOutput& out) {
  GpuSession& s = *sessions_[g];
  shares_[g] = share;
  out.workers += share.workers;
  s.info().workers = share.workers;
  out.trace.devices.push_back(s.info());
  if (!plan_.trace) return;
  const std::size_t first = out.trace.tracks.size();
  if (layout == TrackLayout::PerBlock)
    s.drain_worker_tracks(out.trace.tracks);
  else
    s.drain_sm_lane_tracks(out.trace.tracks);
  worker_tracks_[g] = {first, out.trace.tracks.size()};
  out.trace.tracks.push_back(s.host_track("GPU " + std::to_string(s.device()) + " control thread"));
}

std::string tasks_per_gpu(const std::vector<GpuShare>& shares, std::uint64_t total) {
  std::string text;
  for (std::size_t g = 0; g < shares.size(); ++g) {
    const double share =
        total ? 100.0 * static_cast<double>(shares[g].tasks) / static_cast<double>(total) : 0.0;
    text += (g ? ", " : " ") + std::to_string(shares[g].tasks) + " (" +
            std::to_string(static_cast<int>(share + 0.5)) + "%)";
  }
  return text;
}

}  // namespace gpulb::kernels::detail
