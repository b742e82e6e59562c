// The work-stealing policy across the GPUs of one host (--gpus N > 1). No paper does this
// (docs/papers.md): Grossman's runtime and the ABP deques (work_stealing_kernels.cuh) on every
// GPU, and the idle blocks of one GPU take work from the deques of another, over peer memory where
// every pair of GPUs has it, else through host memory ("Two placements" below).
//
// This file: the kernel (one per GPU): the block worker of detail/ws_block_worker.cuh, as on one
// GPU, with RemoteGpus (below) for what reaches beyond the GPU. The host's
// side (the placement, peer access, each GPU's memory, its launch and wait) is in
// detail/multi_gpu_ws_run.cuh, a run on the GPU run frame (detail/gpu_run.cuh: one control thread
// per GPU, the merged trace).
//
// Two ways to take work from another GPU (--param remote=...):
//   steal    the thief CASes the victim's deque over peer memory: every deque of the run
//            is then accessed at system scope by every party, the owner included (a .gpu access on
//            one GPU and a .sys access from another are not morally strong in the PTX model, and
//            ABP's owner/thief race needs its Dekker pair to hold): a fence.sc.sys in each owner pop.
//   request  (default) Acar, Chargueraud & Rainey's private deques (PPoPP 2013) between GPUs: the
//            thief CASes a request into the victim block's mailbox and waits; the owner polls its
//            mailbox at every task boundary (one relaxed system-scope load) and answers with
//            up to remote_chunk tasks from its deque's top, written into the thief's inbox before a
//            system-scope release of the reply. The deques stay device scope (ABP as on one GPU,
//            local thieves included); only the mailboxes cross GPUs, at system scope by both
//            parties. A waiting thief answers requests to itself (with nothing) so that two
//            thieves cannot wait on each other, and stops waiting when the run is over.
// Measured on 2 H200s, request is faster (docs/papers.md).
//
// Memory, for G GPUs:
//   per GPU g, in g's memory:  the blocks' deques (system scope under remote=steal, device scope
//                              under remote=request); its sharing and overflow queues (device
//                              scope: only g's blocks touch them); its reserve (device scope);
//                              remote=request: each block's mailbox and inbox (peer placement);
//   GPU 0 only:                the run's one control word set (WorkStealingControl: `pending`,
//                              `fed`, `host_end`; system scope, every GPU's blocks read or update
//                              it; peer placement), the host's staging ring (mapped host memory
//                              either way) and feed lock (only GPU 0's blocks feed from the host).
//
// What crosses GPUs, every access (the rest -- deques under request, queues, reserves, feed lock,
// stats, trace segments, records -- is touched by one GPU's blocks and its host thread only):
//   `pending`     RMW (acq_rel, system scope) by every GPU's blocks: count_children's lease,
//                 drain_reserve, GPU 0's accept_host_tasks; acquire loads in finished().
//   `fed`         written by GPU 0's feeding block (release), read by every GPU (acquire).
//   `host_end`    written once by the host (before the launch where every task is in a sharing
//                 queue and no host feed is set), read by every GPU (system-scope acquire).
//   remote=request, mailbox of block (g, b): `request` CASed 0 -> thief id by thieves of other
//                 GPUs (release), loaded (relaxed, then an acquire fence) and cleared by its owner;
//                 `reply` zeroed by the thief itself, stored (release) by the victim's owner,
//                 loaded (acquire) by the thief. Inbox of block (g, b): plain stores by the
//                 victim's owner before its reply's release, plain loads by the thief after the
//                 acquire. Before it asks (peer placement only), the thief reads the victim's
//                 deque size (`age` and `bottom`, relaxed system-scope loads) as a hint; the owner
//                 writes them at device scope, so the loads race those writes and may see any
//                 recent value, which can only make the thief ask in vain or skip a victim once.
//                 The thief reads nothing else of the victim's GPU: victim and GPU are drawn from
//                 kernel arguments (each GPU's block count).
//   remote=steal: the victims' deques themselves (pop_top_chunk by a remote thief; every access
//                 to every deque at system scope).
//   A distributed run (GPU ranks, docs/distributed.md): the rank's host asks a block to lend tasks
//                 to another rank through its mailbox's `lend` word (answer_host_lend): written by
//                 the host (a copy into device memory, or a release store under host placement)
//                 only while it is 0, cleared by the owner before the owner's release store of the
//                 block's `lend_reply` (mapped host memory), which the host loads with acquire
//                 before it reads the lent tasks from the block's `lend_outbox` (plain stores by
//                 the owner). The host also copies the deques' control words (sizes, a hint) and
//                 GPU 0's `fed` then `pending` (to call the rank idle) out of device memory.
//
// Two placements (--param peer=auto|on|off; the frame's choose_ws_placement):
//   peer  (on, or auto where every pair of GPUs has peer access with native atomics: NVLink, or a
//         PCIe P2P path) the words above live in GPU memory as listed under "Memory" and are
//         reached over peer access.
//   host  (off, or auto without peer access between some pair) `pending`, `fed`, `host_end`, and
//         every GPU's mailboxes and inboxes live in mapped, pinned, portable host memory
//         (cudaHostAlloc; under unified addressing one pointer for every GPU), each GPU's deques
//         and the rest stay in its memory. remote=request only: stealing by CAS reaches into a
//         deque in another GPU's memory, which needs peer access, so remote=steal is refused
//         there naming the option. The kernel is the same code and instantiation (S = Device):
//         every access above is already a system-scope atomic or ordered by one, which is what
//         memory shared with another GPU through the host needs; only the allocations differ
//         (registers too: nothing in this file changes). The RMWs on host memory (64-bit add on
//         `pending`, 32-bit CAS on `request`) must be native atomics over each GPU's link to the
//         host (PCIe AtomicOps, NVLink-C2C): without that CUDA does not make one GPU's atomic on
//         host memory atomic with respect to another's, so the frame refuses the placement
//         (missing_host_atomics). The host writes host_end there with one aligned 8-byte store
//         (feed_and_close). Costs: every access above becomes a PCIe round trip (about 1-2 us)
//         instead of an NVLink one, and the owner's mailbox poll at every task boundary, a load of
//         its own memory under peer placement, reads host memory; a remote_chunk whose inboxes
//         would take more than 16 MiB of pinned memory a GPU is lowered, with a note.
// Why one `pending` in GPU 0's memory and not one per GPU: a task's unit moves between GPUs with a
// steal, and a sum of per-GPU counters read one after the other can see 0 while work is in flight
// (a unit counted on the counter already read passes to one not yet read), so it would need a
// second, consistent scan (Mattern's four counters). One word is exact by construction; its
// traffic is kept low by the per-block credits (work_stealing.hpp) plus a lease: a block that must
// count children on the shared word takes BasicWorkStealingRef::lease (64) units ahead, so it touches GPU 0's word
// about once per lease of net spawns that its GPU's reserve cannot cover (below), and after a long
// idle spell, to move the reserve on and test for the end.
//
// A per-GPU reserve in front of `pending`. A block that goes idle parks its credit (<= 0: tasks it
// finished beyond those it counted) in its GPU's reserve, a device-scope word, and a block that
// must count children takes the units from that reserve when it holds enough (a device-scope CAS)
// before it touches GPU 0's word. The reserve moves on to GPU 0's word (an exchange, then one
// system-scope RMW) only when a block has been idle kIdlePassesBeforeDrain passes in a row (and
// every kIdlePassesBeforeDrain passes after that), and that block then tests for the end. The
// invariant holds as on one GPU: pending - outstanding = -(the credits) - (the reserves) >= 0,
// every term <= 0, so pending == 0 means no task is left; the
// units' release/acquire chain goes block -> reserve (device scope) -> pending (system scope) ->
// the reader. Why: on UTS T3L a block goes idle about every third node, and each idle spell cost a
// flush and then a lease, two RMWs across NVLink on one word.
//
// Stealing: a block looks in its own deque, its GPU's sharing queue, overflow queue, then one
// random local victim (find_task, as on one GPU); after remote_after failed passes in a row it also
// tries one random block of another GPU (then counts remote_after passes again before the next
// try: an idle block must keep watching its own GPU), taking up to remote_chunk tasks: under
// remote=steal half of what it sees with one CAS on the victim's age (pop_top_chunk), the owners
// then popping with pop_bottom_chunked(remote_chunk) (work_stealing_deque.hpp, "Chunked steals";
// remote_chunk = 1, the default there, is ABP's pop: no CAS above the last task); under
// remote=request what the owner hands over (it keeps one task; default kDefaultRequestChunk).
// Under request the thief first reads the victim's deque size over peer memory and asks only a
// victim holding two tasks or more (see steal_remote). The first task is run, the rest go onto the
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
// the reader also sees every finished task's writes. With the reserves, at every instant
//     pending = outstanding - sum over blocks of credit - sum over GPUs of reserve,
// every credit and reserve <= 0 (a count_from_reserve that finds the reserve short may lift it
// above 0 until it puts its units back; those units count as that block's, whose credit is then
// lower by as much), so pending >= outstanding >= 0: a unit is added to `pending`
// (count_children, accept_host_tasks) before the task it counts is visible, leaves a block's credit
// only into its GPU's reserve (park_credit: device-scope acq_rel RMW) or back to a child
// (count_from_reserve uses units of the reserve only where it held them: a fetch_add that finds it
// short puts them back, and until then they count as the taker's), and reaches
// `pending` only with drain_reserve's exchange (device scope) then fetch_add (system scope); a task
// moved to another GPU carries its unit with it and changes no counter. The order chain of a
// finished task's unit: its block's RMW on the reserve (release) -> the draining block's exchange
// (acquire; PTX release/acquire are cumulative) -> its system-scope fetch_add on `pending` ->
// whoever reads pending == 0 (system-scope acquire). Under host placement the argument is the
// same word by word: `pending` is still one word with every RMW an atomic at system scope (native
// over the links, as the frame checks), the reserves stay device scope in each GPU's memory (only
// its blocks touch them), and `fed`/`host_end` are single-writer words read with system-scope
// acquires; where a word lives changes no order, only its latency.
//
// Spawned ids: each GPU counts its own and interleaves (assign_child_ids_strided): no traffic
// between GPUs for ids.
//
// Trace: as on one GPU; a steal or failed steal from another GPU carries aux = 1 + the victim's
// device (trace::steal_aux_for_device), its arg the victim's block on that device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpulb/kernels/work_stealing_kernels.cuh"

