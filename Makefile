# mkrt - plain GNU make. `make help` lists every target, one line each.
#
#   make            libmkrt.a and libmkrt.so into $(BUILD)
#   make check      TAP unit tests through prove, public headers compiled
#                   alone, the exported symbols, an install used through
#                   pkg-config, the examples built
#   make stress     stress programs, SECONDS=N each (default 3)
#   make soak       mkrt-soak: workloads, faults, drift verdicts, SECONDS=N (default 60)
#   make tsan/asan  unit + stress tests under ThreadSanitizer / ASan+UBSan
#   make bench      benchmarks vs peers (make bench-deps), printed; RECORD=1 writes bench/results/
#   make install    PREFIX=/usr/local DESTDIR=
#   make deps       apt-get install what the build and tests need (idempotent)
#   make check-mpi  the optional MPI layer libmkrt_mpi (where mpicc is found;
#                   make mpi-deps installs Open MPI): tests at 1, 2, 4 ranks
#
# Variables: BUILD (build tree, default build), CC, NVCC (empty: no CUDA
# megakernel), PREFIX/LIBDIR/INCDIR/DESTDIR (install), SECONDS (stress),
# GRAPH_SCALE (make demo-graph, default 16).
#
# Every target a person runs has its description on its rule line:
#     target: prerequisites ## what it does, in one line
# and `make help` prints those lines; a new target gets one too.

CC       ?= cc
BUILD    ?= build
PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
MANDIR   ?= $(PREFIX)/share/man
SECONDS  ?= 3
TEST_TIMEOUT ?= 300
OPT      ?= -O2 -g
SAN      ?=
# The version has one source, include/mkrt/version.h. The SONAME names the
# ABI (README, "Versioning and ABI"): libmkrt.so.MAJOR from 1.0 on, and
# libmkrt.so.0.MINOR while MAJOR is 0, where every MINOR may break the ABI.
version_field = $(shell sed -n 's/^.define MKRT_VERSION_$(1)  *\([0-9][0-9]*\).*/\1/p' include/mkrt/version.h)
VERSION_MAJOR := $(call version_field,MAJOR)
VERSION_MINOR := $(call version_field,MINOR)
VERSION_PATCH := $(call version_field,PATCH)
ifneq ($(words $(VERSION_MAJOR) $(VERSION_MINOR) $(VERSION_PATCH)),3)
$(error cannot read MKRT_VERSION_MAJOR/MINOR/PATCH from include/mkrt/version.h)
endif
VERSION  := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)
SOVERSION := $(if $(filter 0,$(VERSION_MAJOR)),0.$(VERSION_MINOR),$(VERSION_MAJOR))
SONAME   := libmkrt.so.$(SOVERSION)

WARN     := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wpointer-arith -Wformat=2 -Wvla
CPPFLAGS += -D_GNU_SOURCE -Iinclude -Isrc
CFLAGS   += $(OPT) $(WARN) $(SAN) -fPIC -pthread -MMD -MP
LDFLAGS  += $(SAN) -pthread
URCU_LIBS := -lurcu-cds -lurcu-memb -lurcu-common
LDLIBS   += $(URCU_LIBS) -ldl -lm

