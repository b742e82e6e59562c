// Work stealing with a task per thread (`--param task_per=lane`; gpulb's extension, not in the
// papers): the same deques, sharing and overflow queues, host feed and termination as
// work_stealing_kernels.cuh (Grossman; ABP deques), but a block runs up to blockDim.x tasks at once,
// one a thread, instead of one task on all its threads.
//
// Why: Grossman's worker is a block that runs one task at a time, and a body spreads its work over
// the block's threads. A UTS node's work is hashing its children, about one on average (four on
// T1L's inner nodes, five on T3L's): a warp that runs one node leaves most lanes idle (9.9 of 32
// active on T1, Nsight Compute on an H100), and pays a deque pop and push, barriers and trace
// events for each node. Here a block pays them once a batch:
//   thread 0: takes up to blockDim.x tasks from the bottom of its deque in one pop
//             (pop_bottom_batch), else up to `chunk` (steal_chunk, at most the block size) from
//             the sharing or overflow queue, else steals up to `chunk` with pop_top_chunk;
//   thread i: runs task i's lane form: body.lane_children(task) says how many children it has;
//   block:    an exclusive scan of the counts numbers every child of the batch; thread 0 takes
//             their ids (from the block's range of ids, below) and counts them in `pending`
//             (count_batch); then the block's threads make child j = 0, 1, ... in turn
//             (body.lane_child(parent, index)), each kept as the next batch (below), or written
//             straight into the owner's deque above its bottom, or into the block's spawn slots
//             for the overflow queue once the deque is full;
//   thread 0: publishes the children with one release store of bottom (publish_written), after a
//             barrier (the other threads' slot writes happen before it: see dynamic_worker.cuh).
// Children that fit one batch (at most blockDim.x) skip the deque: they are the block's next
// batch, kept in shared memory. Publishing them would only have them popped back by the same
// block, which runs a batch in one step however many it holds (a thief could take some, but
// that spreads no work a block was short of), and the round trip (the children's stores, the
// release, the next pop's fence.sc, the slot loads) was most of a step on UTS T3L, whose
// 111 M nodes hang from a path 17,844 levels deep. A batch with more children publishes them all.
// Ids: a block takes them from the run's counter 256 at a time where no table is indexed by id
// (ExecPlan::id_capacity == 0; they are then unique but not dense), one fetch-and-add less per
// batch on the run's hottest word.
// So a task is still a deque entry with its own id, parent and depth; what changes is how many of
// them a block holds at once. The children of a batch are spread over the lanes too, so a task
// with many children (UTS's binomial root, 2000) is made by all the threads.
//
// A body with a lane form (the LaneBody concept) gives, per thread and on the device:
//   int  lane_children(const Task&)              how many children the task has;
//   Task lane_child(const Task& parent, int i)   child i's kind, flags and payload (the runtime
//                                                sets id, parent and depth, as ctx.spawn's);
//   void lane_account(rank, const Task* task, int children)   called by every thread of the
//        block once per batch (task = nullptr where the thread had none): the body's counts;
//   const char* lane_refusal()                   nullptr, or why this body's settings have no
//                                                lane form (the run then stops with it).
// The deques' chunk protocol (work_stealing_deque.hpp) needs the owner's batch pops and the
// thieves' chunk steals to agree on `chunk`: every block of a run uses the same.
#pragma once

#include <algorithm>
#include <concepts>
#include <string>
#include <utility>

#include "gpulb/kernels/work_stealing_kernels.cuh"

