# SPDX-License-Identifier: BSD-2-Clause
# mk/bench.mk - the benchmarks and their charts (included by the Makefile).

# Benchmarks compare against peer libraries (make bench-deps).
BENCH_CFLAGS := $(OPT) $(SAN) -std=gnu11 -Wall -Wextra $(WERROR_FLAG) -pthread -Iinclude -Isrc -I. -D_GNU_SOURCE
BENCH_DPDK   := -I/usr/include/dpdk -I/usr/include/x86_64-linux-gnu/dpdk -include rte_config.h -msse4.2
$(BUILD)/bench/ring_bench: bench/ring_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(BENCH_DPDK) -o $@ bench/ring_bench.c $(STATIC) \
	    -lck $(URCU_STATIC_LIBS) -lrte_ring -lrte_eal -lm -pthread

$(BUILD)/bench/plan_bench: bench/plan_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/plan_bench.c $(STATIC) $(URCU_STATIC_LIBS) -lm -pthread

$(BUILD)/bench/cache_bench: bench/cache_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/cache_bench.c $(STATIC) $(URCU_STATIC_LIBS) -lm -pthread

$(BUILD)/bench/runtime_bench: bench/runtime_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/runtime_bench.c $(STATIC) $(URCU_STATIC_LIBS) -lm -pthread

# Producers alternating bursts and silence (issue 23's A/B, bench/plan_ab.sh).
$(BUILD)/bench/bursty_bench: bench/bursty_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/bursty_bench.c $(STATIC) $(URCU_STATIC_LIBS) -lm -pthread

# ARMS on and off (MKRT_PLAN_OFF=arms): producers repeating each other's MIN/OR items.
$(BUILD)/bench/arms_bench: bench/arms_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/arms_bench.c $(STATIC) $(URCU_STATIC_LIBS) -lm -pthread
# QUEUE's A/B on a high-diameter grid (issue 23, bench/results/plan_decisions.md).
$(BUILD)/bench/frontier_bench: bench/frontier_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/frontier_bench.c $(STATIC) $(URCU_STATIC_LIBS) -lm -pthread

$(BUILD)/bench/stage_bench: bench/stage_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/stage_bench.c $(STATIC) $(URCU_STATIC_LIBS) -lm -pthread

