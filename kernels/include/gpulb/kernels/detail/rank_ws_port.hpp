// A distributed run of work-stealing on the GPUs (docs/distributed.md, GPU ranks): the HostInserter
// through which the rank balancer (Distribution::balance, on the run's calling thread) adds the
// chunks other ranks send to this rank's GPUs, and lends the tasks queued in their deques out.
//
// In: a received chunk goes into the handoff (RankHandoff), from which GPU 0's control thread stages
// it into GPU 0's staging ring as any host insert (multi_gpu_ws_run.cuh); the calling thread never
// touches the ring, whose writer is that thread.
// Out: the port reads every deque's size, asks the fullest blocks for half of the size it read
// through their mailboxes' `lend` word (answer_host_lend, work_stealing_multi_gpu.cuh: the owner
// keeps one task) and collects their answers from mapped host memory. It waits kLendWait for them:
// a block answers at its next look at its mailbox, which a long task delays, and the balancer's
// thread must go on answering messages (a rank silent for --rank-timeout is called dead). An
// answer that comes later is collected at the next pump() or take(), and its tasks go back to this
// rank's GPU 0 as a received chunk would: the owner already took them out of `pending`.
// Idle, for Safra: no answer outstanding, nothing in the handoff, every task handed to GPU 0
// accepted (`fed`), and `pending` == 0, read in that order: no task of this rank is queued or
// running, and only a chunk from another rank can change that.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpulb/atomic.hpp"
#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/detail/rank_port.hpp"
#include "gpulb/kernels/work_stealing_multi_gpu.cuh"

namespace gpulb::kernels::detail {

// Chunks from other ranks on their way from the balancer's thread to GPU 0's control thread.
class RankHandoff {
 public:
  void put(std::span<const Task> tasks) {
    std::lock_guard lock(mutex_);
    tasks_.insert(tasks_.end(), tasks.begin(), tasks.end());
  }
  // Up to `most` of the earliest tasks, to stage.
  std::vector<Task> take_front(std::size_t most) {
    std::lock_guard lock(mutex_);
    const auto n = static_cast<std::ptrdiff_t>(std::min(most, tasks_.size()));
    std::vector<Task> front(tasks_.begin(), tasks_.begin() + n);
    tasks_.erase(tasks_.begin(), tasks_.begin() + n);
    return front;
  }
  // Up to out.size() of the latest tasks, for a loan before they were ever staged: at most half,
  // so that a rank never lends away all it received (chunks would bounce between ranks unrun).
  std::uint32_t take_back(std::span<Task> out) {
    std::lock_guard lock(mutex_);
    const auto n = static_cast<std::uint32_t>(std::min(out.size(), tasks_.size() / 2));
    std::copy(tasks_.end() - n, tasks_.end(), out.begin());
    tasks_.resize(tasks_.size() - n);
    return n;
  }
  bool empty() const {
    std::lock_guard lock(mutex_);
    return tasks_.empty();
  }
  // The ranks agreed the run is over: GPU 0's control thread closes the host feed.
  void close() { closed_.store(true, std::memory_order_release); }
  bool closed() const { return closed_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mutex_;
  std::vector<Task> tasks_;
  std::atomic<bool> closed_{false};
};

// One GPU of the rank as the port reaches it.
struct RankLendGpu {
  const WsDequeControl* deques = nullptr;  // device memory
  std::uint32_t blocks = 0;
  RemoteMailbox* mail = nullptr;  // device memory (peer placement) or mapped host memory
  bool mail_in_host = false;
  std::uint32_t* reply = nullptr;  // mapped host memory, a word a block
  const Task* outbox = nullptr;    // mapped host memory, lend_chunk slots a block
};

class RankWsPort final : public RankPort {
 public:
  // `control`: the run's control words (GPU 0's memory, or mapped host memory); `fed_base`: the
  // tasks `fed` counts before any chunk (GPU 0's prefilled share and the initial tasks staged).
  // `idle_seen`: counts the times this rank was seen idle, progress for the GPUs' watchdogs, whose
  // blocks legitimately finish nothing while the rank waits for a chunk.
  RankWsPort(GpuRun& run, std::vector<RankLendGpu> gpus, std::uint32_t lend_chunk,
             const WorkStealingControl* control, std::uint64_t fed_base, RankHandoff& handoff,
             std::atomic<std::uint64_t>& idle_seen, std::function<GpuProgress()> progress)
      : RankPort(run, std::move(progress)),
        gpus_(std::move(gpus)),
        lend_chunk_(lend_chunk),
        control_(control),
        fed_base_(fed_base),
        handoff_(handoff),
        idle_seen_(idle_seen) {
    for (std::uint32_t g = 0; g < gpus_.size(); ++g) {
      on_gpu(g);
      streams_.emplace_back(std::make_unique<cuda::Stream>());
      sizes_.emplace_back(gpus_[g].blocks);
      asks_.emplace_back(gpus_[g].blocks);
    }
    on_gpu(0);
    words_ = cuda::MappedBuffer<WorkStealingControl>(1);
  }

