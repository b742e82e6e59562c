// A run spread over several processes (ranks), seen from core: what gpulb::run and the CPU glue
// need from the layer that moves work and results between ranks, without knowing how it does so.
// distributed/ implements it over MPI (gpulb/distributed/mpi_distribution.hpp); core never
// includes MPI, and a build without MPI never makes one (RunConfig::distribution stays null).
//
// Each rank runs the same gpulb::run with the same configuration: rank 0 holds the scenario's
// initial tasks, every rank runs its own workers, and the ranks balance through balance(), which
// runs on the local run's host thread (the work-stealing driver's insert_task side) until every
// rank is out of work. Results and traces meet on rank 0 through gather().
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace gpulb {

class HostInserter;

class Distribution {
 public:
  virtual ~Distribution() = default;
  virtual std::uint32_t rank() const = 0;
  virtual std::uint32_t ranks() const = 0;
  // Ranks of the run on this rank's host (this one included): they share its memory.
  virtual std::uint32_t ranks_on_this_host() const { return 1; }

  // This rank's steady clock minus rank 0's, in ns, as estimated when the ranks met (0 on rank 0),
  // and the bound on that estimate's error (half the best round trip): docs/distributed.md.
  virtual std::int64_t clock_offset_ns() const = 0;
  virtual std::uint64_t clock_error_ns() const = 0;

  // The host thread's side of the local run while its workers go on: hands work to other ranks and
  // takes work from them through `local`, and returns once no rank has work left (distributed
  // termination), after which the local run may end. Where this or another rank fails, it throws
  // RunError or ends the whole job itself (MpiDistribution does: the local run's error may be a
  // task that never returns, and unwinding through the run would wait for it).
  virtual void balance(HostInserter& local) = 0;

  // What the balancing did on this rank (steals between ranks, messages...), summed over ranks
  // into the run's policy metrics.
  virtual std::map<std::string, std::uint64_t> metrics() const { return {}; }

  // Returns once every rank has called it (collective; a rank that does not come is named, as in
  // every wait between ranks). A GPU run meets here before its launches, so that its time does not
  // count one rank's start-up (CUDA's, tens of ms) as the others' idle time.
  virtual void meet() {}

  // Every rank's bytes, in rank order, on rank 0; an empty vector on every other rank. Collective.
  virtual std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine) = 0;
};

}  // namespace gpulb
