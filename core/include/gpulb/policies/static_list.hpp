// `static-list`: Cederman & Tsigas' static task list as Mohan & Gopalan ran it (mechanism:
// gpulb/static_task_list.hpp); across GPUs on the CUDA backend (kernels/detail/multi_gpu_sl_run.cuh).
#pragma once

#include "gpulb/policy.hpp"

namespace gpulb::policies {

inline const PolicyDescriptor& static_list() {
  static const PolicyDescriptor d{
      "static-list", "Mohan & Gopalan 2014 / Cederman & Tsigas",
      "a generation of tasks in an array, children appended by fetch-and-add, relaunch per generation; CUDA --gpus N: each GPU runs an even share of every generation, the host moving tasks between GPUs in between",
      {.runs_spawned_tasks = true},
      {spawn_capacity_option(),
       {{"list_capacity", "static-list: task slots per array (the most children one generation may create; with --gpus N, on each GPU, which holds two arrays)",
         "8388608", "1..268435456", 1, 1 << 28, {}},
        &PolicyOptions::list_capacity}}};
  return d;
}

}  // namespace gpulb::policies
