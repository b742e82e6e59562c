// Work stealing with a task per thread (task_per=lane, work_stealing_lanes.cuh) across the GPUs of
// one host: the lane worker with RemoteGpus (work_stealing_multi_gpu.cuh) for what reaches beyond
// its GPU, as the block worker has across GPUs. The host's side is the block worker's frame
// (detail/multi_gpu_ws_run.cuh) with this kernel (LaneTasks there).
//
// Under remote=request only: an idle block asks a block of another GPU, whose owner answers
// between two batches with up to remote_chunk tasks from its deque's top, and those tasks are the
// asking block's next batch. remote=steal (another GPU's thieves CASing this GPU's deques at
// system scope) is refused: the lane worker's batch pops agree on one chunk with its local
// thieves (work_stealing_deque.hpp, "Chunked steals"), and its deques stay device scope.
#pragma once

#include <cstdint>

#include "gpulb/kernels/work_stealing_lanes.cuh"
#include "gpulb/kernels/work_stealing_multi_gpu.cuh"

namespace gpulb::kernels {

// Capped at the one-GPU lane kernel's 72 registers (ptxas -v, sm_90, UTS): uncapped it took 74,
// which at 128 threads a block leaves 6 resident blocks an SM instead of 7. Capped, ptxas spills
// 8 bytes (stores; 4 loads).
template <class Body>
__global__ void __maxnreg__(72)
    work_stealing_multi_lane_kernel(MgWsKernelArgs<Scope::Device> w, DynamicArgs a, Body body,
                                    std::uint32_t chunk, std::uint32_t id_grab) {
  __shared__ LaneMailbox box;
  __shared__ PendingCredit credit;
  __shared__ std::uint32_t local_misses, idle_passes;
  extern __shared__ __align__(16) unsigned char lane_memory[];
  const BlockContext ctx(blockIdx.x, a.trace.segment(blockIdx.x), a.stop, &box.scratch);
  using Remote = RemoteGpus<Scope::Device>;
  LaneBlockWorker<Body, BasicWorkStealingRef<Scope::Device, Scope::System>, Remote>(
      w.ws, w.staging, VictimPicker::make(w.victim, blockIdx.x ^ (w.peers.self << 20)), a, body,
      ctx, box, credit, lane_memory, chunk, id_grab, Remote(w, local_misses, idle_passes))
      .run();
}

namespace detail {

// The frame's Tasks (detail/multi_gpu_ws_run.cuh, BlockTasks) for task_per=lane: this kernel, its
// dynamic shared memory, a steal chunk and id grab as on one GPU, and an answer from another GPU
// of at most a block's worth of tasks (it lands in the batch array).
struct LaneTasks {
  // Per task: its begin and end; per batch: a deque level on pop and push, a spawn, a steal.
  static constexpr std::uint32_t kEventsPerTask = 4;
  template <class Body, Scope S>
  static GridSize grid(int device, const ExecPlan& p) {
    static_assert(S == Scope::Device, "task_per=lane across GPUs runs under remote=request");
    check_lane_plan(p);
    return lane_grid(reinterpret_cast<const void*>(&work_stealing_multi_lane_kernel<Body>), device,
                     p);
  }
  template <class Body>
  static void check(const Body& body) {
    check_lane_body(body);
  }
  static std::uint32_t most_remote_chunk(const ExecPlan& p) { return p.block_size; }
  template <class Body, Scope S>
  static void launch(std::uint32_t blocks, const ExecPlan& p, cudaStream_t stream,
                     const MgWsKernelArgs<S>& k, const DynamicArgs& a, const Body& body) {
    work_stealing_multi_lane_kernel<Body>
        <<<blocks, p.block_size, lane_shared_bytes(p.block_size), stream>>>(
            k, a, body, lane_steal_chunk(p), lane_id_grab(p));
  }
};

}  // namespace detail
}  // namespace gpulb::kernels