namespace gpulb::kernels {

template <class Body>
concept LaneBody = requires(const Body& b, const Task& t, int i, std::uint32_t rank) {
  { b.lane_children(t) } -> std::convertible_to<int>;
  { b.lane_child(t, i) } -> std::same_as<Task>;
  b.lane_account(rank, &t, i);
  { b.lane_refusal() } -> std::convertible_to<const char*>;
};

// Shared by a block's threads: what thread 0 found and decided for the batch.
struct LaneMailbox {
  int action;
  std::uint32_t k;           // tasks in the batch
  std::uint32_t first;       // from_deque: the batch is the block's deque slots [first, first + k)
  std::uint32_t from_deque;  // else it is already in the batch array (queues, steals)
  std::uint32_t total;       // children of the batch
  std::uint32_t id_base;     // the first child's id
  std::uint32_t deque_base;  // the deque slot of child 0
  std::uint32_t room;        // children that go into the deque; the rest go to the overflow queue
  std::uint32_t failed;      // thread 0 failed the run: every thread leaves
  std::uint32_t keep;      // the children (at most a batch) are the next batch: no deque round trip
  std::uint64_t begin_ns;  // when the batch started (traced runs)
  std::uint32_t trace_base;  // the block's trace count when the batch started (traced runs)
  std::uint32_t warp_totals[32];
  BlockScratch scratch;
};

// The dynamic shared memory of a block of `threads`: two batches of tasks (the running one and
// the next, see the top) and the children's numbering (offsets[i]: the number of task i's first
// child within the batch).
inline std::size_t lane_shared_bytes(std::uint32_t threads) {
  return std::size_t{threads} * (2 * sizeof(Task) + sizeof(std::uint32_t));
}

// Exclusive prefix sum of `v` over the block (blockDim.x a multiple of 32); every thread gets its
// own prefix and the block's total. Contains barriers.
__device__ inline std::uint32_t lane_exclusive_scan(std::uint32_t v, std::uint32_t& total,
                                                    std::uint32_t* warp_totals) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  std::uint32_t inclusive = v;
  for (int d = 1; d < 32; d *= 2) {
    const std::uint32_t up = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
    if (lane >= static_cast<unsigned>(d)) inclusive += up;
  }
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  std::uint32_t before = 0;
  total = 0;
  for (unsigned w = 0; w < warps; ++w) {
    if (w < warp) before += warp_totals[w];
    total += warp_totals[w];
  }
  __syncthreads();  // before anyone writes warp_totals again
  return before + inclusive - v;
}

