// What a task body sees on the GPU: one thread block as one worker. Same members as the CPU
// backend's gpulb::cpu::WorkerContext, so a body is written once.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"
#include "gpulb/tracing/segment.hpp"

namespace gpulb::kernels {

// %globaltimer: ns, 32 ns steps on an H100 (docs/architecture.md, Facts). Aligned to the host clock after the run.
__device__ inline std::uint64_t globaltimer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ inline std::uint32_t smid() {
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// Room for one value per warp (blocks of up to 1024 threads).
struct BlockScratch {
  std::uint64_t warp_sums[32];
};

// The block's trace event count while it runs (BlockContext::record): a __shared__ variable of a
// device function is one per block, at an address the compiler knows, so reaching it costs no
// register (a pointer to it in BlockScratch or in the segment cost the work-stealing and
// static-list kernels registers a thread and, at a budget of 64, 4 of their 32 resident blocks an
// SM: the occupancy API's count on an H100, 2026-11-23).
__device__ inline std::uint32_t& block_trace_count() {
  __shared__ std::uint32_t count;
  return count;
}

// The block's spawn buffer (gpulb/spawn.hpp, device side): `capacity` task slots in global memory
// that belong to this block, and a counter in the block's shared memory that the runtime zeroes
// before each task. Spawning policies set it; the others leave it empty (no slots, no counter).
struct DeviceSpawnRef {
  Task* slots = nullptr;
  std::uint32_t capacity = 0;
  std::uint32_t* count = nullptr;  // __shared__: children offered by the running task (may pass capacity)
};

class BlockContext {
 public:
  __device__ BlockContext(std::uint32_t rank, trace::TraceSegment segment, const std::uint32_t* stop, BlockScratch* scratch,
                          DeviceSpawnRef spawn = {})
      : rank_(rank), segment_(segment), stop_(stop), scratch_(scratch), spawn_(spawn) {
    if (segment_.enabled() && threadIdx.x == 0) block_trace_count() = *segment_.count;
  }
  // The count goes back to the segment's, which the host reads after the kernel, when the context
  // ends with the kernel's block. A copy that ends earlier writes the count so far: harmless. One
  // context is constructed a block: a second, constructed while the first lives, would start
  // from the count the first has not yet handed back and overwrite its events.
  __device__ ~BlockContext() {
    if (segment_.enabled() && threadIdx.x == 0) *segment_.count = block_trace_count();
  }
  BlockContext(const BlockContext&) = default;
  BlockContext& operator=(const BlockContext&) = default;

  __device__ std::uint32_t rank() const { return rank_; }
  __device__ std::uint32_t block_size() const { return blockDim.x; }
  // The block's threads run at once, a warp's in lockstep (the CPU's WorkerContext: false).
  static constexpr bool kThreadsRunTogether = true;

  // Each thread of the block runs fn(threadIdx.x).
  template <class F>
  __device__ void for_each_thread(F&& fn) const {
    fn(threadIdx.x);
  }

  // fn(i) once for each i in [0, n), the block's threads striding over it (thread t: t,
  // t + blockDim.x, ...). The CPU context runs the plain loop instead.
  template <class F>
  __device__ void for_each_index(int n, F&& fn) const {
    for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) fn(i);
  }

  // fn(thread) summed over the block; every thread gets the sum. Contains barriers: call it from
  // every thread of the block.
  template <class F>
  __device__ std::uint64_t sum_over_threads(F&& fn) const {
    std::uint64_t v = fn(threadIdx.x);
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = (blockDim.x + 31) / 32;
    if (lane == 0) scratch_->warp_sums[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
      std::uint64_t total = 0;
      for (unsigned w = 0; w < warps; ++w) total += scratch_->warp_sums[w];
      scratch_->warp_sums[0] = total;
    }
    __syncthreads();
    const std::uint64_t total = scratch_->warp_sums[0];
    __syncthreads();  // before anyone reuses the scratch
    return total;
  }

  // Thread 0 runs fn; the block waits for it.
  template <class F>
  __device__ void once(F&& fn) const {
    if (threadIdx.x == 0) fn();
    __syncthreads();
  }

  __device__ bool stop_requested() const {
    // The host sets this word (cudaMemcpyAsync on its own stream) when the watchdog fires.
    return *static_cast<const volatile std::uint32_t*>(stop_) != 0;
  }

  // Creates a child task (contract: gpulb/spawn.hpp). Any thread, any number of times, no barrier:
  // the threads that call it together (a coalesced group of one warp) reserve their slots with one
  // shared-memory atomic (warp-aggregated atomics, as in NVIDIA's "CUDA Pro Tip: Optimized
  // Filtering with Warp-Aggregated Atomics"), then each writes its own slot. The runtime reads the
  // slots after the body and a __syncthreads (which makes the block's global and shared writes
  // visible to thread 0), so relaxed is enough here. Children past `capacity` are counted, not
  // written, and fail the run naming spawn_capacity. Under a policy that runs no spawned tasks
  // (task-queue, hardware, chunked) there is no buffer and the child is dropped: the CUDA
  // executors of spawning scenarios refuse those policies before launching anything.
  __device__ void spawn(const Task& child) const {
    if (spawn_.count == nullptr) return;
    const cooperative_groups::coalesced_group g = cooperative_groups::coalesced_threads();
    std::uint32_t base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(spawn_.count, static_cast<std::uint32_t>(g.size()));
    const std::uint32_t slot = g.shfl(base, 0) + static_cast<std::uint32_t>(g.thread_rank());
    if (slot < spawn_.capacity) spawn_.slots[slot] = child;
  }

  // Thread 0 writes the block's events (the same as trace::TraceSegment::record), counting them
  // in shared memory; the destructor hands the count to the host. Counting in global memory put
  // a load of the count, just written by the previous event's store, in front of every event:
  // traced work stealing on UTS T1 ran 1.195x its untraced time on an H100 (`gpulb bench
  // trace-overhead`, 2026-11-23). Untraced, nothing is read, not even the clock.
  __device__ void record(trace::EventKind kind, std::uint32_t arg = 0, std::uint16_t aux = 0) const {
    if (threadIdx.x != 0 || !segment_.enabled()) return;
    std::uint32_t& count = block_trace_count();
    const std::uint32_t n = count;
    if (n < segment_.capacity) segment_.events[n] = trace::make_event(globaltimer(), kind, arg, aux);
    if (n != 0xFFFFFFFFu) count = n + 1;
  }

  // The TaskBegin/TaskEnd pairs of a batch of `k` tasks that ran together, one a thread
  // (work-stealing's task_per=lane), since `begin_ns` (thread 0's globaltimer() when the batch
  // started). Every thread of the block calls it, `has_task` for the batch's first k threads; it
  // contains a barrier. The tasks ran side by side on k lanes, but a track shows one task at a
  // time: they are laid end to end across the batch's span, thread i's in the i-th k-th of it,
  // and every edge but the batch's first and last is marked trace::kTimeInterpolated (its time
  // is placed, not read). Each thread writes its own pair; thread 0 alone moves the count, after
  // the barrier, and every other thread read it before (its last writer was thread 0 before an
  // earlier barrier of the caller's).
  __device__ void record_lane_tasks(bool has_task, std::uint32_t k, std::uint32_t id, std::uint16_t kind, std::uint64_t begin_ns) const {
    if (!segment_.enabled()) return;
    std::uint32_t& count = block_trace_count();
    const std::uint32_t n = count;
    if (threadIdx.x == 0) scratch_->warp_sums[0] = globaltimer();
    __syncthreads();
    const std::uint64_t end_ns = scratch_->warp_sums[0];
    if (threadIdx.x == 0) count = n > 0xFFFFFFFFu - 2 * k ? 0xFFFFFFFFu : n + 2 * k;
    if (!has_task) return;
    const std::uint32_t i = threadIdx.x;
    const std::uint64_t span = end_ns > begin_ns ? end_ns - begin_ns : 0;
    const std::uint32_t slot = n + 2 * i;
    if (slot + 1 < segment_.capacity && slot >= n) {
      trace::Event begin = trace::make_event(begin_ns + span * i / k, trace::EventKind::TaskBegin, id, kind);
      trace::Event end = trace::make_event(begin_ns + span * (i + 1) / k, trace::EventKind::TaskEnd, id, kind);
      if (i > 0) begin.flags = trace::kTimeInterpolated;
      if (i + 1 < k) end.flags = trace::kTimeInterpolated;
      segment_.events[slot] = begin;
      segment_.events[slot + 1] = end;
    }
  }

 private:
  std::uint32_t rank_;
  trace::TraceSegment segment_;
  const std::uint32_t* stop_;
  BlockScratch* scratch_;
  DeviceSpawnRef spawn_;
};

}  // namespace gpulb::kernels
