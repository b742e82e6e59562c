// `work-stealing`: Grossman's persistent workers with ABP deques (Arora, Blumofe, Plaxton, as in
// Mohan & Gopalan); mechanism: gpulb/work_stealing.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpulb/policy.hpp"

namespace gpulb::policies {

struct WorkStealingOptions : SpawnOptions {
  std::uint32_t deque_capacity = 1024;         // tasks per worker deque
  VictimChoice victim = VictimChoice::Random;  // how a thief picks its victim
  // a full deque spills to the overflow queue, or fails
  DequeOverflow deque_overflow = DequeOverflow::Spill;
  std::uint32_t steal_chunk = 20;  // most tasks one steal takes (CUDA: task_per=lane only)
  // on CUDA: a task per block (Grossman) or per lane (a thread)
  TaskPer task_per = TaskPer::Block;
  // on CUDA across GPUs: most tasks one steal from another GPU takes; 0 = by remote (request 4,
  // steal 1)
  std::uint32_t remote_chunk = 0;
  // on CUDA across GPUs: failed local passes in a row before a block tries another GPU
  std::uint32_t remote_after = 4;
  // on CUDA across GPUs, remote=request: tasks a block runs between looks at its mailbox
  std::uint32_t remote_poll = 1;
  // on CUDA across GPUs: its owner answers, or CAS the victim's deque
  RemoteMode remote = RemoteMode::Request;
  // on CUDA across GPUs: peer memory (on), host memory (off) or auto
  PeerMemory peer = PeerMemory::Auto;
  std::uint32_t overflow_capacity = 1u << 16;  // tasks the shared overflow queue holds
  std::uint32_t sharing_capacity = 4096;       // tasks the host-written sharing queue holds
};

// The options of a worker and its deque.
inline std::vector<Option<WorkStealingOptions>> work_stealing_worker_options() {
  return {
      spawn_capacity_option(),
      number_option("deque_capacity", "work-stealing: tasks per worker deque",
                    &WorkStealingOptions::deque_capacity, 1, 1 << 24),
      choice_option("victim", "work-stealing: how a thief picks its victim",
                    &WorkStealingOptions::victim),
      // The official UTS (uts_shm) steals chunks of 20 nodes; gpulb/work_stealing_deque.hpp, "Chunked steals".
      number_option(
          "steal_chunk",
          "work-stealing (cpu; cuda with task_per=lane, at most the block size): most tasks "
          "one "
          "steal takes, half the victim's deque up to this; 1 is ABP's one-task steal",
          &WorkStealingOptions::steal_chunk, 1, 4096),
      // kernels/work_stealing_lanes.cuh: a warp that runs one task at a time leaves most lanes idle
      // on trees whose nodes have few children (UTS).
      choice_option("task_per",
                    "work-stealing (cuda): what runs one task: a thread block (Grossman; every "
                    "scenario), or one thread, a block taking a batch of tasks from its deque at "
                    "once (lane; scenarios with a lane form: uts)",
                    &WorkStealingOptions::task_per)};
}

// The options of stealing across the GPUs of a host (CUDA, --gpus N > 1).
inline std::vector<Option<WorkStealingOptions>> work_stealing_remote_options() {
  return {
      // kernels/work_stealing_multi_gpu.cuh: under steal the owners pay a CAS per pop while their
      // deque holds fewer than this; under request one answer moves this many (docs/benchmarks.md,
      // "Look before asking": 4 ran UTS T1L and T1 fastest on 2 H100s).
      number_option("remote_chunk",
                    "work-stealing (cuda, --gpus N > 1): most tasks one steal from another GPU "
                    "takes; 0 = by remote: 4 under request, 1 (ABP's one-task steal) under steal",
                    &WorkStealingOptions::remote_chunk, 0, 1024),
      // kernels/work_stealing_multi_gpu.cuh: a remote try costs NVLink round trips, and while a block
      // waits on one it does not steal the local work that appears meanwhile.
      number_option("remote_after",
                    "work-stealing (cuda, --gpus N > 1): failed local passes in a row (own deque, "
                    "queues, a local victim) before a block also tries another GPU",
                    &WorkStealingOptions::remote_after, 1, 65536),
      // kernels/work_stealing_multi_gpu.cuh: each look is a system-scope load, an L2 round trip
      // on the critical path of every task.
      number_option(
          "remote_poll",
          "work-stealing (cuda, --gpus N > 1, remote=request): tasks a block runs between "
          "looks "
          "at its mailbox for another GPU's request (an idle block looks at every pass)",
          &WorkStealingOptions::remote_poll, 1, 65536),
      choice_option("remote",
                    "work-stealing (cuda, --gpus N > 1): a thief on another GPU CASes the "
                    "victim's deque "
                    "(steal: every deque at system scope; needs peer memory) or asks its "
                    "owner, who hands "
                    "over tasks at its next task boundary (request: deques stay device scope)",
                    &WorkStealingOptions::remote),
      // kernels/work_stealing_multi_gpu.cuh, "Two placements": what crosses GPUs lives in one GPU's
      // memory (peer access) or in mapped host memory (no peer access needed).
      choice_option("peer",
                    "work-stealing (cuda, --gpus N > 1): where the words GPUs share live: on = "
                    "GPU memory over peer access (NVLink/PCIe P2P; refused without it), off = "
                    "mapped host memory (remote=request only), auto = on where every pair of GPUs "
                    "has peer access with native atomics, else off",
                    &WorkStealingOptions::peer)};
}

// The options of the shared queues.
inline std::vector<Option<WorkStealingOptions>> work_stealing_queue_options() {
  return {
      choice_option("deque_overflow",
                    "work-stealing: a full deque spills to the overflow queue, or fails the run",
                    &WorkStealingOptions::deque_overflow),
      // The two queues need two slots at least (sharing_queue.hpp: one slot overwrites an unread task).
      number_option("overflow_capacity", "work-stealing: tasks the overflow queue holds",
                    &WorkStealingOptions::overflow_capacity, 2, 1 << 26),
      number_option(
          "sharing_capacity",
          "work-stealing: tasks the sharing queue holds (CUDA: and the host staging ring)",
          &WorkStealingOptions::sharing_capacity, 2, 1 << 24)};
}

inline const PolicyDescriptor& work_stealing() {
  static const PolicyDescriptor d{
      "work-stealing",
      "Grossman; Arora-Blumofe-Plaxton in Mohan & Gopalan",
      "persistent workers with private deques, a host-written sharing queue, stealing; CUDA --gpus "
      "N: stealing across GPUs over peer memory, or through host memory where GPUs lack peer "
      "access",
      {.runs_spawned_tasks = true,
       .host_fed = true,
       .persistent = true,
       .host_inserts = true,
       .distributed = true,
       .gpu_distributed = true},
      options_for<WorkStealingOptions>([] {
        std::vector<Option<WorkStealingOptions>> all = work_stealing_worker_options();
        for (auto part : {work_stealing_remote_options(), work_stealing_queue_options()})
          for (Option<WorkStealingOptions>& o : part) all.push_back(std::move(o));
        return all;
      }())};
  return d;
}

// What a worker (CPU) or block (CUDA) whose children fit neither its deque nor the overflow queue
// (deque_overflow=spill), or its deque (deque_overflow=fail), tells the user.
inline std::string work_stealing_full_message(const char* unit, std::uint32_t index,
                                              const WorkStealingOptions& o) {
  const std::string who =
      "work-stealing: " + std::string(unit) + " " + std::to_string(index) + "'s deque";
  if (o.deque_overflow == DequeOverflow::Spill) {
    return who + " (deque_capacity=" + std::to_string(o.deque_capacity) +
           ") and the overflow queue (overflow_capacity=" + std::to_string(o.overflow_capacity) +
           ") are full; raise --param overflow_capacity or deque_capacity";
  }
  return who + " is full (deque_capacity=" + std::to_string(o.deque_capacity) +
         ") and deque_overflow=fail; raise --param deque_capacity or use deque_overflow=spill";
}

}  // namespace gpulb::policies
