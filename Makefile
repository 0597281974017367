# attnprop front door. `make run` and `make test` work on a fresh Debian 12 machine as root:
# they install missing Debian packages, configure, build and run.
BUILD      ?= build
JOBS       ?= 2
BUILD_TYPE ?= RelWithDebInfo
# RelWithDebInfo with line tables only (-g1): backtraces, perf and the sanitizers name functions,
# files and lines; full debug information (-g) made the compile a quarter slower (measured on
# the heaviest translation units). For variables in a debugger: BUILD_TYPE=Debug.
REL_FLAGS  ?= -O2 -g1 -DNDEBUG
CMAKE_ARGS ?=
CTEST_ARGS ?=
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= json model formula case
# One clang build serves the sanitizer tier and the fuzzing tier (docs/reliability.md, "CI
# time"): AddressSanitizer + UndefinedBehaviorSanitizer, libFuzzer's coverage in every object,
# the tests and the fuzz targets. Debug (assertions on) at -O1 (SAN_OPT): at -O0 the coverage
# and sanitizer checks made the heaviest tests several times slower (a bound of cc-parity-ln0 took
# 160 s), for a compile only somewhat cheaper.
SAN_BUILD      ?= $(BUILD)-asan
SAN_BUILD_TYPE ?= Debug
SAN_OPT        ?= -O1
SAN_CMAKE = cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=$(SAN_BUILD_TYPE) \
  -DCMAKE_CXX_FLAGS_DEBUG="-g1 $(SAN_OPT)" \
  -DCMAKE_CXX_COMPILER=clang++-14 -DATTNPROP_SANITIZE=address,undefined -DATTNPROP_FUZZ=ON \
  $(CMAKE_ARGS)

.PHONY: all deps configure build run test test-nompi test-all sweep bench san-configure asan fuzz format clean help

all: build

help:
	@echo "make run     install deps, build, run the default demonstration and write a report"
	@echo "make test    install deps, build, run the default test suite (CTest, not the sweeps)"
	@echo "make test-nompi  the default test suite in a build that does not find MPI ($(BUILD)-nompi)"
	@echo "make sweep   long sweeps across n (CTest label 'sweep')"
	@echo "make bench   build and run the benchmarks (bench/, Google Benchmark)"
	@echo "make asan    build (clang) and test under AddressSanitizer + UndefinedBehaviorSanitizer"
	@echo "make fuzz    build the libFuzzer targets in the same build and run each FUZZ_SECONDS (60) seconds"
	@echo "make clean   remove the build directories"

deps:
	@./scripts/install-deps.sh

BUILD_CMAKE = cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(REL_FLAGS)" $(CMAKE_ARGS)

$(BUILD)/CMakeCache.txt: | deps
	$(BUILD_CMAKE)

configure: deps
	$(BUILD_CMAKE)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

run: build
	@./scripts/run-demo.sh $(BUILD)/bin/attnprop

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -LE sweep $(CTEST_ARGS)

# The build of a machine without MPI's packages: CMake is told not to find MPI, so ATTNPROP_MPI
# is off, the one-process world is built and the tests of label mpi are not registered.
test-nompi:
	$(MAKE) test BUILD=$(BUILD)-nompi CMAKE_ARGS="$(CMAKE_ARGS) -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON"

sweep: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -L sweep $(CTEST_ARGS)

bench:
	@./scripts/install-deps.sh
	cmake -S . -B $(BUILD)-bench -DCMAKE_BUILD_TYPE=Release -DATTNPROP_BUILD_BENCH=ON -DATTNPROP_BUILD_TESTS=OFF
	cmake --build $(BUILD)-bench -j$(JOBS) --target attnprop_bench
	./scripts/run-bench.sh $(BUILD)-bench

# The sanitizer build: a folder configured otherwise (by g++, as before) is started afresh.
san-configure:
	@./scripts/install-deps.sh --fuzz
	@if [ -f $(SAN_BUILD)/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++-14$$' $(SAN_BUILD)/CMakeCache.txt; then \
	  echo "make: $(SAN_BUILD) was configured with another compiler; starting it afresh"; rm -rf $(SAN_BUILD); fi
	$(SAN_CMAKE)

# The tests under AddressSanitizer + UBSan (clang; the build the fuzz targets share).
asan: san-configure
	cmake --build $(SAN_BUILD) -j$(JOBS)
	cd $(SAN_BUILD) && ctest --output-on-failure -j$(JOBS) -LE 'sweep|package' $(CTEST_ARGS)

# libFuzzer targets (fuzz/, docs/reliability.md) in the sanitizer build: after `make asan` only
# the four targets are compiled.
fuzz: san-configure
	cmake --build $(SAN_BUILD) -j$(JOBS) --target attnprop_fuzzers
	./scripts/run-fuzz.sh $(SAN_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(BUILD)-bench $(BUILD)-fuzz $(BUILD)-nompi
