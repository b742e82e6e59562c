#!/usr/bin/env bash
# Checks the Debian package `make package` built in BUILD_DIR: its metadata and contents
# (dpkg-deb), lintian's errors where lintian is installed, and that the programs it holds run from
# an unpacked copy: gpulb lists its lessons and shows a verdict from the packaged traces, and
# gpulb-viewer renders a lesson to a PNG (under xvfb-run where it is present).
#
#   scripts/check-package.sh BUILD_DIR
set -euo pipefail
build="$1"
shopt -s nullglob
debs=("$build"/gpulb_*.deb)
if [ ${#debs[@]} -ne 1 ]; then
  echo "check-package: expected one gpulb_*.deb in $build, found ${#debs[@]}" >&2
  exit 1
fi
deb="${debs[0]}"
fail() { echo "check-package: $deb: $*" >&2; exit 1; }

info=$(dpkg-deb --info "$deb")
grep -q '^ Package: gpulb$' <<<"$info" || fail "no 'Package: gpulb'"
depends=$(grep '^ Depends:' <<<"$info" || true)
for dep in libzstd1 libglfw3 libstdc++6 fonts-dejavu-core; do
  grep -q "$dep" <<<"$depends" || fail "Depends does not name $dep: $depends"
done
contents=$(dpkg-deb --contents "$deb")
for f in ./usr/bin/gpulb ./usr/bin/gpulb-viewer ./usr/share/gpulb/traces/patterns-P4-100k-hardware-h100.gpulb \
         ./usr/share/gpulb/traces/connect4-4-work-stealing-h200.gpulb ./usr/share/gpulb/lessons/chen-fig7-h100.json; do
  grep -q " $f\$" <<<"$contents" || fail "does not hold $f"
done

if command -v lintian >/dev/null 2>&1; then
  # Errors fail the check; warnings (no changelog, no copyright file of Debian's form) are shown.
  lintian --tag-display-limit 0 "$deb" | tee "$build/lintian.txt" || true
  if grep -q '^E: ' "$build/lintian.txt"; then fail "lintian found errors ($build/lintian.txt)"; fi
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb --extract "$deb" "$root"
listed=$("$root/usr/bin/gpulb" lesson list)
grep -q chen-fig7 <<<"$listed" || fail "gpulb lesson list does not name chen-fig7"
# The traces and the lessons' recordings are found beside the program (share/gpulb/traces,
# share/gpulb/lessons), not in this source tree.
shown=$("$root/usr/bin/gpulb" lesson show chen-fig7 --json)
grep -q "$root/usr/share/gpulb/traces/patterns-P4-100k-hardware-h100.gpulb" <<<"$shown" \
  || fail "gpulb lesson show chen-fig7 did not read the packaged traces"
grep -q "$root/usr/share/gpulb/lessons/chen-fig7-h100.json" <<<"$shown" \
  || fail "gpulb lesson show chen-fig7 did not read the packaged series recording"
viewer=("$root/usr/bin/gpulb-viewer" --lesson chen-fig7 --screenshot "$root/lesson.png" --size 1600x900)
if [ -z "${DISPLAY:-}" ] && command -v xvfb-run >/dev/null 2>&1; then viewer=(xvfb-run -a "${viewer[@]}"); fi
"${viewer[@]}" >/dev/null || fail "gpulb-viewer --lesson chen-fig7 failed"
[ "$(head -c 8 "$root/lesson.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the lesson's screenshot is no PNG"
echo "check-package: $deb: $(grep '^ Installed-Size' <<<"$info" | tr -s ' '), runs (gpulb lesson show, gpulb-viewer --lesson)"
