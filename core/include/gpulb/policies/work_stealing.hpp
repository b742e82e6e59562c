// `work-stealing`: Grossman's persistent workers with ABP deques (Arora, Blumofe, Plaxton, as in
// Mohan & Gopalan); mechanism: gpulb/work_stealing.hpp.
#pragma once

#include <string>

#include "gpulb/policy.hpp"

namespace gpulb::policies {

inline const PolicyDescriptor& work_stealing() {
  static const PolicyDescriptor d{
      "work-stealing", "Grossman; Arora-Blumofe-Plaxton in Mohan & Gopalan",
      "persistent workers with private deques, a host-written sharing queue, stealing; CUDA --gpus N: stealing across GPUs over peer memory, or through host memory where GPUs lack peer access",
      {.runs_spawned_tasks = true, .host_fed = true, .persistent = true, .host_inserts = true, .distributed = true},
      {spawn_capacity_option(),
       {{"deque_capacity", "work-stealing: tasks per worker deque", "1024", "1..16777216", 1, 1 << 24, {}},
        &PolicyOptions::deque_capacity},
       {{"victim", "work-stealing: how a thief picks its victim", "random", "random|round-robin", 0, 0,
         {"random", "round-robin"}},
        &PolicyOptions::victim},
       // The official UTS (uts_shm) steals chunks of 20 nodes; gpulb/work_stealing_deque.hpp, "Chunked steals".
       {{"steal_chunk", "work-stealing (cpu; cuda with task_per=lane, at most the block size): most tasks one steal takes, half the victim's deque up to this; 1 is ABP's one-task steal",
         "20", "1..4096", 1, 4096, {}},
        &PolicyOptions::steal_chunk},
       // kernels/work_stealing_lanes.cuh: a warp that runs one task at a time leaves most lanes idle
       // on trees whose nodes have few children (UTS).
       {{"task_per", "work-stealing (cuda): what runs one task: a thread block (Grossman; every scenario), or one thread, a block taking a batch of tasks from its deque at once (lane; scenarios with a lane form: uts)",
         "block", "block|lane", 0, 0, {"block", "lane"}},
        &PolicyOptions::task_per},
       // kernels/work_stealing_multi_gpu.cuh: under steal the owners pay a CAS per pop while their
       // deque holds fewer than this; under request one answer moves this many (docs/benchmarks.md,
       // "Look before asking": 4 ran UTS T1L and T1 fastest on 2 H100s).
       {{"remote_chunk", "work-stealing (cuda, --gpus N > 1): most tasks one steal from another GPU takes; 0 = by remote: 4 under request, 1 (ABP's one-task steal) under steal",
         "0", "0..1024", 0, 1024, {}},
        &PolicyOptions::remote_chunk},
       // kernels/work_stealing_multi_gpu.cuh: a remote try costs NVLink round trips, and while a block
       // waits on one it does not steal the local work that appears meanwhile.
       {{"remote_after", "work-stealing (cuda, --gpus N > 1): failed local passes in a row (own deque, queues, a local victim) before a block also tries another GPU",
         "4", "1..65536", 1, 65536, {}},
        &PolicyOptions::remote_after},
       // kernels/work_stealing_multi_gpu.cuh: each look is a system-scope load, an L2 round trip
       // on the critical path of every task.
       {{"remote_poll", "work-stealing (cuda, --gpus N > 1, remote=request): tasks a block runs between looks at its mailbox for another GPU's request (an idle block looks at every pass)",
         "1", "1..65536", 1, 65536, {}},
        &PolicyOptions::remote_poll},
       {{"remote", "work-stealing (cuda, --gpus N > 1): a thief on another GPU CASes the victim's deque (steal: every deque at system scope; needs peer memory) or asks its owner, who hands over tasks at its next task boundary (request: deques stay device scope)",
         "request", "steal|request", 0, 0, {"steal", "request"}},
        &PolicyOptions::remote},
       // kernels/work_stealing_multi_gpu.cuh, "Two placements": what crosses GPUs lives in one GPU's
       // memory (peer access) or in mapped host memory (no peer access needed).
       {{"peer", "work-stealing (cuda, --gpus N > 1): where the words GPUs share live: on = GPU memory over peer access (NVLink/PCIe P2P; refused without it), off = mapped host memory (remote=request only), auto = on where every pair of GPUs has peer access with native atomics, else off",
         "auto", "auto|on|off", 0, 0, {"auto", "on", "off"}},
        &PolicyOptions::peer},
       {{"deque_overflow", "work-stealing: a full deque spills to the overflow queue, or fails the run", "spill",
         "spill|fail", 0, 0, {"spill", "fail"}},
        &PolicyOptions::deque_overflow},
       // The two queues need two slots at least (sharing_queue.hpp: one slot overwrites an unread task).
       {{"overflow_capacity", "work-stealing: tasks the overflow queue holds", "65536", "2..67108864", 2, 1 << 26, {}},
        &PolicyOptions::overflow_capacity},
       {{"sharing_capacity", "work-stealing: tasks the sharing queue holds (CUDA: and the host staging ring)", "4096",
         "2..16777216", 2, 1 << 24, {}},
        &PolicyOptions::sharing_capacity}}};
  return d;
}

// What a worker (CPU) or block (CUDA) whose children fit neither its deque nor the overflow queue
// (deque_overflow=spill), or its deque (deque_overflow=fail), tells the user.
inline std::string work_stealing_full_message(const char* unit, std::uint32_t index, const PolicyOptions& o) {
  const std::string who = "work-stealing: " + std::string(unit) + " " + std::to_string(index) + "'s deque";
  if (o.deque_overflow == "spill") {
    return who + " (deque_capacity=" + std::to_string(o.deque_capacity) + ") and the overflow queue (overflow_capacity=" +
           std::to_string(o.overflow_capacity) + ") are full; raise --param overflow_capacity or deque_capacity";
  }
  return who + " is full (deque_capacity=" + std::to_string(o.deque_capacity) +
         ") and deque_overflow=fail; raise --param deque_capacity or use deque_overflow=spill";
}

}  // namespace gpulb::policies
