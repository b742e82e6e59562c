// The host's side of work stealing across the GPUs of one host (--gpus N > 1), a run on the GPU
// run frame (gpu_run.cuh, which gives it a control thread per GPU and merges the trace): where the
// words that GPUs share live (peer memory or mapped host memory, --param peer), each GPU's deques
// and queues in its memory, the run's control words and GPU 0's staging ring, each GPU's launch and
// wait, and the per-GPU balance. The kernel, and the design (memory, stealing, termination, ids,
// the two placements): work_stealing_multi_gpu.cuh.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulb/clock.hpp"
#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/device_health.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/gpu_request.hpp"
#include "gpulb/kernels/detail/gpu_failure.hpp"
#include "gpulb/kernels/detail/gpu_run.cuh"
#include "gpulb/kernels/detail/rank_ws_port.hpp"
#include "gpulb/kernels/work_stealing_multi_gpu.cuh"
#include "gpulb/policies/work_stealing.hpp"

namespace gpulb::kernels {
namespace detail {

// Why not every pair of GPUs reaches the other's memory with native atomics (NVLink, or a PCIe
// peer path with atomics), e.g. "no peer access between GPU 0 and GPU 1"; empty when all do.
inline std::string missing_peer_path(std::uint32_t gpus) {
  for (std::uint32_t a = 0; a < gpus; ++a) {
    for (std::uint32_t b = 0; b < gpus; ++b) {
      if (a == b) continue;
      int can = 0, atomics = 0;
      GPULB_CUDA_TRY(cudaDeviceCanAccessPeer(&can, static_cast<int>(a), static_cast<int>(b)));
      if (can)
        GPULB_CUDA_TRY(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported,
                                                 static_cast<int>(a), static_cast<int>(b)));
      if (!can)
        return "no peer access between GPU " + std::to_string(a) + " and GPU " + std::to_string(b);
      if (!atomics)
        return "no native peer atomics from GPU " + std::to_string(a) + " on GPU " +
               std::to_string(b) + "'s memory";
    }
  }
  return {};
}

// Why not every GPU's link to the host carries the RMWs that the run's shared words take (64-bit
// integer add on `pending`, 32-bit CAS on a mailbox) as native atomics; empty when all do. Without
// native support CUDA does not promise that one GPU's atomic on mapped host memory is atomic with
// respect to another GPU's (libcu++'s "Concurrency Restrictions"; the Programming Guide's note on
// mapped memory), and the run's termination counts on exactly that.
inline std::string missing_host_atomics(std::uint32_t gpus) {
  for (std::uint32_t g = 0; g < gpus; ++g) {
    int all = 0;
    GPULB_CUDA_TRY(
        cudaDeviceGetAttribute(&all, cudaDevAttrHostNativeAtomicSupported, static_cast<int>(g)));
    if (all) continue;  // NVLink-C2C, POWER9: every atomic
    const std::string who = "GPU " + std::to_string(g) + "'s link to the host";
#if CUDART_VERSION >= 13000
    // A PCIe link with AtomicOps (FetchAdd, Swap, CAS) reports these as native.
    const cudaAtomicOperation ops[2] = {cudaAtomicOperationIntegerAdd, cudaAtomicOperationCAS};
    unsigned caps[2] = {0, 0};
    const cudaError_t e = cudaDeviceGetHostAtomicCapabilities(caps, ops, 2, static_cast<int>(g));
    if (e != cudaSuccess) {
      cudaGetLastError();  // not sticky
      return who + " does not say which atomics it carries (" + cudaGetErrorString(e) + ")";
    }
    if (!(caps[0] & cudaAtomicCapabilityScalar64)) return who + " has no native 64-bit atomic add";
    if (!(caps[1] & cudaAtomicCapabilityScalar32))
      return who + " has no native 32-bit compare-and-swap";
#else
    return who + " has no native atomics (cudaDevAttrHostNativeAtomicSupported is 0)";
#endif
  }
  return {};
}

// Where the words that GPUs share live (--param peer; work_stealing_multi_gpu.cuh, "Two
// placements"): in one GPU's memory, reached over peer access, or in mapped host memory.
struct WsPlacement {
  bool host = false;
  std::string note;  // for the run's notes: which path, and why
};

// The option checks that need no GPU: remote=steal CASes another GPU's deque, which lives in that
// GPU's memory, so it needs peer memory.
inline void check_ws_placement_options(const policies::WorkStealingOptions& o) {
  if (o.peer == PeerMemory::Off && o.remote == RemoteMode::Steal) {
    throw ConfigError(
        "work-stealing across GPUs: --param remote=steal CASes the deques of another GPU over peer "
        "memory, and --param "
        "peer=off keeps the run off peer memory; use --param remote=request with peer=off (the "
        "owner hands tasks over "
        "through host memory), or peer=auto|on");
  }
}

// The placement from the options and what the GPUs offer: `no_peer` and `no_host_atomics` as
// missing_peer_path and missing_host_atomics say it ("" = available). Pure, for the tests.
inline WsPlacement choose_ws_placement(const policies::WorkStealingOptions& o,
                                       const std::string& no_peer,
                                       const std::string& no_host_atomics) {
  check_ws_placement_options(o);
  if (o.peer != PeerMemory::Off && no_peer.empty())
    return {false, "work stealing across GPUs over peer memory (NVLink/PCIe P2P)"};
  if (o.peer == PeerMemory::On) {
    throw ConfigError(
        "work-stealing across GPUs: --param peer=on needs peer memory between every pair of GPUs, "
        "and there is " +
        no_peer +
        " (no NVLink or PCIe peer path with atomics); use --param peer=auto or peer=off (through "
        "host memory), or --gpus 1");
  }
  if (o.remote == RemoteMode::Steal) {  // peer=auto without peer memory
    throw ConfigError(
        "work-stealing across GPUs: --param remote=steal CASes the deques of another GPU over peer "
        "memory, and there is " +
        no_peer +
        " (--param peer=auto); use --param remote=request (the owner hands tasks over through host "
        "memory), or --gpus 1");
  }
  const std::string why = o.peer == PeerMemory::Off ? std::string("--param peer=off") : no_peer;
  if (!no_host_atomics.empty()) {
    throw ConfigError(
        "work-stealing across GPUs through host memory (" + why +
        ") needs native atomics between each GPU and the host, and " + no_host_atomics +
        "; use --gpus 1" +
        (o.peer == PeerMemory::Off ? std::string(" or --param peer=auto") : std::string()));
  }
  return {true, o.peer == PeerMemory::Off
                    ? "work stealing across GPUs through host memory (--param peer=off)"
                    : "work stealing across GPUs through host memory: " + no_peer};
}

// Enables peer access both ways between every pair of GPUs (missing_peer_path said it is there).
inline void enable_peer_access(std::uint32_t gpus) {
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

// Most bytes of one GPU's inboxes (blocks x remote_chunk tasks) in pinned host memory: a larger
// remote_chunk is lowered for the run, with a note.
inline constexpr std::uint64_t kHostInboxBytes = 16u << 20;

// Words that other GPUs touch: in the GPU's memory (peer placement; current device at
// construction) or in mapped, pinned, portable host memory (zeroed either way). Under unified
// addressing a mapped buffer's device pointer is its host pointer, the same on every GPU.
template <class T>
struct SharedArray {
  SharedArray(std::size_t n, bool host) : in_gpu(host ? 0 : n), in_host(host ? n : 0) {}
  T* get() const { return in_host.size() ? in_host.device() : in_gpu.get(); }
  cuda::DeviceBuffer<T> in_gpu;
  cuda::MappedBuffer<T> in_host;
};

// Tasks one block lends at most to its rank's host for another rank (a distributed run;
// answer_host_lend): a thief rank asks for thousands (--rank-chunk), and the host asks many blocks.
inline constexpr std::uint32_t kLendChunk = 64;

// One GPU's deques and queues (in its memory; current device at construction). `lend_chunk`: a
// distributed run's loans to other ranks (0: none).
struct MgWsGpuState {
  MgWsGpuState(const policies::WorkStealingOptions& o, std::uint32_t blocks,
               std::span<const Task> prefill, std::uint32_t inbox_slots, bool host,
               std::uint32_t lend_chunk)
      : blocks(blocks),
        capacity(o.deque_capacity),
        deque_ctl((check_device_bytes(
                       std::uint64_t{blocks} * o.deque_capacity * sizeof(gpulb::detail::TaskWords),
                       "the deques (blocks x deque_capacity=" + std::to_string(o.deque_capacity) +
                           "; lower --param deque_capacity)"),
                   blocks)),
        deque_slots(std::size_t{blocks} * o.deque_capacity),
        overflow(o.overflow_capacity),
        sharing(o.sharing_capacity, prefill),
        mail(inbox_slots ? blocks : 0, host),
        inbox(std::size_t{blocks} * inbox_slots, host),
        reserve(1),
        lend_reply(lend_chunk ? blocks : 0),
        lend_outbox(std::size_t{blocks} * lend_chunk) {}

  WorkStealingDequesRef deques() const {
    return {deque_ctl.get(), deque_slots.get(), blocks, capacity};
  }

  std::uint32_t blocks;
  std::uint32_t capacity;
  cuda::DeviceBuffer<WsDequeControl> deque_ctl;
  cuda::DeviceBuffer<gpulb::detail::TaskWords> deque_slots;
  DeviceSharingQueue overflow;
  DeviceSharingQueue sharing;
  SharedArray<RemoteMailbox> mail;  // remote=request only (zeroed: no request, no reply)
  SharedArray<Task> inbox;
  cuda::DeviceBuffer<std::int64_t>
      reserve;  // units counted in GPU 0's pending, parked here (zeroed)
  cuda::MappedBuffer<std::uint32_t> lend_reply;  // a distributed run: answer_host_lend's
  cuda::MappedBuffer<Task> lend_outbox;
};

// The run's part in GPU 0's memory (or host memory): the control words, the host's staging ring
// and its feed lock (GPU 0's blocks alone feed from the host).
struct MgWsHome {
  // `closed`: every task is in a sharing queue and no host feed is set, so the feed is closed
  // before the launch (feed_and_close later writes the same value), as on one GPU (WsDeviceState):
  // the kernels never wait on the host, and a profiler that holds the host until a kernel ends
  // (Nsight Compute) does not hang the run.
  MgWsHome(const policies::WorkStealingOptions& o, std::uint64_t pending, std::uint64_t fed,
           bool host, bool closed)
      : capacity(o.sharing_capacity),
        staging_ctl(1),
        staging_ring(o.sharing_capacity),
        feed_lock(1),
        control(1, host),
        host_end(1) {
    WorkStealingControl c;
    c.pending = static_cast<std::int64_t>(pending);
    c.fed = fed;
    if (closed) c.host_end = 1 + fed;
    if (host)
      *control.in_host.host() = c;  // before the launch, which orders it
    else
      control.in_gpu.upload(&c, 1);
  }
  StagingRef device_staging(std::uint64_t prefilled) const {
    return {staging_ctl.device(), staging_ring.device(), capacity, feed_lock.get(), prefilled};
  }
  StagingRef host_staging(std::uint64_t prefilled) const {
    return {staging_ctl.host(), staging_ring.host(), capacity, nullptr, prefilled};
  }

  std::uint32_t capacity;
  cuda::MappedBuffer<HostStaging> staging_ctl;
  cuda::MappedBuffer<Task> staging_ring;
  cuda::DeviceBuffer<std::uint32_t> feed_lock;
  SharedArray<WorkStealingControl> control;    // every GPU's blocks update it (system scope)
  cuda::MappedBuffer<std::uint64_t> host_end;  // allocated before the launch (see WsDeviceState)
};

// Round robin into the GPUs' sharing queues while they have room; the rest in order for the ring.
struct InitialSplit {
  std::vector<std::vector<Task>> shares;
  std::vector<Task> rest;
  std::uint64_t prefilled = 0;
};
inline InitialSplit split_initial_tasks(std::span<const Task> tasks, std::uint32_t gpus,
                                        std::uint32_t capacity) {
  InitialSplit s;
  s.shares.resize(gpus);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    std::vector<Task>& share = s.shares[i % gpus];
    if (share.size() < capacity)
      share.push_back(tasks[i]);
    else
      s.rest.push_back(tasks[i]);
  }
  for (const auto& share : s.shares) s.prefilled += share.size();
  return s;
}

// Busy time of the worker tracks [first, end) of `tracks`: sum of TaskBegin..TaskEnd.
inline std::uint64_t tracks_busy_ns(const std::vector<trace::Track>& tracks, std::size_t first,
                                    std::size_t end) {
  std::uint64_t busy = 0;
  for (std::size_t i = first; i < end; ++i) {
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
};

// The counts of every GPU's blocks, summed as the GPUs are collected.
struct MgWsTotals {
  std::uint64_t steals = 0, remote_steals = 0, steals_failed = 0, spilled = 0, slots = 0;
  std::uint32_t peak_deque = 0;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> per_sm;  // (GPU, SM) -> tasks
};

// What runs one task on each GPU, and the kernel that does it: a block (Grossman; this struct),
// or a thread of a block that runs a batch (task_per=lane: LaneTasks,
// work_stealing_lanes_multi_gpu.cuh). The frame below asks it for the grid, the launch, the most
// tasks one answer to another GPU may bring, and the trace events a task takes.
struct BlockTasks {
  static constexpr std::uint32_t kEventsPerTask = 8;
  template <class Body, Scope S>
  static GridSize grid(int device, const ExecPlan& p) {
    return persistent_grid(reinterpret_cast<const void*>(&work_stealing_multi_kernel<Body, S>),
                           device, p.block_size, p.workers);
  }
  template <class Body>
  static void check(const Body&) {}
  static std::uint32_t most_remote_chunk(const ExecPlan&) { return ~0u; }
  template <class Body, Scope S>
  static void launch(std::uint32_t blocks, const ExecPlan& p, cudaStream_t stream,
                     const MgWsKernelArgs<S>& k, const DynamicArgs& a, const Body& body) {
    work_stealing_multi_kernel<Body, S><<<blocks, p.block_size, 0, stream>>>(k, a, body);
  }
};

// The run of work stealing across GPUs on the GPU run frame (gpu_run.cuh). S: the deques' scope,
// System for remote=steal, Device for remote=request. Tasks: BlockTasks or LaneTasks (above).
//
// Body is the factory's body type as the caller spells it (body_factory.hpp says why it is not
// named here).
template <Scope S, class Factory, class Body, class Tasks>
class WsAcrossGpus {
 public:
  static constexpr bool kRequest = S == Scope::Device;

  WsAcrossGpus(const GpuRun& run, Factory& make_body)
      : make_body_(make_body),
        o_(run.plan().policy_options<policies::WorkStealingOptions>()),
        gpus_(run.gpus()),
        ranks_(run.plan().distribution) {
    launch_gate_.store(ranks_ == nullptr, std::memory_order_relaxed);
    if (gpus_ > kMaxWsGpus)
      throw ConfigError("work-stealing runs on at most " + std::to_string(kMaxWsGpus) +
                        " GPUs; use --gpus 1.." + std::to_string(kMaxWsGpus));
    // 0: by remote (the option's help). Under steal a chunk makes every owner pop pay a CAS while its
    // deque is that short, so 1; an answer to a request costs the owner nothing below its last task.
    const std::uint32_t asked_chunk =
        o_.remote_chunk != 0 ? o_.remote_chunk : (kRequest ? kDefaultRequestChunk : 1u);
    remote_chunk_ = std::max(1u, std::min({asked_chunk, o_.deque_capacity, o_.spawn_capacity,
                                           Tasks::most_remote_chunk(run.plan())}));
  }

  std::vector<std::string> notes;
  TrackLayout layout() const { return TrackLayout::PerBlock; }

  // Peer memory, or host memory (work_stealing_multi_gpu.cuh, "Two placements"). Only
  // remote=request runs through host memory, the kernel's S = Device instantiation: the same
  // kernel, its shared words allocated elsewhere.
  void connect(GpuRun&) {
    const std::string no_peer =
        o_.peer == PeerMemory::Off ? std::string() : missing_peer_path(gpus_);
    const bool want_host = o_.peer == PeerMemory::Off || !no_peer.empty();
    placement_ = choose_ws_placement(
        o_, no_peer, want_host && kRequest ? missing_host_atomics(gpus_) : std::string());
    if (!placement_.host) enable_peer_access(gpus_);
    notes.push_back(placement_.note);
  }

  // Every GPU's body and memory is made here, one GPU after the other, before any kernel starts:
  // a block may steal from any GPU's deques from its first pass on.
  void allocate(GpuRun& run) {
    split_ = split_initial_tasks(run.plan().tasks, gpus_, o_.sharing_capacity);
    expected_tasks_ = run.plan().expected_tasks;
    std::uint32_t total_blocks = 0;
    for (std::uint32_t g = 0; g < gpus_; ++g)
      run.on_gpu(g, [&] { total_blocks += open_gpu(run, g); });
    const std::uint32_t trace_capacity =
        dynamic_trace_capacity(run.plan(), total_blocks, Tasks::kEventsPerTask, notes);
    if (placement_.host) fit_host_inboxes();
    for (std::uint32_t g = 0; g < gpus_; ++g)
      run.on_gpu(g, [&] { allocate_gpu(run, g, trace_capacity); });
    args_.resize(gpus_);
    for (std::uint32_t g = 0; g < gpus_; ++g) args_[g] = kernel_args(g);
    outcomes_ = std::vector<MgWsGpuOutcome>(gpus_);
  }

  void control(GpuRun& run, std::uint32_t g);
  void balance_ranks(GpuRun& run);

  GpuProgress progress() const {
    GpuProgress p{0, expected_tasks_};
    for (const MgWsGpuOutcome& oc : outcomes_)
      p.done += oc.progress.load(std::memory_order_relaxed);
    return p;
  }

  GpuShare collect(GpuRun& run, std::uint32_t g, ExecOutput& out);
  void finish(GpuRun& run, ExecOutput& out);

 private:
  std::uint32_t open_gpu(GpuRun& run, std::uint32_t g);
  void fit_host_inboxes();
  void allocate_gpu(GpuRun& run, std::uint32_t g, std::uint32_t trace_capacity);
  MgWsKernelArgs<S> kernel_args(std::uint32_t g) const;
  std::string describe(GpuRun& run, std::uint32_t g) const;
  void wait_for_kernel(GpuRun& run, std::uint32_t g, std::uint64_t inserted,
                       const std::function<std::string()>& state);
  std::string balance_note(GpuRun& run, const ExecOutput& out,
                           const std::vector<std::uint64_t>& busy) const;
  bool distributed() const { return ranks_ != nullptr; }
  std::uint32_t lend_chunk() const { return distributed() ? kLendChunk : 0; }
  bool wait_for_ranks(GpuRun& run) const;
  void feed_from_ranks(GpuRun& run, HostInserter& gpu0, DynamicHost& host,
                       const std::function<std::string()>& state);
  std::unique_ptr<RankWsPort> make_rank_port(GpuRun& run);

  Factory& make_body_;
  const policies::WorkStealingOptions& o_;
  std::uint32_t gpus_;
  std::uint32_t remote_chunk_ = 1;
  std::uint64_t expected_tasks_ = 0;
  WsPlacement placement_;
  InitialSplit split_;
  std::vector<GridSize> grids_;
  std::vector<Body> bodies_;
  std::vector<std::unique_ptr<MgWsGpuState>> states_;
  std::vector<std::unique_ptr<DynamicHost>> hosts_;
  std::unique_ptr<MgWsHome> home_;
  std::vector<MgWsKernelArgs<S>> args_;
  std::vector<MgWsGpuOutcome> outcomes_;
  MgWsTotals totals_;
  // A distributed run (balance_ranks): the GPUs launch once the ranks have met; chunks from other
  // ranks reach GPU 0's control thread through the handoff; the balancer's host track.
  Distribution* ranks_;
  std::atomic<bool> launch_gate_{true};
  RankHandoff handoff_;
  std::atomic<std::uint64_t> rank_idle_seen_{0};
  // Kept until the run's memory goes: its pinned buffers must not be freed while a kernel runs
  // (cudaFreeHost waits for the device, whose blocks wait for the feed to close).
  std::unique_ptr<RankWsPort> rank_port_;
};

// GPU g's grid and body; returns its blocks.
template <Scope S, class Factory, class Body, class Tasks>
std::uint32_t WsAcrossGpus<S, Factory, Body, Tasks>::open_gpu(GpuRun& run, std::uint32_t g) {
  const ExecPlan& p = run.plan();
  grids_.push_back(Tasks::template grid<Body, S>(static_cast<int>(g), p));
  if (!grids_.back().note.empty())
    notes.push_back("GPU " + std::to_string(g) + ": " + grids_.back().note);
  bodies_.push_back(make_body_(g, grids_.back().blocks));
  Tasks::check(bodies_.back());
  return grids_.back().blocks;
}

// The inboxes are pinned host memory: keep them to kHostInboxBytes a GPU.
template <Scope S, class Factory, class Body, class Tasks>
void WsAcrossGpus<S, Factory, Body, Tasks>::fit_host_inboxes() {
  std::uint32_t most_blocks = 1;
  for (const GridSize& grid : grids_) most_blocks = std::max(most_blocks, grid.blocks);
  const auto fits = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1, kHostInboxBytes / (std::uint64_t{most_blocks} * sizeof(Task))));
  if (remote_chunk_ > fits) {
    notes.push_back("remote_chunk lowered from " + std::to_string(remote_chunk_) + " to " +
                    std::to_string(fits) +
                    ": through host memory each block's inbox holds remote_chunk tasks in pinned "
                    "memory, at most " +
                    std::to_string(kHostInboxBytes >> 20) + " MiB a GPU");
    remote_chunk_ = fits;
  }
}