namespace gpulb::kernels {

inline constexpr std::uint32_t kMaxWsGpus = 8;
// remote=request: the most tasks one answer moves when --param remote_chunk is left at 0. On 2
// H100s (NVLink), with the look before asking, 4 ran UTS T1L at 1.84x one GPU and T1 at 1.50x,
// against 1.77-1.85x and 1.38-1.42x with 1 (docs/benchmarks.md, "Look before asking").
inline constexpr std::uint32_t kDefaultRequestChunk = 4;

// remote=request: one block's mailbox, in its GPU's memory (in host memory under host placement).
// `request` is written by thieves of other GPUs (CAS 0 -> 1 + thief id) and cleared by the owner; `reply` (0 while waiting, else 1 +
// tasks sent) and `inbox` (remote_chunk tasks) are written by the victim's owner for this block
// as a thief. Every access to request and reply is a system-scope atomic (two GPUs touch them);
// the inbox is plain data, written before the reply's release and read after its acquire.
// `lend` (a distributed run): the tasks this rank's host asks the owner to lend to another rank
// (answer_host_lend); only the host writes it non-zero, only the owner clears it. It sits next to
// `request` so that one 8-byte load sees both (RemoteGpus::before_publish).
struct alignas(16) RemoteMailbox {
  std::uint32_t request;
  std::uint32_t lend;
  std::uint32_t reply;
};
// RemoteGpus::look_at_mailbox loads `request` and `lend` as one aligned 8-byte word.
static_assert(offsetof(RemoteMailbox, request) == 0 && offsetof(RemoteMailbox, lend) == 4 &&
              alignof(RemoteMailbox) % 8 == 0);
__host__ __device__ constexpr std::uint32_t remote_thief_id(std::uint32_t gpu,
                                                            std::uint32_t block) {
  return (gpu << 24) + block + 1;
}

// Every GPU's deques and mailboxes, as this GPU addresses them: peer pointers under peer placement;
// under host placement the mailboxes and inboxes are mapped host memory and another GPU's deques
// are null (only their `count` is read).
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
  StagingRef staging;  // GPU 0: the host's ring; elsewhere ctl == nullptr (no feeding)
  PeerDeques peers;
  VictimChoice victim = VictimChoice::Random;
  std::uint32_t remote_chunk = 1;  // <= deque_capacity and spawn_capacity (the thief's buffer)
  // Failed local passes in a row (own deque, queues, one local victim) before a block also tries
  // another GPU (--param remote_after): a remote steal costs a few NVLink round trips, a local one
  // an L2 access, and a block waiting on a remote answer misses the local work that appears.
  std::uint32_t remote_after = 4;
  // remote=request: tasks a busy block runs between looks at its mailbox (--param remote_poll; an
  // idle block looks at every pass). A busy block's look is a load issued as it publishes a
  // task's children and read at its next lookup (see `asked` in the kernel); a thief waits up to
  // this many of the owner's tasks longer. On 2 H200s, when the look was still a load waited for
  // at each task boundary, looking every 4 tasks ran 1.02x every task, every 16 0.99x and every 64
  // 0.98x (T1L, medians of 3), so the default is 1.
  std::uint32_t remote_poll = 1;
  // This GPU's reserve of units (in its memory, <= 0): see "A per-GPU reserve" at the top.
  std::int64_t* reserve = nullptr;
  // A distributed run (the rank's host lends to other ranks; answer_host_lend): per block, the
  // reply (1 + tasks lent) and lend_chunk slots, in mapped host memory. Null otherwise.
  std::uint32_t* lend_reply = nullptr;
  Task* lend_outbox = nullptr;
  std::uint32_t lend_chunk = 0;
};

