// The static-list policy on the GPU: Cederman & Tsigas's static task list as Mohan & Gopalan give
// it (gpulb/static_task_list.hpp, the same source as the CPU backend). A generation's tasks are in
// the input array; the kernel runs them, its blocks append their children to the output array
// with one fetch-and-add per task (block-aggregated); the host swaps the arrays (NEWTASKCNT) and
// launches again until a generation creates nothing.
//
// DEPARTURE: a launch has min(tasks, resident blocks) blocks, each taking the generation's tasks
// by fetch-and-add on a cursor, instead of one block per task. Block ranks then stay below the
// worker count (the scenarios' per-rank counters) and each block is one trace track over all
// generations; the cursor is the hardware block scheduler's stand-in, as on the CPU backend.
// Ordering: the children written in one launch are read in the next, after the launch boundary
// (kernel end, stream order), so the slots need no atomics and the fetch-and-adds are relaxed.
//
// Trace: per generation a host KernelLaunch/KernelEnd (arg: tasks), and per block WorkerStart /
// WorkerEnd around each launch it ran in; TaskBegin/TaskEnd, SpawnBatch (Spawn across GPUs). Metrics: generations,
// peak_task_slots (the largest generation: each of the two arrays needs that many slots).
#pragma once

#include "gpulb/kernels/detail/dynamic_worker.cuh"
#include "gpulb/static_task_list.hpp"

