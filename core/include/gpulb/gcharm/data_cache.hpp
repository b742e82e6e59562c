// What to move: G-Charm's chare table (Rengasamy & Vadhiyar, section 3.2).
//
// Work requests name the data items they read. With reuse, the device keeps a cache of data items
// in slots, and a combined request copies only the items no earlier launch left there (plus the
// buffer of slot indices its blocks read through). This table is the host's map of that cache:
// item -> slot, least recently used first out. An item a combined request needs is never evicted
// by the same combined request.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpulb::gcharm {

// The table is on the host loop's path for every item of every launch (millions a second), so it
// is arrays, not node-based maps: item -> slot is a vector indexed by item (items are indices into
// the published table), and the LRU order is a doubly-linked list threaded through the slots.
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
    ++epoch_;
    Placement p;
    p.slot_of.reserve(items.size());
    for (std::uint32_t item : items) {
      if (item >= slot_of_item_.size()) slot_of_item_.resize(std::size_t{item} + 1 + slot_of_item_.size() / 2, kNone);
      std::uint32_t slot = slot_of_item_[item];
      if (slot != kNone) {
        touch(slot);
      } else {
        slot = take_slot(items.size());
        slot_of_item_[item] = slot;
        item_of_slot_[slot] = item;
        append(slot);
        p.missing_items.push_back(item);
        p.missing_slots.push_back(slot);
      }
      epoch_of_slot_[slot] = epoch_;
      p.slot_of.push_back(slot);
    }
    return p;
  }

  std::uint32_t slots() const { return slots_; }
  std::size_t resident() const { return used_; }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  // Slots fill in order; then the least recently used one is evicted, unless the same combined
  // request uses it (then the request cannot fit).
  std::uint32_t take_slot(std::size_t request_items) {
    if (used_ < slots_) {
      const std::uint32_t slot = used_++;
      item_of_slot_.push_back(kNone);
      epoch_of_slot_.push_back(0);
      prev_.push_back(kNone);
      next_.push_back(kNone);
      return slot;
    }
    const std::uint32_t oldest = head_;
    if (epoch_of_slot_[oldest] == epoch_) {
      throw std::length_error("a combined request of " + std::to_string(request_items) + " data items needs more than the " +
                              std::to_string(slots_) + " slots of the device cache");
    }
    unlink(oldest);
    slot_of_item_[item_of_slot_[oldest]] = kNone;
    return oldest;
  }
  void unlink(std::uint32_t s) {
    (prev_[s] == kNone ? head_ : next_[prev_[s]]) = next_[s];
    (next_[s] == kNone ? tail_ : prev_[next_[s]]) = prev_[s];
    prev_[s] = next_[s] = kNone;
  }
  void append(std::uint32_t s) {  // most recently used
    prev_[s] = tail_;
    next_[s] = kNone;
    (tail_ == kNone ? head_ : next_[tail_]) = s;
    tail_ = s;
  }
  void touch(std::uint32_t s) {
    if (tail_ == s) return;
    unlink(s);
    append(s);
  }

  std::uint32_t slots_;
  std::uint32_t used_ = 0;
  std::uint64_t epoch_ = 0;                   // combined requests placed so far
  std::vector<std::uint32_t> slot_of_item_;   // kNone: not resident
  std::vector<std::uint32_t> item_of_slot_;
  std::vector<std::uint64_t> epoch_of_slot_;  // the last combined request that used the slot
  std::vector<std::uint32_t> prev_, next_;    // the LRU list over slots
  std::uint32_t head_ = kNone, tail_ = kNone; // least and most recently used
};

}  // namespace gpulb::gcharm
