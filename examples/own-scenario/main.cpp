// own-gpulb: the gpulb command line with one more scenario, `collatz` (collatz.hpp), beside the
// shipped ones. It runs under every shipped policy that takes tasks up front, on the CPU backend:
//   own-gpulb run collatz --policy work-stealing --backend cpu -o collatz.gpulb
#include "collatz.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/cpu/run_workload.hpp"
#include "gpulb/tools/cli.hpp"

int main(int argc, char** argv) {
  gpulb::Registry registry = gpulb::builtin::make_registry();
  // A runner per backend: the CPU's (host threads); none for CUDA, which would compile the body
  // with nvcc through gpulb/kernels/run_workload.cuh (where gpulb_HAS_CUDA).
  registry.add_scenario<own::CollatzInstance>(
      own::make_collatz(), {&gpulb::cpu::run_workload<own::CollatzInstance>, nullptr});
  return gpulb::tools::cli_main(argc, argv, registry);
}
