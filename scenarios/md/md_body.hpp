// The md task body (Chen et al. 2010, section 6.1): atom decomposition. A task is 128 contiguous
// entries of the array A (the processing order); each thread owns one atom of the task and sums the
// pair force of the atoms inside the cutoff. Which atoms it tests is the pair search:
//   pairs=all    every atom of the system (the paper's Theta(N^2)): every task costs the same;
//   pairs=cells  the 27 cells around the atom (md_cells.hpp): a task costs its atoms' local density.
// Written once for the device and the CPU; every solution runs this body.
//
// Each atom's candidates come in an order fixed by the system, whatever the order of A (all: the
// original order, which every thread of a warp reads at once, a broadcast; cells: the cell list's
// order), so each atom's force is the same sum under every solution -- they agree bit for bit.
// What a solution changes is which atoms share a warp (A's order), hence the divergence of the
// `inside the cutoff` branch: the warp efficiency below.
//
// Warp efficiency (the paper's explanation of Solution 2's slowness), under pairs=all: every
// kWarpSampleStride-th j, the lanes of a warp that take the force branch are counted (active)
// against the lanes present (lanes), over the samples where any lane takes it; and the divergent
// samples, where some lanes take it and others not (the nearest thing to the profiler's
// divergent-branch count that the paper quotes: "49% more thread divergences"). On the GPU a
// __ballot_sync in the loop; on the CPU the same count is made by emulating 32-lane warps over the
// block's threads (after the loop, so the CPU's own loop stays a plain loop). Under pairs=cells the
// lanes of a warp scan different cells for different counts, so no lane-aligned j exists to sample:
// no warp samples are taken.
#pragma once

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"
#include "md/md_cells.hpp"
#include "md/md_force.hpp"

namespace gpulb::scenarios::md {

inline constexpr std::uint32_t kTaskAtoms = 128;  // atoms a task (the paper's block)
inline constexpr std::uint32_t kWarpLanes = 32;
inline constexpr std::uint32_t kWarpSampleStride = 32;  // sample every 32nd j: about 3% extra work

// Records: [0, n) one per atom (by original id): its force and neighbour count;
// [n, n + tasks) one per task: its warp samples and run count.
struct MdRecord {
  float fx, fy, fz;
  std::uint32_t neighbours;      // atoms inside the cutoff
  std::uint32_t warp_active;     // task records: sampled lanes that took the force branch
  std::uint32_t warp_lanes;      // task records: lanes present in those samples
  std::uint32_t runs;            // task records: times the task ran (verification: once)
  std::uint32_t warp_divergent;  // task records: samples where some lanes took it and some not
  std::uint32_t pair_tests;      // atom records: distance tests made (the atom's cost)
};

struct MdBody {
  // The force loop is latency-bound: on an H100 the task queue's time at 512K atoms fell in
  // proportion to its resident blocks (1,056 blocks 313 ms, 528 blocks 606 ms, 264 blocks
  // 1,168 ms). Solution 1's launch_kernel needs 40 registers (12 blocks of 128 an SM); the task
  // queue's persistent kernels are capped to the same, so every solution keeps as many warps
  // resident (kernels/worker_kernels.cuh, register_cap). At 40 the modern kernel spills a few
  // bytes of its claim state, outside the force loop.
  static constexpr int kRegisterCap = 40;

  const Atom* atoms;           // original order (the inner loop)
  const std::uint32_t* order;  // A: original ids in processing order (the outer atoms)
  MdRecord* records;
  std::uint32_t n;
  ForceField<float> ff;
  CellListView cells;  // pairs=cells; cells.atoms == nullptr: pairs=all

  // The force on atom i, summed over j in original order; returns the warp sample counts packed
  // (lanes << 32 | active) on the device, 0 on the CPU, and adds the divergent samples to
  // `divergent` (the warp's leader lane only). `present`: the warp's lanes that run this loop with
  // it (the same j at the same time), the mask of the sampling ballot.
  GPULB_HD std::uint64_t atom_force(std::uint32_t i, [[maybe_unused]] unsigned present,
                                    [[maybe_unused]] std::uint32_t& divergent) const {
    const Atom a = atoms[i];
    float fx = 0.f, fy = 0.f, fz = 0.f;
    std::uint32_t neighbours = 0;
    std::uint64_t warp = 0;
    for (std::uint32_t j = 0; j < n; ++j) {
      const Atom b = atoms[j];
      const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
      const float r2 = dx * dx + dy * dy + dz * dz;
      const bool inside = r2 < ff.rc2 && j != i;
#ifdef __CUDA_ARCH__
      if (j % kWarpSampleStride == 0) {
        const unsigned taken = __ballot_sync(present, inside);
        if (taken != 0 && (threadIdx.x % kWarpLanes) == static_cast<unsigned>(__ffs(present) - 1)) {
          warp += (std::uint64_t{static_cast<unsigned>(__popc(present))} << 32) +
                  static_cast<unsigned>(__popc(taken));
          divergent += taken != present ? 1u : 0u;
        }
      }
#endif
      if (inside) {
        const float s = pair_force_over_r(ff, r2, a.q * b.q);
        fx += s * dx;
        fy += s * dy;
        fz += s * dz;
        ++neighbours;
      }
    }
    MdRecord& r = records[i];
    r.fx = fx;
    r.fy = fy;
    r.fz = fz;
    r.neighbours = neighbours;
    r.pair_tests = n - 1;
    return warp;
  }

