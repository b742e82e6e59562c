#!/usr/bin/env bash
# Installs what gpulb needs from Debian's packages, and only what is missing.
# Works as root or through sudo; says what it installs. Nothing is downloaded at build time.
#
#   scripts/install-deps.sh            build + test dependencies, and the viewer's
#   scripts/install-deps.sh --no-viewer  without GLFW / ImGui / Xvfb
#   scripts/install-deps.sh --fuzz       also clang and libFuzzer (make fuzz; opt-in, not for CI)
set -euo pipefail

want_viewer=1
want_fuzz=0
for arg in "$@"; do
  case "$arg" in
    --no-viewer) want_viewer=0 ;;
    --fuzz) want_fuzz=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "install-deps: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

packages=(cmake ninja-build g++ make pkg-config libzstd-dev nlohmann-json3-dev libcli11-dev libgtest-dev libssl-dev
          libopenmpi-dev openmpi-bin)  # Open MPI: gpulb run --distributed (GPULB_MPI)
if [ "$want_viewer" = 1 ]; then
  packages+=(libglfw3-dev libimgui-dev libstb-dev libgl-dev xvfb xauth fonts-dejavu-core)
fi

if [ "$want_fuzz" = 1 ]; then
  # Debian 12: libFuzzer (libclang_rt.fuzzer) is in libclang-rt-14-dev, pulled in by libclang-rt-dev.
  packages+=(clang libclang-rt-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything needed is installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: missing packages (${missing[*]}) and no apt-get here: install them by hand" >&2
  exit 1
fi

if [ "$(id -u)" = 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