// GPU g's deques and queues (GPU 0: the run's control words and staging ring too), its host side
// and its trace segments.
template <Scope S, class Factory, class Body, class Tasks>
void WsAcrossGpus<S, Factory, Body, Tasks>::allocate_gpu(GpuRun& run, std::uint32_t g,
                                                         std::uint32_t trace_capacity) {
  const ExecPlan& p = run.plan();
  GpuSession& s = run.session(g);
  const std::uint32_t blocks = grids_[g].blocks;
  states_.push_back(std::make_unique<MgWsGpuState>(
      o_, blocks, split_.shares[g], kRequest ? remote_chunk_ : 0, placement_.host, lend_chunk()));
  if (g == 0)
    home_ =
        std::make_unique<MgWsHome>(o_, split_.prefilled, split_.shares[0].size(), placement_.host,
                                   split_.rest.empty() && !p.host_feed && !distributed());
  if (!split_.shares[g].empty())
    s.host_record(trace::EventKind::HostEnqueue,
                  static_cast<std::uint32_t>(split_.shares[g].size()), kSharingQueueId);
  hosts_.push_back(std::make_unique<DynamicHost>(s, p, blocks, run.abort_all()));
  hosts_.back()->interleave_ids(g, gpus_);
  s.allocate_trace(blocks, trace_capacity);
}

