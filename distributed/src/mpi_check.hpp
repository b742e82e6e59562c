// One error path for MPI calls (as GPULB_CUDA_TRY for CUDA): the session sets MPI_ERRORS_RETURN, so
// every call returns its error here, which throws RunError naming the call and MPI's message.
#pragma once

#include <mpi.h>

#include <string>

#include "gpulb/errors.hpp"

namespace gpulb::distributed::detail {

inline void check_mpi(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  throw RunError(
      std::string("MPI call failed: ") + call + " (" + file + ":" + std::to_string(line) + "): " +
      (len > 0 ? std::string(text, static_cast<std::size_t>(len)) : "error " + std::to_string(rc)));
}

}  // namespace gpulb::distributed::detail

#define GPULB_MPI_TRY(call) \
  ::gpulb::distributed::detail::check_mpi((call), #call, __FILE__, __LINE__)
