#include <algorithm>
#include <map>
#include <string>

#include "gpulb/clock.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/kernels/detail/gpu_session.hpp"
#include "gpulb/kernels/lane_trace_records.hpp"

namespace gpulb::kernels {

__global__ void read_globaltimer_kernel(std::uint64_t* out) { *out = globaltimer(); }

namespace detail {

GpuSession::GpuSession(int device, std::uint32_t slot, std::uint64_t origin_ns)
    : device_(device),
      slot_(slot),
      origin_ns_(origin_ns),
      kernel_stream_(),
      copy_stream_(),
      stop_(1) {
  cudaDeviceProp prop{};
  GPULB_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  info_.kind = trace::DeviceKind::Gpu;
  info_.index = static_cast<std::uint32_t>(device);
  info_.name = prop.name;
  info_.sm_count = static_cast<std::uint32_t>(prop.multiProcessorCount);

  // Clock alignment: read %globaltimer in a tiny kernel bracketed by the host clock, keep the
  // tightest of several tries; the error is at most half that bracket (a few microseconds).
  cuda::MappedBuffer<std::uint64_t> gt(1);
  std::uint64_t best_bracket = ~std::uint64_t{0};
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t before = host_now_ns();
    read_globaltimer_kernel<<<1, 1, 0, kernel_stream_.get()>>>(gt.device());
    GPULB_CUDA_CHECK_LAUNCH();
    GPULB_CUDA_TRY(cudaStreamSynchronize(kernel_stream_.get()));
    const std::uint64_t after = host_now_ns();
    if (after - before < best_bracket) {
      best_bracket = after - before;
      offset_ns_ = static_cast<std::int64_t>(before + (after - before) / 2) -
                   static_cast<std::int64_t>(*gt.host());
    }
  }
}

void GpuSession::allocate_trace(std::uint32_t segments, std::uint32_t capacity) {
  segments_ = segments;
  capacity_ = capacity;
  if (capacity == 0) return;
  // A clear message naming the numbers before cudaMalloc fails with a bare out-of-memory error.
  const std::uint64_t bytes = std::uint64_t{segments} * capacity * sizeof(trace::Event);
  std::size_t free_bytes = 0, total = 0;
  GPULB_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  if (bytes > free_bytes) {
    throw RunError("GPU " + std::to_string(device_) + ": " + std::to_string(segments) +
                   " trace segments of " + std::to_string(capacity) + " events need " +
                   std::to_string(bytes >> 20) + " MiB of device memory; " +
                   std::to_string(free_bytes >> 20) +
                   " MiB are free; lower --param trace_capacity or --trace-memory");
  }
  events_ = cuda::DeviceBuffer<trace::Event>(static_cast<std::size_t>(segments) * capacity);
  counts_ = cuda::DeviceBuffer<std::uint32_t>(segments);
}

DeviceTraceRef GpuSession::trace_ref() const { return {events_.get(), capacity_, counts_.get()}; }

void GpuSession::request_stop() {
  static const std::uint32_t one = 1;
  // A pageable source is fine here: this copy is rare and the call returns once it is staged.
  GPULB_CUDA_TRY(
      cudaMemcpyAsync(stop_.get(), &one, sizeof one, cudaMemcpyHostToDevice, copy_stream_.get()));
  GPULB_CUDA_TRY(cudaStreamSynchronize(copy_stream_.get()));
}

std::uint64_t GpuSession::to_origin(std::uint64_t gt) const {
  const std::int64_t host =
      static_cast<std::int64_t>(gt) + offset_ns_ - static_cast<std::int64_t>(origin_ns_);
  return host < 0 ? 0 : static_cast<std::uint64_t>(host);
}

std::uint64_t GpuSession::now_ns() const { return host_now_ns() - origin_ns_; }

void GpuSession::host_record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) {
  host_events_.push_back(trace::make_event(now_ns(), kind, arg, aux));
}

trace::Track GpuSession::host_track(const std::string& name) const {
  trace::Track t;
  t.role = trace::TrackRole::Host;
  t.device = slot_;
  t.worker = 0;
  t.name = name;
  t.events = host_events_;
  return t;
}

