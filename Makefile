# The two commands of the README, and a few more.
#   make run        install what is missing, build (Release), run the default scenario on the best
#                   backend here, write its trace under out/, print the summary, then open the
#                   viewer (or, without a display, render a PNG of the timeline)
#   make test       install what is missing, build, run every test (CI runs this)
#   make test-tsan  the concurrency tests under ThreadSanitizer
#   make bench      the benchmarks (GPU figures need a CUDA GPU)
#   make fuzz       build the libFuzzer targets with clang (build-fuzz/) and run each for
#                   FUZZ_SECONDS over fuzz/corpus/<target>/ (docs/reliability.md); `make test`
#                   replays that corpus under ASan+UBSan with any compiler
SHELL := /bin/bash
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
SCENARIO ?= patterns
PARAMS ?= --param pattern=P4
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= decode export model
FUZZ_BUILD ?= $(BUILD)-fuzz
GPULB := $(BUILD)/tools/gpulb
VIEWER := $(BUILD)/viewer/gpulb-viewer

.PHONY: deps build run test test-tsan bench fuzz clean

deps:
	@bash scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@mkdir -p out
	@backend=cpu; if $(GPULB) list --json | grep -q '"index"'; then backend=cuda; fi; \
	  echo "== gpulb run $(SCENARIO) $(PARAMS) --policy task-queue --backend $$backend"; \
	  $(GPULB) run $(SCENARIO) $(PARAMS) --policy task-queue --backend $$backend -o out/$(SCENARIO)-task-queue-$$backend.gpulb; \
	  rc=$$?; [ $$rc -eq 0 ] || exit $$rc; \
	  trace=out/$(SCENARIO)-task-queue-$$backend.gpulb; \
	  $(GPULB) export $$trace --format chrome -o out/$(SCENARIO)-task-queue-$$backend.json; \
	  if [ -x $(VIEWER) ]; then \
	    if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then echo "== opening the viewer on $$trace"; $(VIEWER) $$trace; \
	    else $(VIEWER) $$trace --view timeline --screenshot out/$(SCENARIO)-timeline.png --size 1600x900 2>/dev/null \
	      || xvfb-run -a $(VIEWER) $$trace --view timeline --screenshot out/$(SCENARIO)-timeline.png --size 1600x900; \
	      echo "== no display: timeline rendered to out/$(SCENARIO)-timeline.png"; fi; \
	  else echo "== viewer not built (see the configure summary); open $$trace with gpulb info, or the .json in ui.perfetto.dev"; fi; \
	  echo "== files: $$(ls out/ | tr '\n' ' ')"

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-tsan: deps
	cmake -S . -B $(BUILD)-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPULB_TSAN=ON -DGPULB_CUDA=OFF -DGPULB_VIEWER=OFF
	cmake --build $(BUILD)-tsan -j $(JOBS)
	cd $(BUILD)-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -L concurrency -j $(JOBS)

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
