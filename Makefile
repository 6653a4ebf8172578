# tierplan — one hand-written Makefile.
#   make            build bin/tierplan (installs missing Debian packages first when root)
#   make test       build and run every test: CUnit unit tests, CLI tests, README examples
#   make deps       install the Debian packages tierplan needs (apt-get as root, else print it)
#   make bench      engine events/s, simulated steps and whole plans (bench.json)
#   make regress    recompute the golden scenario predictions and compare (make golden rewrites)
#   make validate   predictions against the recorded measurements in traces/, and the accuracy
#                   record plan prints (configs/accuracy.json; make accuracy rewrites it)
#   make check-asan the whole suite and the goldens under AddressSanitizer and UBSan (build/asan)
#   make check-valgrind  plan, compare, simulate and sweep under valgrind memcheck
#   make check-tsan sweep on several threads under ThreadSanitizer (build/tsan)
#   make cuda       build bin/tierplan-cuda, the CUDA calibration helper, where nvcc exists
#   make gpu-check  the run for a machine with a GPU: calibrate --full, validate (validate/)
#   make fuzz       libFuzzer targets, FUZZ_SECONDS each (default 60), corpus in tests/fuzz/corpus
#   make fuzz-replay  every committed fuzz input once (CI)
#   make V=1 ...    show the full commands
# CI sets WERROR=1 (warnings are errors).

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CPPFLAGS += -D_GNU_SOURCE -MMD -MP
LDLIBS  := -lcjson -lm -pthread

BUILD   ?= build
BIN     := bin

DEB_PKGS := libcjson-dev libcunit1-dev gnuplot-nox fio

# TIERPLAN_DEPS=DIR: cJSON's header and library from DIR (validate/gpu-bundle.sh makes it on a
# machine that has the package) for a machine where it cannot be installed (a GPU node without
# root or network): no package check, and bin/tierplan finds the library through its rpath
ifneq ($(TIERPLAN_DEPS),)
CPPFLAGS += -I$(TIERPLAN_DEPS)/include
LDFLAGS  += -L$(TIERPLAN_DEPS)/lib -Wl,-rpath,$(abspath $(TIERPLAN_DEPS)/lib)
DEPS_OK  :=
else
DEPS_OK  := $(BUILD)/deps.ok
endif

# explicit source lists, one per folder; arrows go cli -> validate/reports -> sim -> model
MODEL_SRC    := model/units.c model/file.c model/catalog.c model/hw.c \
                model/arch.c model/job.c model/act.c model/layout.c
SIM_SRC      := sim/engine.c sim/step.c sim/sim.c sim/pol_gpu.c sim/pol_zero_offload.c \
                sim/pol_zero_infinity.c sim/pol_tiered.c sim/plan.c sim/opts.c sim/dsconfig.c sim/inputs.c \
                sim/grid.c
REPORTS_SRC  := reports/text.c reports/json.c reports/trace.c reports/report_dir.c reports/emit.c
VALIDATE_SRC := validate/fit.c validate/calibrate.c validate/validate.c validate/regress.c \
                validate/runlog.c
CLI_SRC      := cli/main.c cli/cmd_plan.c cli/cmd_simulate.c cli/cmd_sweep.c cli/cmd_catalog.c \
                cli/cmd_validate.c cli/cmd_calibrate.c
# the library: everything but the command line
LIB_SRC := $(MODEL_SRC) $(SIM_SRC) $(REPORTS_SRC) $(VALIDATE_SRC)
TEST_SRC := tests/run_tests.c tests/test_units.c tests/test_arch.c tests/test_job.c \
            tests/test_layout.c tests/test_catalog.c tests/test_plan.c \
            tests/test_engine.c tests/test_sim.c tests/test_calibrate.c

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

ifneq ($(V),1)
Q := @
quiet = @printf '  %-6s %s\n' $(1) $(2);
endif

.PHONY: all deps check-browser test unit layers-test cli-test gpucheck-test safety-test check-tsan readme-test bench fuzz fuzz-build regress golden validate accuracy cuda gpu-check check-asan check-valgrind fuzz-replay clean

all: $(BIN)/tierplan