std::vector<std::vector<trace::Event>> GpuSession::download_segments(
    std::vector<std::uint64_t>& dropped) {
  std::vector<std::vector<trace::Event>> out(segments_);
  dropped.assign(segments_, 0);
  if (capacity_ == 0) return out;
  std::vector<std::uint32_t> counts(segments_);
  counts_.download(counts.data(), counts.size());
  std::vector<trace::Event> all(static_cast<std::size_t>(segments_) * capacity_);
  events_.download(all.data(), all.size());
  for (std::uint32_t s = 0; s < segments_; ++s) {
    const std::uint32_t kept = std::min(counts[s], capacity_);
    dropped[s] = counts[s] - kept;
    // Compact lane records (lane_trace_records.hpp) become their task pairs here; every other
    // event is copied. Either way each time moves to the run's origin.
    const trace::Event* first = all.data() + static_cast<std::size_t>(s) * capacity_;
    out[s].reserve(kept);
    expand_lane_records(
        first, kept, [this](std::uint64_t t) { return to_origin(t); }, out[s]);
  }
  return out;
}

void GpuSession::drain_worker_tracks(std::vector<trace::Track>& out) {
  std::vector<std::uint64_t> dropped;
  auto segments = download_segments(dropped);
  for (std::uint32_t b = 0; b < segments.size(); ++b) {
    trace::Track t;
    t.role = trace::TrackRole::Worker;
    t.device = slot_;
    t.worker = b;
    t.dropped = dropped[b];
    t.name = "GPU " + std::to_string(device_) + " block " + std::to_string(b);
    for (const trace::Event& e : segments[b]) {
      if (e.kind == trace::EventKind::WorkerStart && e.aux != trace::kUnknownSm) t.sm = e.aux;
    }
    t.events = std::move(segments[b]);
    out.push_back(std::move(t));
  }
}

void GpuSession::drain_sm_lane_tracks(std::vector<trace::Track>& out) {
  std::vector<std::uint64_t> dropped;
  auto segments = download_segments(dropped);
  struct Block {
    std::uint64_t start, end;
    std::uint32_t segment;
  };
  std::map<std::uint32_t, std::vector<Block>> by_sm;
  std::uint64_t lost = 0;
  for (std::uint32_t s = 0; s < segments.size(); ++s) {
    lost += dropped[s];
    const auto& ev = segments[s];
    if (ev.empty() || ev.front().kind != trace::EventKind::WorkerStart)
      continue;  // never ran (stopped)
    by_sm[ev.front().aux].push_back({ev.front().time_ns, ev.back().time_ns, s});
  }
  for (auto& [sm, blocks] : by_sm) {
    std::sort(blocks.begin(), blocks.end(),
              [](const Block& a, const Block& b) { return a.start < b.start; });
    std::vector<trace::Track> lanes;
    std::vector<std::uint64_t> lane_free;  // end of the last block in each lane
    for (const Block& b : blocks) {
      std::size_t lane = 0;
      while (lane < lanes.size() && lane_free[lane] > b.start) ++lane;
      if (lane == lanes.size()) {
        trace::Track t;
        t.role = trace::TrackRole::SmLane;
        t.device = slot_;
        t.sm = sm;
        t.worker = static_cast<std::uint32_t>(lane);
        t.name = "GPU " + std::to_string(device_) + " SM " + std::to_string(sm) + " lane " +
                 std::to_string(lane);
        lanes.push_back(std::move(t));
        lane_free.push_back(0);
      }
      lane_free[lane] = b.end;
      auto& dst = lanes[lane].events;
      dst.insert(dst.end(), segments[b.segment].begin(), segments[b.segment].end());
    }
    for (auto& t : lanes) out.push_back(std::move(t));
  }
  if (lost > 0 && !out.empty()) out.front().dropped += lost;
}

GridSize persistent_grid(const void* kernel, int device, std::uint32_t block_size,
                         std::uint32_t requested, std::size_t dynamic_smem) {
  int per_sm = 0;
  GPULB_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, kernel, static_cast<int>(block_size), dynamic_smem));
  cudaDeviceProp prop{};
  GPULB_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  const std::uint32_t most =
      static_cast<std::uint32_t>(per_sm) * static_cast<std::uint32_t>(prop.multiProcessorCount);
  if (most == 0)
    throw RunError("the persistent kernel cannot run with blocks of " + std::to_string(block_size) +
                   " threads on GPU " + std::to_string(device));
  if (requested == 0) return {most, ""};
  if (requested <= most) return {requested, ""};
  return {most, "asked for " + std::to_string(requested) + " persistent blocks on GPU " +
                    std::to_string(device) + "; it holds at most " + std::to_string(most) +
                    " resident (" + std::to_string(per_sm) + " per SM x " +
                    std::to_string(prop.multiProcessorCount) +
                    " SMs): clamped, since more would deadlock"};
}

}  // namespace detail
}  // namespace gpulb::kernels