// Idle passes in a row before a block moves its GPU's reserve on to GPU 0's `pending` and tests
// for the end (about 10 us of back-off), and then again as many passes apart: a block that finds
// work again sooner never crosses NVLink for the count.
inline constexpr std::uint32_t kIdlePassesBeforeDrain = 16;

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
  // the thief's memory
  Task* out = w.peers.inbox[gpu] + static_cast<std::size_t>(block) * w.remote_chunk;
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

// A distributed run (docs/distributed.md, GPU ranks), the owner's side of a loan to another rank:
// this rank's host asked block `worker.rank` for up to `lend` tasks (its mailbox's `lend`, written
// by the host only while it is 0). Thread 0 answers at the same points as answer_remote_request:
// up to lend_chunk tasks from the top of its deque (the oldest: in a tree search the largest
// subtrees), keeping one, written into the host's outbox before the reply's release. The tasks
// leave this rank's count of outstanding tasks as if they had run here: their units leave the
// block's credit (task_done's step, n at once), so that `pending` reaches 0 once this rank's own
// tasks are done and its host can call it idle.
template <Scope S, class W>
__device__ void answer_host_lend(const MgWsKernelArgs<S>& w, W& worker) {
  if (w.lend_reply == nullptr) return;
  RemoteMailbox& mail = w.peers.mail[w.peers.self][worker.rank];
  system_atomic_ref<std::uint32_t> lend(mail.lend);
  std::uint32_t want = lend.load(mo::relaxed);
  if (want == 0) return;
  // acquire: the host's reset of the reply happened before its request.
  ::cuda::atomic_thread_fence(::cuda::std::memory_order_acquire, ::cuda::thread_scope_system);
  if (want > w.lend_chunk) want = w.lend_chunk;
  Task* out = w.lend_outbox + static_cast<std::size_t>(worker.rank) * w.lend_chunk;
  StealResult res = StealResult::Empty;
  std::uint32_t n = 0;
  Task taken[1];
  while (n < want && worker.ws.deques.template at<S>(worker.rank).size_hint() >= 2) {
    if (worker.ws.deques.template at<S>(worker.rank).pop_top_chunk(taken, 1, res) != 1) {
      if (res == StealResult::Abort) continue;
      break;
    }
    out[n++] = taken[0];
  }
  worker.credit.units -= n;
  lend.store(0, mo::relaxed);  // ordered before the reply by its release: the host asks again
  system_atomic_ref<std::uint32_t>(w.lend_reply[worker.rank]).store(1 + n, mo::release);
}

