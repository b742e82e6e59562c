// The text and JSON summaries `gpulb run` and `gpulb info` print.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/trace.hpp"

namespace gpulb::tools {

// "yes: ...", "NO: ..." or "not checked: ...": a run nothing checked never reads as verified.
std::string verdict(const trace::RunMetadata& meta);
void print_summary(std::ostream& out, const trace::Trace& trace,
                   const trace::TraceStatistics& stats);
nlohmann::json summary_json(const trace::Trace& trace, const trace::TraceStatistics& stats);

}  // namespace gpulb::tools
