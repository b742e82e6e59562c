// A task body that does nothing: what a scheduler costs on its own (gpulb bench dispatch).
#pragma once

#include "gpulb/task.hpp"

namespace gpulb {

struct EmptyBody {
  template <class Ctx>
  GPULB_HD void operator()(Ctx&, const Task&) const {}
};

}  // namespace gpulb
