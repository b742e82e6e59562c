#!/usr/bin/env bash
# What `make run` does once gpulb is built: runs a lesson's recipe on this machine's CPU threads
# (and on its GPU where one is), then shows the lesson with those runs: the viewer where a display
# is, else a 1600x900 PNG under out/. Ends with what it made and what to try next.
#
#   scripts/first-run.sh BUILD_DIR LESSON [--param NAME=VALUE ...]
set -euo pipefail
build="$1"
lesson="$2"
shift 2
gpulb="$build/tools/gpulb"
viewer="$build/viewer/gpulb-viewer"
out=out
mkdir -p "$out"
made=("$gpulb")

backends=(cpu)
if "$gpulb" list --json | grep -q '"index"'; then backends+=(cuda); fi

for backend in "${backends[@]}"; do
  dir="$out/$backend"
  echo "== gpulb lesson run $lesson --backend $backend $* --out-dir $dir"
  "$gpulb" lesson run "$lesson" --backend "$backend" "$@" --out-dir "$dir"
  made+=("$dir/lesson-$lesson-a.gpulb" "$dir/lesson-$lesson-b.gpulb")
done

# The last backend's runs are the picture: the GPU's where there is one.
a="$out/${backends[-1]}/lesson-$lesson-a.gpulb"
b="$out/${backends[-1]}/lesson-$lesson-b.gpulb"
png="$out/lesson-$lesson.png"
if [ -x "$viewer" ]; then
  made+=("$viewer")
  if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    echo "== opening the viewer on the lesson (close its window to go on)"
    "$viewer" --lesson "$lesson" "$a" "$b"
  else
    echo "== no display: rendering the lesson to $png"
    xvfb-run -a -s "-screen 0 1920x1200x24" "$viewer" --lesson "$lesson" "$a" "$b" --screenshot "$png" --size 1600x900
    made+=("$png")
  fi
else
  echo "== the viewer was not built (the configure line above says why)"
fi

echo "== made: ${made[*]}"
echo "== next: $build/viewer/gpulb-viewer --lesson chen-fig7   (a lesson on real H100 traces; gpulb lesson list names them all)"
echo "          $gpulb run uts --param tree=T1 --policy work-stealing   (any scenario x policy; gpulb list)"