// The block worker's Remote across GPUs (detail/ws_block_worker.cuh): where an idle block looks
// beyond its GPU (steal_remote), the answers to other GPUs' requests, and the run's end counted
// through the per-GPU reserve (see the top). Thread 0's. Registers matter: a few more cost resident
// blocks (the one-GPU kernel's note; ptxas -v, sm_90, UTS: 64 as the one-GPU kernel). So the counts
// of passes live in shared memory, remote steals are counted in global memory, and local and
// remote victims share one random state (the worker's picker).
template <Scope S>
class RemoteGpus {
 public:
  static constexpr bool kRequest = S == Scope::Device;

  __device__ RemoteGpus(const MgWsKernelArgs<S>& w, std::uint32_t& local_misses,
                        std::uint32_t& idle_passes)
      : w_(w), local_misses_(local_misses), idle_passes_(idle_passes) {}

  __device__ void start(const DynamicArgs& a, std::uint32_t rank) {
    local_misses_ = 0;
    idle_passes_ = 0;
    a.stats[rank].remote_steals = 0;
  }

  // remote=request: answer a request to us, if any: an idle block looks at every pass, a busy one
  // where the load issued as it published its last task's children saw one (before_publish).
  template <class W>
  __device__ void before_lookup(W& worker) {
    if constexpr (kRequest) {
      if (worker.hooks.idle() || asked_ != 0) {
        answer_remote_request(w_, worker.rank);
        answer_host_lend(w_, worker);
      }
      asked_ = 0;
    }
  }