LIB_SRCS := $(sort $(wildcard src/*/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/megakernel_fatbin.o \
            $(BUILD)/obj/gen/megakernel_link_fatbin.o

# The CUDA megakernel: built by nvcc when there is one (SASS for sm_80 and
# sm_90, PTX for compute_90 so newer GPUs JIT it) and embedded in the
# library; without nvcc the library says "not built". `make NVCC=` forces
# the no-CUDA build. Two variants: whole-program, and relocatable (-rdc)
# for linking the user's PTX ops at run time. The fatbins are shared by
# every build tree. USER_PTX is the device user-op sample the GPU tests
# link (tests/cuda/user_ops.cu).
NVCC      ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
CUDA_ARCH := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]
FATBIN    := build/cuda/megakernel.fatbin
LINK_FATBIN := build/cuda/megakernel_link.fatbin
USER_PTX  := build/cuda/user_ops.ptx
BIN2C     := build/tools/bin2c
STATIC   := $(BUILD)/libmkrt.a
SHARED   := $(BUILD)/libmkrt.so.$(VERSION)
# The shared library exports the public API only (tests link libmkrt.a).
SYMBOL_MAP := src/libmkrt.map

# tests/cuda_*.c need a GPU and skip (TAP SKIP) without one.
TEST_SRCS   := $(sort $(wildcard tests/test_*.c tests/cuda_*.c))
TEST_BINS   := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
# Generated from the public headers: every public function called with every
# argument zero/NULL, each in a child process (tests/probe/gen_null_probe.pl).
NULL_PROBE  := $(BUILD)/tests/null_probe
TEST_BINS   += $(NULL_PROBE)
TEST_HELP   := $(sort $(filter-out tests/test_%.c tests/cuda_%.c,$(wildcard tests/*.c)))
TEST_HELPLIB := $(BUILD)/libtesthelp.a
STRESS_SRCS := $(sort $(wildcard stress/*_stress.c))
STRESS_BINS := $(STRESS_SRCS:stress/%.c=$(BUILD)/stress/%)
# mkrt-soak (stress/soak/*.c): a test-build program (it uses the runtime's
# test hooks), installed as $(PREFIX)/bin/mkrt-soak. It exports libmkrt's
# symbols (whole archive, -rdynamic) to the --plugin objects it loads.
SOAK_SRCS   := $(sort $(wildcard stress/soak/*.c))
SOAK_BIN    := $(BUILD)/bin/mkrt-soak
SOAK_PLUGIN := $(BUILD)/examples/soak_plugin_example.so
HEADERS     := $(sort $(wildcard include/mkrt/*.h))
EXAMPLES    := $(patsubst examples/%.c,$(BUILD)/examples/%,$(filter-out examples/soak_plugin_%,$(wildcard examples/*.c)))
# The Graph500 kit (examples/graph500/*.c): the graph example and the
# graph benchmark link all of it, mkrt's engine (traverse_mkrt.c)
# included; the kit's unit test links the rest.
G500_SRCS     := $(sort $(wildcard examples/graph500/*.c))
G500_OBJS     := $(G500_SRCS:%.c=$(BUILD)/obj/%.o)
G500_KIT_OBJS := $(filter-out %/traverse_mkrt.o,$(G500_OBJS))
GRAPH_SCALE   ?= 16

.PHONY: all check headers-check abi-check install-check stress soak soak-mpi tsan asan bench bench-quick \
        bench-cuda plots demo demo-graph examples install uninstall deps bench-deps clean help tests docs docs-check \
        mpi check-mpi mpi-deps tsan-mpi install-mpi
.DEFAULT_GOAL := all

all: $(STATIC) $(SHARED) $(BUILD)/libmkrt.so ## libmkrt.a and libmkrt.so (with its SONAME link) in $(BUILD)

# Lists the `target: ... ## description` lines of the makefiles read.
help: ## this list: every target, one line each
	@echo "usage: make [target] [BUILD=dir] [CC=...] [NVCC=] [PREFIX=...] [SECONDS=N]"
	@awk -F ':.*## ' '/^[A-Za-z0-9_.-]+:.*## / { printf "  %-14s %s\n", $$1, $$2 }' \
	    $(filter-out %.d,$(MAKEFILE_LIST))

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BIN2C): tools/bin2c.c
	@mkdir -p $(@D)
	$(CC) -O2 -o $@ $<

ifneq ($(NVCC),)
$(FATBIN): src/cuda/megakernel.cu src/cuda/protocol.h src/ops/builtin_ops.h
	@mkdir -p $(@D)
	$(NVCC) -O3 -fatbin $(CUDA_ARCH) -Isrc -Isrc/cuda $< -o $@
$(LINK_FATBIN): src/cuda/megakernel.cu src/cuda/protocol.h src/ops/builtin_ops.h
	@mkdir -p $(@D)
	$(NVCC) -O3 -fatbin -rdc=true -DMKRT_MK_USER_OPS=1 $(CUDA_ARCH) -Isrc -Isrc/cuda $< -o $@
$(USER_PTX): tests/cuda/user_ops.cu
	@mkdir -p $(@D)
	$(NVCC) -O3 -rdc=true -ptx -arch=compute_80 $< -o $@
$(BUILD)/gen/megakernel_fatbin.c: $(FATBIN) $(BIN2C)
	@mkdir -p $(@D)
	$(BIN2C) mkrt__megakernel_fatbin $(FATBIN) $@
$(BUILD)/gen/megakernel_link_fatbin.c: $(LINK_FATBIN) $(BIN2C)
	@mkdir -p $(@D)
	$(BIN2C) mkrt__megakernel_link_fatbin $(LINK_FATBIN) $@
CUDA_TEST_DATA := $(USER_PTX)
else
$(BUILD)/gen/megakernel_fatbin.c: $(BIN2C)
	@mkdir -p $(@D)
	$(BIN2C) mkrt__megakernel_fatbin - $@
$(BUILD)/gen/megakernel_link_fatbin.c: $(BIN2C)
	@mkdir -p $(@D)
	$(BIN2C) mkrt__megakernel_link_fatbin - $@
CUDA_TEST_DATA :=
endif

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(OPT) $(SAN) -fPIC -c $< -o $@

$(STATIC): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(LIB_OBJS) $(SYMBOL_MAP)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(SYMBOL_MAP) -Wl,--no-undefined \
	    $(LDFLAGS) -o $@ $(LIB_OBJS) $(LDLIBS)

$(BUILD)/libmkrt.so: $(SHARED)
	ln -sf libmkrt.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf libmkrt.so.$(VERSION) $@

# mkrt.pc is written by `make install`, for the prefix it installs to.
# libdir and includedir are given relative to ${prefix} when they are under
# it, so pkg-config's --define-prefix can relocate the installed tree.
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
define write_pc
sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|g' \
    -e 's|@INCDIR@|$(call pc_dir,$(INCDIR))|g' -e 's|@VERSION@|$(VERSION)|g' mkrt.pc.in > $(1)
endef

# Tests and stress programs link the static library so they can reach the
# internal hooks declared in src/ headers.
$(TEST_HELPLIB): $(TEST_HELP:%.c=$(BUILD)/obj/%.o)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_HELPLIB) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/gen/null_probe.c: tests/probe/gen_null_probe.pl $(HEADERS)
	@mkdir -p $(@D)
	perl tests/probe/gen_null_probe.pl $(HEADERS) > $@.tmp && mv $@.tmp $@

$(NULL_PROBE): $(BUILD)/gen/null_probe.c $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STATIC) $(LDFLAGS) $(LDLIBS)

$(BUILD)/stress/%: $(BUILD)/obj/stress/%.o $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(SOAK_BIN): $(SOAK_SRCS:%.c=$(BUILD)/obj/%.o) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $(filter %.o,$^) -Wl,--whole-archive $(STATIC) -Wl,--no-whole-archive $(LDLIBS)

# The example plugin for mkrt-soak --plugin (include/mkrt/soak_plugin.h):
# no -lmkrt, the soak provides the library.
$(SOAK_PLUGIN): examples/soak_plugin_example.c include/mkrt/soak_plugin.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $<

# A stand-in libcuda.so.1 for the loader's failure paths (tests only).
FAKE_CUDA := $(BUILD)/tests/libfakecuda.so
$(FAKE_CUDA): tests/fakes/fake_libcuda.c src/backend/mk_loop.h src/cuda/protocol.h src/ops/builtin_ops.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $< -lpthread

tests: $(TEST_BINS) $(STRESS_BINS) $(SOAK_BIN) $(SOAK_PLUGIN) $(FAKE_CUDA) ## build the unit tests, stress programs and soak without running them

headers-check: ## every public header compiles on its own
	@for h in $(HEADERS); do \
	  echo "#include \"$${h#include/}\"" | $(CC) $(CPPFLAGS) $(WARN) -fsyntax-only -x c - \
	    || { echo "header $$h does not compile on its own"; exit 1; }; \
	done; echo "headers: $(words $(HEADERS)) public headers compile on their own"

check: all $(TEST_BINS) $(EXAMPLES) $(FAKE_CUDA) $(CUDA_TEST_DATA) $(SOAK_BIN) $(SOAK_PLUGIN) headers-check docs-check ## unit tests (TAP, prove), headers, API docs, exported symbols, install, examples
	prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' $(TEST_BINS)
	MKRT_SOAK=$(SOAK_BIN) SOAK_PLUGIN=$(SOAK_PLUGIN) prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT) sh' tests/soak/check_soak.sh
	@echo "== test_runtime again with AUTO on the CUDA megakernel (stand-in driver)"
	MKRT_LIBCUDA=$(CURDIR)/$(FAKE_CUDA) prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' \
	    $(filter %/test_runtime,$(TEST_BINS))
	@echo "== again with the RMW wake-up protocol (MKRT_WAITQ_SYMMETRIC=1)"
	MKRT_WAITQ_SYMMETRIC=1 prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' \
	    $(filter %_ring %_waitq %_runtime,$(TEST_BINS))
	@$(MAKE) --no-print-directory abi-check
	@$(MAKE) --no-print-directory install-check

# libmkrt.so exports exactly the functions include/mkrt/*.h declare, under
# the SONAME the version gives.
abi-check: $(SHARED) ## libmkrt.so exports the public API only, all of it, under the right SONAME
	MKRT_SO=$(SHARED) CC='$(CC)' prove -f --exec sh tests/abi/check_exports.sh

# `make install` into a scratch DESTDIR with another PREFIX than the build
# was made with, then programs built against it through pkg-config, with
# the shared and with the static library.
INSTALL_TEST_DIR   := $(BUILD)/install-test
INSTALL_TEST_PREFIX := /opt/mkrt-test
install-check: all ## install to a scratch DESTDIR; build and run programs through pkg-config, shared and static
	rm -rf $(INSTALL_TEST_DIR)
	$(MAKE) --no-print-directory install DESTDIR=$(abspath $(INSTALL_TEST_DIR)) \
	    PREFIX=$(INSTALL_TEST_PREFIX) LIBDIR=$(INSTALL_TEST_PREFIX)/lib \
	    INCDIR=$(INSTALL_TEST_PREFIX)/include
	MKRT_DESTDIR=$(abspath $(INSTALL_TEST_DIR)) MKRT_PREFIX=$(INSTALL_TEST_PREFIX) \
	    CC='$(CC)' MKRT_SAN='$(SAN)' prove -f --exec sh tests/install/check_install.sh

stress: $(STRESS_BINS) $(FAKE_CUDA) ## stress programs, SECONDS=N each (default 3), fail on a lost or reordered item

# The API reference: doxygen over include/mkrt/*.h (docs/Doxyfile) into
# $(BUILD)/docs/html and $(BUILD)/docs/man/man3. Every public declaration
# must be documented: any doxygen warning fails the target (the warnings
# are also in $(BUILD)/docs/warnings.log).
DOXYGEN  ?= doxygen
DOCS_DIR := $(BUILD)/docs
docs: ## Build the API reference (HTML + man3) with Doxygen
	@command -v $(DOXYGEN) >/dev/null 2>&1 || { echo "docs: doxygen not installed (run make deps)"; exit 1; }
	@rm -rf $(DOCS_DIR)/html $(DOCS_DIR)/man $(DOCS_DIR)/warnings.log && mkdir -p $(DOCS_DIR)
	@{ cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $(DOCS_DIR)"; echo "PROJECT_NUMBER = $(VERSION)"; \
	   echo "WARN_LOGFILE = $(DOCS_DIR)/warnings.log"; } | $(DOXYGEN) -; st=$$?; \
	if [ -s $(DOCS_DIR)/warnings.log ]; then cat $(DOCS_DIR)/warnings.log >&2; \
	  echo "docs: doxygen warnings above: every public declaration needs a complete doc comment" >&2; exit 1; fi; \
	if [ $$st -ne 0 ]; then echo "docs: doxygen failed (exit $$st)" >&2; exit 1; fi
	@sh tools/docs_man_fixup.sh $(DOCS_DIR)/man/man3
	@echo "docs: 0 warnings; $(DOCS_DIR)/html/index.html, man pages in $(DOCS_DIR)/man/man3"

# Part of make check: the same run when doxygen is installed.
docs-check: ## Check the API reference builds without warnings (skipped without doxygen)
	@if command -v $(DOXYGEN) >/dev/null 2>&1; then $(MAKE) --no-print-directory docs; \
	else echo "docs check skipped: doxygen not installed (run make deps)"; fi

stress: $(STRESS_BINS) $(FAKE_CUDA)
	@set -e; for s in $(STRESS_BINS); do echo "== $$s $(SECONDS)s"; $$s --seconds $(SECONDS); done
	@echo "== $(BUILD)/stress/graph_stress $(SECONDS)s on the SIM backend (traversals on the device)"
	$(BUILD)/stress/graph_stress --seconds $(SECONDS) --sim 1
	@echo "== $(BUILD)/stress/runtime_stress $(SECONDS)s sized as on a 16-CPU machine (15 default workers, wide plans)"
	$(BUILD)/stress/runtime_stress --seconds $(SECONDS) --cpus 16
ifneq ($(NVCC),)
	@echo "== $(BUILD)/stress/runtime_stress $(SECONDS)s on the CUDA backend (stand-in driver)"
	MKRT_LIBCUDA=$(CURDIR)/$(FAKE_CUDA) $(BUILD)/stress/runtime_stress --seconds $(SECONDS) --want-cuda 1
	@echo "== $(BUILD)/stress/runtime_stress $(SECONDS)s on the CUDA backend, cells in device memory (stand-in driver)"
	MKRT_LIBCUDA=$(CURDIR)/$(FAKE_CUDA) $(BUILD)/stress/runtime_stress --seconds $(SECONDS) --want-cuda 1 --device-state 1
endif

# The soak (mkrt-soak) is not one of the stress programs: it runs for
# SECONDS when given on the command line, else 60 (or SOAK_SECONDS);
# SOAK_ARGS adds options (e.g. SOAK_ARGS="--json soak.json").
SOAK_SECONDS ?= $(if $(filter command line,$(origin SECONDS)),$(SECONDS),60)
soak: $(SOAK_BIN) $(FAKE_CUDA) ## mkrt-soak: every workload and fault mode, drift verdicts, SECONDS=N (default 60)
	$(SOAK_BIN) --seconds $(SOAK_SECONDS) $(SOAK_ARGS)
	$(if $(SAN),@echo "soak: the MPI soak is not run under a sanitizer",@$(MAKE) --no-print-directory soak-mpi)

# Sanitizer builds live in their own trees; stress and soak runs stay
# short unless SECONDS is given.
SAN_SECONDS ?= 2
# gcc warns that TSan does not model atomic_thread_fence (-Wtsan). The one
# fence-only pairing (base/waitq.h's symmetric protocol) orders no data,
# only whether a waker sees a waiter's arming; the data a waiter then reads
# is published by release stores TSan does see. Quieted where the compiler
# knows the warning.
TSAN_FENCE := $(shell $(CC) -Werror -Wno-tsan -x c -c /dev/null -o /dev/null 2>/dev/null && echo -Wno-tsan)
TSAN_SAN := -fsanitize=thread $(TSAN_FENCE)
tsan: ## check, short stress and soak under ThreadSanitizer, in $(BUILD)/tsan
	TSAN_OPTIONS="suppressions=$(CURDIR)/tsan.supp halt_on_error=1 $(TSAN_OPTIONS)" \
	$(MAKE) BUILD=$(BUILD)/tsan SAN="$(TSAN_SAN)" OPT="-O1 -g" \
	    SECONDS=$(SAN_SECONDS) check stress soak
asan: ## check, short stress and soak under ASan+UBSan, in $(BUILD)/asan
	ASAN_OPTIONS="detect_leaks=1 $(ASAN_OPTIONS)" \
	$(MAKE) BUILD=$(BUILD)/asan OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	    SECONDS=$(SAN_SECONDS) check stress soak

# Benchmarks compare against peer libraries (make bench-deps).
BENCH_CFLAGS := $(OPT) -std=gnu11 -Wall -Wextra -Werror -pthread -Iinclude -Isrc -D_GNU_SOURCE
BENCH_DPDK   := -I/usr/include/dpdk -I/usr/include/x86_64-linux-gnu/dpdk -include rte_config.h -msse4.2
$(BUILD)/bench/ring_bench: bench/ring_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(BENCH_DPDK) -o $@ bench/ring_bench.c $(STATIC) \
	    -lck $(URCU_LIBS) -lrte_ring -lrte_eal -lm -pthread

$(BUILD)/bench/plan_bench: bench/plan_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/plan_bench.c $(STATIC) $(URCU_LIBS) -lm -pthread

$(BUILD)/bench/cache_bench: bench/cache_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/cache_bench.c $(STATIC) $(URCU_LIBS) -lm -pthread

$(BUILD)/bench/runtime_bench: bench/runtime_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/runtime_bench.c $(STATIC) $(URCU_LIBS) -lm -pthread

$(BUILD)/bench/stage_bench: bench/stage_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/stage_bench.c $(STATIC) $(URCU_LIBS) -lm -pthread

# peer_bench (bench/peer_bench.c): OpenMP tasks when the compiler takes
# -fopenmp, StarPU when pkg-config finds starpu-1.3 (its headers as system
# headers: -Werror is for our code); a missing peer is reported "skipped".
PEER_OMP    := $(shell echo 'int main(void){return 0;}' | $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo -fopenmp)
PEER_STARPU := $(shell pkg-config --exists starpu-1.3 2>/dev/null && echo yes)
PEER_CFLAGS := $(PEER_OMP) $(if $(PEER_STARPU),-DHAVE_STARPU $(patsubst -I%,-isystem %,$(shell pkg-config --cflags starpu-1.3)))
PEER_LIBS   := $(PEER_OMP) $(if $(PEER_STARPU),$(shell pkg-config --libs starpu-1.3))
$(BUILD)/bench/peer_bench: bench/peer_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(PEER_CFLAGS) -o $@ bench/peer_bench.c $(STATIC) $(URCU_LIBS) $(PEER_LIBS) -lm -pthread

# The CUDA benchmark skips (exit 0) without a GPU; its per-layer kernel is
# built by nvcc when there is one.
$(BUILD)/bench/cuda_bench: bench/cuda_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/cuda_bench.c $(STATIC) $(URCU_LIBS) -ldl -lm -pthread
BENCH_LAYER := build/cuda/bench_layer.fatbin
ifneq ($(NVCC),)
$(BENCH_LAYER): bench/cuda/layer_kernel.cu src/cuda/protocol.h src/ops/builtin_ops.h
	@mkdir -p $(@D)
	$(NVCC) -O3 -fatbin $(CUDA_ARCH) -Isrc $< -o $@
CUDA_BENCH_DATA := $(BENCH_LAYER)
endif

# The graph benchmark: mkrt's engine beside GraphBLAS and igraph, each peer
# built in where a test compile finds it (else the benchmark says it
# skipped it). G500_OBJS: the Graph500 kit (above).
GRAPH_PEER_SRCS := bench/graph/graphblas_engine.c bench/graph/igraph_engine.c
$(BUILD)/bench/graph_bench: bench/graph_bench.c bench/bench_util.h bench/graph/peers.h \
                            $(GRAPH_PEER_SRCS) $(G500_OBJS) $(STATIC)
	@mkdir -p $(@D)
	@peers=""; libs=""; \
	if printf '#include <GraphBLAS.h>\nint main(void){return GrB_init(GrB_NONBLOCKING);}\n' | \
	    $(CC) -x c - -o $@.probe -lgraphblas >/dev/null 2>&1; then \
	  peers="-DHAVE_GRAPHBLAS"; libs="-lgraphblas"; fi; \
	if pkg-config --exists igraph 2>/dev/null; then \
	  peers="$$peers -DHAVE_IGRAPH $$(pkg-config --cflags igraph)"; libs="$$libs $$(pkg-config --libs igraph)"; fi; \
	rm -f $@.probe; \
	echo "$(CC) $(BENCH_CFLAGS) $$peers -o $@ bench/graph_bench.c $(GRAPH_PEER_SRCS) $(G500_OBJS) $(STATIC) $$libs $(URCU_LIBS) -lm -pthread"; \
	$(CC) $(BENCH_CFLAGS) $$peers -o $@ bench/graph_bench.c $(GRAPH_PEER_SRCS) $(G500_OBJS) $(STATIC) \
	    $$libs $(URCU_LIBS) -lm -pthread

BENCHES := $(BUILD)/bench/ring_bench $(BUILD)/bench/plan_bench $(BUILD)/bench/cache_bench \
           $(BUILD)/bench/runtime_bench $(BUILD)/bench/peer_bench $(BUILD)/bench/cuda_bench \
           $(BUILD)/bench/graph_bench $(BUILD)/bench/stage_bench \
           $(CUDA_BENCH_DATA)
# `make bench` prints the figures and writes nothing; `make bench RECORD=1`
# (also `make bench-cuda RECORD=1`) records them as bench/results/NAME.md
# and NAME.csv, replacing the committed ones. bench-quick never records.
BENCH_RECORD = $(if $(filter-out 0,$(RECORD)),--out bench/results/$(1).md --csv bench/results/$(1).csv)
bench: $(BENCHES) ## benchmarks against peers, printed; RECORD=1 writes bench/results/*.md and *.csv
	$(BUILD)/bench/ring_bench $(call BENCH_RECORD,ring)
	$(BUILD)/bench/plan_bench $(call BENCH_RECORD,plan)
	$(BUILD)/bench/cache_bench $(call BENCH_RECORD,cache)
	$(BUILD)/bench/runtime_bench $(call BENCH_RECORD,runtime)
	$(BUILD)/bench/stage_bench $(call BENCH_RECORD,stage_costs)
	$(BUILD)/bench/peer_bench $(call BENCH_RECORD,peers)
	$(BUILD)/bench/cuda_bench $(call BENCH_RECORD,cuda)
	$(BUILD)/bench/graph_bench $(call BENCH_RECORD,graph)

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

# Charts of the recorded figures: bench/plots/NAME.gp reads
# bench/results/NAME.csv and draws bench/results/plots/NAME.png. cuda.gp
# skips, with a note, while there is no bench/results/cuda.csv.
PLOTS := ring runtime cuda
plots: ## PNG charts of bench/results/*.csv into bench/results/plots/ (needs gnuplot: make bench-deps)
	@command -v gnuplot >/dev/null || { echo "plots: no gnuplot (make bench-deps installs gnuplot-nox)"; exit 1; }
	@mkdir -p bench/results/plots
	@set -e; for p in $(PLOTS); do echo "gnuplot bench/plots/$$p.gp"; gnuplot bench/plots/$$p.gp; done

$(BUILD)/examples/%: examples/%.c $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STATIC) $(LDFLAGS) $(LDLIBS)

examples: $(EXAMPLES) ## build examples/*.c into $(BUILD)/examples

$(BUILD)/examples/graph_bfs: $(BUILD)/obj/examples/graph_bfs.o $(G500_OBJS) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/test_graph500_kit: $(BUILD)/obj/tests/test_graph500_kit.o $(G500_KIT_OBJS) \
                                  $(TEST_HELPLIB) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# ---- The optional MPI layer (libmkrt_mpi) ---------------------------------
# Built only where `mpicc` is found; the plain library and `make check`
# never need MPI. Its sources are mpi/src/*.c (not src/*/, which all go
# into libmkrt), its header include/mkrt_mpi/mkrt_mpi.h (not
# include/mkrt/*.h, which feed headers-check, abi-check, the null probe and
# docs-check of libmkrt; check-mpi runs those checks for it). Compiled by
# $(CC) with mpicc's flags (Open MPI: --showme; MPICH: -compile-info), so
# `make CC=clang` covers it too. Where mpicc is found, examples/graph_bfs
# is built with its distributed mode (examples/mpi/).
MPICC ?= $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
MPI_CFLAGS := $(or $(shell $(MPICC) --showme:compile 2>/dev/null),$(filter-out $(firstword $(shell $(MPICC) -compile-info 2>/dev/null)) -c,$(shell $(MPICC) -compile-info 2>/dev/null)))
MPI_LIBS   := $(or $(shell $(MPICC) --showme:link 2>/dev/null),$(filter-out $(firstword $(shell $(MPICC) -link-info 2>/dev/null)),$(shell $(MPICC) -link-info 2>/dev/null)))
MPI_SRCS   := $(sort $(wildcard mpi/src/*.c))
MPI_OBJS   := $(MPI_SRCS:%.c=$(BUILD)/obj/%.o)
MPI_STATIC := $(BUILD)/libmkrt_mpi.a
MPI_SHARED := $(BUILD)/libmkrt_mpi.so.$(VERSION)
MPI_HEADERS := include/mkrt_mpi/mkrt_mpi.h
MPI_EX_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard examples/mpi/*.c)))
MPI_TEST_BINS := $(patsubst mpi/tests/%.c,$(BUILD)/mpi/tests/%,$(sort $(wildcard mpi/tests/test_*.c)))
MPI_NULL_PROBE := $(BUILD)/mpi/tests/null_probe
# mpirun: 4 ranks on 2 CPUs need --oversubscribe; Open MPI refuses root
# without --allow-run-as-root (containers, CI).
MPIRUN ?= mpirun --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)

$(MPI_OBJS) $(MPI_EX_OBJS) $(BUILD)/obj/examples/graph_bfs.o $(MPI_TEST_BINS:$(BUILD)/mpi/tests/%=$(BUILD)/obj/mpi/tests/%.o) \
    $(BUILD)/obj/bench/mpi_bench.o: CPPFLAGS += $(MPI_CFLAGS)
$(BUILD)/obj/examples/graph_bfs.o: CPPFLAGS += -DMKRT_WITH_MPI

$(MPI_STATIC): $(MPI_OBJS)
	rm -f $@
	$(AR) rcs $@ $^
$(MPI_SHARED): $(MPI_OBJS) $(SHARED) mpi/src/libmkrt_mpi.map
	$(CC) -shared -Wl,-soname,libmkrt_mpi.so.$(SOVERSION) -Wl,--version-script=mpi/src/libmkrt_mpi.map \
	    -Wl,--no-undefined $(LDFLAGS) -o $@ \
	    $(MPI_OBJS) $(SHARED) $(MPI_LIBS) $(LDLIBS)
	ln -sf libmkrt_mpi.so.$(VERSION) $(BUILD)/libmkrt_mpi.so.$(SOVERSION)
	ln -sf libmkrt_mpi.so.$(VERSION) $(BUILD)/libmkrt_mpi.so

# graph_bfs with its distributed mode (libmkrt_mpi needs libmkrt after it).
$(BUILD)/examples/graph_bfs: $(MPI_EX_OBJS) $(MPI_STATIC)
$(BUILD)/examples/graph_bfs: LDLIBS := $(STATIC) $(MPI_LIBS) $(LDLIBS)

$(BUILD)/mpi/tests/%: $(BUILD)/obj/mpi/tests/%.o $(MPI_STATIC) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(MPI_LIBS) $(LDLIBS)

$(BUILD)/gen/mpi_null_probe.c: tests/probe/gen_null_probe.pl $(MPI_HEADERS)
	@mkdir -p $(@D)
	perl tests/probe/gen_null_probe.pl $(MPI_HEADERS) | \
	    sed 's|#include "mkrt/mkrt_mpi.h"|#include "mkrt_mpi/mkrt_mpi.h"|' > $@.tmp && mv $@.tmp $@
$(MPI_NULL_PROBE): $(BUILD)/gen/mpi_null_probe.c $(MPI_STATIC) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(MPI_CFLAGS) $(CFLAGS) -o $@ $< $(MPI_STATIC) $(STATIC) $(LDFLAGS) $(MPI_LIBS) $(LDLIBS)

$(BUILD)/bench/mpi_bench: $(BUILD)/obj/bench/mpi_bench.o $(MPI_EX_OBJS) $(G500_OBJS) $(MPI_STATIC) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(STATIC) $(MPI_LIBS) $(LDLIBS)

# mkrt-soak-mpi: the soak's MPI workload (stress/soak/mpi/), run by
# `make soak` at 2 and 3 ranks (not under a sanitizer: Open MPI is not
# instrumented).
SOAK_MPI_BIN := $(BUILD)/bin/mkrt-soak-mpi
SOAK_MPI_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,stress/soak/soak_globals.c stress/soak/soak_env.c \
                 stress/soak/soak_metrics.c stress/soak/mpi/soak_mpi.c)
$(BUILD)/obj/stress/soak/mpi/soak_mpi.o: CPPFLAGS += $(MPI_CFLAGS)
$(SOAK_MPI_BIN): $(SOAK_MPI_OBJS) $(MPI_STATIC) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(MPI_LIBS) $(LDLIBS)
SOAK_MPI_SECONDS = $(shell s=$$(( $(SOAK_SECONDS) / 4 )); [ $$s -lt 5 ] && s=5; echo $$s)
soak-mpi: $(SOAK_MPI_BIN) ## mkrt-soak-mpi at 2 and 3 ranks, SECONDS/4 each (at least 5 s; needs mpicc)
	timeout -k 5 $$(( $(SOAK_MPI_SECONDS) + 300 )) $(MPIRUN) -np 2 $(SOAK_MPI_BIN) --seconds $(SOAK_MPI_SECONDS)
	timeout -k 5 $$(( $(SOAK_MPI_SECONDS) + 300 )) $(MPIRUN) -np 3 $(SOAK_MPI_BIN) --seconds $(SOAK_MPI_SECONDS)

mpi: $(MPI_STATIC) $(MPI_SHARED) ## libmkrt_mpi.a and libmkrt_mpi.so in $(BUILD) (needs mpicc: make mpi-deps)

# The MPI layer's own header, docs and null-argument checks, then
# forwarding, ordering, quiescence, faults and the distributed BFS at 1, 2
# and 4 ranks on localhost (mpi/tests/check_mpi.sh).
check-mpi: all $(MPI_STATIC) $(MPI_SHARED) $(MPI_TEST_BINS) $(MPI_NULL_PROBE) $(BUILD)/examples/graph_bfs ## the MPI layer: header, docs, null probe, tests at 1, 2, 4 ranks (needs mpicc)
	@echo '#include "mkrt_mpi/mkrt_mpi.h"' | $(CC) $(CPPFLAGS) $(MPI_CFLAGS) $(WARN) -fsyntax-only -x c - \
	    && echo "headers: $(MPI_HEADERS) compiles on its own"
	@if command -v $(DOXYGEN) >/dev/null 2>&1; then \
	  rm -rf $(BUILD)/docs-mpi && mkdir -p $(BUILD)/docs-mpi && \
	  { cat docs/Doxyfile; echo "INPUT = include/mkrt_mpi"; echo "OUTPUT_DIRECTORY = $(BUILD)/docs-mpi"; \
	    echo "GENERATE_MAN = NO"; echo "WARN_LOGFILE = $(BUILD)/docs-mpi/warnings.log"; } | $(DOXYGEN) - >/dev/null && \
	  if [ -s $(BUILD)/docs-mpi/warnings.log ]; then cat $(BUILD)/docs-mpi/warnings.log; exit 1; fi; \
	  echo "docs: $(MPI_HEADERS): 0 doxygen warnings"; \
	else echo "docs check skipped: doxygen not installed"; fi
	prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' $(MPI_NULL_PROBE)
	MPIRUN='$(MPIRUN)' BUILD='$(BUILD)' sh mpi/tests/check_mpi.sh

install-mpi: $(MPI_STATIC) $(MPI_SHARED) ## install libmkrt_mpi and include/mkrt_mpi/ beside `make install` (same PREFIX, DESTDIR)
	install -d $(DESTDIR)$(INCDIR)/mkrt_mpi $(DESTDIR)$(LIBDIR)
	install -m 644 $(MPI_HEADERS) $(DESTDIR)$(INCDIR)/mkrt_mpi/
	install -m 644 $(MPI_STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(MPI_SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libmkrt_mpi.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmkrt_mpi.so.$(SOVERSION)
	ln -sf libmkrt_mpi.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmkrt_mpi.so

# The MPI unit tests under ThreadSanitizer at 2 ranks (libmkrt and
# libmkrt_mpi instrumented; Open MPI is not: mpi/tests/tsan-mpi.supp).
tsan-mpi: ## the MPI layer's unit tests under ThreadSanitizer at 2 ranks, in $(BUILD)/tsan
	$(MAKE) BUILD=$(BUILD)/tsan SAN="$(TSAN_SAN)" OPT="-O1 -g" $(BUILD)/tsan/mpi/tests/test_mpi
	cat tsan.supp mpi/tests/tsan-mpi.supp > $(BUILD)/tsan/mpi.supp
	TSAN_OPTIONS="suppressions=$(CURDIR)/$(BUILD)/tsan/mpi.supp halt_on_error=1 $(TSAN_OPTIONS)" \
	    timeout -k 5 600 $(MPIRUN) --mca btl self,vader -x TSAN_OPTIONS -np 2 $(BUILD)/tsan/mpi/tests/test_mpi
else
soak-mpi:
	@echo "soak-mpi: no mpicc found: the MPI soak is skipped (make mpi-deps installs Open MPI)"
mpi check-mpi tsan-mpi install-mpi:
	@echo "$@: no mpicc found; the MPI layer is optional (make mpi-deps installs Open MPI)"; exit 1
endif

demo-graph: $(BUILD)/examples/graph_bfs ## the graph example: BFS+SSSP from 16 roots, validated (GRAPH_SCALE=16)
	$(BUILD)/examples/graph_bfs --scale $(GRAPH_SCALE)

# The README's main demo: a dataflow analysis through the runtime (CPU).
demo: $(EXAMPLES) ## run the minimal example and the dataflow analysis demo
	$(BUILD)/examples/minimal
	$(BUILD)/examples/analysis_demo

install: all $(SOAK_BIN) ## headers, libmkrt.a, libmkrt.so, mkrt.pc, mkrt-soak (and its man page) into $(DESTDIR)$(PREFIX)
	install -d $(DESTDIR)$(INCDIR)/mkrt $(DESTDIR)$(LIBDIR)/pkgconfig
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(SOAK_BIN) $(DESTDIR)$(PREFIX)/bin/mkrt-soak
	install -m 644 docs/mkrt-soak.1 $(DESTDIR)$(MANDIR)/man1/mkrt-soak.1
	install -m 644 $(HEADERS) $(DESTDIR)$(INCDIR)/mkrt/
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libmkrt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf libmkrt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmkrt.so
	$(call write_pc,$(DESTDIR)$(LIBDIR)/pkgconfig/mkrt.pc)
	@if [ -d $(BUILD)/docs/man/man3 ]; then \
	  echo "install -m 644 $(BUILD)/docs/man/man3/*.3 $(DESTDIR)$(MANDIR)/man3/"; \
	  install -d $(DESTDIR)$(MANDIR)/man3 && \
	  install -m 644 $(BUILD)/docs/man/man3/*.3 $(DESTDIR)$(MANDIR)/man3/; \
	else echo "install: no man pages in $(BUILD)/docs/man/man3 (make docs builds them)"; fi

# Removes this version's files (a libmkrt.so.* of another version stays
# for the programs linked against it).
uninstall: ## remove what `make install` installed (same PREFIX and DESTDIR)
	rm -rf $(DESTDIR)$(INCDIR)/mkrt
	rm -f $(DESTDIR)$(LIBDIR)/libmkrt.a $(DESTDIR)$(LIBDIR)/libmkrt.so \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libmkrt.so.$(VERSION) \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/mkrt.pc
	rm -f $(DESTDIR)$(PREFIX)/bin/mkrt-soak $(DESTDIR)$(MANDIR)/man1/mkrt-soak.1
	rm -f $(DESTDIR)$(MANDIR)/man3/mkrt_*.3 $(DESTDIR)$(MANDIR)/man3/mkrt.h.3 $(DESTDIR)$(MANDIR)/man3/MKRT_*.3

# Debian packages. `deps` is what build + tests need; `bench-deps` adds the
# peer libraries the benchmarks compare against and gnuplot for `make plots`.
DEPS_PKGS       := make gcc clang perl pkg-config liburcu-dev libclang-rt-dev doxygen
# MPI is optional (`make mpi-deps`; .ci/run installs it and runs check-mpi).
MPI_DEPS_PKGS   := libopenmpi-dev openmpi-bin
BENCH_DEPS_PKGS := libck-dev dpdk-dev liburcu-dev libstarpu-dev gnuplot-nox libgraphblas-dev libigraph-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
define apt_install
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	else echo "deps: all of $(1) installed"; fi
endef
# `deps` also installs Open MPI, so `make deps check-mpi` works on a clean
# machine; the library and `make check` build and pass without it.
deps: ## apt-get install what the build and tests need, Open MPI included (idempotent)
	$(call apt_install,$(DEPS_PKGS) $(MPI_DEPS_PKGS))
mpi-deps: ## apt-get install Open MPI for the optional MPI layer (idempotent)
	$(call apt_install,$(MPI_DEPS_PKGS))
bench-deps: ## apt-get install the benchmarks' peer libraries and gnuplot (idempotent)
	$(call apt_install,$(BENCH_DEPS_PKGS))

clean: ## remove $(BUILD)
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
.SECONDARY:
