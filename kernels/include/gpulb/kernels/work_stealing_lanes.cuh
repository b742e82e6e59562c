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

template <class Body>
__global__ void work_stealing_lane_kernel(WsKernelArgs w, DynamicArgs a, Body body,
                                          std::uint32_t chunk, std::uint32_t id_grab) {
  using trace::EventKind;
  __shared__ LaneMailbox box;
  extern __shared__ __align__(16) unsigned char lane_memory[];
  // Two batch arrays: the one running, and the next one when a batch keeps its children.
  Task* batch = reinterpret_cast<Task*>(lane_memory);
  Task* next = batch + blockDim.x;
  std::uint32_t* offsets = reinterpret_cast<std::uint32_t*>(next + blockDim.x);
  const std::uint32_t rank = blockIdx.x;
  const BlockContext ctx(rank, a.trace.segment(rank), a.stop, &box.scratch);
  ctx.record(EventKind::WorkerStart, rank, static_cast<std::uint16_t>(smid()));
  const WorkStealingRef ws = w.ws;
  const WorkStealingDequeRef own = ws.own(rank);
  VictimPicker picker = VictimPicker::make(w.victim, rank);
  DynamicBlockStats st{};
  st.sm = smid();
  __shared__ PendingCredit credit;
  if (threadIdx.x == 0) {
    credit.units = 0;  // only thread 0 ever touches it
    box.keep = 0;      // read by the others only after the loop's barriers
  }
  bool idle = false, drained = false;
  unsigned backoff = kMinBackoffNs;
  const auto owner = static_cast<std::uint16_t>(rank);

  // Thread 0's: the deque's bottom. Only the owner writes it, so it need not be read back.
  std::uint32_t own_bottom = 0;
  // Thread 0's: ids taken from the run's counter and not yet given, [id_next, id_end).
  std::uint32_t id_next = 0, id_end = 0;
  // Thread 0: up to `chunk` tasks from a shared queue into the batch (each its own claim).
  auto take_from = [&](const SharingQueueRef& q) -> std::uint32_t {
    std::uint32_t k = 0;
    while (k < chunk && !q.empty() && q.try_pop(batch[k])) ++k;
    return k;
  };

  // Thread 0: a batch into the mailbox (Run), or the end.
  auto find = [&]() -> WorkerAction {
    for (;;) {
      if (a.should_stop()) return WorkerAction::Stop;
      const BatchPop p = own.pop_bottom_batch(own_bottom, blockDim.x, chunk);
      own_bottom = p.bottom;
      std::uint32_t k = p.k;
      box.from_deque = k > 0;
      box.first = p.first;
      if (k > 0) {
        ctx.record(EventKind::DequeLevel, p.level, owner);
      } else if ((k = take_from(ws.sharing)) > 0) {  // counted when they were accepted
        ctx.record(EventKind::QueueLevel, ws.sharing.size_hint(), kSharingQueueId);
      } else if ((k = take_from(ws.overflow)) > 0) {  // counted when spawned
        ctx.record(EventKind::QueueLevel, ws.overflow.size_hint(), kOverflowQueueId);
      } else if (ws.workers > 1) {
        const std::uint32_t victim = picker.next(rank, ws.workers);
        StealResult r = StealResult::Empty;
        k = ws.deques.deque(victim).pop_top_chunk(batch, chunk, r);
        if (k > 0) {
          ++st.steals;
          ctx.record(EventKind::Steal, victim);
        } else {
          ++st.steals_failed;
          if (!idle) ctx.record(EventKind::StealFailed, victim);
        }
      }
      if (k > 0) {
        idle = false;
        backoff = kMinBackoffNs;
        box.k = k;
        return WorkerAction::Run;
      }
      if (st.failed_attempts != ~std::uint64_t{0}) ++st.failed_attempts;
      if (!idle) ctx.record(EventKind::DequeueFailed, 0, kSharingQueueId);
      idle = true;
      if (!drained) {
        drained = ws.host_drained();
        if (!drained && feed_from_host(ws, w.staging) > 0) {
          ctx.record(EventKind::QueueLevel, ws.sharing.size_hint(), kSharingQueueId);
          continue;
        }
      }
      ws.flush_pending(credit);
      if (ws.terminated()) return WorkerAction::Done;
      __nanosleep(backoff);
      backoff = backoff < kMaxBackoffNs ? 2 * backoff : kMaxBackoffNs;
    }
  };

  // Thread 0, after the scan: the children's ids, their count in `pending`, where they go.
  auto plan_children = [&](std::uint32_t k, std::uint32_t total) -> bool {
    const std::uint32_t first_id = k > 0 ? batch[0].id : 0;
    box.total = total;
    box.keep = 0;
    if (total == 0) {
      ws.count_batch(0, k, credit);
      return true;
    }
    if (id_end - id_next < total) {  // one fetch-and-add for id_grab ids or more (see the top)
      const std::uint32_t grab = total > id_grab ? total : id_grab;
      const std::uint32_t base =
          device_atomic_ref<std::uint32_t>(a.ids->next).fetch_add(grab, mo::relaxed);
      if (static_cast<std::uint64_t>(base) + total > a.id_limit) {
        a.fail(DynamicFailure::IdCapacity, rank, first_id, total);
        return false;
      }
      id_next = base;
      id_end = static_cast<std::uint32_t>(
          std::min<std::uint64_t>(std::uint64_t{base} + grab, a.id_limit));
    }
    box.id_base = id_next;
    id_next += total;
    ws.count_batch(total, k, credit);  // before any child is visible (work_stealing.hpp)
    box.keep = total <= blockDim.x;
    if (box.keep) return true;  // the next batch, private: nothing to place
    box.deque_base = own_bottom;
    const std::uint32_t room = own.capacity - own_bottom;
    box.room = total < room ? total : room;
    const std::uint32_t rest = total - box.room;
    if (rest > 0 && !ws.spill) {
      a.fail(DynamicFailure::DequeFull, rank, first_id, total);
      return false;
    }
    if (rest > a.spawn_capacity) {
      a.fail(DynamicFailure::SpawnCapacity, rank, first_id, total);
      return false;
    }
    return true;
  };

  // Thread 0, after the children are written and a barrier: publish them.
  auto publish = [&](std::uint32_t k) -> bool {
    st.tasks += k;
    a.task_finished(rank, st.tasks);
    const std::uint32_t total = box.total;
    if (total == 0) return true;
    st.spawned += total;
    // The batch's children, of all its tasks, have the consecutive ids box.id_base .. + total - 1.
    const trace::EventPayload spawn = trace::spawn_event(box.id_base, total);
    ctx.record(spawn.kind, spawn.arg, spawn.aux);
    if (box.keep) return true;
    if (box.room > 0) {
      ctx.record(EventKind::DequeLevel, own.publish_written(own_bottom, box.room), owner);
      own_bottom += box.room;
    }
    const std::uint32_t rest = total - box.room;
    if (rest == 0) return true;
    const std::uint32_t spilled = ws.overflow.try_push(a.slots(rank), rest);
    st.spilled += spilled;
    ctx.record(EventKind::QueueLevel, ws.overflow.size_hint(), kOverflowQueueId);
    if (spilled < rest) {
      a.fail(DynamicFailure::OverflowFull, rank, batch[0].id, total);
      return false;
    }
    return true;
  };

  bool stopped = false;  // thread 0's
  for (;;) {
    if (threadIdx.x == 0) {
      if (stopped) {
        box.action = static_cast<int>(WorkerAction::Stop);
      } else if (box.keep) {  // the children of the last batch are this one
        box.action = static_cast<int>(a.should_stop() ? WorkerAction::Stop : WorkerAction::Run);
        box.k = box.total;
        box.from_deque = 0;
      } else {
        box.action = static_cast<int>(find());
      }
      box.failed = 0;
      // After find()'s records: thread 0 records nothing else until end_lane_batch, which moves
      // the count past the batch written at this one (publish() records after that).
      if (a.trace.events != nullptr)
        box.begin_ns = globaltimer(), box.trace_base = ctx.trace_count();
    }
    __syncthreads();
    if (box.action != static_cast<int>(WorkerAction::Run)) break;
    const std::uint32_t k = box.k;
    const bool has_task = threadIdx.x < k;
    // The popped slots are ours until our next push, which writes over them: copy them out first.
    if (box.from_deque && has_task)
      batch[threadIdx.x] = gpulb::detail::load_task_relaxed(own.slots[box.first + threadIdx.x]);
    __syncthreads();
    const int n = has_task ? body.lane_children(batch[threadIdx.x]) : 0;
    body.lane_account(rank, has_task ? &batch[threadIdx.x] : nullptr, n);
    std::uint32_t total = 0;
    const std::uint32_t offset =
        lane_exclusive_scan(static_cast<std::uint32_t>(n), total, box.warp_totals);
    if (has_task) offsets[threadIdx.x] = offset;
    if (threadIdx.x == 0 && !plan_children(k, total)) box.failed = 1;
    // Traced: is the batch a range (lane_trace_records.hpp), its ids consecutive and one kind? The
    // barrier that ends the planning answers it (a reduction). Untraced, a plain barrier and no
    // look at the ids (a first version looked either way: untraced T1L 1% slower, H100).
    bool range = false;
    if (a.trace.events != nullptr) {
      const Task& lead = batch[0];
      range = __syncthreads_or(has_task && (batch[threadIdx.x].id != lead.id + threadIdx.x ||
                                            batch[threadIdx.x].kind != lead.kind)) == 0;
    } else {
      __syncthreads();
    }
    if (box.failed) break;
    const std::uint32_t room = box.room, deque_base = box.deque_base, id_base = box.id_base;
    const bool keep = box.keep;
    Task* spill_slots = a.slots(rank);
    for (std::uint32_t j = threadIdx.x; j < total; j += blockDim.x) {
      const std::uint32_t p = lane_parent_of(offsets, k, j);
      const Task& parent = batch[p];
      Task child = body.lane_child(parent, static_cast<int>(j - offsets[p]));
      child.id = id_base + j;
      child.parent = parent.id;
      child.depth = parent.depth + 1;
      if (keep)
        next[j] = child;
      else if (j < room)
        gpulb::detail::store_task_relaxed(own.slots[deque_base + j], child);
      else
        spill_slots[j - room] = child;
    }
    if (has_task && !range)
      ctx.record_lane_task(box.trace_base, k, batch[threadIdx.x].id, batch[threadIdx.x].kind);
    __syncthreads();  // every child is written (and ordered before thread 0's publication)
    if (threadIdx.x == 0) {
      ctx.end_lane_batch(box.trace_base, k, box.begin_ns, range, range ? batch[0].id : 0,
                         range ? batch[0].kind : 0);
      if (!publish(k)) stopped = true;
    }
    if (keep) {  // every thread, alike: box.keep stays until thread 0 plans the next batch's children
      Task* t = batch;
      batch = next;
      next = t;
    }
  }
  ctx.record(EventKind::WorkerEnd,
             static_cast<std::uint32_t>(st.failed_attempts > 0xFFFFFFFFu ? 0xFFFFFFFFu
                                                                         : st.failed_attempts));
  if (threadIdx.x == 0) a.stats[rank] = st;
}