# peer_bench (bench/peer_bench.c): OpenMP tasks when the compiler takes
# -fopenmp, StarPU when pkg-config finds starpu-1.3 (its headers as system
# headers: -Werror is for our code); a missing peer is reported "skipped".
# Probed once, when peer_bench's recipe first needs them.
PEER_OMP    = $(eval PEER_OMP := $$(shell echo 'int main(void){return 0;}' | $$(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo -fopenmp))$(PEER_OMP)
PEER_STARPU = $(eval PEER_STARPU := $$(shell pkg-config --exists starpu-1.3 2>/dev/null && echo yes))$(PEER_STARPU)
PEER_CFLAGS = $(PEER_OMP) $(if $(PEER_STARPU),-DHAVE_STARPU $(patsubst -I%,-isystem %,$(shell pkg-config --cflags starpu-1.3)))
PEER_LIBS   = $(PEER_OMP) $(if $(PEER_STARPU),$(shell pkg-config --libs starpu-1.3))
$(BUILD)/bench/peer_bench: bench/peer_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(PEER_CFLAGS) -o $@ bench/peer_bench.c $(STATIC) $(URCU_STATIC_LIBS) $(PEER_LIBS) -lm -pthread

$(BUILD)/bench/analysis_bench: bench/analysis_bench.c examples/analysis_demo.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/analysis_bench.c $(STATIC) $(URCU_STATIC_LIBS) -lm -pthread

# The CUDA benchmark skips (exit 0) without a GPU; its per-layer kernel is
# built by nvcc when there is one.
$(BUILD)/bench/cuda_bench: bench/cuda_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/cuda_bench.c $(STATIC) $(URCU_STATIC_LIBS) -ldl -lm -pthread
# (nothing to do without nvcc: tools/nvcc_build.sh)
BENCH_LAYER := build/cuda/bench_layer.fatbin
CUDA_BENCH_DATA := bench-cuda-data
.PHONY: bench-cuda-data risgraph-driver
bench-cuda-data: ## the CUDA benchmark's per-layer kernel, where nvcc is (part of bench)
	@$(NVCC_BUILD) $(BENCH_LAYER) 'bench/cuda/layer_kernel.cu src/cuda/protocol.h src/ops/builtin_ops.h base/bitmap.h' \
	    -O3 -fatbin $(CUDA_ARCH) -I. -Isrc bench/cuda/layer_kernel.cu; st=$$?; [ $$st = 0 ] || [ $$st = 2 ]

# The graph benchmark: mkrt's engine beside GraphBLAS and igraph, each peer
# built in where a test compile finds it (else the benchmark says it
# skipped it). G500_OBJS: the Graph500 kit (above).
GRAPH_PEER_SRCS := bench/graph/graphblas_engine.c bench/graph/igraph_engine.c \
                   bench/graph/gapbs_peer.c bench/graph/run_family.c bench/graph/report.c \
                   bench/graph/concurrent.c bench/graph/level_probe.c
$(BUILD)/bench/graph_bench: bench/graph_bench.c bench/bench_util.h bench/graph/peers.h bench/graph/bench_graph.h \
                            $(GRAPH_PEER_SRCS) $(G500_OBJS) $(STATIC)
	@mkdir -p $(@D)
	@peers=""; libs=""; \
	if printf '#include <GraphBLAS.h>\nint main(void){return GrB_init(GrB_NONBLOCKING);}\n' | \
	    $(CC) -x c - -o $@.probe -lgraphblas >/dev/null 2>&1; then \
	  peers="-DHAVE_GRAPHBLAS"; libs="-lgraphblas"; fi; \
	if pkg-config --exists igraph 2>/dev/null; then \
	  peers="$$peers -DHAVE_IGRAPH $$(pkg-config --cflags igraph)"; libs="$$libs $$(pkg-config --libs igraph)"; fi; \
	rm -f $@.probe; \
	echo "$(CC) $(BENCH_CFLAGS) $$peers -o $@ bench/graph_bench.c $(GRAPH_PEER_SRCS) $(G500_OBJS) $(STATIC) $$libs $(URCU_STATIC_LIBS) -lm -pthread"; \
	$(CC) $(BENCH_CFLAGS) $$peers -o $@ bench/graph_bench.c $(GRAPH_PEER_SRCS) $(G500_OBJS) $(STATIC) \
	    $$libs $(URCU_STATIC_LIBS) -lm -pthread

# The streaming graph benchmark (bench/stream_bench.c), on the Graph500 kit.
$(BUILD)/bench/stream_bench: bench/stream_bench.c bench/bench_util.h $(G500_OBJS) $(STREAM_STATIC) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/stream_bench.c $(G500_OBJS) $(STREAM_STATIC) $(STATIC) $(URCU_STATIC_LIBS) -lm -pthread

# RisGraph beside it (stream_bench --risgraph DIR): bench/risgraph_driver.cpp
# is built inside the RisGraph tree at DIR (a build made by
# peers/risgraph-build.sh DIR), with RisGraph's own flags and libraries.
risgraph-driver: ## build stream_bench's RisGraph driver inside RISGRAPH=DIR (a peers/risgraph-build.sh build)
	@test -n "$(RISGRAPH)" && test -d "$(RISGRAPH)/build" || \
	  { echo "risgraph-driver: set RISGRAPH=DIR, a RisGraph tree built by peers/risgraph-build.sh DIR"; exit 2; }
	cp bench/risgraph_driver.cpp $(RISGRAPH)/src/mkrt_stream_driver.cpp
	grep -q mkrt_stream_driver $(RISGRAPH)/CMakeLists.txt || \
	  echo 'add_executable(mkrt_stream_driver src/mkrt_stream_driver.cpp)' >> $(RISGRAPH)/CMakeLists.txt
	cmake -S $(RISGRAPH) -B $(RISGRAPH)/build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(RISGRAPH)/build --target mkrt_stream_driver

BENCHES := $(BUILD)/bench/stream_bench $(BUILD)/bench/ring_bench $(BUILD)/bench/plan_bench $(BUILD)/bench/cache_bench $(BUILD)/bench/bursty_bench $(BUILD)/bench/arms_bench \
           $(BUILD)/bench/runtime_bench $(BUILD)/bench/peer_bench $(BUILD)/bench/cuda_bench \
           $(BUILD)/bench/graph_bench $(BUILD)/bench/stage_bench $(BUILD)/bench/analysis_bench \
           $(CUDA_BENCH_DATA)
# `make bench` prints the figures and writes nothing; `make bench RECORD=1`
# (also `make bench-cuda RECORD=1`) records them as bench/results/NAME.md
# and NAME.csv, replacing the committed ones. bench-quick never records.
BENCH_RECORD = $(if $(filter-out 0,$(RECORD)),--out bench/results/$(1).md --csv bench/results/$(1).csv)
bench: $(BENCHES) $(if $(RISGRAPH),risgraph-driver) ## benchmarks against peers, printed; RECORD=1 writes bench/results/*.md and *.csv (RISGRAPH=DIR: RisGraph beside stream_bench)
	$(BUILD)/bench/ring_bench $(call BENCH_RECORD,ring)
	$(BUILD)/bench/plan_bench $(call BENCH_RECORD,plan)
	$(BUILD)/bench/cache_bench $(call BENCH_RECORD,cache)
	$(BUILD)/bench/runtime_bench $(call BENCH_RECORD,runtime)
	$(BUILD)/bench/stage_bench $(call BENCH_RECORD,stage_costs)
	$(BUILD)/bench/peer_bench $(call BENCH_RECORD,peers)
	$(BUILD)/bench/cuda_bench $(call BENCH_RECORD,cuda)
	$(BUILD)/bench/graph_bench --graph kron,urand $(if $(GAPBS),--gapbs $(GAPBS)) $(call BENCH_RECORD,graph)
	$(BUILD)/bench/analysis_bench $(call BENCH_RECORD,analysis)
	$(BUILD)/bench/stream_bench --scale 18 $(if $(RISGRAPH),--risgraph $(RISGRAPH)) $(if $(filter-out 0,$(RECORD)),--csv bench/results/stream.csv)

# On a GPU machine (no peer libraries needed): the CUDA figures alone.
bench-cuda: $(BUILD)/bench/cuda_bench $(CUDA_BENCH_DATA) ## the GPU benchmark alone; RECORD=1 writes bench/results/cuda.*
	$(BUILD)/bench/cuda_bench $(call BENCH_RECORD,cuda)

bench-quick: $(BENCHES) ## every benchmark in quick mode (what CI runs); writes nothing
	$(BUILD)/bench/ring_bench --quick
	$(BUILD)/bench/plan_bench --quick
	$(BUILD)/bench/cache_bench --quick
	$(BUILD)/bench/runtime_bench --quick
	$(BUILD)/bench/stage_bench --quick
	$(BUILD)/bench/peer_bench --quick
	$(BUILD)/bench/cuda_bench --quick
	$(BUILD)/bench/graph_bench --quick
	$(BUILD)/bench/analysis_bench --quick
	$(BUILD)/bench/stream_bench --quick

# Charts of the recorded figures: bench/plots/NAME.gp reads
# bench/results/NAME.csv and draws bench/results/plots/NAME.png. cuda.gp
# skips, with a note, while there is no bench/results/cuda.csv.
PLOTS := ring runtime cuda graph stream
plots: ## PNG charts of bench/results/*.csv into bench/results/plots/ (needs gnuplot: make bench-deps)
	@command -v gnuplot >/dev/null || { echo "plots: no gnuplot (make bench-deps installs gnuplot-nox)"; exit 1; }
	@mkdir -p bench/results/plots
	@set -e; for p in $(PLOTS); do echo "gnuplot bench/plots/$$p.gp"; gnuplot bench/plots/$$p.gp; done

# Scaling (issue 33): graph_bench beside GAPBS, analysis_bench and
# runtime_bench at 1, 2, 4, 8 and 16 threads (capped to the CPUs present);
# writes bench/results/scaling.md, scaling.csv and plots/scaling.png.
.PHONY: bench-scaling
bench-scaling: $(BUILD)/bench/graph_bench $(BUILD)/bench/analysis_bench $(BUILD)/bench/runtime_bench ## make bench-scaling GAPBS=DIR [SCALE=20] [ROOTS=2] [TRIALS=2]: threads 1..16 beside GAPBS
	bench/scaling.sh "$(GAPBS)" $(if $(SCALE),$(SCALE),20) $(if $(ROOTS),$(ROOTS),2) $(if $(TRIALS),$(TRIALS),2)