  // After remote_after failed local passes in a row: one try at another GPU.
  template <class W>
  __device__ RemoteFind after_miss(W& worker, Task& task) {
    if (++local_misses_ < w_.remote_after || w_.peers.gpus <= 1) return RemoteFind::None;
    local_misses_ = 0;
    const RemoteFind r = steal_remote(
        worker, [&](const Task* got, std::uint32_t k, std::uint32_t g, std::uint32_t victim) {
          return take_stolen(worker, task, got, k, g, victim);
        });
    if (r == RemoteFind::Found) worker.hooks.on_task_taken(task);  // the steal is recorded
    return r;
  }
  // The task-a-lane worker's form: the k tasks taken are its next batch (k <= remote_chunk, which
  // the host keeps within the block size).
  template <class W>
  __device__ RemoteFind after_miss(W& worker, Task* batch, std::uint32_t& k) {
    if (++local_misses_ < w_.remote_after || w_.peers.gpus <= 1) return RemoteFind::None;
    local_misses_ = 0;
    return steal_remote(
        worker, [&](const Task* got, std::uint32_t n, std::uint32_t g, std::uint32_t victim) {
          for (std::uint32_t i = 0; i < n; ++i) batch[i] = got[i];
          k = n;
          worker.hooks.on_steal(victim, trace::steal_aux_for_device(g));
          ++worker.a.stats[worker.rank].remote_steals;
          return true;
        });
  }

  __device__ void on_found() {
    local_misses_ = 0;
    idle_passes_ = 0;
  }

  __device__ bool feeds(const StagingRef& staging) const { return staging.ctl != nullptr; }

  // Our credit into the reserve; every kIdlePassesBeforeDrain idle passes the reserve moves on to
  // `pending` and the end is tested. Every such pass, not every pass once idle that long: the end
  // test reads GPU 0's `pending` at system scope, and an idle block passes about once a
  // microsecond (kMaxBackoffNs), so the idle blocks of the other GPUs would keep that word's line
  // busy with reads over NVLink while GPU 0's blocks take units from it (UTS T3L, where most
  // blocks are idle most of the time). The end is seen at most that many passes later.
  template <class W>
  __device__ bool idle_pass_ends_run(W& worker) {
    park_credit(worker);
    if (++idle_passes_ < kIdlePassesBeforeDrain) return false;
    idle_passes_ = 0;
    drain_reserve(worker);
    return worker.finished();
  }

