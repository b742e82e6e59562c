// What a task body sees on the GPU: one thread block as one worker. Same members as the CPU
// backend's gpulb::cpu::WorkerContext, so a body is written once.
#pragma once

#include <cooperative_groups.h>

#include <cstddef>
#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/kernels/lane_trace_records.hpp"
#include "gpulb/task.hpp"
#include "gpulb/tracing/segment.hpp"

namespace gpulb::kernels {

// %globaltimer: ns, 32 ns steps on an H100 (docs/architecture.md, Facts). Aligned to the host clock after the run.
__device__ inline std::uint64_t globaltimer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One event into a block's trace segment as a single 16-byte store. Written as the struct, it
// took four stores (PTX: st.u64, st.u32, st.u16, st.v2.u8) and their address arithmetic, on
// thread 0's path while the block waits at its barrier. Every slot is 16-byte aligned: the
// segments are one cudaMalloc allocation of 16-byte events (GpuSession::allocate_trace). No
// "memory" clobber: nothing in a kernel reads a slot back, and one would make the compiler reload
// the block's event count from shared memory after every event.
static_assert(offsetof(trace::Event, arg) == 8 && offsetof(trace::Event, aux) == 12 &&
              offsetof(trace::Event, kind) == 14 && offsetof(trace::Event, flags) == 15 &&
              sizeof(trace::Event) == 16);
__device__ inline void store_event(trace::Event* slot, const trace::Event& e) {
  const unsigned tail =
      e.aux | (static_cast<unsigned>(e.kind) << 16) | (static_cast<unsigned>(e.flags) << 24);
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(slot),
               "r"(static_cast<unsigned>(e.time_ns)), "r"(static_cast<unsigned>(e.time_ns >> 32)),
               "r"(e.arg), "r"(tail));
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
  // __shared__: children offered by the running task (may pass capacity)
  std::uint32_t* count = nullptr;
};