  void insert(std::span<const Task> tasks) override {
    handoff_.put(tasks);
    handed_ += tasks.size();
  }

  std::uint32_t take(std::span<Task> out) override {
    collect_late_answers();
    const std::uint32_t back = handoff_.take_back(out);
    handed_ -= back;
    return back + lend_from_gpus(out.subspan(back));
  }

  bool idle() const override {
    if (!late_.empty() || !handoff_.empty()) return false;
    // `fed` before `pending` (two copies in order on one stream): fed == every task handed means
    // each is counted in `pending` (accept_host_tasks adds to pending before it advances fed).
    on_gpu(0);
    cudaStream_t s = streams_[0]->get();
    GPULB_CUDA_TRY(cudaMemcpyAsync(&words_.host()->fed, &control_->fed, sizeof(std::uint64_t),
                                   cudaMemcpyDefault, s));
    GPULB_CUDA_TRY(cudaStreamSynchronize(s));
    if (atomic_load_relaxed(words_.host()->fed) != fed_base_ + handed_) return false;
    GPULB_CUDA_TRY(cudaMemcpyAsync(&words_.host()->pending, &control_->pending,
                                   sizeof(std::int64_t), cudaMemcpyDefault, s));
    GPULB_CUDA_TRY(cudaStreamSynchronize(s));
    const bool none = atomic_load_relaxed(words_.host()->pending) == 0;
    if (none) idle_seen_.fetch_add(1, std::memory_order_relaxed);
    return none;
  }

  void pump() override {
    collect_late_answers();
    RankPort::pump();
  }

  // What the loans did on this rank, for the run's metrics (summed over ranks): loans asked for,
  // those that found no block holding two tasks, blocks asked, blocks that answered with none, and
  // tasks whose answer came after take() stopped waiting.
  std::map<std::string, std::uint64_t> metrics() const {
    return {{"rank_lend_takes", takes_},
            {"rank_lend_takes_without_candidates", takes_without_candidates_},
            {"rank_lend_blocks_asked", blocks_asked_},
            {"rank_lend_blocks_answered_empty", blocks_answered_empty_},
            {"rank_lend_tasks_late", tasks_late_}};
  }

 private:
  struct Ask {
    std::uint32_t gpu, block, tasks;
  };
  // How long take() waits for the blocks it asked: far below the balancer's heartbeat period.
  static constexpr auto kLendWait = std::chrono::milliseconds(20);

  template <class T>
  static T atomic_load_relaxed(T& v) {
    return std::atomic_ref<T>(v).load(std::memory_order_relaxed);
  }
  void on_gpu(std::uint32_t g) const { GPULB_CUDA_TRY(cudaSetDevice(static_cast<int>(g))); }

  // Up to out.size() tasks from the blocks' deques: the fullest blocks first, half of each; those
  // whose answers take longer than kLendWait are collected later (late_).
  std::uint32_t lend_from_gpus(std::span<Task> out) {
    if (out.empty() || lend_chunk_ == 0) return 0;
    ++takes_;
    std::vector<Ask> asks = choose_blocks(static_cast<std::uint32_t>(out.size()));
    if (asks.empty()) {
      ++takes_without_candidates_;
      return 0;
    }
    blocks_asked_ += asks.size();
    send_asks(asks);
    std::uint32_t n = 0;
    const auto deadline = std::chrono::steady_clock::now() + kLendWait;
    for (;;) {
      std::erase_if(asks, [&](const Ask& a) {
        const std::uint32_t k = answered(a);
        if (k == kNoAnswer) return false;
        blocks_answered_empty_ += k == 0;
        std::copy(outbox(a), outbox(a) + k, out.begin() + n);  // the asks add up to out.size()
        n += k;
        return true;
      });
      if (asks.empty()) break;
      check();
      if (std::chrono::steady_clock::now() > deadline) {
        late_.insert(late_.end(), asks.begin(), asks.end());
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(2));
    }
    return n;
  }

  // The answers that came after take() stopped waiting: their tasks go back to GPU 0.
  void collect_late_answers() {
    std::erase_if(late_, [&](const Ask& a) {
      const std::uint32_t k = answered(a);
      if (k == kNoAnswer) return false;
      tasks_late_ += k;
      insert(std::span<const Task>(outbox(a), k));
      return true;
    });
  }

