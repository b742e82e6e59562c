// The work-stealing policy across the GPUs of one host (--gpus N > 1). No paper does this (issue 11
// item 6; docs/papers.md): Grossman's runtime and the ABP deques (work_stealing_kernels.cuh) on every
// GPU, and the idle blocks of one GPU steal from the deques of another over peer memory.
//
// [SECTION] Device: the kernel (one per GPU; the one-GPU kernel's loop plus a remote steal)
// [SECTION] Host: peer access, each GPU's memory, the frame (one control thread per GPU)
//
// Two ways to take work from another GPU (--param remote=...):
//   steal    (default) the thief CASes the victim's deque over peer memory: every deque of the run
//            is then accessed at system scope by every party, the owner included (a .gpu access on
//            one GPU and a .sys access from another are not morally strong in the PTX model, and
//            ABP's owner/thief race needs its Dekker pair to hold): a fence.sc.sys in each owner pop.
//   request  Acar, Chargueraud & Rainey's private deques (PPoPP 2013) between GPUs: the thief CASes
//            a request into the victim block's mailbox and waits; the owner polls its mailbox at
//            every task boundary (one relaxed system-scope load of its own memory) and answers with
//            up to remote_chunk tasks from its deque's top, written into the thief's inbox before a
//            system-scope release of the reply. The deques stay device scope (ABP as on one GPU,
//            local thieves included); only the mailboxes cross GPUs, at system scope by both
//            parties. A waiting thief answers requests to itself (with nothing) so that two
//            thieves cannot wait on each other, and stops waiting when the run is over.
// Which is faster is for the H200s to say (docs/papers.md).
//
// Memory, for G GPUs:
//   per GPU g, in g's memory:  the blocks' deques (system scope under remote=steal, device scope
//                              under remote=request); its sharing and overflow queues (device
//                              scope: only g's blocks touch them); remote=request: each block's
//                              mailbox and inbox;
//   GPU 0 only:                the run's one control word set (WorkStealingControl: `pending`,
//                              `fed`, `host_end`; system scope, every GPU's blocks read or update
//                              it), the host's staging ring and feed lock (only GPU 0's blocks feed
//                              from the host).
// Why one `pending` in GPU 0's memory and not one per GPU: a task's unit moves between GPUs with a
// steal, and a sum of per-GPU counters read one after the other can see 0 while work is in flight
// (a unit counted on the counter already read passes to one not yet read), so it would need a
// second, consistent scan (Mattern's four counters). One word is exact by construction; its
// traffic is kept low by the per-block credits (work_stealing.hpp) plus a lease: a block that must
// count children on the shared word takes BasicWorkStealingRef::lease (64) units ahead, so it touches GPU 0's word
// about once per lease of net spawns, once per idle spell (the flush), and when idle to test it.
//
// Stealing: a block looks in its own deque, its GPU's sharing queue, overflow queue, then one
// random local victim (find_task, as on one GPU); after kLocalMissesBeforeRemote failed passes in a
// row it also tries one random block of another GPU, taking up to remote_chunk tasks: under
// remote=steal half of what it sees with one CAS on the victim's age (pop_top_chunk), the owners
// then popping with pop_bottom_chunked(remote_chunk) (work_stealing_deque.hpp, "Chunked steals";
// remote_chunk = 1, the default, is ABP's pop: no CAS above the last task); under remote=request
// what the owner hands over (it keeps one task). The first task is run, the rest go onto the
// thief's own deque, which is empty then (its owner pop just failed and only the owner pushes).
//
// Initial tasks: dealt round robin into the GPUs' sharing queues before the launch (task i to GPU
// i mod G: tasks of neighbouring cost land on different GPUs), counted in `pending` then; those
// that do not fit, and the plan's host feed, go through GPU 0's staging ring. A single root (UTS)
// starts on GPU 0 and the other GPUs' blocks steal their first work from it.
//
// Termination: as on one GPU (work_stealing.hpp): host_end != 0 && fed == host_end - 1 (GPU 0's
// host feed is all counted) && pending == 0, read in that order with system-scope acquires. The
// credits and leases keep pending >= the tasks outstanding at every instant (every credit <= 0),
// so pending == 0 means none is left anywhere; all RMWs are acq_rel at system scope on one word, so
// the reader also sees every finished task's writes.
//
// Spawned ids: each GPU counts its own and interleaves (assign_child_ids_strided): no traffic
// between GPUs for ids.
//
// Trace: as on one GPU; a steal or failed steal from another GPU carries aux = 1 + the victim's
// device (trace::steal_aux_for_device), its arg the victim's block on that device.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "gpulb/clock.hpp"
#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/device_health.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/gpu_request.hpp"
#include "gpulb/kernels/detail/gpu_failure.hpp"
#include "gpulb/kernels/work_stealing_kernels.cuh"