# --- dependencies ---------------------------------------------------------------------------
# The stamp records a successful check; it is redone when this Makefile changes.
$(BUILD)/deps.ok: Makefile
	$(Q)missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) || exit 4; \
	  else \
	    echo "missing Debian packages:$$missing" >&2; \
	    echo "run: sudo apt-get install -y$$missing" >&2; exit 1; \
	  fi; \
	fi
	$(Q)mkdir -p $(@D) && touch $@

# Chromium renders report.html in check-browser; not needed to build, so a stamp of its own
$(BUILD)/browser.ok: Makefile
	$(Q)if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing: chromium"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) || \
	      echo "check-browser: chromium could not be installed; the browser test will say it skipped" >&2; \
	  else \
	    echo "check-browser: chromium missing; run: sudo apt-get install -y chromium" >&2; \
	  fi; \
	fi
	$(Q)mkdir -p $(@D) && touch $@

deps: $(BUILD)/deps.ok $(BUILD)/browser.ok

# --- build ----------------------------------------------------------------------------------
$(BUILD)/%.o: %.c | $(DEPS_OK)
	$(call quiet,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c -o $@ $<

$(BIN)/tierplan: $(CLI_OBJ) $(LIB_OBJ)
	$(call quiet,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/run_tests: $(TEST_OBJ) $(LIB_OBJ)
	$(call quiet,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcunit

# --- tests ----------------------------------------------------------------------------------
test: unit layers-test cli-test safety-test readme-test gpucheck-test

unit: $(BUILD)/run_tests
	$(Q)TIERPLAN_CONFIGS=$(CURDIR)/configs ./$(BUILD)/run_tests

# the include arrows between folders (cli -> validate/reports -> sim -> model)
layers-test:
	$(Q)sh tests/layers.sh

cli-test: $(BIN)/tierplan
	$(Q)sh tests/cli.sh $(BIN)/tierplan

# make gpu-check's build phase on a machine it has not seen (fakes: no cJSON package, a
# toolkit laid out as pip's wheels, a helper that cannot be built)
gpucheck-test: $(BIN)/tierplan
	$(Q)sh tests/gpucheck.sh $(BIN)/tierplan

# files, subprocesses and hostile data (devices, symlinks, gnuplot and HTML escaping, exit codes)
safety-test: $(BIN)/tierplan
	$(Q)TIERPLAN_CONFIGS=$(CURDIR)/configs sh tests/safety.sh $(BIN)/tierplan

readme-test: $(BIN)/tierplan
	$(Q)sh tests/readme.sh README.md $(BIN)/tierplan

# report.html in headless Chromium: tables, recommendation, charts, nothing wider than the page
check-browser: $(BIN)/tierplan $(BUILD)/browser.ok
	$(Q)TIERPLAN_CONFIGS=$(CURDIR)/configs sh tests/browser.sh $(BIN)/tierplan

$(BUILD)/bench: $(BUILD)/tests/bench.o $(LIB_OBJ)
	$(call quiet,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# --- the CUDA calibration helper (its own binary: bin/tierplan runs without a GPU driver) ---
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
NVCCFLAGS ?= -O2 -std=c++17 -Xcompiler -Wall
# cuBLAS and cuBLASLt (the FP8 GEMMs; libcublas itself needs it): the toolkit's, found again at
# run time through an rpath to the toolkit's library folder
# (a runfile install is often not in ld.so.conf); gpu-check names another where that fails
CUBLAS ?= -lcublas -lcublasLt -Xlinker -rpath -Xlinker $(abspath $(dir $(NVCC))../lib64)

cuda:
	$(Q)if [ -z "$(NVCC)" ]; then echo "cuda: nvcc not found; the CUDA calibration tests will report waived"; \
	else $(MAKE) --no-print-directory $(BIN)/tierplan-cuda; fi

$(BIN)/tierplan-cuda: validate/cuda/harness.cu
	$(call quiet,NVCC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCCFLAGS) -o $@ $< $(CUBLAS)

# golden predictions: regress compares, golden rewrites on purpose (say why in the commit)
regress: $(BIN)/tierplan
	$(Q)TIERPLAN_CONFIGS=$(CURDIR)/configs ./$(BIN)/tierplan regress --scenarios tests/scenarios --golden tests/golden

golden: $(BIN)/tierplan
	$(Q)TIERPLAN_CONFIGS=$(CURDIR)/configs ./$(BIN)/tierplan regress --scenarios tests/scenarios --golden tests/golden --update

# the accuracy guard, and the record of it plan and simulate print (configs/accuracy.json) still
# what validate finds: `make accuracy` rewrites it when a prediction or a case changes
validate: $(BIN)/tierplan
	$(Q)mkdir -p $(BUILD)
	$(Q)TIERPLAN_CONFIGS=$(CURDIR)/configs ./$(BIN)/tierplan validate --accuracy $(BUILD)/accuracy.json
	$(Q)cmp -s $(BUILD)/accuracy.json configs/accuracy.json || \
		{ echo "configs/accuracy.json differs from what validate finds (diff it with $(BUILD)/accuracy.json; make accuracy rewrites it)"; exit 1; }

accuracy: $(BIN)/tierplan
	$(Q)TIERPLAN_CONFIGS=$(CURDIR)/configs ./$(BIN)/tierplan validate --accuracy configs/accuracy.json >/dev/null

# the run a session lent a GPU makes once: calibrate --full and validate, JSON into $$OUT
gpu-check:
	$(Q)TIERPLAN_DEPS="$(TIERPLAN_DEPS)" sh validate/gpu-check.sh

bench: $(BIN)/tierplan $(BUILD)/bench
	$(Q)TIERPLAN_CONFIGS=$(CURDIR)/configs sh tests/bench.sh $(BIN)/tierplan $(BUILD)/bench bench.json

# ASan + UBSan build of everything, then the whole suite with it: unit, CLI (scenarios), README
# examples and the golden regression
check-asan:
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan BIN=build/asan/bin \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" test regress

# ThreadSanitizer over sweep on several threads (the only threaded code)
check-tsan:
	$(Q)$(MAKE) --no-print-directory BUILD=build/tsan BIN=build/tsan/bin \
	  CFLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer" LDFLAGS="-fsanitize=thread" \
	  build/tsan/bin/tierplan
	$(Q)sh tests/tsan.sh build/tsan/bin/tierplan

# valgrind memcheck over plan, compare, simulate (with a trace) and sweep: no errors, no leaks
check-valgrind: $(BIN)/tierplan
	$(Q)sh tests/valgrind.sh $(BIN)/tierplan

# --- fuzzing (clang + libFuzzer from Debian's libclang-rt) ------------------------------------
FUZZ_TARGETS := config catalog units cli grid scenarios trace profile deepspeed
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

$(BUILD)/libtierplan.a: $(LIB_OBJ)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

fuzz-build:
	$(Q)$(MAKE) --no-print-directory BUILD=build/fuzz CC=$(FUZZ_CC) \
	  CFLAGS="-O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link" build/fuzz/libtierplan.a
	$(Q)for t in $(FUZZ_TARGETS); do \
	  $(FUZZ_CC) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer $(CPPFLAGS) $(WARN) -o build/fuzz/fuzz_$$t \
	    tests/fuzz/fuzz_$$t.c build/fuzz/libtierplan.a $(LDLIBS) || exit 1; done

# each target for FUZZ_SECONDS; new inputs merge into the committed corpus (tests/fuzz/corpus)
fuzz: fuzz-build
	$(Q)sh tests/fuzz/run.sh build/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# every committed corpus input once (crash regressions included): a quick check for CI
fuzz-replay: fuzz-build
	$(Q)for t in $(FUZZ_TARGETS); do \
	  dirs=""; for d in tests/fuzz/corpus/$$t tests/fuzz/seeds/$$t; do [ -d $$d ] && dirs="$$dirs $$d"; done; \
	  [ -n "$$dirs" ] || { echo "fuzz-replay: $$t has no seeds or corpus"; exit 1; }; \
	  ./build/fuzz/fuzz_$$t -runs=0 $$dirs >build/fuzz/replay_$$t.log 2>&1 \
	    || { echo "fuzz-replay: $$t failed, see build/fuzz/replay_$$t.log"; exit 1; }; \
	  echo "fuzz-replay: $$t: $$(ls $$dirs | wc -l) inputs clean"; done

clean:
	rm -rf $(BUILD) $(BIN) bench.json

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/tests/bench.d