  // pairs=cells: the force on atom i from the atoms of the 27 cells around it.
  GPULB_HD void atom_force_in_cells(std::uint32_t i) const {
    const std::uint32_t self = cells.slot_of[i];
    const Atom a = cells.atoms[self];
    float fx = 0.f, fy = 0.f, fz = 0.f;
    std::uint32_t neighbours = 0, tests = 0;
    cells.for_each_candidate(self, a, [&](std::uint32_t, const Atom& b) {
      const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
      const float r2 = dx * dx + dy * dy + dz * dz;
      ++tests;
      if (r2 < ff.rc2) {
        const float s = pair_force_over_r(ff, r2, a.q * b.q);
        fx += s * dx;
        fy += s * dy;
        fz += s * dz;
        ++neighbours;
      }
    });
    MdRecord& r = records[i];
    r.fx = fx;
    r.fy = fy;
    r.fz = fz;
    r.neighbours = neighbours;
    r.pair_tests = tests;
  }

  // CPU: the warp samples of one task, 32 consecutive threads of the block a warp, as the GPU's
  // ballot counts them (thread t owns slots t, t + block, ...; one warp per 32 threads a round).
  GPULB_HD std::uint64_t emulate_warps(std::uint32_t first, std::uint32_t block,
                                       std::uint32_t& divergent) const {
    std::uint64_t warp = 0;
    for (std::uint32_t round = 0; round < kTaskAtoms; round += block) {
      for (std::uint32_t w = 0; w < block; w += kWarpLanes) {
        for (std::uint32_t j = 0; j < n; j += kWarpSampleStride) {
          std::uint32_t present = 0, taken = 0;
          for (std::uint32_t lane = w; lane < w + kWarpLanes && lane < block; ++lane) {
            const std::uint32_t slot = round + lane;
            if (slot >= kTaskAtoms || first + slot >= n) continue;
            const std::uint32_t i = order[first + slot];
            const Atom a = atoms[i], b = atoms[j];
            const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
            ++present;
            taken += (dx * dx + dy * dy + dz * dz < ff.rc2 && j != i) ? 1 : 0;
          }
          if (taken != 0) warp += (std::uint64_t{present} << 32) + taken;
          divergent += (taken != 0 && taken != present) ? 1u : 0u;
        }
      }
    }
    return warp;
  }

  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& task) const {
    const std::uint32_t first = task.id * kTaskAtoms;
    const std::uint32_t block = ctx.block_size();
    std::uint32_t divergent = 0;  // this thread's (device) or the whole task's (CPU)
    std::uint64_t warp = ctx.sum_over_threads([&](std::uint32_t t) {
      std::uint64_t w = 0;
      // Every thread makes the same rounds (blocks are whole warps: sum_over_threads needs that
      // too), so the ballot of the lanes with an atom this round is taken by the full warp.
      for (std::uint32_t round = 0; round < kTaskAtoms; round += block) {
        const std::uint32_t slot = round + t;
        const bool valid = slot < kTaskAtoms && first + slot < n;
#ifdef __CUDA_ARCH__
        const unsigned present = __ballot_sync(0xFFFFFFFFu, valid);
#else
        const unsigned present = 0;
#endif
        if (valid && cells.atoms != nullptr) {
          atom_force_in_cells(order[first + slot]);
        } else if (valid) {
          w += atom_force(order[first + slot], present, divergent);
        }
      }
      return w;
    });
#ifdef __CUDA_ARCH__
    const std::uint64_t divergent_samples =
        ctx.sum_over_threads([&](std::uint32_t) { return std::uint64_t{divergent}; });
#else
    if (cells.atoms == nullptr) warp = emulate_warps(first, block, divergent);
    const std::uint64_t divergent_samples = divergent;
#endif
    ctx.once([&] {
      MdRecord& r = records[n + task.id];
      r.warp_active = static_cast<std::uint32_t>(warp & 0xFFFFFFFFu);
      r.warp_lanes = static_cast<std::uint32_t>(warp >> 32);
      r.warp_divergent = static_cast<std::uint32_t>(divergent_samples);
      device_atomic_ref<std::uint32_t>(r.runs).fetch_add(1, mo::relaxed);
    });
  }
};

}  // namespace gpulb::scenarios::md
