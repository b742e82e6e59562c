#!/usr/bin/env bash
# The C++ and CUDA sources against .clang-format (Google's style at 100 columns).
#
#   scripts/check-format.sh [ROOT]          exit 1, naming each file clang-format would change (ctest: format_check)
#   scripts/check-format.sh [ROOT] --fix    format them in place
#
# The files are git's (*.cpp, *.hpp, *.cu, *.cuh) where ROOT is a git work tree's top, else every
# such file under ROOT outside build folders. Each clang-format release formats some constructs its own
# way: the style is checked with clang-format 14 (Debian 12's `clang-format`); another release
# is no verdict (exit 77, ctest's skip), and none at all is a missing dependency (exit 2).
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
fix=0
if [ $# -ge 2 ]; then
  [ "$2" = --fix ] || { echo "check-format: unknown option '$2' (expected --fix)" >&2; exit 2; }
  fix=1
fi
[ -f "$root/.clang-format" ] || { echo "check-format: $root has no .clang-format" >&2; exit 2; }
tool=""
for candidate in clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null 2>&1; then tool=$candidate; break; fi
done
[ -n "$tool" ] || { echo "check-format: clang-format is not installed (scripts/install-deps.sh installs it)" >&2; exit 2; }
major=$("$tool" --version | grep -oE 'version [0-9]+' | grep -oE '[0-9]+')
if [ "$major" != 14 ]; then
  echo "check-format: $tool is version ${major:-unknown}; the style is checked with clang-format 14 (skipped)"
  exit 77
fi

cd "$root" || exit 2
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.cu' '*.cuh')
else
  mapfile -t files < <(find . \( -name 'build*' -o -name '.git' \) -prune -o -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print)
fi
[ "${#files[@]}" -gt 0 ] || { echo "check-format: no sources under $root" >&2; exit 2; }
if [ "$fix" = 1 ]; then
  "$tool" -i "${files[@]}" || exit 1
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$tool" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} files are not formatted as .clang-format says (scripts/check-format.sh . --fix):"
  printf '  %s\n' "${bad[@]:0:20}"
  [ "${#bad[@]}" -le 20 ] || echo "  ... and $((${#bad[@]} - 20)) more"
  exit 1
fi
echo "check-format: ${#files[@]} files formatted as .clang-format says ($tool $major)"
