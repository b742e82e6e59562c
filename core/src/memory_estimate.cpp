#include "gpulb/memory_estimate.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "gpulb/errors.hpp"
#include "gpulb/tracing/trace_limits.hpp"

namespace gpulb {
namespace {

// "MemTotal:  24683656 kB" -> bytes; 0 where the field is missing.
std::uint64_t meminfo_field(const std::string& text, const std::string& field) {
  const auto at = text.find(field + ":");
  if (at == std::string::npos) return 0;
  std::istringstream in(text.substr(at + field.size() + 1));
  std::uint64_t kib = 0;
  in >> kib;
  return kib * 1024;
}

void lower_to(MemoryLimit& limit, std::uint64_t bytes, const char* source) {
  if (bytes == 0 || (limit.bytes != 0 && bytes >= limit.bytes)) return;
  limit.bytes = bytes;
  limit.source = source;
}

// The settings whose share of the estimate is large enough to matter (a tenth of it), the largest
// first: lowering a setting that holds a few KiB would change nothing.
std::string what_to_lower(const MemoryEstimate& e) {
  std::vector<std::pair<std::uint64_t, std::string>> levers;
  if (!e.data.parameter.empty())
    levers.emplace_back(e.task_bytes + e.data.bytes, "--param " + e.data.parameter);
  if (e.trace_bytes > 0)
    levers.emplace_back(e.trace_bytes, "--trace-memory (or run with --no-trace)");
  std::sort(levers.begin(), levers.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& [bytes, name] : levers) {
    if (bytes >= e.per_rank() / 10) out += (out.empty() ? "" : ", or ") + name;
  }
  const std::string fewer_ranks = e.ranks_here > 1 ? "start fewer ranks on this host" : "";
  if (out.empty())
    return fewer_ranks.empty() ? "this scenario's parameters make it too large" : fewer_ranks;
  return "lower " + out + (fewer_ranks.empty() ? "" : ", or " + fewer_ranks);
}

std::string part(std::uint64_t bytes, const std::string& what) {
  return trace::format_bytes(bytes) + " " + what;
}

}  // namespace

MemoryLimit memory_limit() {
  MemoryLimit limit;
  std::ifstream meminfo("/proc/meminfo");
  const std::string text((std::istreambuf_iterator<char>(meminfo)),
                         std::istreambuf_iterator<char>());
  lower_to(limit, meminfo_field(text, "MemTotal"),
           "the physical memory (MemTotal in /proc/meminfo)");
  limit.available = meminfo_field(text, "MemAvailable");
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");  // "max" where there is no limit
  std::uint64_t cgroup_bytes = 0;
  if (cgroup >> cgroup_bytes)
    lower_to(limit, cgroup_bytes, "this cgroup's memory limit (/sys/fs/cgroup/memory.max)");
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    lower_to(limit, static_cast<std::uint64_t>(as.rlim_cur),
             "this process's address-space limit (ulimit -v)");
  }
  if (limit.available > limit.bytes) limit.available = limit.bytes;
  return limit;
}

MemoryEstimate estimate_memory(const DataSize& data, std::uint64_t trace_budget,
                               std::uint32_t ranks_here) {
  MemoryEstimate e;
  e.data = data;
  e.task_bytes = data.initial_tasks * sizeof(Task) * kTaskListCopies;
  e.trace_bytes = trace_budget;
  e.ranks_here = ranks_here == 0 ? 1 : ranks_here;
  return e;
}

std::string check_memory(const MemoryEstimate& e, const MemoryLimit& limit) {
  if (limit.bytes == 0) return {};
  // The parts worth naming: under 1% of the estimate ("192 bytes for 1 initial tasks" beside
  // 154 MiB of a node table) they only hide the one that matters.
  const auto named = [&e](std::uint64_t bytes) { return bytes > 0 && bytes >= e.per_rank() / 100; };
  std::string parts;
  if (named(e.task_bytes))
    parts += part(e.task_bytes, "for " + std::to_string(e.data.initial_tasks) + " initial tasks");
  if (named(e.data.bytes))
    parts += (parts.empty() ? "" : " + ") + part(e.data.bytes, "of scenario data");
  if (named(e.trace_bytes))
    parts += (parts.empty() ? "" : " + ") + part(e.trace_bytes, "of trace budget");
  const std::string ranks =
      e.ranks_here > 1 ? ", for each of the " + std::to_string(e.ranks_here) + " ranks on this host"
                       : "";
  const std::string estimate = "this run needs about " + trace::format_bytes(e.total()) +
                               " of memory (" + parts + ranks + ")";
  if (e.total() > limit.bytes) {
    throw ConfigError(estimate + ", more than the " + trace::format_bytes(limit.bytes) + " of " +
                      limit.source + "; " + what_to_lower(e));
  }
  // The trace fills its budget only as events come: the data alone is sure to be taken.
  const std::uint64_t data = (e.task_bytes + e.data.bytes) * e.ranks_here;
  if (limit.available > 0 && data > limit.available) {
    return estimate + ", and its data alone more than the " + trace::format_bytes(limit.available) +
           " available when it started (MemAvailable): other processes' memory may be swapped out, "
           "or this run ended by the OOM killer";
  }
  return {};
}

}  // namespace gpulb
