// Per-GPU state of one run that does not depend on the task body: device properties, the host
// clock alignment, the device trace buffer and its drain into trace tracks, the stop flag.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/worker_kernels.cuh"
#include "gpulb/tracing/trace.hpp"

namespace gpulb::kernels::detail {

// How a GPU's blocks become trace tracks: a track per persistent block, or the one-block-per-task
// launches packed into lanes per SM.
enum class TrackLayout { PerBlock, SmLanes };

class GpuSession {
 public:
  GpuSession(int device, std::uint32_t slot, std::uint64_t origin_ns);

  int device() const { return device_; }
  std::uint32_t slot() const {
    return slot_;
  }  // position among the run's GPUs (trace device index)
  const trace::Device& info() const { return info_; }
  trace::Device& info() { return info_; }
  cudaStream_t kernel_stream() const { return kernel_stream_.get(); }
  cudaStream_t copy_stream() const { return copy_stream_.get(); }

  // Allocates `segments` trace segments of `capacity` events (none when capacity is 0).
  void allocate_trace(std::uint32_t segments, std::uint32_t capacity);
  DeviceTraceRef trace_ref() const;

  const std::uint32_t* stop_flag() const { return stop_.get(); }
  // Sets the device stop flag from the host while kernels run (the watchdog).
  void request_stop();

  // Device %globaltimer ns -> ns since the run's origin on the host clock.
  std::uint64_t to_origin(std::uint64_t globaltimer_ns) const;

  // Host events of this GPU's control thread (own track).
  void host_record(trace::EventKind kind, std::uint32_t arg = 0, std::uint16_t aux = 0);
  std::uint64_t now_ns() const;

  // Tracks of persistent blocks: one per segment, named "GPU g block b".
  void drain_worker_tracks(std::vector<trace::Track>& out);
  // Tracks of one-block-per-task launches: the blocks of each SM packed into lanes (a block
  // goes to the first lane of its SM that is free at its start), so the viewer shows
  // GPU -> SM -> lane, with SmLane tracks.
  void drain_sm_lane_tracks(std::vector<trace::Track>& out);
  trace::Track host_track(const std::string& name) const;

 private:
  std::vector<std::vector<trace::Event>> download_segments(std::vector<std::uint64_t>& dropped);

  int device_;
  std::uint32_t slot_;
  std::uint64_t origin_ns_;
  std::int64_t offset_ns_ = 0;  // host steady ns - globaltimer ns
  trace::Device info_;
  cuda::Stream kernel_stream_;
  cuda::Stream copy_stream_;
  cuda::DeviceBuffer<std::uint32_t> stop_;
  cuda::DeviceBuffer<trace::Event> events_;
  cuda::DeviceBuffer<std::uint32_t> counts_;
  std::uint32_t segments_ = 0;
  std::uint32_t capacity_ = 0;
  std::vector<trace::Event> host_events_;
};

// The persistent grid: never more blocks than can be resident (a persistent kernel with more
// deadlocks). Returns the blocks to launch and, when the request was clamped, a note saying so.
struct GridSize {
  std::uint32_t blocks;
  std::string note;
};
// `dynamic_smem`: the bytes of dynamic shared memory each block is launched with.
GridSize persistent_grid(const void* kernel, int device, std::uint32_t block_size,
                         std::uint32_t requested, std::size_t dynamic_smem = 0);

}  // namespace gpulb::kernels::detail