template <Scope S, class Factory, class Body, class Tasks>
MgWsKernelArgs<S> WsAcrossGpus<S, Factory, Body, Tasks>::kernel_args(std::uint32_t g) const {
  MgWsKernelArgs<S> k;
  const std::uint32_t blocks = grids_[g].blocks;
  k.ws = BasicWorkStealingRef<S, Scope::System>{states_[g]->deques(),
                                                states_[g]->sharing.ref(),
                                                states_[g]->overflow.ref(),
                                                home_->control.get(),
                                                blocks,
                                                o_.deque_overflow == DequeOverflow::Spill,
                                                remote_chunk_};
  if (g == 0) k.staging = home_->device_staging(split_.shares[0].size());
  k.peers.gpus = gpus_;
  k.peers.self = g;
  for (std::uint32_t h = 0; h < gpus_; ++h) {
    k.peers.gpu[h] = states_[h]->deques();
    // Through host memory a block reads another GPU's block count, never its deques: a null
    // pointer makes a read by mistake fail loudly rather than read a foreign address.
    if (placement_.host && h != g) {
      k.peers.gpu[h].ctl = nullptr;
      k.peers.gpu[h].slots = nullptr;
    }
    k.peers.mail[h] = states_[h]->mail.get();
    k.peers.inbox[h] = states_[h]->inbox.get();
  }
  k.victim = o_.victim;
  k.remote_chunk = remote_chunk_;
  k.remote_after = std::max(1u, o_.remote_after);
  k.remote_poll = std::max(1u, o_.remote_poll);
  k.reserve = states_[g]->reserve.get();
  k.lend_reply = states_[g]->lend_reply.device();
  k.lend_outbox = states_[g]->lend_outbox.device();
  k.lend_chunk = lend_chunk();
  return k;
}

