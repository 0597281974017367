# attnprop front door. `make run` and `make test` work on a fresh Debian 12 machine as root:
# they install missing Debian packages, configure, build and run.
BUILD      ?= build
JOBS       ?= 2
BUILD_TYPE ?= RelWithDebInfo
CMAKE_ARGS ?=
CTEST_ARGS ?=
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= json model formula case

.PHONY: all deps configure build run test test-nompi test-all sweep bench asan fuzz format clean help

all: build

help:
	@echo "make run     install deps, build, run the default demonstration and write a report"
	@echo "make test    install deps, build, run the default test suite (CTest, not the sweeps)"
	@echo "make test-nompi  the default test suite in a build that does not find MPI ($(BUILD)-nompi)"
	@echo "make sweep   long sweeps across n (CTest label 'sweep')"
	@echo "make bench   build and run the benchmarks (bench/, Google Benchmark)"
	@echo "make asan    build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
	@echo "make fuzz    build the libFuzzer targets with clang and run each FUZZ_SECONDS (60) seconds"
	@echo "make clean   remove the build directories"

deps:
	@./scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

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

asan: deps
	cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DATTNPROP_SANITIZE=address,undefined
	cmake --build $(BUILD)-asan -j$(JOBS)
	cd $(BUILD)-asan && ctest --output-on-failure -j$(JOBS) -LE 'sweep|package' $(CTEST_ARGS)

# libFuzzer targets (fuzz/, docs/reliability.md): clang, ASan + UBSan, in build-fuzz.
fuzz:
	@./scripts/install-deps.sh --fuzz
	cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DATTNPROP_FUZZ=ON -DATTNPROP_SANITIZE=address,undefined -DATTNPROP_BUILD_TESTS=OFF
	cmake --build $(BUILD)-fuzz -j$(JOBS) --target attnprop_fuzzers
	./scripts/run-fuzz.sh $(BUILD)-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-bench $(BUILD)-fuzz $(BUILD)-nompi