  // remote=request: our mailbox's request word, loaded as the last task's children are published
  // and first read at the next lookup, so that the load's latency hides behind the publishing's
  // own memory traffic (the id counter, the deque). A look waited for at the lookup (one
  // system-scope load of our own memory on thread 0's path between two tasks) made this kernel
  // on one GPU 0.91x the one-GPU kernel (UTS T1L, H100). Loaded before the body instead, it would
  // live across the body: 67 registers, fewer resident blocks. answer_remote_request loads the
  // word again. Nsight Compute still finds the warps waiting at the load (0.7% of the stall
  // samples, UTS T1): the compiler keeps `asked != 0` as a predicate computed there. An empty
  // `asm volatile` on `asked` at the test, to move that wait, changed no run time (T1L, 2 H100s;
  // docs/benchmarks.md, "Look before asking"). Every remote_poll tasks: a relaxed load whose
  // value nothing reads before the children are published.
  template <class W>
  __device__ void before_publish(W& worker) {
    if constexpr (kRequest) {
      if (w_.remote_poll == 1 ||
          static_cast<std::uint32_t>(worker.hooks.tasks_done()) % w_.remote_poll == 0) {
        asked_ = look_at_mailbox(worker.rank);
      }
    }
  }
  // The task-a-lane worker's form, as a batch of `tasks` ends (before they are counted done):
  // a look where the batch passes a multiple of remote_poll tasks.
  template <class W>
  __device__ void before_publish(W& worker, std::uint32_t tasks) {
    if constexpr (kRequest) {
      const auto done = static_cast<std::uint32_t>(worker.hooks.tasks_done());
      if (w_.remote_poll == 1 || (done + tasks) / w_.remote_poll != done / w_.remote_poll) {
        asked_ = look_at_mailbox(worker.rank);
      }
    }
  }

  // Ids interleaved with the other GPUs' (a.id_stride GPUs): not consecutive where there are
  // several, so the spawn is a count-only Spawn then.
  __device__ std::uint32_t id_stride(const DynamicArgs& a) const { return a.id_stride; }
  __device__ bool take_children(const DynamicArgs& a, const Task& parent, std::uint32_t rank,
                                std::uint32_t count) const {
    return a.take_children_interleaved(parent, rank, count);
  }
  __device__ bool consecutive_ids(const DynamicArgs& a) const { return a.id_stride == 1; }

  // One fetch_add, not a CAS loop: every busy block of the GPU draws on this one word, and a CAS
  // retried under that contention (a fence each try) held this kernel on one GPU at 0.57x the
  // one-GPU kernel on UTS T1 and 0.93x on T1L (H100; Nsight Compute put a quarter of the warps'
  // stall samples on the loop). When the reserve turns out short (another block took from it
  // since our load) the units go back at once. Meanwhile the reserve may read above 0, but the
  // units we added count as taken by us (our credit, in effect, is lower by as much), so the sum
  // of credits and reserves -- what keeps `pending` >= the tasks outstanding -- does not change;
  // a drain that moves such a reserve into `pending` only raises `pending` until the units are
  // back, and units are used only when the reserve held them (old + units <= 0).
  template <class W>
  __device__ void count_children(W& worker, std::uint32_t children) {
    count_batch(worker, children, 1);
  }
  // `children` of `finished` tasks (the task-a-lane worker's batch; ws.count_batch then counts).
  template <class W>
  __device__ void count_batch(W& worker, std::uint32_t children, std::uint32_t finished) {
    const std::int64_t need =
        static_cast<std::int64_t>(children) - static_cast<std::int64_t>(finished);
    if (worker.credit.units + need <= 0) return;  // the credit absorbs them (count_batch)
    const std::int64_t units = worker.credit.units + need + worker.ws.lease;
    device_atomic_ref<std::int64_t> reserve(*w_.reserve);
    if (reserve.load(mo::relaxed) + units > 0)
      return;  // too little there: pending, by count_children
    if (reserve.fetch_add(units, mo::acq_rel) + units <= 0) {
      worker.credit.units -= units;  // count_children then leaves it at -lease without pending
      return;
    }
    reserve.fetch_sub(units, mo::relaxed);  // short after all: put them back, take from pending
  }

  __device__ std::uint32_t remote_steals(const DynamicArgs& a, std::uint32_t rank) const {
    return a.stats[rank].remote_steals;  // this thread's own earlier stores
  }

