// What the gpulb commands share: exit codes, the progress line, --param parsing, the readers'
// memory limit. The commands are main.cpp's, lesson.cpp's and bench*.cpp's.
#pragma once

#include <string>
#include <vector>

#include "gpulb/exec_plan.hpp"
#include "gpulb/params.hpp"
#include "gpulb/tracing/trace_limits.hpp"

namespace gpulb::tools {

inline constexpr int kExitRunFailed = 1;    // the run or the file operation failed
inline constexpr int kExitBadInput = 2;     // bad arguments, scenario, parameter or file
inline constexpr int kExitNotVerified = 3;  // the run finished but its result is wrong
inline constexpr int kExitNotChecked = 4;   // the run finished but nothing checked its result

inline constexpr const char* kExitCodesHelp =
    "Exit codes: 0 success; 1 a run or a write failed; 2 bad arguments, parameters or input files; "
    "3 the run finished but its result did not verify; 4 the run finished but nothing checked its "
    "result.";

// A progress line on stderr, only on a terminal and only once a run has taken a second.
ProgressFn progress_line(const std::string& label);
// --param name=value, each name once (ConfigError for a repeated or malformed one).
ParamMap parse_params(const std::vector<std::string>& params);
// --max-memory for the readers: empty means the default budget (a quarter of physical memory).
trace::ReadLimits read_limits(const std::string& max_memory);

}  // namespace gpulb::tools
