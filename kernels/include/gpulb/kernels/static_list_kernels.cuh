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
// Growth (gpulb/static_list_sizing.hpp): a block whose children do not all fit the output array
// writes where the rest belong in `held` and stops; the launch ends once every block has stopped
// or the generation is taken. The host grows the output array (a new one, the old one's slots
// copied on the GPU, the held batches copied from the blocks' spawn slots) and launches the
// generation's remaining tasks, the cursor and the tail going on from where they were.
//
// Trace: per launch a host KernelLaunch/KernelEnd (arg: tasks), and per block WorkerStart /
// WorkerEnd around each launch it ran in; TaskBegin/TaskEnd, SpawnBatch (Spawn across GPUs).
// Metrics: generations, peak_task_slots (the largest generation), list_slots (the largest array
// allocated), list_resumes (launches that stopped on a full array and went on).
#pragma once

#include "gpulb/kernels/detail/dynamic_worker.cuh"
#include "gpulb/policies/static_list.hpp"
#include "gpulb/static_list_sizing.hpp"
#include "gpulb/static_task_list.hpp"

namespace gpulb::kernels {

// The generation's next task (one 128-byte line of its own).
struct alignas(kHotLine) GenerationCursor {
  std::uint32_t next;
};

// kInterleaved: a run across GPUs (detail/multi_gpu_sl_run.cuh), whose spawned ids interleave with
// the other GPUs' (DynamicArgs::take_children_interleaved); the one-GPU run keeps take_children.
template <class Body, bool kInterleaved = false>
__global__ void static_list_kernel(StaticTaskListRef list, GenerationCursor* cursor,
                                   HeldChildren* held, DynamicArgs a, Body body) {
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
    const std::uint32_t i =
        device_atomic_ref<std::uint32_t>(cursor->next).fetch_add(1, mo::relaxed);
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
    const trace::EventPayload spawn =
        trace::spawn_event(a.slots(rank)[0].id, count, a.id_stride == 1);
    ctx.record(spawn.kind, spawn.arg, spawn.aux);
    // ENQUEUE: one fetch-and-add for the batch
    const ListAppend put = list.enqueue(a.slots(rank), count);
    if (!put.complete()) {
      held[rank] = held_rest(put);  // the rest waits in the block's spawn slots; the block stops
      return false;
    }
    return true;
  };

  dynamic_block_loop(ctx, body, box, find, publish);
  ctx.record(EventKind::WorkerEnd, 0);
  if (threadIdx.x == 0) a.stats[rank] = st;
}

namespace detail {

// One GPU's static list: its two arrays, each of its own capacity, and the words a launch uses
// (device memory of the device current at construction and at every call).
class DeviceStaticList {
 public:
  DeviceStaticList(std::uint32_t blocks, std::span<const Task> initial, std::uint32_t in_slots)
      : blocks_(blocks), held_(blocks), ctl_(1), cursor_(1) {
    replace(0, std::max<std::uint32_t>(in_slots, static_cast<std::uint32_t>(initial.size())));
    if (!initial.empty()) arrays_[0].upload(initial.data(), initial.size());
  }

  Task* array(int which) const { return arrays_[which].get(); }
  std::uint32_t capacity(int which) const { return capacity_[which]; }
  std::uint64_t bytes() const {
    return (std::uint64_t{capacity_[0]} + capacity_[1]) * sizeof(Task);
  }
  StaticTaskListControl* ctl() const { return ctl_.get(); }
  GenerationCursor* cursor() const { return cursor_.get(); }
  HeldChildren* held() const { return held_.get(); }

  // A generation's first launch starts its cursor and its tail at 0 (stream-ordered: the previous
  // launch has ended when these run).
  void reset(cudaStream_t stream) const {
    GPULB_CUDA_TRY(cudaMemsetAsync(cursor_.get(), 0, sizeof(GenerationCursor), stream));
    GPULB_CUDA_TRY(cudaMemsetAsync(ctl_.get(), 0, sizeof(StaticTaskListControl), stream));
  }
  // After a launch has ended: the tail (NEWTASKCNT so far) and the tasks the cursor handed out.
  std::uint32_t tail() const {
    StaticTaskListControl c;
    ctl_.download(&c, 1);
    return c.tail;
  }
  std::uint32_t taken() const {
    GenerationCursor c;
    cursor_.download(&c, 1);
    return c.next;
  }

  // Array `which`, whose tasks are no longer needed, to `slots` (freed first).
  void replace(int which, std::uint32_t slots) {
    arrays_[which] = cuda::DeviceBuffer<Task>();
    arrays_[which] = cuda::DeviceBuffer<Task>(slots);
    capacity_[which] = slots;
  }

