// Where a distributed run's ranks meet after their local runs (gpulb/distribution.hpp): the
// scenario's records and the backend outputs of every rank, gathered on rank 0, so that the
// scenario verifies the whole run there with its own verifier and one trace holds every rank.
#pragma once

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "gpulb/distribution.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/exec_plan.hpp"

namespace gpulb {

// Every rank's records, one vector per rank in rank order, on rank 0; empty elsewhere. Records
// are trivially copyable (scenario.hpp), so their bytes travel as they are: every rank runs the
// same build on one kind of host.
template <class Record>
std::vector<std::vector<Record>> gather_records(Distribution& d, const std::vector<Record>& mine) {
  static_assert(std::is_trivially_copyable_v<Record>, "records travel between ranks as bytes");
  const auto bytes = std::as_bytes(std::span<const Record>(mine));
  std::vector<std::vector<std::byte>> all = d.gather(bytes);
  std::vector<std::vector<Record>> out;
  out.reserve(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].size() % sizeof(Record) != 0) {
      throw RunError("rank " + std::to_string(r) + " sent " + std::to_string(all[r].size()) +
                     " bytes of records, not a whole number of records");
    }
    std::vector<Record> recs(all[r].size() / sizeof(Record));
    if (!recs.empty()) std::memcpy(recs.data(), all[r].data(), all[r].size());
    out.push_back(std::move(recs));
  }
  return out;
}

// Every rank's output merged on rank 0: one trace on rank 0's time axis (each rank's events moved
// by its origin and its estimated clock offset; its devices carry their rank, named "rank R: ..."),
// tasks, workers and policy metrics summed, the makespan from the first worker start to the last
// worker end over all ranks. Other ranks get their own output back. Collective.
ExecOutput merge_rank_outputs(Distribution& d, ExecOutput mine);

}  // namespace gpulb