// The batch task whose children include child j: the last i < k with offsets[i] <= j.
__device__ inline std::uint32_t lane_parent_of(const std::uint32_t* offsets, std::uint32_t k,
                                               std::uint32_t j) {
  std::uint32_t lo = 0, hi = k;  // offsets[lo] <= j < offsets[hi] (offsets[k] read as the total)
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (offsets[mid] <= j)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// One block's worker (see the top). Thread 0 finds batches, plans and publishes their children;
// every thread runs a batch's tasks and makes its children. Thread 0's state is carried by the
// others unused, as in the block worker (detail/ws_block_worker.cuh), whose state (WsWorkerState),
// hooks, host feed and `Remote` this worker shares: OneGpu on one GPU, RemoteGpus<Scope::Device>
// across GPUs (work_stealing_lanes_multi_gpu.cuh), which reads that state. Across GPUs a batch
// can also come from another GPU's block (after_miss: up to remote_chunk tasks, which become the
// batch), and the children's ids interleave with the other GPUs' (id_stride).
template <class Body, class Ws, class Remote>
class LaneBlockWorker : public WsWorkerState<Ws> {
  using State = WsWorkerState<Ws>;

 public:
  using State::a, State::credit, State::drained, State::hooks, State::picker, State::rank,
      State::ws;

  __device__ LaneBlockWorker(const Ws& ws, const StagingRef& staging, VictimPicker picker,
                             const DynamicArgs& a, const Body& body, const BlockContext& ctx,
                             LaneMailbox& box, PendingCredit& credit, unsigned char* lane_memory,
                             std::uint32_t chunk, std::uint32_t id_grab, Remote remote)
      : State(ws, a, ctx, credit, picker),
        staging_(staging),
        body_(body),
        ctx_(ctx),
        box_(box),
        own_(ws.own(blockIdx.x)),
        batch_(reinterpret_cast<Task*>(lane_memory)),
        next_(batch_ + blockDim.x),
        offsets_(reinterpret_cast<std::uint32_t*>(next_ + blockDim.x)),
        chunk_(chunk),
        id_grab_(id_grab),
        remote_(remote) {}

  // The whole block, batch after batch until the run ends or stops.
  __device__ void run() {
    hooks.on_start();
    if (threadIdx.x == 0) {
      credit.units = 0;  // only thread 0 ever touches it
      box_.keep = 0;     // read by the others only after the loop's barriers
      remote_.start(a, rank);
    }
    bool stopped = false;  // thread 0's
    for (;;) {
      if (threadIdx.x == 0) next_action(stopped);
      __syncthreads();
      if (box_.action != static_cast<int>(WorkerAction::Run)) break;
      if (!run_batch(stopped)) break;
    }
    const std::uint32_t remote_steals = threadIdx.x == 0 ? remote_.remote_steals(a, rank) : 0;
    hooks.on_end(a.stats[rank], remote_steals);
  }

 private:
  // Thread 0: what the block does next, into the mailbox.
  __device__ void next_action(bool stopped) {
    if (stopped) {
      box_.action = static_cast<int>(WorkerAction::Stop);
    } else if (box_.keep) {  // the children of the last batch are this one
      // Across GPUs: a request to us is answered between batches, kept ones too (a chain of
      // kept batches can run long, and the asking block waits meanwhile).
      remote_.before_lookup(*this);
      box_.action = static_cast<int>(a.should_stop() ? WorkerAction::Stop : WorkerAction::Run);
      box_.k = box_.total;
      box_.from_deque = 0;
    } else {
      box_.action = static_cast<int>(find());
    }
    box_.failed = 0;
    // After find()'s records: thread 0 records nothing else until end_lane_batch, which moves
    // the count past the batch written at this one (publish() records after that).
    if (a.trace.events != nullptr)
      box_.begin_ns = globaltimer(), box_.trace_base = ctx_.trace_count();
  }

  // Every thread: the batch of box_.k tasks, their children made and placed, then published by
  // thread 0 (`stopped` where that failed). False when the block must leave now.
  __device__ bool run_batch(bool& stopped) {
    const std::uint32_t k = box_.k;
    const bool has_task = threadIdx.x < k;
    // The popped slots are ours until our next push, which writes over them: copy them out first.
    if (box_.from_deque && has_task)
      batch_[threadIdx.x] = gpulb::detail::load_task_relaxed(own_.slots[box_.first + threadIdx.x]);
    __syncthreads();
    const int n = has_task ? body_.lane_children(batch_[threadIdx.x]) : 0;
    body_.lane_account(rank, has_task ? &batch_[threadIdx.x] : nullptr, n);
    std::uint32_t total = 0;
    const std::uint32_t offset =
        lane_exclusive_scan(static_cast<std::uint32_t>(n), total, box_.warp_totals);
    if (has_task) offsets_[threadIdx.x] = offset;
    if (threadIdx.x == 0 && !plan_children(k, total)) box_.failed = 1;
    // Traced: is the batch a range (lane_trace_records.hpp), its ids consecutive and one kind? The
    // barrier that ends the planning answers it (a reduction). Untraced, a plain barrier and no
    // look at the ids (a first version looked either way: untraced T1L 1% slower, H100).
    bool range = false;
    if (a.trace.events != nullptr) {
      const Task& lead = batch_[0];
      range = __syncthreads_or(has_task && (batch_[threadIdx.x].id != lead.id + threadIdx.x ||
                                            batch_[threadIdx.x].kind != lead.kind)) == 0;
    } else {
      __syncthreads();
    }
    if (box_.failed) return false;
    const bool keep = box_.keep;
    make_children(k, total, keep);
    if (has_task && !range)
      ctx_.record_lane_task(box_.trace_base, k, batch_[threadIdx.x].id, batch_[threadIdx.x].kind);
    __syncthreads();  // every child is written (and ordered before thread 0's publication)
    if (threadIdx.x == 0) {
      ctx_.end_lane_batch(box_.trace_base, k, box_.begin_ns, range, range ? batch_[0].id : 0,
                          range ? batch_[0].kind : 0);
      if (!publish(k)) stopped = true;
    }
    if (keep) {  // every thread, alike: box.keep stays until thread 0 plans the next batch's children
      Task* t = batch_;
      batch_ = next_;
      next_ = t;
    }
    return true;
  }

  // Every thread: child j = threadIdx.x, + blockDim.x, ... of the batch, kept as the next batch,
  // written into our deque above its bottom, or into the spawn slots for the overflow queue.
  __device__ void make_children(std::uint32_t k, std::uint32_t total, bool keep) {
    const std::uint32_t room = box_.room, deque_base = box_.deque_base, id_base = box_.id_base;
    const std::uint32_t stride = remote_.id_stride(a);
    Task* spill_slots = a.slots(rank);
    for (std::uint32_t j = threadIdx.x; j < total; j += blockDim.x) {
      const std::uint32_t p = lane_parent_of(offsets_, k, j);
      const Task& parent = batch_[p];
      Task child = body_.lane_child(parent, static_cast<int>(j - offsets_[p]));
      child.id = id_base + j * stride;
      child.parent = parent.id;
      child.depth = parent.depth + 1;
      if (keep)
        next_[j] = child;
      else if (j < room)
        gpulb::detail::store_task_relaxed(own_.slots[deque_base + j], child);
      else
        spill_slots[j - room] = child;
    }
  }

  // Thread 0: up to `chunk` tasks from a shared queue into the batch (each its own claim).
  __device__ std::uint32_t take_from(const SharingQueueRef& q) {
    std::uint32_t k = 0;
    while (k < chunk_ && !q.empty() && q.try_pop(batch_[k])) ++k;
    return k;
  }

  // Thread 0: a batch from our deque, a shared queue or a victim on this GPU; k tasks, 0 for none.
  __device__ std::uint32_t look_for_batch() {
    const BatchPop p = own_.pop_bottom_batch(own_bottom_, blockDim.x, chunk_);
    own_bottom_ = p.bottom;
    std::uint32_t k = p.k;
    box_.from_deque = k > 0;
    box_.first = p.first;
    if (k > 0) {
      hooks.on_deque_level(p.level);
    } else if ((k = take_from(ws.sharing)) > 0) {  // counted when they were accepted
      hooks.on_queue_level(ws.sharing.size_hint(), kSharingQueueId);
    } else if ((k = take_from(ws.overflow)) > 0) {  // counted when spawned
      hooks.on_queue_level(ws.overflow.size_hint(), kOverflowQueueId);
    } else if (ws.workers > 1) {
      const std::uint32_t victim = picker.next(rank, ws.workers);
      StealResult r = StealResult::Empty;
      k = ws.deques.deque(victim).pop_top_chunk(batch_, chunk_, r);
      if (k > 0)
        hooks.on_steal(victim);
      else
        hooks.on_steal_failed(victim);
    }
    return k;
  }

  // Thread 0: a batch into the mailbox (Run), or the end.
  __device__ WorkerAction find() {
    for (;;) {
      if (a.should_stop()) return WorkerAction::Stop;
      remote_.before_lookup(*this);
      if (const std::uint32_t k = look_for_batch(); k > 0) return found(k);
      std::uint32_t taken = 0;  // from another GPU: the batch array holds them
      const RemoteFind r = remote_.after_miss(*this, batch_, taken);
      if (r == RemoteFind::Found) {
        box_.from_deque = 0;
        return found(taken);
      }
      if (r == RemoteFind::Stop) return WorkerAction::Stop;
      if (r == RemoteFind::Done) return WorkerAction::Done;
      hooks.on_idle();
      if (feed_when_idle(ws, staging_, drained, hooks, remote_.feeds(staging_))) continue;
      if (remote_.idle_pass_ends_run(*this)) return WorkerAction::Done;
      __nanosleep(backoff_);
      backoff_ = backoff_ < kMaxBackoffNs ? 2 * backoff_ : kMaxBackoffNs;
    }
  }

  __device__ WorkerAction found(std::uint32_t k) {
    hooks.on_found();
    remote_.on_found();
    backoff_ = kMinBackoffNs;
    box_.k = k;
    return WorkerAction::Run;
  }

  // Thread 0, after the scan: the children's ids, their count in `pending`, where they go.
  __device__ bool plan_children(std::uint32_t k, std::uint32_t total) {
    const std::uint32_t first_id = k > 0 ? batch_[0].id : 0;
    box_.total = total;
    box_.keep = 0;
    if (total == 0) {
      ws.count_batch(0, k, credit);
      return true;
    }
    if (!take_ids(first_id, total)) return false;
    box_.id_base = id_next_;
    id_next_ += total * remote_.id_stride(a);
    remote_.count_batch(*this, total, k);  // across GPUs: units from the GPU's reserve first
    ws.count_batch(total, k, credit);      // before any child is visible (work_stealing.hpp)
    box_.keep = total <= blockDim.x;
    if (box_.keep) return true;  // the next batch, private: nothing to place
    box_.deque_base = own_bottom_;
    const std::uint32_t room = own_.capacity - own_bottom_;
    box_.room = total < room ? total : room;
    const std::uint32_t rest = total - box_.room;
    if (rest > 0 && !ws.spill) {
      a.fail(DynamicFailure::DequeFull, rank, first_id, total);
      return false;
    }
    if (rest > a.spawn_capacity) {
      a.fail(DynamicFailure::SpawnCapacity, rank, first_id, total);
      return false;
    }
    return true;
  }

  // Thread 0: `total` ids from [id_next_, id_end_), every id_stride-th (across GPUs the ids
  // interleave with the other GPUs'), with one fetch-and-add for id_grab ids or more where too few
  // are left (see the top).
  __device__ bool take_ids(std::uint32_t first_id, std::uint32_t total) {
    const std::uint32_t stride = remote_.id_stride(a);
    if ((id_end_ - id_next_) / stride >= total) return true;
    const std::uint32_t grab = total > id_grab_ ? total : id_grab_;
    const std::uint32_t base =
        device_atomic_ref<std::uint32_t>(a.ids->next).fetch_add(grab * stride, mo::relaxed);
    // The whole grab within the limit, not only this batch's ids, and the counter short of 2^32:
    // a grab that wraps the 32-bit counter would let a later grab give out ids again.
    const std::uint64_t end = std::uint64_t{base} + std::uint64_t{grab} * stride;
    if (end > a.id_limit || end > 0xFFFFFFFFu) {
      a.fail(DynamicFailure::IdCapacity, rank, first_id, total);
      return false;
    }
    id_next_ = base;
    id_end_ = static_cast<std::uint32_t>(end);
    return true;
  }

  // Thread 0, after the children are written and a barrier: publish them.
  __device__ bool publish(std::uint32_t k) {
    remote_.before_publish(*this, k);
    a.task_finished(rank, hooks.on_task_done(k));
    const std::uint32_t total = box_.total;
    if (total == 0) return true;
    // The batch's children, of all its tasks, have the ids box.id_base + j * id_stride.
    hooks.on_spawn(trace::spawn_event(box_.id_base, total, remote_.consecutive_ids(a)), total);
    if (box_.keep) return true;
    if (box_.room > 0) {
      hooks.on_deque_level(own_.publish_written(own_bottom_, box_.room));
      own_bottom_ += box_.room;
    }
    const std::uint32_t rest = total - box_.room;
    if (rest == 0) return true;
    const std::uint32_t spilled = ws.overflow.try_push(a.slots(rank), rest);
    hooks.on_spilled(spilled, ws.overflow.size_hint());
    if (spilled < rest) {
      a.fail(DynamicFailure::OverflowFull, rank, batch_[0].id, total);
      return false;
    }
    return true;
  }

  const StagingRef& staging_;  // the kernel parameter's: a copy would hold registers
  const Body& body_;
  const BlockContext& ctx_;
  LaneMailbox& box_;
  const decltype(std::declval<const Ws&>().own(0u)) own_;
  // Two batch arrays: the one running, and the next one when a batch keeps its children.
  Task* batch_;
  Task* next_;
  std::uint32_t* offsets_;
  const std::uint32_t chunk_, id_grab_;
  Remote remote_;
  unsigned backoff_ = kMinBackoffNs;
  std::uint32_t own_bottom_ = 0;  // thread 0's: the deque's bottom (only the owner writes it)
  // Thread 0's: ids taken from the run's counter and not yet given, [id_next_, id_end_).
  std::uint32_t id_next_ = 0, id_end_ = 0;
};

template <class Body>
__global__ void work_stealing_lane_kernel(WsKernelArgs w, DynamicArgs a, Body body,
                                          std::uint32_t chunk, std::uint32_t id_grab) {
  __shared__ LaneMailbox box;
  __shared__ PendingCredit credit;
  extern __shared__ __align__(16) unsigned char lane_memory[];
  const BlockContext ctx(blockIdx.x, a.trace.segment(blockIdx.x), a.stop, &box.scratch);
  LaneBlockWorker<Body, WorkStealingRef, OneGpu>(
      w.ws, w.staging, VictimPicker::make(w.victim, blockIdx.x), a, body, ctx, box, credit,
      lane_memory, chunk, id_grab, OneGpu{})
      .run();
}

namespace detail {

// What a task_per=lane run needs of the plan, on one GPU and across GPUs.
inline void check_lane_plan(const ExecPlan& plan) {
  if (plan.block_size % 32 != 0) {
    throw ConfigError(
        "work-stealing: task_per=lane runs whole warps: --block-size must be a multiple of 32 "
        "(got " +
        std::to_string(plan.block_size) + ")");
  }
}
template <class Body>
void check_lane_body(const Body& body) {
  if (const char* why = body.lane_refusal())
    throw ConfigError(std::string("work-stealing: task_per=lane: ") + why);
}
// A steal lands in the batch array: at most a block's worth (and owners and thieves agree on it).
inline std::uint32_t lane_steal_chunk(const ExecPlan& plan) {
  return std::min(plan.policy_options<policies::WorkStealingOptions>().steal_chunk,
                  plan.block_size);
}
// Ids a block takes at once: 256 where no table is indexed by id (they need not be dense then;
// a block leaves at most 255 unused), else exactly what each batch needs.
inline std::uint32_t lane_id_grab(const ExecPlan& plan) { return plan.id_capacity == 0 ? 256 : 1; }
// The lane kernel's dynamic shared memory, allowed past the 48 KiB default where it needs more
// (on the current device), and its persistent grid on `device`.
inline GridSize lane_grid(const void* kernel, int device, const ExecPlan& plan) {
  const std::size_t smem = lane_shared_bytes(plan.block_size);
  if (smem > 48 * 1024)
    GPULB_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  return persistent_grid(kernel, device, plan.block_size, plan.workers, smem);
}

// The host side of a task_per=lane run on one GPU: control_work_stealing's, with the lane kernel.
template <class Body, class MakeBody>
void control_work_stealing_lanes(GpuSession& s, const ExecPlan& plan, MakeBody& make_body,
                                 std::atomic<bool>& abort_all, DynamicOutcome& out) {
  check_lane_plan(plan);
  const GridSize grid =
      lane_grid(reinterpret_cast<const void*>(&work_stealing_lane_kernel<Body>), s.device(), plan);
  if (!grid.note.empty()) out.notes.push_back(grid.note);
  const std::uint32_t blocks = grid.blocks;
  const Body body = make_body(s.slot(), blocks);
  check_lane_body(body);
  const std::uint32_t chunk = lane_steal_chunk(plan), id_grab = lane_id_grab(plan);
  const std::size_t smem = lane_shared_bytes(plan.block_size);
  // Per task: its begin and end; per batch: a deque level on pop and push, a spawn, a steal.
  drive_work_stealing(
      s, plan, blocks, 4,
      [&](const WsKernelArgs& k, const DynamicArgs& a) {
        work_stealing_lane_kernel<Body>
            <<<blocks, plan.block_size, smem, s.kernel_stream()>>>(k, a, body, chunk, id_grab);
      },
      abort_all, out,
      [&](const DeviceFailure& f) {  // the spill of one batch passed the block's spawn slots
        return "work-stealing (task_per=lane): block " + std::to_string(f.block) +
               "'s batch (first task " + std::to_string(f.task) + ") made " +
               std::to_string(f.count) + " children, and more than spawn_capacity=" +
               std::to_string(plan.policy_options<policies::WorkStealingOptions>().spawn_capacity) +
               " of them did not fit its deque (deque_capacity=" +
               std::to_string(plan.policy_options<policies::WorkStealingOptions>().deque_capacity) +
               "); raise --param deque_capacity or spawn_capacity";
      });
}

}  // namespace detail
}  // namespace gpulb::kernels
