// What to move: G-Charm's chare table (Rengasamy & Vadhiyar, section 3.2).
//
// Work requests name the data items they read. With reuse, the device keeps a cache of data items
// in slots, and a combined request copies only the items no earlier launch left there (plus the
// buffer of slot indices its blocks read through). This table is the host's map of that cache:
// item -> slot, least recently used first out. An item a combined request needs is never evicted
// by the same combined request.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpulb::gcharm {

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
      auto it = where_.find(item);
      if (it != where_.end()) {
        lru_.splice(lru_.end(), lru_, it->second);  // most recently used now
        it->second->epoch = epoch_;
        p.slot_of.push_back(it->second->slot);
        continue;
      }
      const std::uint32_t slot = take_slot(items.size());
      lru_.push_back({item, slot, epoch_});
      where_[item] = std::prev(lru_.end());
      p.slot_of.push_back(slot);
      p.missing_items.push_back(item);
      p.missing_slots.push_back(slot);
    }
    return p;
  }

  std::uint32_t slots() const { return slots_; }
  std::size_t resident() const { return lru_.size(); }

 private:
  struct Entry {
    std::uint32_t item;
    std::uint32_t slot;
    std::uint64_t epoch;  // the last combined request that used it
  };

  std::uint32_t take_slot(std::size_t request_items) {
    if (lru_.size() < slots_) return static_cast<std::uint32_t>(lru_.size());  // slots fill in order
    const Entry oldest = lru_.front();
    if (oldest.epoch == epoch_) {
      throw std::length_error("a combined request of " + std::to_string(request_items) + " data items needs more than the " +
                              std::to_string(slots_) + " slots of the device cache");
    }
    where_.erase(oldest.item);
    lru_.pop_front();
    return oldest.slot;
  }

  std::uint32_t slots_;
  std::uint64_t epoch_ = 0;
  std::list<Entry> lru_;  // front: least recently used
  std::unordered_map<std::uint32_t, std::list<Entry>::iterator> where_;
};

}  // namespace gpulb::gcharm
