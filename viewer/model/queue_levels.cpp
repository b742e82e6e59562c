#include "queue_levels.hpp"

#include <algorithm>

namespace gpulb::viewer {
namespace {

using Writer = LevelRecord::Writer;

// Reads a queue's records batch by batch (queue_levels.hpp).
class BatchReader {
 public:
  explicit BatchReader(std::span<const LevelRecord> records) {
    std::int64_t enqueued = 0, records_of_workers = 0, publishes = 0, drains = 0;
    for (const LevelRecord& r : records) {
      if (r.writer == Writer::Enqueue) {
        sizes_.push_back(r.value);
        published_.push_back(false);
        enqueued += r.value;
      }
      if (r.writer != Writer::Worker) continue;
      ++records_of_workers;
      // The first record of a batch's whole size after its enqueue: a block's publish (the mapped
      // feed), as no claim leaves its whole batch; read as one where every batch has one.
      if (!sizes_.empty() && r.value == sizes_.back() && !published_.back()) {
        published_.back() = true;
        ++publishes;
      } else if (r.value == 0) {
        ++drains;
      }
    }
    // Chen's claims of one task and no publish; or a feed that does not publish every batch, where
    // a record of a batch's size is a late claim of the one before that happens to match it.
    if (!sizes_.empty() &&
        (records_of_workers == enqueued || publishes != static_cast<std::int64_t>(sizes_.size()))) {
      std::fill(published_.begin(), published_.end(), false);
      publishes = 0;
    }
    if (!sizes_.empty() && records_of_workers == enqueued) {
      one_claim_a_task_ = true;
      return;
    }
    one_claim_a_task_ = !sizes_.empty() && records_of_workers - publishes == enqueued;
    drained_per_batch_ = !sizes_.empty() && drains == static_cast<std::int64_t>(sizes_.size());
  }
  bool batch_by_batch() const { return one_claim_a_task_ || drained_per_batch_; }

  // The level after `r`, or nothing where `r` is not a level.
  std::optional<std::int64_t> read(const LevelRecord& r) {
    switch (r.writer) {
      case Writer::Enqueue: ++enqueues_; return std::nullopt;
      case Writer::HostBatch: return host_batch(r);
      case Writer::Host: return r.value;
      case Writer::Worker: break;
    }
    if (batch_ >= sizes_.size()) return r.value;
    if (published_[batch_] && !started_ &&
        r.value == sizes_[batch_]) {  // the batch reached the queue
      started_ = true;
      level_ = r.value;
      return level_;
    }
    // Claims of several: the claim that left 0 ended its batch, and a record after it that is not
    // of the next batch (not yet written) is a claim of the drained one, recorded late.
    if (!one_claim_a_task_ && batch_ >= enqueues_) return std::nullopt;
    level_ = started_ ? std::min(level_, r.value) : r.value;
    started_ = true;
    if (one_claim_a_task_ ? ++claims_ < sizes_[batch_] : level_ > 0) return level_;
    next_batch();
    return 0;
  }

 private:
  // The host's record of the batch its last Enqueue wrote.
  std::optional<std::int64_t> host_batch(const LevelRecord& r) {
    if (enqueues_ == 0) return r.value;
    const std::size_t j = enqueues_ - 1;
    if (j < batch_ || (j == batch_ && started_)) return std::nullopt;  // its claims came first
    // Written where no block can claim it yet (mapped host memory): a block's publish brings it.
    if (published_[j]) return std::nullopt;
    while (batch_ < j) next_batch();
    started_ = true;
    level_ = r.value;
    return level_;
  }
  void next_batch() {
    ++batch_;
    claims_ = 0;
    started_ = false;
  }

  std::vector<std::int64_t> sizes_;  // the hosts' batches, in the order they wrote them
  std::vector<bool>
      published_;  // a block copied the batch into the queue (a worker's record of its size)
  bool one_claim_a_task_ = false;
  bool drained_per_batch_ = false;  // claims of several, each batch's last leaving 0
  std::size_t batch_ = 0;           // the batch being claimed (or next to be)
  std::size_t enqueues_ = 0;        // hosts' batches read so far
  std::int64_t claims_ = 0;         // claims of the current batch read so far
  std::int64_t level_ = 0;
  bool started_ = false;  // the current batch showed: its host's record, its publish or a claim
};

}  // namespace

std::vector<StepSeries::Point> queue_level_points(std::span<const LevelRecord> records) {
  std::vector<StepSeries::Point> points;
  points.reserve(records.size());
  BatchReader reader(records);
  for (const LevelRecord& r : records) {
    if (!reader.batch_by_batch()) {
      if (r.writer != Writer::Enqueue) points.push_back({r.time_ns, r.value});
    } else if (const std::optional<std::int64_t> level = reader.read(r)) {
      points.push_back({r.time_ns, *level});
    }
  }
  return points;
}

void end_level_at(std::vector<StepSeries::Point>& points, std::uint64_t end_ns) {
  const auto after =
      std::upper_bound(points.begin(), points.end(), end_ns,
                       [](std::uint64_t t, const StepSeries::Point& p) { return t < p.time_ns; });
  points.erase(after, points.end());
  if (!points.empty() && points.back().value != 0) points.push_back({end_ns, 0});
}

}  // namespace gpulb::viewer
