#include <chrono>

#include "gpulb/clock.hpp"
#include "gpulb/cuda/memory.hpp"
#include "gpulb/empty_body.hpp"
#include "gpulb/kernels/bench.hpp"
#include "gpulb/kernels/execute.cuh"

namespace gpulb::kernels {
namespace {

__global__ void atomic_ceiling_kernel(unsigned long long* counter, std::uint32_t per_block,
                                      unsigned long long* sink) {
  if (threadIdx.x != 0) return;
  unsigned long long last = 0;
  for (std::uint32_t i = 0; i < per_block; ++i)
    last = atomicAdd(counter, 1ull);  // returns: a real fetch-and-add
  if (last == ~0ull) *sink = last;
}

// Elapsed ms of whatever `launch` enqueues on `stream`, by CUDA events.
template <class F>
float time_on_stream(cudaStream_t stream, F&& launch) {
  cudaEvent_t a, b;
  GPULB_CUDA_TRY(cudaEventCreate(&a));
  GPULB_CUDA_TRY(cudaEventCreate(&b));
  GPULB_CUDA_TRY(cudaEventRecord(a, stream));
  launch();
  GPULB_CUDA_TRY(cudaEventRecord(b, stream));
  GPULB_CUDA_TRY(cudaEventSynchronize(b));
  float ms = 0;
  GPULB_CUDA_TRY(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}

}  // namespace

double atomic_ceiling_ns(int device) {
  GPULB_CUDA_TRY(cudaSetDevice(device));
  int per_sm = 0;
  GPULB_CUDA_TRY(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, atomic_ceiling_kernel, 128, 0));
  cudaDeviceProp prop{};
  GPULB_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  const std::uint32_t blocks = static_cast<std::uint32_t>(per_sm * prop.multiProcessorCount),
                      per_block = 2000;
  cuda::DeviceBuffer<unsigned long long> counter(2);
  cuda::Stream stream;
  atomic_ceiling_kernel<<<blocks, 128, 0, stream.get()>>>(counter.get(), 10,
                                                          counter.get() + 1);  // warm up
  GPULB_CUDA_CHECK_LAUNCH();
  const float ms = time_on_stream(stream.get(), [&] {
    atomic_ceiling_kernel<<<blocks, 128, 0, stream.get()>>>(counter.get(), per_block,
                                                            counter.get() + 1);
    GPULB_CUDA_CHECK_LAUNCH();
  });
  return ms * 1e6 / (static_cast<double>(blocks) * per_block);
}

double empty_task_seconds(const ExecPlan& plan) {
  const ExecOutput out = execute(plan, [](std::uint32_t) { return EmptyBody{}; });
  if (out.tasks_run != plan.tasks.size()) {
    throw RunError("bench: " + std::to_string(out.tasks_run) + " of " +
                   std::to_string(plan.tasks.size()) + " empty tasks ran");
  }
  return static_cast<double>(out.makespan_ns) / 1e9;
}

namespace {

// Microseconds one batch write of `batch` tasks into one queue takes, no kernel running (as the
// paper measured), under the paper's publisher and the modern one.
std::pair<double, double> enqueue_us(std::uint32_t batch) {
  const std::uint32_t reps = 2000;
  cuda::DeviceBuffer<Task> slots(batch);
  cuda::DeviceBuffer<TaskQueueCounters> counters(1);
  cuda::MappedBuffer<QueueWord> consumed(1);
  cuda::MappedBuffer<Task> staging(batch);
  cuda::MappedBuffer<std::uint32_t> words(2);
  cuda::MappedBuffer<Doorbell> doorbells(1);
  cuda::Stream stream;
  cuda::Event fence;
  const std::vector<Task> batch_tasks(batch);
  const detail::PciePublisher paper{slots.get(),  counters.get(), consumed.host(), staging.host(),
                                    words.host(), batch,          stream.get(),    fence.get()};
  const detail::MappedPublisher modern{doorbells.host(), staging.host(), consumed.host(), batch};
  auto time_us = [&](auto& publisher) {
    publisher.publish(0, batch_tasks.data(), batch, 1);  // warm up
    const std::uint64_t t0 = host_now_ns();
    for (std::uint32_t r = 0; r < reps; ++r) publisher.publish(0, batch_tasks.data(), batch, r + 2);
    return static_cast<double>(host_now_ns() - t0) / 1e3 / reps;
  };
  return {time_us(paper), time_us(modern)};
}

// Nanoseconds a dequeue takes: one queue pre-loaded with `tasks` empty tasks and, below them, one
// HALT per block (the dequeue takes indices from the top down, so the HALTs go last; the modern
// kernel stops on the host's halt word instead).
double dequeue_ns(bool modern, std::uint32_t blocks, std::uint32_t block_size, std::uint64_t tasks,
                  std::uint32_t claim) {
  const std::uint64_t total = tasks + blocks;
  std::vector<Task> loaded(total);
  for (std::uint32_t b = 0; b < blocks; ++b) loaded[b] = Task::halt();
  for (std::uint64_t i = blocks; i < total; ++i) loaded[i].id = static_cast<std::uint32_t>(i);
  cuda::DeviceBuffer<Task> slots(total);
  slots.upload(loaded.data(), total);
  TaskQueueCounters init;
  init.n.value = static_cast<std::int32_t>(modern ? tasks : total);
  init.written.value = static_cast<std::uint32_t>(modern ? tasks : total);
  cuda::DeviceBuffer<TaskQueueCounters> counters(1);
  counters.upload(&init, 1);
  cuda::MappedBuffer<QueueWord> consumed(1);
  cuda::DeviceBuffer<std::uint32_t> stop(1), done(blocks);
  cuda::Stream stream;
  const TaskQueueRef queue{modern ? slots.get() + blocks : slots.get(), counters.get(),
                           consumed.device(), 1, static_cast<std::uint32_t>(total)};
  const DeviceTraceRef no_trace{};
  float ms = 0;
  if (modern) {
    cuda::MappedBuffer<Doorbell> doorbells(1);
    doorbells.host()[0].written = init.written.value;  // nothing new to publish
    cuda::MappedBuffer<std::uint32_t> halt(1);
    *halt.host() = 1;  // stop once the queue is empty
    cuda::DeviceBuffer<std::uint32_t> published(1), halt_seen(1);
    cuda::DeviceBuffer<std::uint64_t> last_poll(1);
    const ModernFeedRef feed{
        doorbells.device(), nullptr, published.get(), halt.device(), last_poll.get(),
        halt_seen.get(),    claim};
    ms = time_on_stream(stream.get(), [&] {
      task_queue_modern_kernel<EmptyBody><<<blocks, block_size, 0, stream.get()>>>(
          queue, feed, EmptyBody{}, no_trace, stop.get(), done.get());
      GPULB_CUDA_CHECK_LAUNCH();
    });
  } else {
    ms = time_on_stream(stream.get(), [&] {
      task_queue_kernel<EmptyBody><<<blocks, block_size, 0, stream.get()>>>(
          queue, EmptyBody{}, no_trace, stop.get(), done.get());
      GPULB_CUDA_CHECK_LAUNCH();
    });
  }
  std::vector<std::uint32_t> per_block(blocks);
  done.download(per_block.data(), blocks);
  std::uint64_t ran = 0;
  for (std::uint32_t d : per_block) ran += d;
  if (ran != tasks)
    throw RunError("bench queue: " + std::to_string(ran) + " of " + std::to_string(tasks) +
                   " tasks dequeued");
  return static_cast<double>(ms) * 1e6 / static_cast<double>(tasks);
}

}  // namespace

QueueFigures queue_figures(int device, std::uint32_t batch, std::uint32_t blocks,
                           std::uint32_t block_size, std::uint64_t tasks, std::uint32_t claim) {
  GPULB_CUDA_TRY(cudaSetDevice(device));
  QueueFigures f;
  f.blocks = blocks;
  std::tie(f.enqueue_us_paper, f.enqueue_us_modern) = enqueue_us(batch);
  f.dequeue_ns_paper = dequeue_ns(false, blocks, block_size, tasks, claim);
  f.dequeue_ns_modern = dequeue_ns(true, blocks, block_size, tasks, claim);
  return f;
}

}  // namespace gpulb::kernels