  // Output array `which` to `slots`, its full slots copied over and the blocks' held batches
  // placed (their spawn slots in `a`), all on `stream`, which is synchronized before the old array
  // is freed.
  void grow_keeping(int which, std::uint32_t slots, const DynamicArgs& a, cudaStream_t stream) {
    cuda::DeviceBuffer<Task> bigger(slots);
    GPULB_CUDA_TRY(cudaMemcpyAsync(bigger.get(), arrays_[which].get(),
                                   std::size_t{capacity_[which]} * sizeof(Task),
                                   cudaMemcpyDeviceToDevice, stream));
    std::vector<HeldChildren> held(blocks_);
    held_.download(held.data(), blocks_);
    for (std::uint32_t r = 0; r < blocks_; ++r) {
      if (held[r].count == 0) continue;
      const Task* from = a.spawn_slots + std::size_t{r} * a.spawn_capacity + held[r].offset;
      GPULB_CUDA_TRY(cudaMemcpyAsync(bigger.get() + held[r].slot, from,
                                     std::size_t{held[r].count} * sizeof(Task),
                                     cudaMemcpyDeviceToDevice, stream));
    }
    GPULB_CUDA_TRY(
        cudaMemsetAsync(held_.get(), 0, std::size_t{blocks_} * sizeof(HeldChildren), stream));
    GPULB_CUDA_TRY(cudaStreamSynchronize(stream));
    arrays_[which] = std::move(bigger);
    capacity_[which] = slots;
  }

 private:
  std::uint32_t blocks_;
  cuda::DeviceBuffer<Task> arrays_[2];
  std::uint32_t capacity_[2] = {0, 0};
  cuda::DeviceBuffer<HeldChildren> held_;
  cuda::DeviceBuffer<StaticTaskListControl> ctl_;
  cuda::DeviceBuffer<GenerationCursor> cursor_;
};

// Before a generation's first launch: output array `out` as `sizer` predicts for `in_count`
// tasks, within the GPU's free memory (never below what it holds: a launch that outgrows it
// stops, and grow_static_list_output decides). Returns its slots.
inline std::uint32_t reserve_static_list_output(DeviceStaticList& list, int out,
                                                const ListSizer& sizer, std::uint64_t in_count) {
  const std::uint64_t want = sizer.before_launch(in_count);
  const std::uint32_t had = list.capacity(out);
  if (want <= had) return had;
  list.replace(out, 0);
  const std::uint64_t slots = fit_list_slots(want, had, device_free_bytes());
  list.replace(out, static_cast<std::uint32_t>(slots == 0 ? had : slots));
  return list.capacity(out);
}

// After a launch that stopped on a full output array `out`: grows it for the generation's
// `in_count` tasks, `taken` of which ran, within the GPU's free memory; RunError naming the
// numbers where it cannot hold the slots the generation has asked for. `where`: "the GPU",
// "GPU 1"...
inline void grow_static_list_output(DeviceStaticList& list, int out, const ListSizer& sizer,
                                    std::uint64_t generation, std::uint64_t in_count,
                                    const DynamicArgs& a, cudaStream_t stream,
                                    const std::string& where) {
  const std::uint64_t asked = list.tail();
  const std::uint64_t done = std::min<std::uint64_t>(list.taken(), in_count);
  const std::uint64_t free = device_free_bytes();
  const std::uint64_t slots =
      asked > kMaxListSlots
          ? 0
          : fit_list_slots(sizer.after_overflow(asked, done, in_count), asked, free);
  if (slots == 0)
    throw RunError(
        list_memory_refusal(generation, asked, where, list.bytes(), free, "cudaMemGetInfo"));
  list.grow_keeping(out, static_cast<std::uint32_t>(slots), a, stream);
}

// Where the scenario states its widest generation, a run whose GPUs cannot hold an even share of
// it in one array each is refused before it starts. `where`: "the GPU", "GPU 1"...
inline void check_static_list_widest(const ExecPlan& plan, std::uint32_t gpus,
                                     const std::string& where) {
  const std::uint64_t share = (plan.widest_generation + gpus - 1) / gpus;
  const std::uint64_t free = device_free_bytes();
  if (share == 0 || fit_list_slots(share, share, free) != 0) return;
  throw RunError(list_memory_refusal(0, share, where, 0, free, "cudaMemGetInfo"));
}

// The generations of a run on one GPU (the loop at the top).
template <class Body>
class OneGpuStaticList {
 public:
  OneGpuStaticList(GpuSession& s, const ExecPlan& plan, DynamicHost& host, DeviceStaticList& list,
                   const Body& body, std::uint32_t blocks)
      : s_(s),
        plan_(plan),
        host_(host),
        list_(list),
        body_(body),
        blocks_(blocks),
        sizer_(plan.policy_options<policies::StaticListOptions>().list_capacity,
               plan.widest_generation, plan.expected_tasks) {}

