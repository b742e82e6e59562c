// Host-fed task queues: Chen, Villa, Krishnamoorthy, Gao, "Dynamic Load Balancing on Single- and
// Multi-GPU Systems" (IPDPS 2010), Algorithm 2 (host enqueue) and Algorithm 3 (device dequeue).
//
// One source for both backends: the dequeue runs in a thread block's thread 0 on the GPU and in a
// worker thread on the CPU; the host side runs in a producer / control thread.
//
// The paper's variables, per queue (all start at 0):
//   d_tasks_gm   tasks[q * capacity ...]     the batch being consumed
//   d_n_gm       counters[q].n               tasks not yet claimed (goes negative under contention)
//   d_written_gm counters[q].written         accumulated tasks written (device copy)
//   d_consumed_gm counters[q].consumed       accumulated tasks dequeued (device copy)
//   h_written    TaskQueueHost::h_written_   host-private
//   h_consumed   host_consumed[q].value      written by the device, read by the host (mapped
//                                            pinned memory on the GPU)
//
// The host writes into a queue only when it is empty (h_consumed == h_written); the device
// claims a task with one fetch-and-add on d_n_gm (wait-free: a fixed number of steps to get a task
// or learn that the queue is empty); whoever takes the last task of a batch tells the host.
//
// DEPARTURE from the paper (correctness). Algorithm 2 stores d_n_gm, fences, then d_written_gm.
// A block that passed the emptiness test (line 4) on the previous batch can then claim tasks of
// the new batch before d_written_gm changes; if it also takes the batch's last task it compares
// against the stale d_written_gm, nobody updates h_consumed, and the host waits on that queue
// forever. We publish d_written_gm first and d_n_gm after it (release): a claim that sees the new
// d_n_gm (acquire) also sees the new d_written_gm, so the last taker always recognises itself.
// Also: line 13 compares the fetch-and-add's old value with d_written_gm; the last taker is the one
// whose old value + 1 equals it, which is what we test.
#pragma once

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"

namespace gpulb {

struct alignas(kHotLine) QueueCounter {
  std::int32_t value = 0;
};
struct alignas(kHotLine) QueueWord {
  std::uint32_t value = 0;
};

// d_written_gm, and beside it on the same line whether the current batch is a range: its slot 0
// holds one task that stands for `n` tasks with consecutive ids (the CUDA copy feed's range
// batches; every other feed writes 0). The copy feed writes both with one 8-byte copy, before n.
struct alignas(kHotLine) WrittenWord {
  std::uint32_t value = 0;
  std::uint32_t range = 0;
};

// Device-resident state of one queue; each counter on its own line so that claimers (n),
// finishers (consumed) and pollers (written) do not share a line.
struct TaskQueueCounters {
  QueueCounter n;
  WrittenWord written;
  QueueWord consumed;
};

struct DequeueResult {
  bool got = false;
  std::uint32_t queue = 0;
  // tasks left unclaimed in that queue after this claim: the trace's queue level
  std::int32_t remaining = 0;
};

// What a worker holds: a trivially copyable view of the queues (cuCollections' *_ref pattern).
struct TaskQueueRef {
  Task* tasks = nullptr;                  // num_queues * capacity slots
  TaskQueueCounters* counters = nullptr;  // num_queues
  QueueWord* host_consumed = nullptr;     // num_queues, h_consumed
  std::uint32_t num_queues = 0;
  std::uint32_t capacity = 0;

  // One pass of Algorithm 3's repeat loop over queue `cursor` (the caller loops, so that it can
  // trace idle spells and obey a stop flag). Advances `cursor` as the paper does.
  GPULB_HD DequeueResult try_dequeue(std::uint32_t& cursor, Task& out) const {
    DequeueResult r;
    const Claim c = try_claim(cursor, 1);  // lines 4-8
    if (!c.got) return r;
    out = tasks[static_cast<std::size_t>(c.queue) * capacity + c.first];  // line 9
    finish_claim(cursor, c);                                              // lines 10-16
    r.got = true;
    r.queue = c.queue;
    r.remaining = c.remaining;
    return r;
  }