 private:
  // The reserve (see the top): park our credit there.
  template <class W>
  __device__ void park_credit(W& worker) {
    if (worker.credit.units == 0) return;
    device_atomic_ref<std::int64_t>(*w_.reserve).fetch_add(worker.credit.units, mo::acq_rel);
    worker.credit.units = 0;
  }
  // A load before the exchange: every idle block calls this at every pass once it has been idle
  // kIdlePassesBeforeDrain passes (and a waiting thief at every wait), and an empty reserve needs
  // no RMW on the word the busy blocks take their units from. (Measured alone on one H100, this
  // changed no run time: the cost was count_from_reserve's CAS loop.) A stale 0 only delays the
  // drain to a later pass; units parked and not yet drained keep `pending` above 0, so the end is
  // not seen early.
  template <class W>
  __device__ void drain_reserve(W& worker) {
    device_atomic_ref<std::int64_t> reserve(*w_.reserve);
    if (reserve.load(mo::relaxed) == 0) return;
    const std::int64_t r = reserve.exchange(0, mo::acq_rel);
    if (r != 0) system_atomic_ref<std::int64_t>(worker.ws.ctl->pending).fetch_add(r, mo::acq_rel);
  }

  // The block worker's take: the stolen tasks are in got[0..k): the first is run, the rest pushed
  // onto our deque (empty: our own pop just failed, and only we push). Their units travel with
  // them: `pending` does not change.
  template <class W>
  __device__ bool take_stolen(W& worker, Task& task, const Task* got, std::uint32_t k,
                              std::uint32_t g, std::uint32_t victim) {
    task = got[0];
    worker.hooks.on_steal(victim, trace::steal_aux_for_device(g));
    ++worker.a.stats[worker.rank].remote_steals;  // rare: global memory rather than a register
    if (k > 1) {
      std::uint32_t level = 0;
      const std::uint32_t pushed = worker.ws.own(worker.rank).push_bottom(got + 1, k - 1, level);
      worker.hooks.on_deque_level(level);
      if (pushed < k - 1) {  // cannot happen (remote_chunk <= deque_capacity, the deque was empty)
        worker.a.fail(DynamicFailure::DequeFull, worker.rank, task.id, k - 1 - pushed);
        return false;
      }
    }
    return true;
  }

  // One steal from a random block of another GPU: Found (`take(got, k, gpu, victim)` took the k
  // tasks and returned true), None, Stop (the run stopped, or take failed) or Done (the run ended
  // while we waited for an answer).
  template <class W, class Take>
  __device__ RemoteFind steal_remote(W& worker, Take&& take) {
    std::uint32_t g = xorshift32(worker.picker.state) % (w_.peers.gpus - 1);
    if (g >= w_.peers.self) ++g;
    const std::uint32_t victim = xorshift32(worker.picker.state) % w_.peers.gpu[g].count;
    if constexpr (kRequest) {
      return request_remote(worker, g, victim, take);
    } else {
      Task* got = worker.a.slots(worker.rank);  // our spawn slots, free between tasks
      StealResult res = StealResult::Empty;
      const std::uint32_t k = w_.peers.gpu[g].template at<Scope::System>(victim).pop_top_chunk(
          got, w_.remote_chunk, res);
      if (k > 0) return take(got, k, g, victim) ? RemoteFind::Found : RemoteFind::Stop;
    }
    worker.hooks.on_steal_failed(victim, trace::steal_aux_for_device(g));
    return RemoteFind::None;
  }