// For the watchdog's message: the run's control words and this GPU's queues.
template <Scope S, class Factory, class Body, class Tasks>
std::string WsAcrossGpus<S, Factory, Body, Tasks>::describe(GpuRun& run, std::uint32_t g) const {
  WorkStealingControl c;
  GpuSession& s = run.session(g);
  GPULB_CUDA_TRY(
      cudaMemcpyAsync(&c, home_->control.get(), sizeof c, cudaMemcpyDefault, s.copy_stream()));
  GPULB_CUDA_TRY(cudaStreamSynchronize(s.copy_stream()));
  auto queued = [](const SharingQueueControl& q) {
    return q.enqueue_pos > q.dequeue_pos ? q.enqueue_pos - q.dequeue_pos : 0;
  };
  return "GPU " + std::to_string(g) + " of " + std::to_string(gpus_) + "; run pending " +
         std::to_string(c.pending) + ", host " + (c.host_end == 0 ? "inserting" : "done") +
         "; this GPU's sharing queue " + std::to_string(queued(states_[g]->sharing.control())) +
         ", overflow queue " + std::to_string(queued(states_[g]->overflow.control()));
}

// GPU g's part: the launch, GPU 0's feed from the host, the wait, the blocks' first failure.
template <Scope S, class Factory, class Body, class Tasks>
void WsAcrossGpus<S, Factory, Body, Tasks>::control(GpuRun& run, std::uint32_t g) {
  using trace::EventKind;
  const ExecPlan& p = run.plan();
  GpuSession& s = run.session(g);
  DynamicHost& host = *hosts_[g];
  const std::function<std::string()> state = [&] { return describe(run, g); };
  if (!wait_for_ranks(run)) return;  // the balancer failed before the launch: it reports why
  s.host_record(EventKind::KernelLaunch, grids_[g].blocks);
  outcomes_[g].launch_ns = s.now_ns();
  Tasks::template launch<Body, S>(grids_[g].blocks, p, s.kernel_stream(), args_[g], host.args(),
                                  bodies_[g]);
  GPULB_CUDA_CHECK_LAUNCH();
  std::uint64_t inserted = 0;
  if (g == 0) {
    const HostFeed feed =
        distributed() ? HostFeed([&](HostInserter& in) { feed_from_ranks(run, in, host, state); })
                      : p.host_feed;
    inserted = feed_and_close(
        s, feed, split_.rest, home_->host_staging(split_.shares[0].size()), split_.shares[0].size(),
        placement_.host ? home_->control.in_host.host() : home_->control.get(), home_->host_end,
        host, state, placement_.host);
  }
  wait_for_kernel(run, g, inserted, state);
  // A block of this GPU failed the run (its blocks stopped): report it from here, so that it is
  // the first failure and the other GPUs, whose blocks wait for tasks this GPU will never finish,
  // are stopped now rather than by their watchdogs.
  const DeviceFailure f = host.failure();
  if (f.code != 0) {
    const auto why = static_cast<DynamicFailure>(f.code);
    const bool full = why == DynamicFailure::OverflowFull || why == DynamicFailure::DequeFull;
    throw RunError((full ? policies::work_stealing_full_message(
                               "block", f.block, p.policy_options<policies::WorkStealingOptions>())
                         : host.common_failure_message(f)) +
                   " (GPU " + std::to_string(g) + ")");
  }
}