namespace gpulb::kernels {

// -------------------------------------------------------------------------------------------------
// [SECTION] Device
// -------------------------------------------------------------------------------------------------

inline constexpr std::uint32_t kMaxWsGpus = 8;
// Failed local passes (own deque, queues, one local victim) before a block also tries another GPU:
// a remote steal costs a few NVLink round trips, a local one an L2 access.
inline constexpr std::uint32_t kLocalMissesBeforeRemote = 4;

// remote=request: one block's mailbox, in its GPU's memory. `request` is written by thieves of
// other GPUs (CAS 0 -> 1 + thief id) and cleared by the owner; `reply` (0 while waiting, else 1 +
// tasks sent) and `inbox` (remote_chunk tasks) are written by the victim's owner for this block
// as a thief. Every access to request and reply is a system-scope atomic (two GPUs touch them);
// the inbox is plain data, written before the reply's release and read after its acquire.
struct alignas(16) RemoteMailbox {
  std::uint32_t request;
  std::uint32_t reply;
};
__host__ __device__ constexpr std::uint32_t remote_thief_id(std::uint32_t gpu, std::uint32_t block) { return (gpu << 24) + block + 1; }

// Every GPU's deques and mailboxes, as this GPU addresses them (peer pointers; peer access is on).
struct PeerDeques {
  WorkStealingDequesRef gpu[kMaxWsGpus];
  RemoteMailbox* mail[kMaxWsGpus] = {};  // remote=request: blocks' mailboxes of each GPU
  Task* inbox[kMaxWsGpus] = {};          // remote=request: blocks x remote_chunk slots of each GPU
  std::uint32_t gpus = 1;
  std::uint32_t self = 0;  // this GPU's index in the run (its trace device)
};

// S: the scope of this GPU's deques: System under remote=steal (other GPUs' blocks CAS them),
// Device under remote=request (only this GPU's blocks touch them). The control words in GPU 0's
// memory are system scope either way.
template <Scope S>
struct MgWsKernelArgs {
  BasicWorkStealingRef<S, Scope::System> ws;  // this GPU's deques and queues, GPU 0's control words
  StagingRef staging;                         // GPU 0: the host's ring; elsewhere ctl == nullptr (no feeding)
  PeerDeques peers;
  VictimChoice victim = VictimChoice::Random;
  std::uint32_t remote_chunk = 1;  // <= deque_capacity and spawn_capacity (the thief's buffer)
};

__device__ inline std::uint32_t xorshift32(std::uint32_t& s) {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

// remote=request, the owner's side (Acar, Chargueraud & Rainey, "Scheduling Parallel Programs by
// Work Stealing with Private Deques", PPoPP 2013: a thief asks, the owner answers at its next
// poll). Thread 0 of block `rank` polls its mailbox at every task boundary and every idle pass:
// one relaxed system-scope load of its own memory while nobody asks. A request is answered with up
// to remote_chunk tasks from the top of its own deque (pop_top_chunk: the owner as a thief of its
// own deque, while it is not pushing or popping, races only the local thieves' CAS), possibly 0.
// Returns how many it sent (for the trace: the answer is a DequeLevel-less take).
template <Scope S>
__device__ std::uint32_t answer_remote_request(const MgWsKernelArgs<S>& w, std::uint32_t rank) {
  system_atomic_ref<std::uint32_t> request(w.peers.mail[w.peers.self][rank].request);
  const std::uint32_t id = request.load(mo::relaxed);
  if (id == 0) return 0;
  // acquire (fence: only on this rare path): the thief's reset of its reply, ordered before its
  // request by its release CAS, happens before our reply below.
  ::cuda::atomic_thread_fence(::cuda::std::memory_order_acquire, ::cuda::thread_scope_system);
  const std::uint32_t gpu = (id - 1) >> 24, block = (id - 1) & 0xFFFFFFu;
  Task* out = w.peers.inbox[gpu] + static_cast<std::size_t>(block) * w.remote_chunk;  // the thief's memory
  StealResult res = StealResult::Empty;
  std::uint32_t n = 0;
  Task taken[1];
  // Task by task: pop_top_chunk writes its copies before it knows they are ours, so it cannot
  // write into the thief's inbox directly (a torn copy could be read after a later reply).
  // The owner keeps one task to run next (its pop then needs no race for the last one).
  while (n < w.remote_chunk && w.ws.deques.template at<S>(rank).size_hint() >= 2) {
    if (w.ws.deques.template at<S>(rank).pop_top_chunk(taken, 1, res) != 1) {
      if (res == StealResult::Abort) continue;  // a local thief won that task: look again
      break;
    }
    out[n++] = taken[0];
  }
  // release: the tasks above reach the thief with its acquire of the reply.
  system_atomic_ref<std::uint32_t>(w.peers.mail[gpu][block].reply).store(1 + n, mo::release);
  request.store(0, mo::relaxed);  // a new request may come; it is answered at a later poll
  return n;
}

template <class Body, Scope S>
__global__ void work_stealing_multi_kernel(MgWsKernelArgs<S> w, DynamicArgs a, Body body) {
  using trace::EventKind;
  constexpr bool kRequest = S == Scope::Device;
  __shared__ DynamicMailbox box;
  const std::uint32_t rank = blockIdx.x;
  const BlockContext ctx = a.context(rank, box);
  ctx.record(EventKind::WorkerStart, rank, static_cast<std::uint16_t>(smid()));
  // Thread 0's state (the other threads carry it unused). Registers matter: a few more cost
  // resident blocks (the one-GPU kernel's note; ptxas -v, sm_90, UTS: 64 as the one-GPU kernel).
  // So one random state for local and remote victims, remote steals counted in global memory,
  // the count of failed passes read off the back-off (it doubles once a failed pass), and `ws` a
  // copy as on one GPU (a reference to the parameter took 8 more).
  const BasicWorkStealingRef<S, Scope::System> ws = w.ws;
  VictimPicker picker = VictimPicker::make(w.victim, rank ^ (w.peers.self << 20));
  DynamicBlockStats st{};
  st.sm = smid();
  __shared__ PendingCredit credit;  // in shared memory, as on one GPU (registers)
  if (threadIdx.x == 0) {
    credit.units = 0;
    a.stats[rank].remote_steals = 0;
  }
  bool idle = false, drained = false;
  unsigned backoff = kMinBackoffNs;
  const auto owner = static_cast<std::uint16_t>(rank);

  // The run is over (see the top): `drained` is monotone, its loads came before this one.
  auto finished = [&]() -> bool {
    if (!drained) drained = ws.host_drained();
    return drained && ws.no_pending();
  };

  // The stolen tasks are in got[0..k): the first is run, the rest pushed onto our deque (empty: our
  // own pop just failed, and only we push). Their units travel with them: `pending` does not change.
  auto take_stolen = [&](Task& task, const Task* got, std::uint32_t k, std::uint32_t g, std::uint32_t victim) -> bool {
    task = got[0];
    ++st.steals;
    ++a.stats[rank].remote_steals;  // rare: global memory rather than a register
    ctx.record(EventKind::Steal, victim, trace::steal_aux_for_device(g));
    if (k > 1) {
      std::uint32_t level = 0;
      const std::uint32_t pushed = ws.own(rank).push_bottom(got + 1, k - 1, level);
      ctx.record(EventKind::DequeLevel, level, owner);
      if (pushed < k - 1) {  // cannot happen (remote_chunk <= deque_capacity, the deque was empty)
        a.fail(DynamicFailure::DequeFull, rank, task.id, k - 1 - pushed);
        return false;
      }
    }
    return true;
  };

  // One steal from a random block of another GPU: Steal = found (task set), StealFailed = none,
  // Stop = the run stopped or ended while we waited for an answer.
  enum class Remote { Found, None, Stop, Done };
  auto steal_remote = [&](Task& task) -> Remote {
    std::uint32_t g = xorshift32(picker.state) % (w.peers.gpus - 1);
    if (g >= w.peers.self) ++g;
    const std::uint32_t victim = xorshift32(picker.state) % w.peers.gpu[g].count;
    std::uint32_t k = 0;
    if constexpr (kRequest) {
      ws.flush_pending(credit);  // our spare units must not hold up the end while we wait
      system_atomic_ref<std::uint32_t> reply(w.peers.mail[w.peers.self][rank].reply);
      reply.store(0, mo::relaxed);  // ordered before the request by the CAS's release
      std::uint32_t expected = 0;
      if (system_atomic_ref<std::uint32_t>(w.peers.mail[g][victim].request)
              .compare_exchange_strong(expected, remote_thief_id(w.peers.self, rank), mo::release, mo::relaxed)) {
        // Wait for the answer, answering (with nothing: we are idle) whoever asks us meanwhile,
        // so that two thieves asking each other cannot wait forever.
        unsigned wait = kMinBackoffNs;
        std::uint32_t r = 0;
        while ((r = reply.load(mo::acquire)) == 0) {
          if (a.should_stop()) return Remote::Stop;
          answer_remote_request(w, rank);
          // The victim may have ended (the run is over: nothing can be on its way to us).
          if (finished()) return Remote::Done;
          __nanosleep(wait);
          wait = wait < kMaxBackoffNs ? 2 * wait : kMaxBackoffNs;
        }
        k = r - 1;
        if (k > 0) return take_stolen(task, w.peers.inbox[w.peers.self] + static_cast<std::size_t>(rank) * w.remote_chunk, k, g, victim)
                              ? Remote::Found
                              : Remote::Stop;
      }
    } else {
      Task* got = a.slots(rank);  // our spawn slots, free between tasks
      StealResult res = StealResult::Empty;
      k = w.peers.gpu[g].template at<Scope::System>(victim).pop_top_chunk(got, w.remote_chunk, res);
      if (k > 0) return take_stolen(task, got, k, g, victim) ? Remote::Found : Remote::Stop;
    }
    ++st.steals_failed;
    if (!idle) ctx.record(EventKind::StealFailed, victim, trace::steal_aux_for_device(g));
    return Remote::None;
  };

  auto find = [&](Task& task) -> WorkerAction {
    for (;;) {
      if (a.should_stop()) return WorkerAction::Stop;
      if constexpr (kRequest) answer_remote_request(w, rank);
      const FindResult f = ws.find_task(rank, picker, task);
      bool found = f.source != TaskSource::None;
      if (found) {
        if (record_found(ctx, ws, f, owner)) ++st.steals;
      } else {
        if (f.steal_failed) {
          ++st.steals_failed;
          if (!idle) ctx.record(EventKind::StealFailed, f.victim);
        }
        // kLocalMissesBeforeRemote failed passes in a row have doubled the back-off that often.
        if (backoff >= (kMinBackoffNs << kLocalMissesBeforeRemote) && w.peers.gpus > 1) {
          const Remote r = steal_remote(task);
          if (r == Remote::Stop) return WorkerAction::Stop;
          if (r == Remote::Done) return WorkerAction::Done;
          found = r == Remote::Found;
        }
      }
      if (found) {
        idle = false;
        backoff = kMinBackoffNs;
        return WorkerAction::Run;
      }
      if (st.failed_attempts != ~std::uint64_t{0}) ++st.failed_attempts;
      if (!idle) ctx.record(EventKind::DequeueFailed, 0, kSharingQueueId);
      idle = true;
      if (!drained) {
        drained = ws.host_drained();
        if (!drained && w.staging.ctl != nullptr && feed_from_host(ws, w.staging) > 0) {
          ctx.record(EventKind::QueueLevel, ws.sharing.size_hint(), kSharingQueueId);
          continue;
        }
      }
      ws.flush_pending(credit);
      if (finished()) return WorkerAction::Done;
      __nanosleep(backoff);
      backoff = backoff < kMaxBackoffNs ? 2 * backoff : kMaxBackoffNs;
    }
  };

  auto publish = [&](const Task& task, std::uint32_t count) -> bool {
    a.task_finished(rank, ++st.tasks);
    if (!a.take_children_interleaved(task, rank, count)) return false;
    if (count == 0) {
      ws.task_done(credit);
      return true;
    }
    st.spawned += count;
    ctx.record(EventKind::Spawn, count);
    const PublishResult p = ws.publish_children(rank, a.slots(rank), count, credit);
    if (p.pushed > 0) ctx.record(EventKind::DequeLevel, p.deque_level, owner);
    if (p.spilled > 0) {
      st.spilled += p.spilled;
      ctx.record(EventKind::QueueLevel, ws.overflow.size_hint(), kOverflowQueueId);
    }
    if (p.failed) {
      a.fail(ws.spill ? DynamicFailure::OverflowFull : DynamicFailure::DequeFull, rank, task.id, count);
      return false;
    }
    return true;
  };

  dynamic_block_loop(ctx, body, box, find, publish);
  ctx.record(EventKind::WorkerEnd, static_cast<std::uint32_t>(st.failed_attempts > 0xFFFFFFFFu ? 0xFFFFFFFFu : st.failed_attempts));
  if (threadIdx.x == 0) {
    st.remote_steals = a.stats[rank].remote_steals;  // this thread's own earlier stores
    a.stats[rank] = st;
  }
}

namespace detail {

// -------------------------------------------------------------------------------------------------
// [SECTION] Host
// -------------------------------------------------------------------------------------------------

// Checks that every GPU of the run reaches every other's memory with native atomics (NVLink, or a
// PCIe peer path with atomics) and enables peer access both ways. A host-mediated fallback (steals
// relayed by the control threads) is not built: without peer access the run is refused.
inline void enable_peer_access(std::uint32_t gpus) {
  for (std::uint32_t a = 0; a < gpus; ++a) {
    for (std::uint32_t b = 0; b < gpus; ++b) {
      if (a == b) continue;
      int can = 0, atomics = 0;
      GPULB_CUDA_TRY(cudaDeviceCanAccessPeer(&can, static_cast<int>(a), static_cast<int>(b)));
      if (can) GPULB_CUDA_TRY(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, static_cast<int>(a), static_cast<int>(b)));
      if (!can || !atomics) {
        throw ConfigError("work-stealing across GPUs steals over peer memory, and GPU " + std::to_string(a) + " cannot " +
                          (can ? "use atomics on" : "access") + " GPU " + std::to_string(b) +
                          "'s memory (no NVLink or PCIe peer path); a host-mediated fallback is not built: use --gpus 1");
      }
    }
  }
  for (std::uint32_t a = 0; a < gpus; ++a) {
    GPULB_CUDA_TRY(cudaSetDevice(static_cast<int>(a)));
    for (std::uint32_t b = 0; b < gpus; ++b) {
      if (a == b) continue;
      const cudaError_t e = cudaDeviceEnablePeerAccess(static_cast<int>(b), 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();  // not sticky: an earlier run of this process enabled it
      } else {
        GPULB_CUDA_TRY(e);
      }
    }
  }
}

// One GPU's deques and queues (in its memory; current device at construction).
struct MgWsGpuState {
  MgWsGpuState(const PolicyOptions& o, std::uint32_t blocks, std::span<const Task> prefill, std::uint32_t inbox_slots)
      : blocks(blocks),
        capacity(o.deque_capacity),
        deque_ctl((check_device_bytes(std::uint64_t{blocks} * o.deque_capacity * sizeof(gpulb::detail::TaskWords),
                                      "the deques (blocks x deque_capacity=" + std::to_string(o.deque_capacity) +
                                          "; lower --param deque_capacity)"),
                   blocks)),
        deque_slots(std::size_t{blocks} * o.deque_capacity),
        overflow(o.overflow_capacity),
        sharing(o.sharing_capacity, prefill),
        mail(inbox_slots ? blocks : 0),
        inbox(std::size_t{blocks} * inbox_slots) {}

  WorkStealingDequesRef deques() const { return {deque_ctl.get(), deque_slots.get(), blocks, capacity}; }

  std::uint32_t blocks;
  std::uint32_t capacity;
  cuda::DeviceBuffer<WsDequeControl> deque_ctl;
  cuda::DeviceBuffer<gpulb::detail::TaskWords> deque_slots;
  DeviceSharingQueue overflow;
  DeviceSharingQueue sharing;
  cuda::DeviceBuffer<RemoteMailbox> mail;  // remote=request only (zeroed: no request, no reply)
  cuda::DeviceBuffer<Task> inbox;
};

// GPU 0's part for the whole run: the control words, the host's staging ring and its feed lock.
struct MgWsHome {
  MgWsHome(const PolicyOptions& o, std::uint64_t pending, std::uint64_t fed)
      : capacity(o.sharing_capacity), staging_ctl(1), staging_ring(o.sharing_capacity), feed_lock(1), control(1), host_end(1) {
    WorkStealingControl c;
    c.pending = static_cast<std::int64_t>(pending);
    c.fed = fed;
    control.upload(&c, 1);
  }
  StagingRef device_staging(std::uint64_t prefilled) const {
    return {staging_ctl.device(), staging_ring.device(), capacity, feed_lock.get(), prefilled};
  }
  StagingRef host_staging(std::uint64_t prefilled) const { return {staging_ctl.host(), staging_ring.host(), capacity, nullptr, prefilled}; }

  std::uint32_t capacity;
  cuda::MappedBuffer<HostStaging> staging_ctl;
  cuda::MappedBuffer<Task> staging_ring;
  cuda::DeviceBuffer<std::uint32_t> feed_lock;
  cuda::DeviceBuffer<WorkStealingControl> control;
  cuda::MappedBuffer<std::uint64_t> host_end;  // allocated before the launch (see WsDeviceState)
};

// Round robin into the GPUs' sharing queues while they have room; the rest in order for the ring.
struct InitialSplit {
  std::vector<std::vector<Task>> shares;
  std::vector<Task> rest;
  std::uint64_t prefilled = 0;
};
inline InitialSplit split_initial_tasks(std::span<const Task> tasks, std::uint32_t gpus, std::uint32_t capacity) {
  InitialSplit s;
  s.shares.resize(gpus);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    std::vector<Task>& share = s.shares[i % gpus];
    if (share.size() < capacity) share.push_back(tasks[i]);
    else s.rest.push_back(tasks[i]);
  }
  for (const auto& share : s.shares) s.prefilled += share.size();
  return s;
}

// Busy time of the worker tracks in [first, end) of `tracks`: sum of TaskBegin..TaskEnd.
inline std::uint64_t tracks_busy_ns(const std::vector<trace::Track>& tracks, std::size_t first) {
  std::uint64_t busy = 0;
  for (std::size_t i = first; i < tracks.size(); ++i) {
    std::uint64_t begin = 0;
    bool open = false;
    for (const trace::Event& e : tracks[i].events) {
      if (e.kind == trace::EventKind::TaskBegin) {
        begin = e.time_ns;
        open = true;
      } else if (e.kind == trace::EventKind::TaskEnd && open) {
        busy += e.time_ns > begin ? e.time_ns - begin : 0;
        open = false;
      }
    }
  }
  return busy;
}

struct MgWsGpuOutcome {
  std::uint64_t launch_ns = 0;
  std::uint64_t end_ns = 0;
  std::atomic<std::uint64_t> progress{0};
  std::atomic<bool> finished{false};
};

// S: the deques' scope, System for remote=steal, Device for remote=request.
template <Scope S, class Factory>
ExecOutput run_work_stealing_on_gpus(const ExecPlan& plan, Factory& make_body) {
  using Body = std::decay_t<decltype(make_body(0u, 0u))>;
  using trace::EventKind;
  constexpr bool kRequest = S == Scope::Device;
  int count = 0;
  GPULB_CUDA_TRY(cudaGetDeviceCount(&count));
  if (count == 0) throw ConfigError("no CUDA GPU is present; use --backend cpu");
  check_gpu_request(plan.gpus, static_cast<std::uint64_t>(count));
  const std::uint32_t gpus = plan.gpus;
  if (gpus > kMaxWsGpus) throw ConfigError("work-stealing runs on at most " + std::to_string(kMaxWsGpus) + " GPUs; use --gpus 1.." + std::to_string(kMaxWsGpus));
  // The control threads' plan: progress is reported here, from the sum of every GPU's count.
  ExecPlan p = plan;
  p.progress = nullptr;
  const PolicyOptions& o = p.options;
  const std::uint32_t remote_chunk = std::max(1u, std::min({o.remote_chunk, o.deque_capacity, o.spawn_capacity}));

  for (std::uint32_t g = 0; g < gpus; ++g) cuda::check_usable(static_cast<int>(g));
  enable_peer_access(gpus);

  const InitialSplit split = split_initial_tasks(p.tasks, gpus, o.sharing_capacity);
  const std::uint64_t origin = host_now_ns();
  std::atomic<bool> abort_all{false};
  std::vector<std::unique_ptr<GpuSession>> sessions;
  std::vector<GridSize> grids;
  std::vector<Body> bodies;
  std::vector<std::unique_ptr<MgWsGpuState>> states;
  std::vector<std::unique_ptr<DynamicHost>> hosts;
  std::unique_ptr<MgWsHome> home;
  std::vector<std::string> notes;
  // Every GPU's body and memory is made here, one GPU after the other, before any kernel starts:
  // a block may steal from any GPU's deques from its first pass on.
  std::uint32_t total_blocks = 0;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    try {
      GPULB_CUDA_TRY(cudaSetDevice(static_cast<int>(g)));
      sessions.push_back(std::make_unique<GpuSession>(static_cast<int>(g), g, origin));
      grids.push_back(persistent_grid(reinterpret_cast<const void*>(&work_stealing_multi_kernel<Body, S>), static_cast<int>(g), p.block_size,
                                      p.workers));
      if (!grids.back().note.empty()) notes.push_back("GPU " + std::to_string(g) + ": " + grids.back().note);
      total_blocks += grids.back().blocks;
      bodies.push_back(make_body(g, grids.back().blocks));
    } catch (...) {
      rethrow_gpu_failure(p, static_cast<int>(g));
    }
  }
  const std::uint32_t trace_capacity = dynamic_trace_capacity(p, total_blocks, 8, notes);
  for (std::uint32_t g = 0; g < gpus; ++g) {
    try {
      GPULB_CUDA_TRY(cudaSetDevice(static_cast<int>(g)));
      GpuSession& s = *sessions[g];
      const std::uint32_t blocks = grids[g].blocks;
      states.push_back(std::make_unique<MgWsGpuState>(o, blocks, split.shares[g], kRequest ? remote_chunk : 0));
      if (g == 0) home = std::make_unique<MgWsHome>(o, split.prefilled, split.shares[0].size());
      if (!split.shares[g].empty()) s.host_record(EventKind::HostEnqueue, static_cast<std::uint32_t>(split.shares[g].size()), kSharingQueueId);
      hosts.push_back(std::make_unique<DynamicHost>(s, p, blocks, abort_all));
      hosts.back()->interleave_ids(g, gpus);
      s.allocate_trace(blocks, trace_capacity);
    } catch (...) {
      rethrow_gpu_failure(p, static_cast<int>(g));
    }
  }
  std::vector<MgWsKernelArgs<S>> args(gpus);
  for (std::uint32_t g = 0; g < gpus; ++g) {
    MgWsKernelArgs<S>& k = args[g];
    const std::uint32_t blocks = grids[g].blocks;
    k.ws = BasicWorkStealingRef<S, Scope::System>{states[g]->deques(), states[g]->sharing.ref(), states[g]->overflow.ref(),
                                                  home->control.get(), blocks, o.deque_overflow == "spill", remote_chunk};
    if (g == 0) k.staging = home->device_staging(split.shares[0].size());
    k.peers.gpus = gpus;
    k.peers.self = g;
    for (std::uint32_t h = 0; h < gpus; ++h) {
      k.peers.gpu[h] = states[h]->deques();
      k.peers.mail[h] = states[h]->mail.get();
      k.peers.inbox[h] = states[h]->inbox.get();
    }
    k.victim = o.victim == "round-robin" ? VictimChoice::RoundRobin : VictimChoice::Random;
    k.remote_chunk = remote_chunk;
  }