class BlockContext {
 public:
  __device__ BlockContext(std::uint32_t rank, trace::TraceSegment segment,
                          const std::uint32_t* stop, BlockScratch* scratch,
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
  // Thread 0: the block's count of trace slots so far (0 untraced).
  __device__ std::uint32_t trace_count() const {
    return segment_.enabled() ? block_trace_count() : 0;
  }

  // The hot path is a load of the count, one compare, the clock, the store and the new count: a
  // full segment (the count at or past the capacity, which holds below 2^32) takes the cold
  // branch, which keeps the tally of the dropped events and saturates it.
  __device__ void record(trace::EventKind kind, std::uint32_t arg = 0,
                         std::uint16_t aux = 0) const {
    if (threadIdx.x != 0 || !segment_.enabled()) return;
    std::uint32_t& count = block_trace_count();
    const std::uint32_t n = count;
    if (n < segment_.capacity) {
      store_event(segment_.events + n, trace::make_event(globaltimer(), kind, arg, aux));
      count = n + 1;
    } else if (n != 0xFFFFFFFFu) {
      count = n + 1;
    }
  }

  // Two events that happen a few instructions apart on thread 0 (a deque pop and the TaskBegin of
  // the task it took; a spawn and the deque's level after the push), at one clock read, one test
  // for room and one count. On UTS T1 the trace's cost is thread 0's instructions while the block
  // waits: ncu counted 59 more warp instructions a task traced, 45 with this and record's hot path
  // (H200, docs/benchmarks.md, "Fewer instructions an event"). A segment with room for the first
  // alone keeps it, as two record() calls would.
  __device__ void record_two(const trace::EventPayload& first,
                             const trace::EventPayload& second) const {
    if (threadIdx.x != 0 || !segment_.enabled()) return;
    std::uint32_t& count = block_trace_count();
    const std::uint32_t n = count;
    if (n < segment_.capacity - 1) {  // capacity >= 1 where tracing is on
      const std::uint64_t now = globaltimer();
      store_event(segment_.events + n, trace::make_event(now, first.kind, first.arg, first.aux));
      store_event(segment_.events + n + 1,
                  trace::make_event(now, second.kind, second.arg, second.aux));
      count = n + 2;
    } else {
      if (n < segment_.capacity)
        store_event(segment_.events + n,
                    trace::make_event(globaltimer(), first.kind, first.arg, first.aux));
      count = n < 0xFFFFFFFEu ? n + 2 : 0xFFFFFFFFu;
    }
  }

  // The event by which thread 0 found a task (record_two's first) and the task's TaskBegin, just
  // before the barrier that starts the task (dynamic_block_loop).
  __device__ void record_found_task(const trace::EventPayload& found, const Task& task) const {
    record_two(found, {trace::EventKind::TaskBegin, task.id, task.kind});
  }
  __device__ void record_task_begin(const Task& task) const {
    record(trace::EventKind::TaskBegin, task.id, task.kind);
  }

  // A batch of `k` tasks that ran together, one a thread (work-stealing's task_per=lane), in the
  // compact form of lane_trace_records.hpp, which the host expands into the TaskBegin/TaskEnd
  // pairs the readers know, laid end to end across the batch's span. Two calls, no barrier of
  // their own:
  //  - record_lane_task: every thread of the block, before the caller's barrier that ends the
  //    batch; thread i < k writes its task's id and kind. It reads `base`, its task and `k` there,
  //    before thread 0 can pass that barrier and take the next batch (which writes over them).
  //  - end_lane_batch: thread 0 alone, after that barrier: the header (the batch's end time read
  //    now, every task being done) and the count moved past the batch.
  //  A `range` batch (its tasks' ids consecutive from `first_id`, one `kind`; every thread knows
  //  whether it is one before record_lane_task) has no record a task: record_lane_task is not
  //  called, and end_lane_batch writes the two slots of a range.
  // `base` is the block's count (trace_count()) that thread 0 shared when the batch started,
  // having recorded nothing since. A batch that does not fit is dropped whole (a header of k = 0
  // marks where the segment's data ends) and the count moves by its 2k events rather than its
  // slots: past the capacity the count is only the tally of what was dropped, so the run reports
  // events as every other worker does (short, at most, by the slots left free before the end).
  __device__ bool lane_slots_fit(std::uint32_t base, std::uint32_t slots) const {
    return base <= segment_.capacity && slots <= segment_.capacity - base;
  }
  __device__ void record_lane_task(std::uint32_t base, std::uint32_t k, std::uint32_t id,
                                   std::uint16_t kind) const {
    if (!segment_.enabled() || threadIdx.x >= k || !lane_slots_fit(base, lane_batch_slots(k)))
      return;
    reinterpret_cast<LaneTaskRecord*>(segment_.events + base + 1)[threadIdx.x] =
        LaneTaskRecord{id, kind, 0};
  }
  __device__ void end_lane_batch(std::uint32_t base, std::uint32_t k, std::uint64_t begin_ns,
                                 bool range = false, std::uint32_t first_id = 0,
                                 std::uint16_t kind = 0) const {
    if (!segment_.enabled() || threadIdx.x != 0) return;
    const std::uint32_t slots = range ? kLaneRangeSlots : lane_batch_slots(k);
    const bool fits = lane_slots_fit(base, slots);
    if (fits) {
      store_event(segment_.events + base,
                  lane_batch_header(begin_ns, globaltimer(), k, range ? kLaneRange : kLaneBatch));
      if (range) store_event(segment_.events + base + 1, lane_range_ids(first_id, kind));
    } else if (base < segment_.capacity) {
      store_event(segment_.events + base, lane_batch_header(0, 0, 0));
    }
    const std::uint32_t step = fits ? slots : 2 * k;  // 2k >= the slots: still past the end
    block_trace_count() = base > 0xFFFFFFFFu - step ? 0xFFFFFFFFu : base + step;
  }

 private:
  std::uint32_t rank_;
  trace::TraceSegment segment_;
  const std::uint32_t* stop_;
  BlockScratch* scratch_;
  DeviceSpawnRef spawn_;
};

}  // namespace gpulb::kernels