// Polls GPU g's blocks until its kernel ends. Progress for its watchdog: every GPU's tasks (a GPU
// whose blocks wait for the others' last tasks is not stuck).
template <Scope S, class Factory, class Body, class Tasks>
void WsAcrossGpus<S, Factory, Body, Tasks>::wait_for_kernel(
    GpuRun& run, std::uint32_t g, std::uint64_t inserted,
    const std::function<std::string()>& state) {
  GpuSession& s = run.session(g);
  DynamicHost& host = *hosts_[g];
  auto others = [&] {
    std::uint64_t n = 0;
    for (std::uint32_t h = 0; h < gpus_; ++h)
      n += h == g ? 0 : outcomes_[h].progress.load(std::memory_order_relaxed);
    return n;
  };
  while (cudaStreamQuery(s.kernel_stream()) == cudaErrorNotReady) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    host.wait_step(state, inserted + others() + rank_idle_seen_.load(std::memory_order_relaxed));
    outcomes_[g].progress.store(host.polled(), std::memory_order_relaxed);
  }
  GPULB_CUDA_TRY(cudaStreamSynchronize(s.kernel_stream()));
  outcomes_[g].end_ns = s.now_ns();
  s.host_record(trace::EventKind::KernelEnd, grids_[g].blocks);
}

