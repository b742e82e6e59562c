// `static-list`: Cederman & Tsigas' static task list as Mohan & Gopalan ran it (mechanism:
// gpulb/static_task_list.hpp); across GPUs on the CUDA backend (kernels/detail/multi_gpu_sl_run.cuh).
#pragma once

#include <cstdint>

#include "gpulb/policy.hpp"

namespace gpulb::policies {

struct StaticListOptions : SpawnOptions {
  // task slots an array starts with; 0 = sized by the run (gpulb/static_list_sizing.hpp)
  std::uint32_t list_capacity = 0;
};

inline const PolicyDescriptor& static_list() {
  static const PolicyDescriptor d{
      "static-list",
      "Mohan & Gopalan 2014 / Cederman & Tsigas",
      "a generation of tasks in an array, children appended by fetch-and-add, relaunch per "
      "generation; CUDA --gpus N: each GPU runs an even share of every generation, the host moving "
      "tasks between GPUs in between",
      {.runs_spawned_tasks = true},
      options_for<StaticListOptions>(
          {spawn_capacity_option(),
           number_option(
               "list_capacity",
               "static-list: task slots each of the two arrays (on each GPU with --gpus N) "
               "starts with; 0 = sized from the "
               "scenario's widest generation where it states one, else from the last "
               "generation's growth. The arrays grow "
               "between launches where a generation needs more, within the memory there is",
               &StaticListOptions::list_capacity, 0, 1 << 28)})};
  return d;
}

}  // namespace gpulb::policies