  // For the watchdog's message: the run's control words and this GPU's queues.
  auto describe = [&](std::uint32_t g) {
    WorkStealingControl c;
    GpuSession& s = *sessions[g];
    GPULB_CUDA_TRY(cudaMemcpyAsync(&c, home->control.get(), sizeof c, cudaMemcpyDefault, s.copy_stream()));
    GPULB_CUDA_TRY(cudaStreamSynchronize(s.copy_stream()));
    auto queued = [](const SharingQueueControl& q) { return q.enqueue_pos > q.dequeue_pos ? q.enqueue_pos - q.dequeue_pos : 0; };
    return "GPU " + std::to_string(g) + " of " + std::to_string(gpus) + "; run pending " + std::to_string(c.pending) + ", host " +
           (c.host_end == 0 ? "inserting" : "done") + "; this GPU's sharing queue " + std::to_string(queued(states[g]->sharing.control())) +
           ", overflow queue " + std::to_string(queued(states[g]->overflow.control()));
  };

  std::vector<MgWsGpuOutcome> outcomes(gpus);
  std::vector<std::exception_ptr> errors(gpus);
  std::atomic<int> first_failure{-1};
  std::vector<std::thread> threads;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    threads.emplace_back([&, g] {
      GpuSession& s = *sessions[g];
      DynamicHost& host = *hosts[g];
      MgWsGpuOutcome& out = outcomes[g];
      try {
        try {
          GPULB_CUDA_TRY(cudaSetDevice(s.device()));
          const std::function<std::string()> state = [&] { return describe(g); };
          // Progress for this GPU's watchdog: every GPU's tasks (a GPU whose blocks wait for the
          // others' last tasks is not stuck).
          auto others = [&] {
            std::uint64_t n = 0;
            for (std::uint32_t h = 0; h < gpus; ++h) n += h == g ? 0 : outcomes[h].progress.load(std::memory_order_relaxed);
            return n;
          };
          s.host_record(EventKind::KernelLaunch, grids[g].blocks);
          out.launch_ns = s.now_ns();
          work_stealing_multi_kernel<Body, S><<<grids[g].blocks, p.block_size, 0, s.kernel_stream()>>>(args[g], host.args(), bodies[g]);
          GPULB_CUDA_CHECK_LAUNCH();
          std::uint64_t inserted = 0;
          if (g == 0) {
            inserted = feed_and_close(s, p, split.rest, home->host_staging(split.shares[0].size()), split.shares[0].size(),
                                      home->control.get(), home->host_end, host, state);
          }
          while (cudaStreamQuery(s.kernel_stream()) == cudaErrorNotReady) {
            std::this_thread::sleep_for(std::chrono::microseconds(20));
            host.wait_step(state, inserted + others());
            out.progress.store(host.polled(), std::memory_order_relaxed);
          }
          GPULB_CUDA_TRY(cudaStreamSynchronize(s.kernel_stream()));
          out.end_ns = s.now_ns();
          s.host_record(EventKind::KernelEnd, grids[g].blocks);
          // A block of this GPU failed the run (its blocks stopped): report it from here, so that
          // it is the first failure and the other GPUs, whose blocks wait for tasks this GPU will
          // never finish, are stopped now rather than by their watchdogs.
          const DeviceFailure f = host.failure();
          if (f.code != 0) {
            const auto why = static_cast<DynamicFailure>(f.code);
            const bool full = why == DynamicFailure::OverflowFull || why == DynamicFailure::DequeFull;
            throw RunError((full ? policies::work_stealing_full_message("block", f.block, p.options) : host.common_failure_message(f)) +
                           " (GPU " + std::to_string(g) + ")");
          }
        } catch (...) {
          rethrow_gpu_failure(p, s.device());
        }
      } catch (...) {
        errors[g] = std::current_exception();
        int none = -1;
        first_failure.compare_exchange_strong(none, static_cast<int>(g));
        abort_all.store(true);
      }
      out.finished.store(true);
    });
  }
  for (;;) {
    bool all_done = true;
    std::uint64_t progress = 0;
    for (const MgWsGpuOutcome& oc : outcomes) {
      progress += oc.progress.load(std::memory_order_relaxed);
      all_done = all_done && oc.finished.load();
    }
    if (plan.progress) plan.progress(progress, plan.expected_tasks);
    if (all_done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (std::thread& t : threads) t.join();
  if (first_failure.load() >= 0) std::rethrow_exception(errors[static_cast<std::size_t>(first_failure.load())]);

  ExecOutput out;
  out.notes = std::move(notes);
  std::uint64_t first = ~std::uint64_t{0}, last = 0;
  std::uint64_t steals = 0, remote_steals = 0, steals_failed = 0, spilled = 0, slots = 0;
  std::uint32_t peak_deque = 0;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> per_sm;
  std::vector<std::uint64_t> gpu_tasks(gpus), gpu_busy(gpus);
  for (std::uint32_t g = 0; g < gpus; ++g) {
    GpuSession& s = *sessions[g];
    DynamicHost& host = *hosts[g];
    try {
      GPULB_CUDA_TRY(cudaSetDevice(s.device()));
      DynamicOutcome counts;
      host.collect(counts, false);
      out.tasks_run += counts.tasks_run;
      out.tasks_spawned += counts.tasks_spawned;
      gpu_tasks[g] = counts.tasks_run;
      std::uint64_t gpu_steals = 0, gpu_remote = 0;
      for (const DynamicBlockStats& b : host.snapshot()) {
        gpu_steals += b.steals;
        gpu_remote += b.remote_steals;
        steals_failed += b.steals_failed;
        spilled += b.spilled;
        per_sm[{g, b.sm}] += b.tasks;
      }
      steals += gpu_steals;
      remote_steals += gpu_remote;
      out.metrics["gpu" + std::to_string(g) + "_tasks"] = counts.tasks_run;
      out.metrics["gpu" + std::to_string(g) + "_steals"] = gpu_steals;
      out.metrics["gpu" + std::to_string(g) + "_remote_steals"] = gpu_remote;
      out.metrics["gpu" + std::to_string(g) + "_kernel_ns"] = outcomes[g].end_ns > outcomes[g].launch_ns ? outcomes[g].end_ns - outcomes[g].launch_ns : 0;
      std::vector<WsDequeControl> deques(grids[g].blocks);
      states[g]->deque_ctl.download(deques.data(), deques.size());
      std::uint32_t gpu_peak = 0;
      for (const WsDequeControl& q : deques) gpu_peak = std::max(gpu_peak, q.peak);
      peak_deque = std::max(peak_deque, gpu_peak);
      slots += std::uint64_t{grids[g].blocks} * gpu_peak + states[g]->overflow.control().peak + states[g]->sharing.control().peak;
      first = std::min(first, outcomes[g].launch_ns);
      last = std::max(last, outcomes[g].end_ns);
      out.workers += grids[g].blocks;
      s.info().workers = grids[g].blocks;
      out.trace.devices.push_back(s.info());
      if (p.trace) {
        const std::size_t from = out.trace.tracks.size();
        s.drain_worker_tracks(out.trace.tracks);
        gpu_busy[g] = tracks_busy_ns(out.trace.tracks, from);
        out.metrics["gpu" + std::to_string(g) + "_busy_ns"] = gpu_busy[g];
        out.trace.tracks.push_back(s.host_track("GPU " + std::to_string(s.device()) + " control thread"));
      }
    } catch (...) {
      rethrow_gpu_failure(p, s.device());
    }
  }
  out.makespan_ns = last > first ? last - first : 0;
  out.metrics["steals"] = steals;
  out.metrics["remote_steals"] = remote_steals;
  out.metrics["steals_failed"] = steals_failed;
  out.metrics["spilled"] = spilled;
  out.metrics["peak_deque_level"] = peak_deque;
  out.metrics["peak_task_slots"] = slots;
  out.metrics["gpus"] = gpus;
  std::uint64_t most = 0, least = ~std::uint64_t{0};
  for (const auto& [where, n] : per_sm) {
    most = std::max(most, n);
    least = std::min(least, n);
  }
  out.metrics["tasks_per_sm_max"] = most;
  out.metrics["tasks_per_sm_min"] = per_sm.empty() ? 0 : least;
  // The per-GPU balance in words (the metrics hold the numbers).
  std::string balance = "work-stealing across " + std::to_string(gpus) + " GPUs (remote=" + o.remote + "; " + std::to_string(remote_steals) + " of " +
                        std::to_string(steals) + " steals across GPUs): tasks per GPU";
  for (std::uint32_t g = 0; g < gpus; ++g) {
    const double share = out.tasks_run ? 100.0 * static_cast<double>(gpu_tasks[g]) / static_cast<double>(out.tasks_run) : 0.0;
    balance += (g ? ", " : " ") + std::to_string(gpu_tasks[g]) + " (" + std::to_string(static_cast<int>(share + 0.5)) + "%)";
  }
  if (p.trace && out.makespan_ns > 0) {
    balance += "; busy per GPU";
    for (std::uint32_t g = 0; g < gpus; ++g) {
      const double busy = 100.0 * static_cast<double>(gpu_busy[g]) / (static_cast<double>(grids[g].blocks) * static_cast<double>(out.makespan_ns));
      balance += (g ? ", " : " ") + std::to_string(static_cast<int>(busy + 0.5)) + "%";
    }
  }
  out.notes.push_back(balance);
  if (spilled > 0) {
    out.notes.push_back(std::to_string(spilled) + " spawned tasks did not fit a deque and went through the overflow queues (deque_capacity=" +
                        std::to_string(o.deque_capacity) + ")");
  }
  out.trace.meta.clock_source = "globaltimer aligned to steady_clock";
  if (plan.progress) plan.progress(out.tasks_run, plan.expected_tasks);
  return out;
}

}  // namespace detail
}  // namespace gpulb::kernels
