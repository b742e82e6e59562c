// Where a distributed run's ranks meet after their local runs (gpulb/distribution.hpp): the
// scenario's records and the backend outputs of every rank, gathered on rank 0, so that the
// scenario verifies the whole run there with its own verifier and one trace holds every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
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

// Every rank's record arrays, where a rank holds several (one a GPU): rank 0 gets them all, rank by
// rank, each array as its GPU left it; other ranks get an empty vector. Each rank's arrays travel
// as one message: [u64 arrays][u64 records of each][their bytes].
template <class Record>
std::vector<std::vector<Record>> gather_record_arrays(
    Distribution& d, const std::vector<std::vector<Record>>& mine) {
  static_assert(std::is_trivially_copyable_v<Record>, "records travel between ranks as bytes");
  std::vector<std::uint64_t> head{mine.size()};
  std::uint64_t records = 0;
  for (const std::vector<Record>& a : mine) {
    head.push_back(a.size());
    records += a.size();
  }
  std::vector<std::byte> bytes(head.size() * 8 + records * sizeof(Record));
  std::memcpy(bytes.data(), head.data(), head.size() * 8);
  std::size_t at = head.size() * 8;
  for (const std::vector<Record>& a : mine) {
    if (!a.empty()) std::memcpy(bytes.data() + at, a.data(), a.size() * sizeof(Record));
    at += a.size() * sizeof(Record);
  }
  std::vector<std::vector<std::byte>> all = d.gather(bytes);
  std::vector<std::vector<Record>> out;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const std::vector<std::byte>& b = all[r];
    const auto bad = [&] {
      return RunError("rank " + std::to_string(r) + " sent " + std::to_string(b.size()) +
                      " bytes, not its record arrays");
    };
    std::uint64_t n = 0;
    if (b.size() < 8) throw bad();
    std::memcpy(&n, b.data(), 8);
    if (n > (b.size() - 8) / 8) throw bad();
    std::vector<std::uint64_t> sizes(n);
    if (n > 0) std::memcpy(sizes.data(), b.data() + 8, n * 8);
    std::size_t pos = 8 + n * 8;
    for (const std::uint64_t size : sizes) {
      if (size > (b.size() - pos) / sizeof(Record)) throw bad();
      std::vector<Record> recs(size);
      if (size > 0) std::memcpy(recs.data(), b.data() + pos, size * sizeof(Record));
      pos += size * sizeof(Record);
      out.push_back(std::move(recs));
    }
    if (pos != b.size()) throw bad();
  }
  return out;
}

// Every rank's output merged on rank 0: one trace on rank 0's time axis (each rank's events moved
// by its origin and its estimated clock offset; its devices carry their rank, named "rank R: ..."),
// tasks, workers and policy metrics summed, the makespan from the first worker start to the last
// worker end over all ranks. Other ranks get their own output back. Collective.
ExecOutput merge_rank_outputs(Distribution& d, ExecOutput mine);

}  // namespace gpulb