// A distributed run: GPU g's control thread waits until the ranks have met (balance_ranks); false
// where the run stopped first.
template <Scope S, class Factory, class Body, class Tasks>
bool WsAcrossGpus<S, Factory, Body, Tasks>::wait_for_ranks(GpuRun& run) const {
  while (!launch_gate_.load(std::memory_order_acquire)) {
    if (run.abort_all().load(std::memory_order_relaxed)) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

// GPU 0's host feed in a distributed run: the chunks other ranks sent, until the ranks agree the
// run is over (then feed_and_close closes the feed), or until GPU 0's kernel ended (a block failed
// the run: control() reports it, and the balancer's check() sees it). Its watchdog and progress go
// on meanwhile; a rank waiting for a chunk is progress (rank_idle_seen_).
// Staged on demand: a received chunk waits in the handoff, where the next request from another rank
// takes it first, and goes into GPU 0's staging ring a batch of one task a block at a time, once
// the blocks have taken in the last batch (they take host tasks only when they find no other work).
// Staged whole, a chunk went into GPU 0's sharing queue, which lends nothing: on 4 ranks a rank that
// received most of a tree's large subtrees ran them alone while the others waited.
template <Scope S, class Factory, class Body, class Tasks>
void WsAcrossGpus<S, Factory, Body, Tasks>::feed_from_ranks(
    GpuRun& run, HostInserter& gpu0, DynamicHost& host, const std::function<std::string()>& state) {
  const StagingRef ring = home_->host_staging(split_.shares[0].size());
  std::size_t batch = 0;
  for (std::uint32_t g = 0; g < gpus_; ++g) batch += grids_[g].blocks;
  batch = std::min<std::size_t>(batch, ring.capacity);  // a batch never waits for room
  std::uint64_t staged = 0;
  while (!handoff_.closed()) {
    if (cudaStreamQuery(run.session(0).kernel_stream()) != cudaErrorNotReady) return;
    const bool taken_in = system_atomic_ref<std::uint64_t>(ring.ctl->consumed).load(mo::acquire) ==
                          system_atomic_ref<std::uint64_t>(ring.ctl->written).load(mo::relaxed);
    std::vector<Task> chunk = taken_in ? handoff_.take_front(batch) : std::vector<Task>{};
    if (!chunk.empty()) {
      gpu0.insert(chunk);
      staged += chunk.size();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    std::uint64_t others = 0;
    for (std::uint32_t h = 1; h < gpus_; ++h)
      others += outcomes_[h].progress.load(std::memory_order_relaxed);
    host.wait_step(state, staged + others + rank_idle_seen_.load(std::memory_order_relaxed));
    outcomes_[0].progress.store(host.polled(), std::memory_order_relaxed);
  }
}

// The port through which the rank balancer reaches this rank's GPUs (rank_ws_port.hpp).
template <Scope S, class Factory, class Body, class Tasks>
std::unique_ptr<RankWsPort> WsAcrossGpus<S, Factory, Body, Tasks>::make_rank_port(GpuRun& run) {
  std::vector<RankLendGpu> gpus;
  for (std::uint32_t g = 0; g < gpus_; ++g) {
    const MgWsGpuState& st = *states_[g];
    gpus.push_back({st.deque_ctl.get(), grids_[g].blocks, st.mail.get(), placement_.host,
                    st.lend_reply.host(), st.lend_outbox.host()});
  }
  return std::make_unique<RankWsPort>(run, std::move(gpus), lend_chunk(), home_->control.get(),
                                      split_.shares[0].size() + split_.rest.size(), handoff_,
                                      rank_idle_seen_, [this] { return progress(); });
}

// A distributed run only (gpu_run.cuh's frame calls it on the calling thread, MPI's): the ranks
// meet, the GPUs launch, and the rank balancer runs until no rank has work left; then GPU 0's feed
// closes and the blocks end.
template <Scope S, class Factory, class Body, class Tasks>
void WsAcrossGpus<S, Factory, Body, Tasks>::balance_ranks(GpuRun& run) {
  if (!distributed()) return;
  rank_port_ = make_rank_port(run);
  try {
    ranks_->meet();
    launch_gate_.store(true, std::memory_order_release);
    ranks_->balance(*rank_port_);
  } catch (...) {
    handoff_.close();
    throw;
  }
  handoff_.close();
}

// GPU g's counts, steals and deque levels.
template <Scope S, class Factory, class Body, class Tasks>
GpuShare WsAcrossGpus<S, Factory, Body, Tasks>::collect(GpuRun&, std::uint32_t g, ExecOutput& out) {
  DynamicHost& host = *hosts_[g];
  DynamicOutcome counts;
  host.collect(counts, false);
  out.tasks_run += counts.tasks_run;
  out.tasks_spawned += counts.tasks_spawned;
  std::uint64_t gpu_steals = 0, gpu_remote = 0;
  for (const DynamicBlockStats& b : host.snapshot()) {
    gpu_steals += b.steals;
    gpu_remote += b.remote_steals;
    totals_.steals_failed += b.steals_failed;
    totals_.spilled += b.spilled;
    totals_.per_sm[{g, b.sm}] += b.tasks;
  }
  totals_.steals += gpu_steals;
  totals_.remote_steals += gpu_remote;
  const std::string gpu = "gpu" + std::to_string(g);
  const MgWsGpuOutcome& oc = outcomes_[g];
  out.metrics[gpu + "_tasks"] = counts.tasks_run;
  out.metrics[gpu + "_steals"] = gpu_steals;
  out.metrics[gpu + "_remote_steals"] = gpu_remote;
  out.metrics[gpu + "_kernel_ns"] = oc.end_ns > oc.launch_ns ? oc.end_ns - oc.launch_ns : 0;
  std::vector<WsDequeControl> deques(grids_[g].blocks);
  states_[g]->deque_ctl.download(deques.data(), deques.size());
  std::uint32_t gpu_peak = 0;
  for (const WsDequeControl& q : deques) gpu_peak = std::max(gpu_peak, q.peak);
  totals_.peak_deque = std::max(totals_.peak_deque, gpu_peak);
  totals_.slots += std::uint64_t{grids_[g].blocks} * gpu_peak +
                   states_[g]->overflow.control().peak + states_[g]->sharing.control().peak;
  return {oc.launch_ns, oc.end_ns, counts.tasks_run, grids_[g].blocks};
}

// The run's metrics over every GPU, and its notes: the per-GPU balance, the spill.
template <Scope S, class Factory, class Body, class Tasks>
void WsAcrossGpus<S, Factory, Body, Tasks>::finish(GpuRun& run, ExecOutput& out) {
  out.metrics["steals"] = totals_.steals;
  out.metrics["remote_steals"] = totals_.remote_steals;
  out.metrics["steals_failed"] = totals_.steals_failed;
  out.metrics["spilled"] = totals_.spilled;
  out.metrics["peak_deque_level"] = totals_.peak_deque;
  out.metrics["peak_task_slots"] = totals_.slots;
  out.metrics["gpus"] = gpus_;
  std::uint64_t most = 0, least = ~std::uint64_t{0};
  for (const auto& [where, n] : totals_.per_sm) {
    most = std::max(most, n);
    least = std::min(least, n);
  }
  out.metrics["tasks_per_sm_max"] = most;
  out.metrics["tasks_per_sm_min"] = totals_.per_sm.empty() ? 0 : least;
  std::vector<std::uint64_t> busy(gpus_, 0);
  if (run.plan().trace) {
    for (std::uint32_t g = 0; g < gpus_; ++g) {
      const auto [first, end] = run.worker_tracks(g);
      busy[g] = tracks_busy_ns(out.trace.tracks, first, end);
      out.metrics["gpu" + std::to_string(g) + "_busy_ns"] = busy[g];
    }
  }
  out.notes.push_back(balance_note(run, out, busy));
  if (rank_port_) {
    for (const auto& [name, n] : rank_port_->metrics()) out.metrics[name] = n;
  }
  if (rank_port_ && run.plan().trace) {
    trace::Track balancer = rank_port_->track(0);
    if (!balancer.events.empty()) out.trace.tracks.push_back(std::move(balancer));
  }
  if (totals_.spilled > 0) {
    out.notes.push_back(
        std::to_string(totals_.spilled) +
        " spawned tasks did not fit a deque and went through the overflow queues (deque_capacity=" +
        std::to_string(o_.deque_capacity) + ")");
  }
}

// The per-GPU balance in words (the metrics hold the numbers); each GPU's busy time where the run
// is traced.
template <Scope S, class Factory, class Body, class Tasks>
std::string WsAcrossGpus<S, Factory, Body, Tasks>::balance_note(
    GpuRun& run, const ExecOutput& out, const std::vector<std::uint64_t>& busy) const {
  std::string balance =
      "work-stealing across " + std::to_string(gpus_) + " GPUs (remote=" + choice_text(o_.remote) +
      "; " + std::to_string(totals_.remote_steals) + " of " + std::to_string(totals_.steals) +
      " steals across GPUs): tasks per GPU" + tasks_per_gpu(run.shares(), out.tasks_run);
  if (run.plan().trace && out.makespan_ns > 0) {
    balance += "; busy per GPU";
    for (std::uint32_t g = 0; g < gpus_; ++g) {
      const double share =
          100.0 * static_cast<double>(busy[g]) /
          (static_cast<double>(grids_[g].blocks) * static_cast<double>(out.makespan_ns));
      balance += (g ? ", " : " ") + std::to_string(static_cast<int>(share + 0.5)) + "%";
    }
  }
  return balance;
}

template <Scope S, class Tasks = BlockTasks, class Factory>
ExecOutput run_work_stealing_on_gpus(const ExecPlan& plan, Factory& make_body) {
  using Body = std::decay_t<decltype(make_body(0u, 0u))>;
  check_ws_placement_options(
      plan.policy_options<policies::WorkStealingOptions>());  // before any CUDA call
  GpuRun run(plan, GpuRun::Across{});
  WsAcrossGpus<S, Factory, Body, Tasks> r(run, make_body);
  return run_on_gpus(run, r);
}

}  // namespace detail
}  // namespace gpulb::kernels
