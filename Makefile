# The two commands of the README, and a few more.
#   make run        install what the run needs, build gpulb and gpulb-viewer (Release), run a lesson's
#                   recipe on this machine (CPU threads; the GPU too where one is) and show its
#                   lesson view (the viewer with a display, a PNG under out/ without one)
#   make test       install what the tests need, build everything, run every test but the
#                   ThreadSanitizer ones
#   make check      the quick tier for everyday work: every test but those labelled gpu, mpi,
#                   fuzz (sanitizers), screenshots and examples (built against an install):
#                   model, core, tracing, scenarios and CLI
#   make test-tsan  the concurrency tests under ThreadSanitizer
#   make package    a Debian package of gpulb, gpulb-viewer, the lessons and the shipped traces
#   make bench      the benchmarks (GPU figures need a CUDA GPU)
#   make fuzz       build the libFuzzer targets with clang (build-fuzz/) and run each for
#                   FUZZ_SECONDS over fuzz/corpus/<target>/ (docs/reliability.md); `make test`
#                   replays that corpus under ASan+UBSan with any compiler
# CMAKE_FLAGS adds to every configure, e.g. CMAKE_FLAGS=-DGPULB_CUDA=ON (what CI passes).
SHELL := /bin/bash
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
LESSON ?= mohan-static-vs-stealing
LESSON_PARAMS ?= --param lookahead=5
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= decode export model
FUZZ_BUILD ?= $(BUILD)-fuzz
GPULB := $(BUILD)/tools/gpulb
VIEWER := $(BUILD)/viewer/gpulb-viewer
CONFIGURE := cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release --log-level=NOTICE

.PHONY: deps deps-run build build-run run test check test-tsan package bench fuzz clean

deps:
	@bash scripts/install-deps.sh

deps-run:
	@bash scripts/install-deps.sh --run

# A build folder that `make run` made first has no tests: `make test` and `make check` turn them
# (and MPI) on; `make run` leaves whatever the folder has and builds only its two programs.
build: deps
	@$(CONFIGURE) -DGPULB_TESTS=ON -DGPULB_MPI=AUTO $(CMAKE_FLAGS)
	@cmake --build $(BUILD) -j $(JOBS)

build-run: deps-run
	@if [ -f $(BUILD)/CMakeCache.txt ]; then $(CONFIGURE) $(CMAKE_FLAGS); \
	  else $(CONFIGURE) -DGPULB_TESTS=OFF -DGPULB_MPI=OFF $(CMAKE_FLAGS); fi
	@cmake --build $(BUILD) -j $(JOBS) --target gpulb-programs

run: build-run
	@bash scripts/first-run.sh $(BUILD) $(LESSON) $(LESSON_PARAMS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE 'gpu|mpi|fuzz|screenshots|examples'

test-tsan: deps
	@cmake -S . -B $(BUILD)-tsan -G Ninja --log-level=NOTICE -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPULB_TSAN=ON \
	  -DGPULB_CUDA=OFF -DGPULB_VIEWER=OFF
	@cmake --build $(BUILD)-tsan -j $(JOBS) --target concurrency_tests
	cd $(BUILD)-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -L concurrency -j $(JOBS)

# The package holds what `make run` builds, from the same build folder (a test build has them
# too): share/gpulb/traces is found beside bin/ wherever the package puts it, so no rebuild for /usr.
package: build-run
	@bash scripts/install-deps.sh --run --package
	cd $(BUILD) && cpack -G DEB -D CPACK_PACKAGING_INSTALL_PREFIX=/usr
	@bash scripts/check-package.sh $(BUILD)

bench: build
	@mkdir -p out
	$(GPULB) bench all -o out/bench.md

fuzz:
	@bash scripts/install-deps.sh --no-viewer --fuzz
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPULB_FUZZ=ON \
	  -DGPULB_TESTS=OFF -DGPULB_CUDA=OFF -DGPULB_VIEWER=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	bash scripts/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD) $(BUILD)-tsan $(BUILD)-fuzz
