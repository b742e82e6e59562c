// What every spawning run's trace must say of its spawns (gpulb/tracing/event.hpp, SpawnBatch).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>

#include "gpulb/tracing/trace.hpp"

namespace gpulb::testing {

// Every task but the one root is named, once, by the SpawnBatch of the task (or lane batch) that
// spawned it, and every task named ran; no spawn is count-only (one device: consecutive ids).
inline void expect_batches_name_every_child_once(const trace::Trace& trace, std::uint64_t total) {
  std::set<std::uint32_t> begun, named;
  std::uint64_t named_total = 0, count_only = 0;
  for (const trace::Track& t : trace.tracks) {
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::TaskBegin) begun.insert(e.arg);
      if (e.kind == trace::EventKind::Spawn) ++count_only;
      if (e.kind != trace::EventKind::SpawnBatch) continue;
      for (std::uint32_t i = 0; i < e.aux; ++i) named.insert(e.arg + i);
      named_total += e.aux;
    }
  }
  EXPECT_EQ(count_only, 0u);
  EXPECT_EQ(named_total, named.size()) << "a child named by two batches";
  EXPECT_EQ(named.size(), total - 1);
  EXPECT_TRUE(std::includes(begun.begin(), begun.end(), named.begin(), named.end()))
      << "a named child never ran";
}

}  // namespace gpulb::testing
