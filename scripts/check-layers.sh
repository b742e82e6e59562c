#!/usr/bin/env bash
# The layering check (docs/architecture.md): every #include of a gpulb header is resolved to the
# layer whose include root holds it, and refused where that layer may not use it. `make test`
# runs it (ctest: layering). Usage: scripts/check-layers.sh [REPO_ROOT]; exit 1 on a violation,
# naming the file, the line, the header and the rule.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# Include roots, and the layer each belongs to.
roots=(tracing/include:tracing core/include:core core/cpu/include:core core/cuda/include:core
       kernels/include:kernels scenarios:scenarios builtin/include:builtin tools/include:tools
       distributed/include:distributed
       viewer/model:viewer viewer/src:viewer)

# What a layer may not include (the arrows of docs/architecture.md).
forbidden() {
  case "$1" in
    tracing) echo "core kernels scenarios builtin tools viewer distributed" ;;
    core) echo "kernels scenarios builtin tools viewer distributed" ;;
    kernels) echo "scenarios builtin tools viewer distributed" ;;
    scenarios) echo "kernels builtin tools viewer distributed" ;;
    builtin) echo "tools viewer distributed" ;;
    distributed) echo "kernels scenarios builtin tools viewer" ;;
    tools) echo "viewer" ;;
    viewer) echo "kernels tools distributed" ;;
    *) echo "" ;;
  esac
}

# Both helpers set $layer_found (no subshells: the check runs on every test).
layer_of_file() {  # the folder a source file lives in
  case "$1" in
    tracing/*) layer_found=tracing ;; core/*) layer_found=core ;; kernels/*) layer_found=kernels ;;
    scenarios/*) layer_found=scenarios ;; builtin/*) layer_found=builtin ;; tools/*) layer_found=tools ;;
    viewer/*) layer_found=viewer ;; distributed/*) layer_found=distributed ;; *) layer_found="" ;;
  esac
}

layer_of_header() {  # $1: the including file, $2: the included path
  if [ -f "${1%/*}/$2" ]; then layer_of_file "$1"; return; fi  # a neighbour of the includer
  local entry
  for entry in "${roots[@]}"; do
    if [ -f "${entry%%:*}/$2" ]; then layer_found=${entry##*:}; return; fi
  done
  layer_found=""  # a system or third-party header
}

include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]+)[>"]'
violations=0
while IFS= read -r file; do
  layer_of_file "$file"
  layer=$layer_found
  banned=" $(forbidden "$layer") "
  line=0
  while IFS= read -r text || [ -n "$text" ]; do
    line=$((line + 1))
    [[ "$text" =~ $include_re ]] || continue
    header=${BASH_REMATCH[1]}
    case "$header" in
      imgui*|GLFW/*|backends/imgui*)
        if [ "$layer" != viewer ]; then
          echo "layering: $file:$line includes <$header>: only viewer/ may include ImGui or GLFW" >&2
          violations=$((violations + 1))
        fi
        continue ;;
      mpi.h)
        if [ "$layer" != distributed ]; then
          echo "layering: $file:$line includes <$header>: only distributed/ may include MPI" >&2
          violations=$((violations + 1))
        fi
        continue ;;
    esac
    layer_of_header "$file" "$header"
    if [ -n "$layer_found" ] && [[ "$banned" == *" $layer_found "* ]]; then
      echo "layering: $file:$line includes \"$header\" ($layer_found/): $layer/ may not use $layer_found/" >&2
      violations=$((violations + 1))
    fi
  done < "$file"
done < <(find tracing core kernels scenarios builtin tools viewer distributed -type f \
           \( -name '*.hpp' -o -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) 2>/dev/null | sort)

if [ "$violations" -gt 0 ]; then
  echo "layering: $violations forbidden include(s); see docs/architecture.md for the layers" >&2
  exit 1
fi
echo "layering: every include respects the layers"