  // remote=request: ask block `victim` of GPU `g` and wait for its answer.
  template <class W, class Take>
  __device__ RemoteFind request_remote(W& worker, std::uint32_t g, std::uint32_t victim,
                                       Take& take) {
    // Look before asking: the owner keeps its last task, so a victim with fewer than two tasks
    // answers with nothing, after a CAS and a wait of a few NVLink round trips during which we
    // miss our own GPU's new work. One peer read of its deque's size skips those asks (a hint:
    // see "What crosses GPUs"; the owner answers from what it finds then). On 2 H100s this
    // took UTS T3L on 2 GPUs from 0.50x to 0.82x one GPU and T1 from 1.23x to 1.38x
    // (docs/benchmarks.md, "Look before asking"). Under host placement another GPU's deques
    // are not addressable (ctl is null): ask.
    const WorkStealingDequesRef& far = w_.peers.gpu[g];
    if (far.ctl != nullptr && far.template at<Scope::System>(victim).size_hint() < 2) {
      worker.hooks.on_steal_failed(victim, trace::steal_aux_for_device(g));
      return RemoteFind::None;
    }
    park_credit(worker);  // our spare units must not hold up the end while we wait
    drain_reserve(worker);
    const std::uint32_t rank = worker.rank;
    system_atomic_ref<std::uint32_t> reply(w_.peers.mail[w_.peers.self][rank].reply);
    reply.store(0, mo::relaxed);  // ordered before the request by the CAS's release
    std::uint32_t expected = 0;
    if (!system_atomic_ref<std::uint32_t>(w_.peers.mail[g][victim].request)
             .compare_exchange_strong(expected, remote_thief_id(w_.peers.self, rank), mo::release,
                                      mo::relaxed)) {
      worker.hooks.on_steal_failed(victim, trace::steal_aux_for_device(g));
      return RemoteFind::None;
    }
    // Wait for the answer, answering (with nothing: we are idle) whoever asks us meanwhile,
    // so that two thieves asking each other cannot wait forever.
    unsigned wait = kMinBackoffNs;
    std::uint32_t r = 0;
    while ((r = reply.load(mo::acquire)) == 0) {
      if (worker.a.should_stop()) return RemoteFind::Stop;
      answer_remote_request(w_, rank);
      // The victim may have ended (the run is over: nothing can be on its way to us).
      drain_reserve(worker);  // another waiting block may have parked units since
      if (worker.finished()) return RemoteFind::Done;
      __nanosleep(wait);
      wait = wait < kMaxBackoffNs ? 2 * wait : kMaxBackoffNs;
    }
    const std::uint32_t k = r - 1;
    if (k == 0) {
      worker.hooks.on_steal_failed(victim, trace::steal_aux_for_device(g));
      return RemoteFind::None;
    }
    const Task* inbox =
        w_.peers.inbox[w_.peers.self] + static_cast<std::size_t>(rank) * w_.remote_chunk;
    return take(inbox, k, g, victim) ? RemoteFind::Found : RemoteFind::Stop;
  }

  // `request` and `lend` of our mailbox in one relaxed 8-byte load: non-zero where another GPU or
  // this rank's host asks. A hint, read at the next lookup: the answers load each word again. The
  // load and the 4-byte CAS on `request` are of mixed size, which the PTX memory model does not
  // order, so the load may see a stale word: that only delays the answer to a later look. (Two
  // 4-byte loads would be ordered, and would hold one more register across the publish.)
  __device__ std::uint64_t look_at_mailbox(std::uint32_t rank) const {
    return system_atomic_ref<std::uint64_t>(
               *reinterpret_cast<std::uint64_t*>(&w_.peers.mail[w_.peers.self][rank].request))
        .load(mo::relaxed);
  }

  const MgWsKernelArgs<S>& w_;
  std::uint32_t& local_misses_;  // failed local passes in a row (shared memory)
  std::uint32_t& idle_passes_;   // idle passes in a row (kIdlePassesBeforeDrain; shared memory)
  std::uint64_t asked_ = 0;      // remote=request: see before_publish
};

// Capped at 64 registers, what every instantiation used before the trace's one-store events
// (device_context.cuh, store_event): without the cap those took the nqueens, patterns, nbody and
// faults kernels under remote=request from 64 to 71-72 registers (ptxas -v, sm_90), a block an SM
// fewer at 128 threads. With it the UTS and nqueens request kernels do not spill; md2d, connect4,
// nqueens steal and patterns spill 8-64 bytes.
template <class Body, Scope S>
__global__ void __maxnreg__(64)
    work_stealing_multi_kernel(MgWsKernelArgs<S> w, DynamicArgs a, Body body) {
  __shared__ DynamicMailbox box;
  __shared__ PendingCredit credit;  // in shared memory, as on one GPU (registers)
  __shared__ std::uint32_t local_misses, idle_passes;
  const BlockContext ctx = a.context(blockIdx.x, box);
  WsBlockWorker<BasicWorkStealingRef<S, Scope::System>, RemoteGpus<S>> worker(
      w.ws, w.staging, VictimPicker::make(w.victim, blockIdx.x ^ (w.peers.self << 20)), a, ctx,
      credit, RemoteGpus<S>(w, local_misses, idle_passes));
  worker.run(ctx, body, box);
}

}  // namespace gpulb::kernels