  static constexpr std::uint32_t kNoAnswer = ~0u;
  // The tasks block a.block lent (acquire: they are in its outbox), or kNoAnswer.
  std::uint32_t answered(const Ask& a) const {
    const std::uint32_t r =
        std::atomic_ref<std::uint32_t>(gpus_[a.gpu].reply[a.block]).load(std::memory_order_acquire);
    return r == 0 ? kNoAnswer : r - 1;
  }
  const Task* outbox(const Ask& a) const {
    return gpus_[a.gpu].outbox + std::size_t{a.block} * lend_chunk_;
  }

  // Every block's deque size (one copy a GPU), then the blocks holding 2 tasks or more, fullest
  // first, each asked for half of what it holds (at most lend_chunk), until `want` are asked for.
  std::vector<Ask> choose_blocks(std::uint32_t want) {
    std::vector<Ask> candidates;
    for (std::uint32_t g = 0; g < gpus_.size(); ++g) {
      on_gpu(g);
      const RankLendGpu& gpu = gpus_[g];
      GPULB_CUDA_TRY(cudaMemcpyAsync(sizes_[g].host(), gpu.deques,
                                     std::size_t{gpu.blocks} * sizeof(WsDequeControl),
                                     cudaMemcpyDeviceToHost, streams_[g]->get()));
    }
    for (std::uint32_t g = 0; g < gpus_.size(); ++g) {
      on_gpu(g);
      GPULB_CUDA_TRY(cudaStreamSynchronize(streams_[g]->get()));
      for (std::uint32_t b = 0; b < gpus_[g].blocks; ++b) {
        const WsDequeControl& q = sizes_[g].host()[b];
        const std::uint32_t top = ws_age_top(q.age);
        const std::uint32_t size = q.bottom > top ? q.bottom - top : 0;
        if (size >= 2 && !asked_late(g, b)) candidates.push_back({g, b, size});
      }
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const Ask& x, const Ask& y) { return x.tasks > y.tasks; });
    std::vector<Ask> asks;
    for (Ask c : candidates) {
      if (want == 0) break;
      c.tasks = std::min({c.tasks / 2, lend_chunk_, want});
      want -= c.tasks;
      asks.push_back(c);
    }
    return asks;
  }

  // The reply words cleared, then each block's `lend` word set (device memory: a copy from pinned
  // memory; only the host writes it non-zero, and only while it is 0, after the last answer).
  void send_asks(const std::vector<Ask>& asks) {
    for (const Ask& a : asks) {
      const RankLendGpu& gpu = gpus_[a.gpu];
      std::atomic_ref<std::uint32_t>(gpu.reply[a.block]).store(0, std::memory_order_relaxed);
      if (gpu.mail_in_host) {
        std::atomic_ref<std::uint32_t>(gpu.mail[a.block].lend)
            .store(a.tasks, std::memory_order_release);
        continue;
      }
      std::uint32_t* word = asks_[a.gpu].host() + a.block;
      *word = a.tasks;
      on_gpu(a.gpu);
      GPULB_CUDA_TRY(cudaMemcpyAsync(&gpu.mail[a.block].lend, word, sizeof(std::uint32_t),
                                     cudaMemcpyHostToDevice, streams_[a.gpu]->get()));
    }
    for (std::uint32_t g = 0; g < gpus_.size(); ++g) {
      on_gpu(g);
      GPULB_CUDA_TRY(cudaStreamSynchronize(streams_[g]->get()));
    }
  }

  // A block whose earlier answer is still outstanding: its `lend` word may still be set.
  bool asked_late(std::uint32_t g, std::uint32_t b) const {
    return std::any_of(late_.begin(), late_.end(),
                       [&](const Ask& a) { return a.gpu == g && a.block == b; });
  }

  std::vector<RankLendGpu> gpus_;
  std::uint32_t lend_chunk_;
  const WorkStealingControl* control_;
  std::uint64_t fed_base_;
  RankHandoff& handoff_;
  std::atomic<std::uint64_t>& idle_seen_;
  std::uint64_t handed_ = 0;  // tasks handed to GPU 0's control thread (and not taken back)
  std::vector<Ask> late_;     // asks take() stopped waiting for
  std::uint64_t takes_ = 0, takes_without_candidates_ = 0, blocks_asked_ = 0,
                blocks_answered_empty_ = 0, tasks_late_ = 0;
  std::vector<std::unique_ptr<cuda::Stream>> streams_;
  std::vector<cuda::MappedBuffer<WsDequeControl>> sizes_;
  std::vector<cuda::MappedBuffer<std::uint32_t>> asks_;
  mutable cuda::MappedBuffer<WorkStealingControl> words_;
};

}  // namespace gpulb::kernels::detail
