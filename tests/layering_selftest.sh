#!/usr/bin/env bash
# The layering check must fail on a forbidden include and pass on an allowed one: a miniature tree
# with one header per layer, checked once clean and once with core/ including a tools/ header.
set -euo pipefail
check="$1/scripts/check-layers.sh"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/{tracing/include/gpulb/tracing,core/include/gpulb,core/src,tools/include/gpulb/tools,viewer/src}
echo '#pragma once' > "$tree/tracing/include/gpulb/tracing/event.hpp"
echo '#pragma once' > "$tree/tools/include/gpulb/tools/format.hpp"
printf '#include "gpulb/tracing/event.hpp"\n#include <vector>\n' > "$tree/core/include/gpulb/task.hpp"
printf '#include "gpulb/tools/format.hpp"\n#include <imgui.h>\n' > "$tree/viewer/src/ok_in_viewer_only_for_imgui.cpp"
bash "$check" "$tree" >/dev/null 2>&1 && fail=0 || fail=1
[ "$fail" = 1 ] || { echo "selftest: the viewer including tools/ passed the check"; exit 1; }
rm "$tree/viewer/src/ok_in_viewer_only_for_imgui.cpp"
bash "$check" "$tree" || { echo "selftest: a clean tree failed the check"; exit 1; }
printf '#include "gpulb/tools/format.hpp"\n' > "$tree/core/src/bad.cpp"
if out=$(bash "$check" "$tree" 2>&1); then
  echo "selftest: core including tools/ passed the check"; exit 1
fi
grep -q 'core/src/bad.cpp:1 includes "gpulb/tools/format.hpp" (tools/): core/ may not use tools/' <<<"$out" ||
  { echo "selftest: the message does not name the file and the rule: $out"; exit 1; }
rm "$tree/core/src/bad.cpp"
printf '#include <mpi.h>\n' > "$tree/core/src/mpi_here.cpp"
if out=$(bash "$check" "$tree" 2>&1); then
  echo "selftest: core including <mpi.h> passed the check"; exit 1
fi
grep -q 'core/src/mpi_here.cpp:1 includes <mpi.h>: only distributed/ may include MPI' <<<"$out" ||
  { echo "selftest: the MPI message does not name the file and the rule: $out"; exit 1; }
echo "selftest: the check refuses core -> tools, viewer -> tools and MPI outside distributed/, and passes a clean tree"