  void run(DynamicOutcome& out) {
    auto n = static_cast<std::uint32_t>(plan_.tasks.size());
    std::uint64_t peak = n, largest = list_.capacity(0);
    out.launch_ns = s_.now_ns();
    while (n > 0) {
      ++generations_;
      largest =
          std::max<std::uint64_t>(largest, reserve_static_list_output(list_, 1 - in_, sizer_, n));
      list_.reset(s_.kernel_stream());
      launch(n, n);
      while (list_.tail() > list_.capacity(1 - in_)) {
        grow_static_list_output(list_, 1 - in_, sizer_, generations_, n, host_.args(),
                                s_.kernel_stream(), "the GPU");
        largest = std::max<std::uint64_t>(largest, list_.capacity(1 - in_));
        ++resumes_;
        const std::uint32_t taken = std::min(list_.taken(), n);
        if (taken < n) launch(n, n - taken);
      }
      const std::uint32_t next = list_.tail();  // NEWTASKCNT
      sizer_.generation_ended(n, next);
      peak = std::max<std::uint64_t>(peak, next);
      n = next;
      in_ = 1 - in_;
    }
    out.end_ns = s_.now_ns();
    report(out, peak, largest);
  }

 private:
  // A launch over the generation's `n` tasks, `left` of them not yet taken; waits for its end.
  void launch(std::uint32_t n, std::uint32_t left) {
    const StaticTaskListRef list{list_.array(in_), list_.array(1 - in_), list_.ctl(), n,
                                 list_.capacity(1 - in_)};
    s_.host_record(trace::EventKind::KernelLaunch, left);
    static_list_kernel<Body><<<std::min(left, blocks_), plan_.block_size, 0, s_.kernel_stream()>>>(
        list, list_.cursor(), list_.held(), host_.args(), body_);
    GPULB_CUDA_CHECK_LAUNCH();
    const std::uint32_t g = generations_;
    host_.wait_kernel([&] {
      return "generation " + std::to_string(g) + ", a launch of " + std::to_string(left) +
             " tasks, has not finished";
    });
    s_.host_record(trace::EventKind::KernelEnd, left);
    const DeviceFailure f = host_.failure();
    if (f.code != 0) {
      const std::string why = host_.common_failure_message(f);
      throw RunError(why.empty() ? "static-list: block " + std::to_string(f.block) +
                                       " failed (code " + std::to_string(f.code) + ")"
                                 : why);
    }
  }

  void report(DynamicOutcome& out, std::uint64_t peak, std::uint64_t largest) const {
    report_list({generations_, peak, largest, resumes_}, out.metrics, out.notes);
  }

  GpuSession& s_;
  const ExecPlan& plan_;
  DynamicHost& host_;
  DeviceStaticList& list_;
  const Body& body_;
  std::uint32_t blocks_;
  ListSizer sizer_;
  int in_ = 0;
  std::uint32_t generations_ = 0;
  std::uint64_t resumes_ = 0;
};

template <class Body, class MakeBody>
void control_static_list(GpuSession& s, const ExecPlan& plan, MakeBody& make_body,
                         std::atomic<bool>& abort_all, DynamicOutcome& out) {
  const GridSize grid = persistent_grid(reinterpret_cast<const void*>(&static_list_kernel<Body>),
                                        s.device(), plan.block_size, plan.workers);
  if (!grid.note.empty()) out.notes.push_back(grid.note);
  const std::uint32_t blocks = grid.blocks;
  const Body body = make_body(s.slot(), blocks);
  if (plan.tasks.size() > kMaxListSlots) {
    throw RunError("static-list: " + std::to_string(plan.tasks.size()) +
                   " initial tasks are more than one array holds (" +
                   std::to_string(kMaxListSlots) + ")");
  }
  check_static_list_widest(plan, 1, "the GPU");
  DeviceStaticList list(blocks, plan.tasks,
                        plan.policy_options<policies::StaticListOptions>().list_capacity);
  DynamicHost host(s, plan, blocks, abort_all);
  // Per task: begin, end, a spawn; per launch a start and an end (counted in the 4096 spare).
  s.allocate_trace(blocks, dynamic_trace_capacity(plan, blocks, 3, out.notes));
  OneGpuStaticList<Body>(s, plan, host, list, body, blocks).run(out);
  host.collect(out, /*per_sm=*/false);  // a rank's blocks move between SMs across generations
  out.workers = blocks;
}

}  // namespace detail
}  // namespace gpulb::kernels
