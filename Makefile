# mcoll — user commands:
#   make          build into build/ (Open MPI)
#   make check    install missing Debian packages, build, run the tests (Open MPI, then MPICH)
#   make check-release  build with -O3 (CMAKE_BUILD_TYPE=Release) and -Werror: its warnings
#                 (-Wmaybe-uninitialized, -Wformat-truncation) differ from the default -O2 build's
#   make bench    install missing packages, build, run the default side-by-side benchmark (2 ranks)
#   make tune     measured profile, sweep (2, 3, 4 ranks), measured and model-built rules files,
#                 penalty table and heat map into tune/ (scripts/tune.sh; TUNE_* knobs; < 20 min)
#   make bench-node  the intra-node targets: both MPIs, 2 ranks, vs the faster native and the
#                 DRAM floor (scripts/bench-node.sh; NP, MIN, MAX, COLLS, ROUNDS knobs); then
#                 1-64 MiB with libmcoll-malloc.so preloaded (bench-node/malloc-heap), and the
#                 small messages again as batches of 100 calls (bench-node/small)
#   make soak     mcoll-soak with fresh seeds over a matrix of configurations for MINUTES
#                 (default 30; scripts/soak.sh: SEED, ITERS, OUT, ASAN=1, MPICH=1 knobs)
# Knobs: MPI=openmpi|mpich (for `make`/`make bench`), JOBS, CHECK_MPIS="openmpi mpich",
#        SANITIZE=1 (ASan+UBSan build in build-asan/).

MPI        ?= openmpi
JOBS       ?= 2
CHECK_MPIS ?= openmpi mpich
BUILD      := build
BENCH_NP   ?= 2
BENCH_ARGS ?=

.PHONY: all deps configure check check-release check-asan bench bench-node soak tune install clean

all: configure
	cmake --build $(BUILD) -j$(JOBS)

deps:
	@scripts/deps.sh

configure: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DMCOLL_MPI=$(MPI) >/dev/null

# Each MPI gets its own build dir: build/ (Open MPI), build-mpich/.
# shell snippet: d = the build dir of MPI $$m (a make function cannot see the shell's $$m)
builddir = d=$(BUILD); [ $$m = openmpi ] || d=$(BUILD)-$$m

check: deps
	@set -e; for m in $(CHECK_MPIS); do \
	  $(builddir); \
	  echo "=== mcoll: build and test against $$m ($$d)"; \
	  cmake -S . -B $$d -DMCOLL_MPI=$$m >/dev/null; \
	  cmake --build $$d -j$(JOBS); \
	  (cd $$d && ctest -j$(JOBS) --output-on-failure --timeout 600); \
	done

check-release: deps
	cmake -S . -B $(BUILD)-release -DMCOLL_MPI=$(MPI) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD)-release -j$(JOBS)

check-asan: deps
	cmake -S . -B $(BUILD)-asan -DMCOLL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DMCOLL_TEST_TIMEOUT_SCALE=4 >/dev/null
	cmake --build $(BUILD)-asan -j$(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=0 ctest -j$(JOBS) --output-on-failure \
	  -R '^(verify_[a-z_]+_np(3|5)|verify_large_[a-z_]+_np4|errors_np3|unit_.*|shm_dav(_heap)?_np3|shm_race(_far)?_np3|shm_far_np3|shm_path_(auto|cma)|shm_adopt_np3|shm_hygiene|neighbor_k2_np3|neighbor_workloads_k2_np3|neighbor_errors_np3|env_select_model_(shm|p2p)|verify_hier_[a-z]+_k2_np4|threads_np3|threads_vnode2_np5|env_comm_setup_vnode0_pool4_np3|env_comm_setup_vnode2_pool4_np5|env_worlds_vnode1_pool4_spawn2_np3|soak_np3)$$' 

bench: all
	@scripts/bench.sh $(MPI) $(BUILD) $(BENCH_NP) $(BENCH_ARGS)

tune: all
	@scripts/tune.sh $(BUILD) tune

bench-node: deps
	@for m in openmpi mpich; do $(builddir); \
	  cmake -S . -B $$d -DMCOLL_MPI=$$m >/dev/null && cmake --build $$d -j$(JOBS) >/dev/null; done
	@scripts/bench-node.sh
	@OUT=bench-node/malloc-heap MIN=1M MALLOC_HEAP=1 scripts/bench-node.sh
	@OUT=bench-node/small COLLS=barrier,bcast,allreduce,reduce MAX=2K scripts/bench-node.sh --batch 100

soak: all
	@scripts/soak.sh $(MINUTES)

install: all
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-mpich $(BUILD)-asan $(BUILD)-release