namespace detail {

// The host side of a task_per=lane run on one GPU: control_work_stealing's, with the lane kernel.
template <class Body, class MakeBody>
void control_work_stealing_lanes(GpuSession& s, const ExecPlan& plan, MakeBody& make_body,
                                 std::atomic<bool>& abort_all, DynamicOutcome& out) {
  if (plan.block_size % 32 != 0) {
    throw ConfigError(
        "work-stealing: task_per=lane runs whole warps: --block-size must be a multiple of 32 "
        "(got " +
        std::to_string(plan.block_size) + ")");
  }
  const std::size_t smem = lane_shared_bytes(plan.block_size);
  const auto* kernel = reinterpret_cast<const void*>(&work_stealing_lane_kernel<Body>);
  if (smem > 48 * 1024)
    GPULB_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  const GridSize grid = persistent_grid(kernel, s.device(), plan.block_size, plan.workers, smem);
  if (!grid.note.empty()) out.notes.push_back(grid.note);
  const std::uint32_t blocks = grid.blocks;
  const Body body = make_body(s.slot(), blocks);
  if (const char* why = body.lane_refusal())
    throw ConfigError(std::string("work-stealing: task_per=lane: ") + why);
  // A steal lands in the batch array: at most a block's worth (and owners and thieves agree on it).
  const std::uint32_t chunk =
      std::min(plan.policy_options<policies::WorkStealingOptions>().steal_chunk, plan.block_size);

  // Ids a block takes at once: 256 where no table is indexed by id (they need not be dense then;
  // a block leaves at most 255 unused), else exactly what each batch needs.
  const std::uint32_t id_grab = plan.id_capacity == 0 ? 256 : 1;
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
