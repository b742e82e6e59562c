// What to move: G-Charm's chare table (Rengasamy & Vadhiyar, section 3.2).
//
// Work requests name the data items they read. With reuse, the device keeps a cache of data items
// in slots, and a combined request copies only the items no earlier launch left there (plus the
// buffer of slot indices its blocks read through). This table is the host's map of that cache:
// item -> slot, least recently used first out. An item a combined request needs is never evicted
// by the same combined request.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpulb::gcharm {

// The table is on the host loop's path for every item of every launch (millions a second), so it
// is arrays, not node-based maps: item -> slot is a vector indexed by item (items are indices into
// the published table), and "recently used" is the last combined request (epoch) that used a
// slot, one store per use. Evictions, rare when the cache holds a whole table, take the slots in
// order of their epochs (least recently used first, ties by slot) from a list sorted when needed.
class DataCacheTable {
 public:
  explicit DataCacheTable(std::uint32_t slots) : slots_(slots) {}

  // Where one combined request's items live: slot_of[i] for items[i]; the items to copy now and
  // the slots they go to (missing_items[k] -> missing_slots[k]).
  struct Placement {
    std::vector<std::uint32_t> slot_of;
    std::vector<std::uint32_t> missing_items;
    std::vector<std::uint32_t> missing_slots;
  };

  // Places the items of one combined request (an item may repeat). Throws std::length_error when
  // it needs more distinct items than there are slots.
  Placement place(std::span<const std::uint32_t> items) {
    Placement p;
    begin_request();
    p.slot_of.resize(items.size());
    place_into(items, p.slot_of.data(), p.missing_items, p.missing_slots);
    return p;
  }

  // The same, one request at a time into the caller's buffers: begin_request() once per combined
  // request, then place_into() for each of its requests.
  void begin_request() { ++epoch_; }
  // The loop is the host loop's hot path: the table grows once per request (not per item), and
  // a hit reads and writes through local pointers, which a miss (it may grow the slot arrays)
  // reloads. On the 2-core VM a combined request of 2.25 M hits took ~24 ms to assemble with the
  // table's checks in the loop, ~16 ms without.
  void place_into(std::span<const std::uint32_t> items, std::uint32_t* slot_of,
                  std::vector<std::uint32_t>& missing_items,
                  std::vector<std::uint32_t>& missing_slots) {
    if (items.empty()) return;
    const std::uint32_t largest = *std::max_element(items.begin(), items.end());
    if (largest >= slot_of_item_.size())
      slot_of_item_.resize(std::size_t{largest} + 1 + slot_of_item_.size() / 2, kNone);
    std::uint32_t* const slot_of_item = slot_of_item_.data();
    std::uint64_t* epoch_of_slot = epoch_of_slot_.data();
    const std::uint64_t epoch = epoch_;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::uint32_t item = items[i];
      std::uint32_t slot = slot_of_item[item];
      if (slot == kNone) {
        slot = take_missing(item, items.size(), missing_items, missing_slots);
        epoch_of_slot = epoch_of_slot_.data();  // take_slot may have grown it
      }
      epoch_of_slot[slot] = epoch;
      slot_of[i] = slot;
    }
  }

  // The same placement in two phases, for a combined request assembled by several threads
  // (assemble()). After begin_request() and grow_items(n) with n above every item:
  //  1. hits_into: any number of threads at once, each over its own items, marks the resident
  //     ones used (the same epoch from every thread: relaxed atomic stores) and writes their
  //     slots; the rest get kMissing and are left to
  //  2. place_missed: one thread, in the requests' order, places each missing position as
  //     place_into would (an item missed twice is copied once).
  // Slots go to missing items in the order place_into gives them. Where the cache is full, the
  // victims may differ: every hit of the combined request is already marked used, so none of
  // them is evicted (place_into could evict an item the same request reads later, then copy it
  // again).
  static constexpr std::uint32_t kMissing = 0xFFFFFFFFu;
  void grow_items(std::size_t n) {
    if (n > slot_of_item_.size()) slot_of_item_.resize(n, kNone);
  }
  void hits_into(std::span<const std::uint32_t> items, std::uint32_t* slot_of) {
    const std::uint32_t* const slot_of_item = slot_of_item_.data();
    std::uint64_t* const epoch_of_slot = epoch_of_slot_.data();
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::uint32_t slot = slot_of_item[items[i]];
      if (slot != kNone)
        std::atomic_ref<std::uint64_t>(epoch_of_slot[slot])
            .store(epoch_, std::memory_order_relaxed);
      slot_of[i] = slot;
    }
  }
  void place_missed(std::uint32_t item, std::uint32_t* slot_of, std::size_t request_items,
                    std::vector<std::uint32_t>& missing_items,
                    std::vector<std::uint32_t>& missing_slots) {
    std::uint32_t slot = slot_of_item_[item];
    if (slot == kNone) slot = take_missing(item, request_items, missing_items, missing_slots);
    epoch_of_slot_[slot] = epoch_;
    *slot_of = slot;
  }

  std::uint32_t slots() const { return slots_; }
  std::size_t resident() const { return used_; }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  // A slot for an item that is not resident, booked as a copy to make.
  std::uint32_t take_missing(std::uint32_t item, std::size_t request_items,
                             std::vector<std::uint32_t>& missing_items,
                             std::vector<std::uint32_t>& missing_slots) {
    const std::uint32_t slot = take_slot(request_items);
    slot_of_item_[item] = slot;
    item_of_slot_[slot] = item;
    missing_items.push_back(item);
    missing_slots.push_back(slot);
    return slot;
  }

  // Slots fill in order; then the least recently used one is evicted, unless the same combined
  // request uses it (then the request cannot fit).
  std::uint32_t take_slot(std::size_t request_items) {
    if (used_ < slots_) {
      item_of_slot_.push_back(kNone);
      epoch_of_slot_.push_back(0);
      return used_++;
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
      while (next_victim_ < victims_.size()) {
        const auto [epoch, slot] = victims_[next_victim_++];
        // Skip a slot used since the list was sorted (it is more recent now) or by this request.
        if (epoch_of_slot_[slot] != epoch || epoch == epoch_) continue;
        slot_of_item_[item_of_slot_[slot]] = kNone;
        return slot;
      }
      victims_.clear();
      for (std::uint32_t s = 0; s < used_; ++s) victims_.emplace_back(epoch_of_slot_[s], s);
      std::sort(victims_.begin(), victims_.end());
      next_victim_ = 0;
    }
    throw std::length_error("a combined request of " + std::to_string(request_items) +
                            " data items needs more than the " + std::to_string(slots_) +
                            " slots of the device cache");
  }

  std::uint32_t slots_;
  std::uint32_t used_ = 0;
  std::uint64_t epoch_ = 0;                  // combined requests placed so far
  std::vector<std::uint32_t> slot_of_item_;  // kNone: not resident
  std::vector<std::uint32_t> item_of_slot_;
  std::vector<std::uint64_t> epoch_of_slot_;  // the last combined request that used the slot
  std::vector<std::pair<std::uint64_t, std::uint32_t>> victims_;  // (epoch, slot), sorted
  std::size_t next_victim_ = 0;
};

}  // namespace gpulb::gcharm