namespace gpulb::kernels {

// The generation's next task (one 128-byte line of its own).
struct alignas(kHotLine) GenerationCursor {
  std::uint32_t next;
};

// kInterleaved: a run across GPUs (detail/multi_gpu_sl_run.cuh), whose spawned ids interleave with
// the other GPUs' (DynamicArgs::take_children_interleaved); the one-GPU run keeps take_children.
template <class Body, bool kInterleaved = false>
__global__ void static_list_kernel(StaticTaskListRef list, GenerationCursor* cursor, DynamicArgs a, Body body) {
  using trace::EventKind;
  __shared__ DynamicMailbox box;
  const std::uint32_t rank = blockIdx.x;
  const BlockContext ctx = a.context(rank, box);
  ctx.record(EventKind::WorkerStart, rank, static_cast<std::uint16_t>(smid()));
  DynamicBlockStats st{};
  if (threadIdx.x == 0) st = a.stats[rank];  // counts carry over from the earlier generations

  auto find = [&](Task& task) -> WorkerAction {
    if (a.should_stop()) return WorkerAction::Stop;
    // DEQUEUE(q, id): relaxed, it only hands out distinct indices.
    const std::uint32_t i = device_atomic_ref<std::uint32_t>(cursor->next).fetch_add(1, mo::relaxed);
    if (i >= list.in_count) return WorkerAction::Done;
    task = list.dequeue(i);
    ctx.record_task_begin(task);
    return WorkerAction::Run;
  };

  auto publish = [&](const Task& task, std::uint32_t count) -> bool {
    a.task_finished(rank, ++st.tasks);
    if constexpr (kInterleaved) {
      if (!a.take_children_interleaved(task, rank, count)) return false;
    } else {
      if (!a.take_children(task, rank, count)) return false;
    }
    if (count == 0) return true;
    st.spawned += count;
    // take_children's ids are consecutive; take_children_interleaved's are a.id_stride apart.
    const trace::EventPayload spawn = trace::spawn_event(a.slots(rank)[0].id, count, a.id_stride == 1);
    ctx.record(spawn.kind, spawn.arg, spawn.aux);
    if (!list.enqueue(a.slots(rank), count)) {  // ENQUEUE: one fetch-and-add for the batch
      a.fail(DynamicFailure::ListCapacity, rank, task.id, count);
      return false;
    }
    return true;
  };

  dynamic_block_loop(ctx, body, box, find, publish);
  ctx.record(EventKind::WorkerEnd, 0);
  if (threadIdx.x == 0) a.stats[rank] = st;
}

namespace detail {

template <class Body, class MakeBody>
void control_static_list(GpuSession& s, const ExecPlan& plan, MakeBody& make_body, std::atomic<bool>& abort_all, DynamicOutcome& out) {
  using trace::EventKind;
  const PolicyOptions& o = plan.options;
  const GridSize grid = persistent_grid(reinterpret_cast<const void*>(&static_list_kernel<Body>), s.device(), plan.block_size, plan.workers);
  if (!grid.note.empty()) out.notes.push_back(grid.note);
  const std::uint32_t blocks = grid.blocks;
  const Body body = make_body(s.slot(), blocks);

  if (plan.tasks.size() > o.list_capacity) {
    throw RunError("static-list: the " + std::to_string(plan.tasks.size()) + " initial tasks do not fit list_capacity=" +
                   std::to_string(o.list_capacity) + "; raise --param list_capacity");
  }
  check_device_bytes(2 * std::uint64_t{o.list_capacity} * sizeof(Task),
                     "the two task arrays (list_capacity=" + std::to_string(o.list_capacity) + " each; lower --param list_capacity)");
  cuda::DeviceBuffer<Task> arrays[2] = {cuda::DeviceBuffer<Task>(o.list_capacity), cuda::DeviceBuffer<Task>(o.list_capacity)};
  arrays[0].upload(plan.tasks.data(), plan.tasks.size());
  cuda::DeviceBuffer<StaticTaskListControl> list_ctl(1);
  cuda::DeviceBuffer<GenerationCursor> cursor(1);
  DynamicHost host(s, plan, blocks, abort_all);
  // Per task: begin, end, a spawn; per generation a start and an end (counted in the 4096 spare).
  s.allocate_trace(blocks, dynamic_trace_capacity(plan, blocks, 3, out.notes));

  auto n = static_cast<std::uint32_t>(plan.tasks.size());
  int in = 0;
  std::uint64_t peak = n;
  std::uint32_t generations = 0;
  out.launch_ns = s.now_ns();
  while (n > 0) {
    // Stream-ordered resets: the previous launch has ended when these run.
    GPULB_CUDA_TRY(cudaMemsetAsync(cursor.get(), 0, sizeof(GenerationCursor), s.kernel_stream()));
    GPULB_CUDA_TRY(cudaMemsetAsync(list_ctl.get(), 0, sizeof(StaticTaskListControl), s.kernel_stream()));
    const StaticTaskListRef list{arrays[in].get(), arrays[1 - in].get(), list_ctl.get(), n, o.list_capacity};
    ++generations;
    s.host_record(EventKind::KernelLaunch, n);
    static_list_kernel<Body><<<std::min(n, blocks), plan.block_size, 0, s.kernel_stream()>>>(list, cursor.get(), host.args(), body);
    GPULB_CUDA_CHECK_LAUNCH();
    const std::uint32_t launched = n;
    host.wait_kernel([&] {
      return "generation " + std::to_string(generations) + " of " + std::to_string(launched) + " tasks has not finished";
    });
    s.host_record(EventKind::KernelEnd, n);
    const DeviceFailure f = host.failure();
    if (f.code != 0) {
      std::string msg = host.common_failure_message(f);
      if (static_cast<DynamicFailure>(f.code) == DynamicFailure::ListCapacity) {
        msg = "static-list: generation " + std::to_string(generations) + " created more than list_capacity=" +
              std::to_string(o.list_capacity) + " tasks; raise --param list_capacity";
      }
      throw RunError(msg);
    }
    StaticTaskListControl c;
    list_ctl.download(&c, 1);
    peak = std::max<std::uint64_t>(peak, c.tail);  // NEWTASKCNT
    n = std::min(c.tail, o.list_capacity);
    in = 1 - in;
  }
  out.end_ns = s.now_ns();

  host.collect(out, /*per_sm=*/false);  // a rank's blocks move between SMs across generations
  out.workers = blocks;
  out.metrics["generations"] = generations;
  out.metrics["peak_task_slots"] = peak;
  out.notes.push_back("static-list: " + std::to_string(generations) + " generations; the largest needed " + std::to_string(peak) +
                      " task slots (two arrays of that size)");
}

}  // namespace detail
}  // namespace gpulb::kernels