  // Algorithm 3's claim, generalised: one fetch-and-add takes up to `most` tasks (the paper takes
  // one; the modern variant more), slots [first, first + count) of queue `queue`. The caller
  // copies them out, then calls finish_claim, which is lines 12-15 for the whole claim.
  struct Claim {
    bool got = false;
    std::uint32_t queue = 0;
    std::uint32_t first = 0;
    std::uint32_t count = 0;
    std::int32_t remaining = 0;
  };
  GPULB_HD Claim try_claim(std::uint32_t& cursor, std::uint32_t most) const {
    Claim c;
    const std::uint32_t i = cursor;
    TaskQueueCounters& q = counters[i];
    // Line 4. acquire on written: pairs with the host's release, so the batch is visible.
    const std::uint32_t written =
        device_atomic_ref<std::uint32_t>(q.written.value).load(mo::acquire);
    const std::uint32_t consumed =
        device_atomic_ref<std::uint32_t>(q.consumed.value).load(mo::relaxed);
    if (consumed == written) {
      cursor = next(i);
      return c;
    }
    // Line 7. acquire: a claim of a new batch's n also sees the d_written_gm published before it.
    const std::int32_t old = device_atomic_ref<std::int32_t>(q.n.value).fetch_sub(
        static_cast<std::int32_t>(most), mo::acquire);
    if (old <= 0) {
      cursor = next(i);
      return c;
    }
    c.count = static_cast<std::uint32_t>(old) < most ? static_cast<std::uint32_t>(old) : most;
    c.first = static_cast<std::uint32_t>(old) - c.count;
    c.got = true;
    c.queue = i;
    c.remaining = static_cast<std::int32_t>(c.first);
    return c;
  }
  GPULB_HD void finish_claim(std::uint32_t& cursor, const Claim& c) const {
    TaskQueueCounters& q = counters[c.queue];
    // release: our reads of the slots happen before the host may overwrite them; the last taker
    // tells the host (system scope: the host polls this word).
    const std::uint32_t jj =
        device_atomic_ref<std::uint32_t>(q.consumed.value).fetch_add(c.count, mo::acq_rel);
    if (jj + c.count == device_atomic_ref<std::uint32_t>(q.written.value).load(mo::acquire)) {
      system_atomic_ref<std::uint32_t>(host_consumed[c.queue].value)
          .store(jj + c.count, mo::release);
      cursor = next(c.queue);
    }
  }

  GPULB_HD std::uint32_t next(std::uint32_t i) const { return i + 1 == num_queues ? 0 : i + 1; }
};

// The host side of Algorithm 2. `Publisher` says how the host reaches the queue memory:
//   bool ready(q, h_written): h_consumed == h_written, read from where the device writes it
//   void publish(q, const Task* tasks, n, new_written): write the batch, then d_written_gm, then d_n_gm
// The CPU backend's publisher writes directly; the CUDA backend's copies over PCIe with the
// paper's host write fence, or writes mapped memory (the modern variant).
template <class Publisher>
class TaskQueueHost {
 public:
  TaskQueueHost(Publisher publisher, std::uint32_t num_queues, std::uint32_t capacity)
      : publisher_(publisher), num_queues_(num_queues), capacity_(capacity) {}

  std::uint32_t capacity() const { return capacity_; }
  std::uint32_t num_queues() const { return num_queues_; }

  // One step of Algorithm 2's repeat loop: if queue i is empty, writes up to `capacity` tasks
  // from `tasks` into it and returns how many (0: queue i was busy). Advances i either way.
  std::uint32_t try_enqueue(const Task* tasks, std::uint32_t n, std::uint32_t& queue_written) {
    return try_enqueue_from(
        [&](std::uint32_t most) {
          return Batch{tasks, n < most ? n : most};
        },
        queue_written);
  }

  // The same, taking the batch from `fetch(most) -> Batch` only once queue i is known to be
  // empty, so that a shared host pool hands tasks to the GPU that can take them now (Chen et al.
  // section 6.2: control threads fetch from the pool when one of their queues empties).
  // range: `tasks[0]` stands for `n` tasks whose ids count up from its own and which are otherwise
  // equal to it (HostTaskPool finds such runs); only a publisher with publish_range takes them.
  struct Batch {
    const Task* tasks;
    std::uint32_t n;
    bool range = false;
  };
  template <class Fetch>
  std::uint32_t try_enqueue_from(Fetch&& fetch, std::uint32_t& queue_written) {
    const std::uint32_t i = next_;
    next_ = next_ + 1 == num_queues_ ? 0 : next_ + 1;
    if (!publisher_.ready(i, h_written_[i])) return 0;
    const Batch batch = fetch(capacity_);
    if (batch.n == 0) return 0;
    h_written_[i] += batch.n;
    last_batch_[i] = batch.n;
    if constexpr (requires {
                    publisher_.publish_range(i, batch.tasks[0], batch.n, h_written_[i]);
                  }) {
      if (batch.range) {
        publisher_.publish_range(i, batch.tasks[0], batch.n, h_written_[i]);
        queue_written = i;
        return batch.n;
      }
    }
    publisher_.publish(i, batch.tasks, batch.n, h_written_[i]);
    queue_written = i;
    return batch.n;
  }

  // Tasks in the batches not yet consumed to the end (an upper bound on the tasks still queued:
  // a batch counts whole until its last task is taken).
  std::uint64_t queued() {
    std::uint64_t n = 0;
    for (std::uint32_t i = 0; i < num_queues_; ++i) {
      if (!publisher_.ready(i, h_written_[i])) n += last_batch_[i];
    }
    return n;
  }

  // All queues drained: every batch written has been consumed.
  bool all_empty() {
    for (std::uint32_t i = 0; i < num_queues_; ++i) {
      if (!publisher_.ready(i, h_written_[i])) return false;
    }
    return true;
  }

  Publisher& publisher() { return publisher_; }

  static constexpr std::uint32_t kMaxQueues = 64;

 private:
  Publisher publisher_;
  std::uint32_t num_queues_;
  std::uint32_t capacity_;
  std::uint32_t next_ = 0;
  std::uint32_t h_written_[kMaxQueues] = {};
  std::uint32_t last_batch_[kMaxQueues] = {};
};

}  // namespace gpulb
