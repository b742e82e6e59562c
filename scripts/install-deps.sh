#!/usr/bin/env bash
# Installs what gpulb needs from Debian's packages, and only what is missing.
# Works as root or through sudo; prints one line a step and keeps apt's own output in a log,
# which it names (and whose end it shows) when a step fails. Nothing is downloaded at build time.
#
#   scripts/install-deps.sh             what `make test` needs: build, viewer, tests, MPI
#   scripts/install-deps.sh --run       what `make run` needs: build and viewer, nothing for tests
#   scripts/install-deps.sh --package   also dpkg-dev and lintian (make package: shlibdeps, checks)
#   scripts/install-deps.sh --no-viewer without GLFW / ImGui / Xvfb
#   scripts/install-deps.sh --fuzz      also clang and libFuzzer (make fuzz; opt-in, not for CI)
# Environment: GPULB_DEPS_LOG names the log (default: a file under ${TMPDIR:-/tmp}).
set -euo pipefail

want_viewer=1
want_tests=1
want_fuzz=0
want_package=0
for arg in "$@"; do
  case "$arg" in
    --run) want_tests=0 ;;
    --no-viewer) want_viewer=0 ;;
    --fuzz) want_fuzz=1 ;;
    --package) want_package=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "install-deps: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

packages=(cmake ninja-build g++ make pkg-config libzstd-dev nlohmann-json3-dev libcli11-dev)
if [ "$want_viewer" = 1 ]; then
  packages+=(libglfw3-dev libimgui-dev libstb-dev libgl-dev fonts-dejavu-core)
  # Xvfb renders the viewer's pictures where no display is: the screenshot tests, and `make run` there.
  if [ "$want_tests" = 1 ] || [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    packages+=(xvfb xauth)
  fi
fi
if [ "$want_tests" = 1 ]; then
  packages+=(libgtest-dev libssl-dev
             protobuf-compiler  # protoc decodes the Perfetto export in its tests
             clang-format  # the style check (scripts/check-format.sh, ctest format_check)
             libopenmpi-dev openmpi-bin  # Open MPI: gpulb run --distributed (GPULB_MPI) and its tests
             time)  # GNU time: the peak memory of each rank (mpi_trace_memory_per_rank)
fi
if [ "$want_package" = 1 ]; then
  packages+=(dpkg-dev lintian)  # dpkg-shlibdeps finds the .deb's runtime dependencies; lintian checks it
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
  echo "install-deps: the ${#packages[@]} Debian packages needed are installed"
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

log="${GPULB_DEPS_LOG:-${TMPDIR:-/tmp}/gpulb-install-deps.log}"
: > "$log"
started=$SECONDS

# step "what it does" command...: one line out, the command's output into the log.
step() {
  local what="$1"
  shift
  echo "install-deps: $what"
  echo "=== $what: $*" >> "$log"
  if ! "$@" >> "$log" 2>&1; then
    echo "install-deps: failed: $what; apt's output is in $log, its end:" >&2
    tail -n 15 "$log" | sed 's/^/  /' >&2
    exit 1
  fi
}

export DEBIAN_FRONTEND=noninteractive
step "updating Debian's package lists" "${sudo[@]}" apt-get update
noun=packages
[ ${#missing[@]} -eq 1 ] && noun=package
step "installing ${#missing[@]} Debian $noun: ${missing[*]}" \
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: done in $((SECONDS - started)) s (apt's output: $log)"
